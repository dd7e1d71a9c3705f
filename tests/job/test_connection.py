"""How the client's connection is chosen: the options first, then Hive's settings as Hive's
client reads them (hive-site.xml, core-site.xml, Spark's spark.hadoop.*), under their Hive 2
and Hive 4 names; the combinations refused, and why."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from metastore.cli import analyze as analyze_command
from metastore.job.connection import Connection, Given, Kerberos, Tls, connection, parse_uris
from metastore.job.errors import OptionsError
from metastore.job.settings import hadoop_settings, read_xml

SERVICE = "hive/_HOST@EXAMPLE.COM"
SERVICE_KEY = "hive.metastore.kerberos.principal"


def site(path: Path, **settings: str) -> Path:
    properties = "".join(
        f"  <property>\n    <name>{name}</name>\n    <value> {value} </value>\n  </property>\n"
        for name, value in settings.items()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{properties}</configuration>\n')
    return path


def test_uris_are_a_comma_separated_list() -> None:
    assert parse_uris("thrift://a:9083, thrift://b") == ("thrift://a:9083", "thrift://b")
    assert Connection.of("thrift://a:1,thrift://b:2").uri == "thrift://a:1,thrift://b:2"
    for bad in ("http://a:9083", "thrift://a:9083,b:9083", "thrift://a:port", "thrift://:1", ","):
        with pytest.raises(OptionsError, match="is not of the form thrift://HOST:PORT"):
            parse_uris(bad)


def test_plain_by_default() -> None:
    assert connection(Given(), {}) == Connection(("thrift://localhost:9083",))
    assert connection(Given(uri="thrift://m:1", uri_selection="random"), {}) == Connection(
        ("thrift://m:1",), random_order=True
    )


def test_hive_settings_under_either_name(tmp_path: Path) -> None:
    hive2 = {
        "hive.metastore.uris": "thrift://a:9083,thrift://b:9083",
        "hive.metastore.uri.selection": "RANDOM",
        "hive.metastore.sasl.enabled": "true",
        "hive.metastore.kerberos.principal": SERVICE,
        "hadoop.rpc.protection": "privacy,authentication",
    }
    expected = Connection(
        ("thrift://a:9083", "thrift://b:9083"),
        random_order=True,
        kerberos=Kerberos(SERVICE, ("auth-conf", "auth")),
    )
    assert connection(Given(), hive2) == expected
    hive4 = {
        "metastore.thrift.uris": "thrift://a:9083,thrift://b:9083",
        "metastore.thrift.uri.selection": "random",
        "metastore.sasl.enabled": "TRUE",
        "metastore.kerberos.principal": SERVICE,
        "hadoop.rpc.protection": "privacy,authentication",
    }
    assert connection(Given(), hive4) == expected
    # The options win, setting by setting.
    given = Given(
        uri="thrift://c:1", uri_selection="sequential", kerberos_qop="integrity", principal="me@R"
    )
    assert connection(given, hive2) == Connection(
        ("thrift://c:1",), kerberos=Kerberos(SERVICE, ("auth-int",), "me@R")
    )
    assert Kerberos(SERVICE).service_for("Metastore.Example.COM") == (
        "hive/metastore.example.com@EXAMPLE.COM"
    )


def test_the_files_and_spark_in_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """core-site.xml, then hive-site.xml ($HIVE_CONF_DIR's, or the one given), then Spark's
    spark.hadoop.* settings, each over the ones before."""
    site(tmp_path / "hadoop" / "core-site.xml", **{"hadoop.rpc.protection": "integrity", "x": "1"})
    site(
        tmp_path / "hive" / "hive-site.xml",
        **{"hadoop.rpc.protection": "privacy", "hive.metastore.uris": "thrift://h:1"},
    )
    given_site = site(tmp_path / "given.xml", **{"hive.metastore.uris": "thrift://g:1"})
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path / "hadoop"))
    monkeypatch.setenv("HIVE_CONF_DIR", str(tmp_path / "hive"))
    spark = {"spark.hadoop.hive.metastore.use.SSL": "true", "spark.executor.memory": "1g"}
    assert hadoop_settings(None, spark) == {
        "hadoop.rpc.protection": "privacy",
        "x": "1",
        "hive.metastore.uris": "thrift://h:1",
        "hive.metastore.use.SSL": "true",
    }
    assert hadoop_settings(str(given_site), {})["hive.metastore.uris"] == "thrift://g:1"
    assert read_xml(given_site) == {"hive.metastore.uris": "thrift://g:1"}
    with pytest.raises(OptionsError, match=r"cannot read .*nowhere\.xml: No such file"):
        hadoop_settings(str(tmp_path / "nowhere.xml"), {})
    (tmp_path / "broken.xml").write_text("<configuration><property>")
    with pytest.raises(OptionsError, match="is not a Hadoop configuration file"):
        hadoop_settings(str(tmp_path / "broken.xml"), {})


def test_tls_from_options_and_settings(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_text("c")
    key.write_text("k")
    assert connection(Given(tls_ca=str(ca), tls_cert=str(cert), tls_key=str(key)), {}).tls == Tls(
        str(ca), str(cert), str(key)
    )
    settings = {"hive.metastore.use.SSL": "true"}
    assert connection(Given(), settings).tls == Tls()  # the system's CAs
    settings["hive.metastore.truststore.path"] = str(ca)
    assert connection(Given(), settings).tls == Tls(str(ca))
    # SASL wins over TLS in the settings, as in Hive's client; an option decides.
    sasl = {**settings, "hive.metastore.sasl.enabled": "true", SERVICE_KEY: SERVICE}
    assert connection(Given(), sasl).tls is None
    assert connection(Given(tls_ca=str(ca)), sasl) == Connection(
        ("thrift://localhost:9083",), tls=Tls(str(ca))
    )
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    with pytest.raises(OptionsError, match=r"truststore.jks is a Java keystore, which this client"):
        connection(Given(), {**settings, "hive.metastore.truststore.path": str(jks)})


@pytest.mark.parametrize(
    ("given", "settings", "message"),
    [
        (
            Given(kerberos_principal=SERVICE, tls_ca="ca.crt"),
            {},
            "give Kerberos or TLS, not both",
        ),
        (Given(keytab="k.keytab"), {}, "--keytab applies to Kerberos: give the metastore's"),
        (Given(kerberos_qop="privacy"), {}, "--kerberos-qop applies to Kerberos"),
        (
            Given(kerberos_principal=SERVICE, keytab="/no/such.keytab", principal="me@R"),
            {},
            "--keytab /no/such.keytab: no such file",
        ),
        (Given(kerberos_principal=SERVICE, keytab="k"), {}, "give the principal of its key"),
        (Given(kerberos_principal=SERVICE, kerberos_qop="secret"), {}, "unknown protection"),
        (Given(), {"hive.metastore.sasl.enabled": "true"}, "no metastore principal is set"),
        (
            Given(kerberos_principal=SERVICE),
            {"hadoop.rpc.protection": "strong"},
            "hadoop.rpc.protection: unknown protection 'strong'",
        ),
        (Given(tls_key="c.key"), {}, "--tls-key is the key of a client certificate"),
        (Given(tls_ca="/no/ca.crt"), {}, "--tls-ca /no/ca.crt: no such file"),
        (Given(uri_selection="first"), {}, "unknown URI selection 'first'"),
        (Given(uri="thrift://a:1,http://b:2"), {}, "'http://b:2' is not of the form"),
    ],
)
def test_what_does_not_fit_is_refused(given: Given, settings: dict[str, str], message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        connection(given, settings)


def test_spark_submit_credentials(tmp_path: Path) -> None:
    """spark-submit's --principal and --keytab (spark.kerberos.*) are the user's."""
    keytab = tmp_path / "me.keytab"
    keytab.write_bytes(b"\x05\x02")
    spark = {"spark.kerberos.principal": "me@R", "spark.kerberos.keytab": str(keytab)}
    found = connection(Given(kerberos_principal=SERVICE), {}, spark).kerberos
    assert found == Kerberos(SERVICE, ("auth",), "me@R", str(keytab))


def test_the_jobs_spark_settings_name_the_metastore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """metastore analyze reads them from its --conf (and spark-defaults.conf), as the Hive
    client of its Spark session does."""
    for name in ("METASTORE_URI", "HIVE_CONF_DIR", "HADOOP_CONF_DIR", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(
        "spark.hadoop.hive.metastore.uris  thrift://a:1,thrift://b:2\n"
    )
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    parser = argparse.ArgumentParser()
    analyze_command.add_arguments(parser)
    conf = [
        "--conf=spark.hadoop.hive.metastore.sasl.enabled=true",
        f"--conf=spark.hadoop.hive.metastore.kerberos.principal={SERVICE}",
    ]
    options = analyze_command.options(parser.parse_args(["d.t", "--path", str(tmp_path), *conf]))
    assert options.uri == "thrift://a:1,thrift://b:2"
    assert options.connection == Connection(
        ("thrift://a:1", "thrift://b:2"), kerberos=Kerberos(SERVICE)
    )
    options = analyze_command.options(parser.parse_args(["d.t", "--uri", "thrift://c:3"]))
    assert options.connection == Connection(("thrift://c:3",))
