# colstats images: `server` (metastore serve, db, ping, describe) and `job` (the same with
# Spark and Java, for metastore analyze and demo). Used by docker-compose.yml.
#
#   docker build --target server -t colstats-server .
#   docker build --target job -t colstats-job .
#
# PYTHON_IMAGE is any Debian-based image with Python 3.11+ and venv (docker/local-base-images.sh
# builds one from Debian packages). Wheels in docker/wheels/ are installed instead of the
# package index when present (docker/wheelhouse.sh fills it), so the build needs no network.
# The virtualenv is built in stages of its own and copied into the final images, which so
# carry neither the wheels nor the sources.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS deps
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
COPY docker/install.sh /usr/local/bin/colstats-install
COPY docker/wheels/ /wheels/
COPY pyproject.toml /src/
RUN colstats-install deps psycopg2

FROM deps AS job-deps
RUN colstats-install deps psycopg2 spark

FROM deps AS server-venv
COPY README.md alembic.ini /src/
COPY hive_metastore_thrift /src/hive_metastore_thrift
COPY metastore /src/metastore
RUN colstats-install project

FROM job-deps AS job-venv
COPY README.md alembic.ini /src/
COPY hive_metastore_thrift /src/hive_metastore_thrift
COPY metastore /src/metastore
RUN colstats-install project

FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/colstats/bin:$PATH PYTHONUNBUFFERED=1 METASTORE_HOME=/var/lib/colstats
RUN useradd --system --create-home --home-dir /var/lib/colstats colstats
WORKDIR /var/lib/colstats

FROM runtime AS server
COPY --from=server-venv /opt/colstats /opt/colstats
# The server listens on loopback unless told otherwise; in a container that is unreachable
# from anywhere else, so the image listens on every interface (its published ports).
ENV METASTORE_HOST=0.0.0.0
USER colstats
EXPOSE 9083
HEALTHCHECK --interval=5s --timeout=10s --retries=12 \
  CMD ["metastore", "ping", "--uri", "thrift://localhost:9083", "--timeout", "5"]
ENTRYPOINT ["metastore"]
CMD ["serve"]

FROM runtime AS job
COPY docker/install.sh /usr/local/bin/colstats-install
RUN colstats-install java
COPY --from=job-venv /opt/colstats /opt/colstats
USER colstats
ENV PYSPARK_PYTHON=/opt/colstats/bin/python
ENTRYPOINT ["metastore"]
CMD ["demo", "--uri", "thrift://server:9083"]
