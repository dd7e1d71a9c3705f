"""Object storage for the reads of a table's files (the job's, the Flight door's): `s3://`,
`s3a://` and `s3n://` locations opened with PyArrow's S3 filesystem, configured the way Spark
users configure S3A.

The settings are Hadoop's settings of S3A (`fs.s3a.endpoint`, `access.key`, `secret.key`,
`session.token`, `path.style.access`, `connection.ssl.enabled`, `endpoint.region`, and their
per-bucket forms `fs.s3a.bucket.NAME.endpoint`, ...). The job reads them where Spark does,
as `spark.hadoop.fs.s3a.*` (spark-submit's configuration, `spark-defaults.conf`, the job's
own `--conf`: :func:`S3Settings.from_spark_conf`); the server's Flight door as `fs.s3a.*` in
its own settings (the `s3a` table of its configuration file, METASTORE_S3A:
:func:`S3Settings.from_hadoop`). Credentials not given there come from the process's AWS
environment (`AWS_ACCESS_KEY_ID`, ...), and failing that from the AWS SDK's own chain in
each process (a profile, an instance or pod role).

The job's driver reads the settings once and sends them with every task, so that executors
on other machines open the files as the driver listed them; each process keeps them in
:func:`use` and opens a filesystem per bucket. Secrets are never logged: the settings print
with their secrets masked, and the advice of an error names the keys, never their values.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlparse

import pyarrow.fs as pafs

from metastore.files.errors import InvalidLocation

S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
HADOOP_S3A = "spark.hadoop.fs.s3a."
"""The prefix of the S3A settings in Spark's configuration."""
S3A = "fs.s3a."
"""The prefix of the S3A settings in Hadoop's (core-site.xml) and the server's."""
SECRET_KEYS = frozenset({"access.key", "secret.key", "session.token"})
CONNECT_SECONDS = 10.0
"""How long a connection to the endpoint may take (Hadoop's fs.s3a.connection.establish.timeout
overrides it): an endpoint that does not answer fails in seconds, not minutes."""
DEFAULT_ATTEMPTS = 3
"""Attempts of each request (Hadoop's fs.s3a.attempts.maximum overrides it)."""

# A location's query (s3://bucket/path?endpoint_override=...) as PyArrow names its options, and
# the S3A setting each one is.
QUERY_SETTINGS = {
    "endpoint_override": "endpoint",
    "region": "endpoint.region",
    "scheme": "connection.ssl.enabled",
    "access_key": "access.key",
    "secret_key": "secret.key",
    "session_token": "session.token",
}
_AWS_ENVIRONMENT = {
    "access.key": "AWS_ACCESS_KEY_ID",
    "secret.key": "AWS_SECRET_ACCESS_KEY",
    "session.token": "AWS_SESSION_TOKEN",
}


def is_object_storage(location: str) -> bool:
    return urlparse(location).scheme.lower() in S3_SCHEMES


@dataclasses.dataclass(frozen=True)
class S3Settings:
    """S3A's settings (keys without the `spark.hadoop.fs.s3a.` prefix: 'endpoint',
    'bucket.lake.endpoint', ...), as the job's processes open buckets with them."""

    settings: tuple[tuple[str, str], ...] = ()
    prefix: str = HADOOP_S3A
    """How the keys were given (Spark's prefix, or Hadoop's): the errors' advice names them
    so, as the user wrote them."""

    @classmethod
    def from_spark_conf(
        cls, conf: Mapping[str, str], environment: Mapping[str, str] | None = None
    ) -> S3Settings:
        """The S3A settings in Spark's configuration CONF (spark.hadoop.fs.s3a.*);
        credentials the configuration does not give come from the AWS variables of
        ENVIRONMENT (the process's by default)."""
        return cls.from_hadoop(conf, environment, prefix=HADOOP_S3A)

    @classmethod
    def from_hadoop(
        cls,
        conf: Mapping[str, str],
        environment: Mapping[str, str] | None = None,
        prefix: str = S3A,
    ) -> S3Settings:
        """The S3A settings among CONF's keys that start with PREFIX (fs.s3a.* by default,
        as core-site.xml and the server's settings name them); credentials CONF does not
        give come from the AWS variables of ENVIRONMENT (the process's by default)."""
        settings = {
            key[len(prefix) :]: value.strip()
            for key, value in conf.items()
            if key.startswith(prefix)
        }
        env = os.environ if environment is None else environment
        if "access.key" not in settings and env.get("AWS_ACCESS_KEY_ID"):
            for key, variable in _AWS_ENVIRONMENT.items():
                if env.get(variable):
                    settings[key] = env[variable]
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if region and "endpoint.region" not in settings and "region" not in settings:
            settings["endpoint.region"] = region  # the driver's, for every executor
        return cls(tuple(sorted(settings.items())), prefix)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{key}={'***' if _secret(key) else value}" for key, value in self.settings
        )
        return f"S3Settings({shown})"

    def setting(self, bucket: str, key: str) -> str | None:
        """KEY for BUCKET: its per-bucket form first (bucket.BUCKET.KEY), then the global."""
        found = dict(self.settings)
        return found.get(f"bucket.{bucket}.{key}", found.get(key))

    def endpoint(self, bucket: str) -> str:
        """Where BUCKET is read from, for messages."""
        endpoint = self.setting(bucket, "endpoint")
        return endpoint or "AWS S3"

    def filesystem(self, bucket: str) -> pafs.S3FileSystem:
        """PyArrow's S3 filesystem for BUCKET (one per process and bucket)."""
        return _filesystem(self, bucket)

    def options(self, bucket: str) -> dict[str, object]:
        """The S3FileSystem options of BUCKET (PyArrow's names)."""
        options: dict[str, object] = {}
        endpoint = self.setting(bucket, "endpoint")
        ssl = self.setting(bucket, "connection.ssl.enabled")
        scheme = None if ssl is None else ("https" if _true(ssl) else "http")
        if endpoint:
            parsed = urlparse(endpoint if "://" in endpoint else f"//{endpoint}")
            if parsed.scheme:
                scheme = scheme or parsed.scheme
            options["endpoint_override"] = parsed.netloc + parsed.path.rstrip("/")
        if scheme:
            options["scheme"] = scheme
        region = self.setting(bucket, "endpoint.region") or self.setting(bucket, "region")
        if region:
            options["region"] = region
        elif endpoint:
            # A server of its own answers in any region; asking AWS which one would fail.
            options["region"] = "us-east-1"
        for key, name in (
            ("access.key", "access_key"),
            ("secret.key", "secret_key"),
            ("session.token", "session_token"),
        ):
            value = self.setting(bucket, key)
            if value:
                options[name] = value
        provider = self.setting(bucket, "aws.credentials.provider") or ""
        if "Anonymous" in provider:
            options["anonymous"] = True
        path_style = self.setting(bucket, "path.style.access")
        if path_style is not None and not _true(path_style):
            options["force_virtual_addressing"] = True
        timeout = self.setting(bucket, "connection.establish.timeout")
        options["connect_timeout"] = _seconds(timeout) if timeout else CONNECT_SECONDS
        attempts = self.setting(bucket, "attempts.maximum") or ""
        options["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(
            max_attempts=max(1, int(attempts)) if attempts.isdigit() else DEFAULT_ATTEMPTS
        )
        return options


def _secret(key: str) -> bool:
    """Whether KEY ('secret.key', 'bucket.lake.secret.key', ...) holds a secret."""
    return ".".join(key.split(".")[-2:]) in SECRET_KEYS


def _true(text: str) -> bool:
    return text.strip().lower() == "true"


def _seconds(text: str) -> float:
    """A Hadoop duration in seconds: milliseconds when bare, or with a unit (5s, 200ms, 1m)."""
    match = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|h)?\s*", text)
    if not match:
        return CONNECT_SECONDS
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 0.001}[match.group(2)]
    return int(match.group(1)) * scale


@functools.lru_cache(maxsize=64)
def _filesystem(settings: S3Settings, bucket: str) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(**settings.options(bucket))


_current = S3Settings()


def use(settings: S3Settings) -> None:
    """Open object storage with SETTINGS in this process from now on (the driver's, once it
    has read them; an executor's, at the start of each task)."""
    global _current
    _current = settings


def current() -> S3Settings:
    return _current


def split_location(location: str) -> tuple[str, list[tuple[str, str]]]:
    """LOCATION without a query, and the Spark settings its query gave:
    s3://lake/sales?endpoint_override=HOST:PORT&scheme=http is s3://lake/sales read with
    spark.hadoop.fs.s3a.bucket.lake.endpoint=HOST:PORT and ...connection.ssl.enabled=false.
    The metastore keeps the location without the query (no secrets in a table's location)."""
    parsed = urlparse(location)
    if parsed.scheme.lower() not in S3_SCHEMES or not parsed.query:
        return location, []
    conf = []
    for name, value in parse_qsl(parsed.query, keep_blank_values=True):
        key = QUERY_SETTINGS.get(name)
        if key is None:
            raise InvalidLocation(
                f"--path {parsed._replace(query='').geturl()}: unknown option {name!r} in the "
                f"location's query; known: {', '.join(QUERY_SETTINGS)}"
            )
        if name == "scheme":
            value = "true" if value.lower() == "https" else "false"
        conf.append((f"{HADOOP_S3A}bucket.{parsed.netloc}.{key}", value))
    return parsed._replace(query="").geturl(), conf


def one_line(error: BaseException) -> str:
    """ERROR's message on one line, without the AWS request id."""
    text = " ".join(str(error).split())
    return re.sub(r"\s*\(Request ID: [^)]*\)", "", text)


# AWS's error names in PyArrow's messages, and what they ask the user to check.
_ADVICE = (
    (
        ("INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH", "ACCESS_DENIED", "EXPIRED_TOKEN"),
        "the credentials were refused: check {prefix}access.key, secret.key and "
        "session.token (or AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, the AWS profile)",
    ),
    (
        ("NETWORK_CONNECTION", "Could not connect", "Couldn't connect", "Timeout"),
        "{endpoint} does not answer: check {prefix}endpoint (and "
        "connection.ssl.enabled) and that the server is up",
    ),
    (("NO_SUCH_BUCKET",), "the bucket {bucket} does not exist at {endpoint}"),
)


def explain(location: str, error: BaseException) -> str:
    """What failed reading LOCATION, in one line, with what to check for the errors of object
    storage a user can fix."""
    text = one_line(error)
    parsed = urlparse(location)
    if parsed.scheme.lower() not in S3_SCHEMES:
        return text
    bucket = parsed.netloc
    for names, advice in _ADVICE:
        if any(name in text for name in names):
            settings = current()
            endpoint = settings.endpoint(bucket)
            found = advice.format(bucket=bucket, endpoint=endpoint, prefix=settings.prefix)
            return found + f" ({_short(text)})"
    return text


def _short(text: str) -> str:
    """PyArrow's message from the AWS error on ('AWS Error ... operation: why')."""
    at = text.find("AWS Error")
    return text[at:] if at >= 0 else text


def why_missing(fs: pafs.FileSystem, path: str) -> str:
    """For a path of object storage that is not found: ' (no bucket NAME at ENDPOINT)' when its
    bucket is missing too, else ''."""
    if not isinstance(fs, pafs.S3FileSystem):
        return ""
    bucket = path.split("/", 1)[0]
    if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
        return f": the bucket {bucket} does not exist at {current().endpoint(bucket)}"
    return ""
