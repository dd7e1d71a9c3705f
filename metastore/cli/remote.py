"""Reaching a metastore from the command line: the options of every command that talks to
one (its URIs and their order, Kerberos, TLS, where Hive's settings are), and `check`: is
something there, and does it speak HMS?

`check` makes one real call (`get_all_databases`) without retries, so that a wrong URI, a
host that does not answer, or a port where something else listens is reported at once and
in one line (before `analyze` starts Spark, for instance), instead of after retries and a
Python trace.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from metastore.cli.errors import CliError
from metastore.job.client import RETRIES, MetastoreClient
from metastore.job.connection import DEFAULT_URI, SELECTIONS, Connection, Given, address
from metastore.job.connection import connection as resolve
from metastore.job.errors import MetastoreCallFailed
from metastore.job.settings import hadoop_settings, spark_defaults


def add_arguments(
    parser: argparse.ArgumentParser, uri_help: str | None = None, uri_flag: str = "--uri"
) -> None:
    """--uri (or URI_FLAG, then required: `db import --from`) and the options of the
    metastore's connection, in a group of their own."""
    group = parser.add_argument_group(
        "the metastore's connection",
        "Options win over Hive's settings, read as Hive's client in Spark reads them: Spark's "
        "spark.hadoop.* settings (spark-defaults.conf, and analyze's --conf), then hive-site.xml "
        "(--hive-site, else $HIVE_CONF_DIR's), then core-site.xml in $HADOOP_CONF_DIR.",
    )
    group.add_argument(
        uri_flag,
        dest="uri",
        required=uri_flag != "--uri",
        metavar="URI",
        help=uri_help
        or "thrift://HOST:PORT, or several comma-separated, tried in order (default "
        f"$METASTORE_URI, else hive.metastore.uris, else {DEFAULT_URI})",
    )
    group.add_argument(
        "--uri-selection",
        choices=SELECTIONS,
        type=str.lower,
        help="try the URIs in order, or in a random order (default sequential, or "
        "metastore.thrift.uri.selection)",
    )
    group.add_argument("--hive-site", metavar="PATH", help="a hive-site.xml to read settings from")
    group.add_argument(
        "--kerberos-principal",
        metavar="PRINCIPAL",
        help="connect with Kerberos (SASL GSSAPI) to the metastore of this principal, e.g. "
        "hive/_HOST@EXAMPLE.COM, _HOST being the URI's host (hive.metastore.sasl.enabled "
        "and hive.metastore.kerberos.principal)",
    )
    group.add_argument(
        "--kerberos-qop",
        metavar="QOP",
        help="the protections to accept, by preference: authentication, integrity, privacy "
        "(default hadoop.rpc.protection, else authentication)",
    )
    group.add_argument("--principal", help="your Kerberos principal (default: the ticket cache's)")
    group.add_argument("--keytab", metavar="PATH", help="log in as --principal from this keytab")
    group.add_argument(
        "--tls-ca",
        metavar="PATH",
        help="connect with TLS, trusting this CA (PEM; default with hive.metastore.use.SSL: "
        "hive.metastore.truststore.path if PEM, else the system's CAs)",
    )
    group.add_argument("--tls-cert", metavar="PATH", help="with TLS, this client certificate (PEM)")
    group.add_argument("--tls-key", metavar="PATH", help="the key of --tls-cert (PEM)")


def connection(args: argparse.Namespace, spark_conf: Mapping[str, str] | None = None) -> Connection:
    """The connection the options ARGS describe, completed from Hive's settings and Spark's
    (SPARK_CONF: the job's; None: spark-defaults.conf's); --uri defaults to $METASTORE_URI."""
    given = Given(
        uri=args.uri or os.environ.get("METASTORE_URI") or None,
        uri_selection=args.uri_selection,
        kerberos_principal=args.kerberos_principal,
        kerberos_qop=args.kerberos_qop,
        principal=args.principal,
        keytab=args.keytab,
        tls_ca=args.tls_ca,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )
    spark = spark_defaults() if spark_conf is None else spark_conf
    return resolve(given, hadoop_settings(args.hive_site, spark), spark)


@dataclass(frozen=True)
class Answer:
    """What a metastore answered to the check: which URI, its databases, how long it took."""

    uri: str
    databases: list[str]
    seconds: float


def check(connection: Connection, *, timeout_s: float = 30.0) -> Answer:
    """Call get_all_databases once; an error with the reason when that fails."""
    client, answer = connect(connection, timeout_s=timeout_s)
    client.close()
    return answer


def connect(connection: Connection, *, timeout_s: float = 60.0) -> tuple[MetastoreClient, Answer]:
    """A client of CONNECTION that has made one call, and its answer. The call is not
    retried (its failure is reported at once: MetastoreUnreachable, MetastoreRefused, or a
    CliError when what answers is no metastore); the command's next calls are.

    TIMEOUT_S bounds each call of the client (a busy metastore on a loaded machine may take
    seconds; `metastore ping` asks for less)."""
    client = MetastoreClient(connection, retries=0, timeout_s=timeout_s)
    started = time.monotonic()
    try:
        databases = client.call("get_all_databases")
    except MetastoreCallFailed as e:
        client.close()
        raise _not_hms(e) from e
    client.retries = RETRIES
    return client, Answer(client.uri, list(databases), time.monotonic() - started)


def _not_hms(error: MetastoreCallFailed) -> CliError:
    host, port = address(error.uri)
    return CliError(
        f"{error.uri} does not answer as a Hive Metastore ({error.detail}); is {host}:{port} "
        "the metastore's Thrift port (9083 by default)?"
    )
