"""The `metastore` command in-process: its parser, messages and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, main
from metastore.store import migrate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse: --help and usage errors
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK
    for command in ("serve", "ping", "describe", "analyze", "demo", "db"):
        assert command in out
    assert "Exit codes: 0 done, 1 failed" in out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "analyze")
    assert code == EXIT_USAGE
    assert "the following arguments are required: table" in err
    code, _, err = run(capsys, "analyze", "db.t", "--format", "avro")
    assert code == EXIT_USAGE and "invalid choice: 'avro'" in err
    code, _, err = run(capsys, "nonsense")
    assert code == EXIT_USAGE and "invalid choice" in err


def test_db_upgrade_current_and_history(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    code, out, _ = run(capsys, "db", "current", "--db", url)
    assert code == EXIT_OK and "no database file yet (`metastore db upgrade` creates it)" in out
    code, out, _ = run(capsys, "db", "history", "--db", url)
    assert code == EXIT_OK and "initial schema" in out
    code, out, _ = run(capsys, "db", "check", "--db", url)
    assert code == EXIT_FAILED and "no database file; run `metastore db upgrade`" in out
    assert not (tmp_path / "m.db").exists()  # the read-only commands created nothing
    code, out, _ = run(capsys, "db", "upgrade", "--db", url)
    assert code == EXIT_OK and f"is at revision {migrate.head_revision()}" in out
    code, out, _ = run(capsys, "db", "current", "--db", url)
    assert code == EXIT_OK and "up to date" in out
    code, out, _ = run(capsys, "db", "history", "--db", url)
    assert code == EXIT_OK and "initial schema" in out


def test_bad_settings_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("METASTORE_PORT", "eighty")
    code, _, err = run(capsys, "serve", "--db", f"sqlite:///{tmp_path / 'm.db'}")
    assert code == EXIT_USAGE
    assert err == "metastore serve: error: METASTORE_PORT: port must be an integer, not 'eighty'\n"
    monkeypatch.delenv("METASTORE_PORT")
    settings = tmp_path / "s.toml"
    settings.write_text("colour = 'blue'\n")
    code, _, err = run(capsys, "--config", str(settings), "db", "current")
    assert code == EXIT_USAGE and "unknown setting(s) colour" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--security", "tls", "--tls-cert", "/none"), "security = tls needs tls_cert and tls_key"),
        (
            ("--security", "tls", "--tls-cert", "/none", "--tls-key", "/none"),
            "cannot use the TLS certificate, key or client CA",
        ),
        (("--security", "kerberos"), "security = kerberos needs kerberos_keytab"),
        (("--security", "ldap"), "security must be one of plain, kerberos, tls, not 'ldap'"),
        (("--idle-timeout", "-1"), "idle_timeout must be 0 or more"),
        (("--max-connections", "0"), "max_connections must be at least 1"),
        (("--group-mapping", "alice"), "group_mapping: group mapping entry 'alice'"),
    ],
)
def test_unusable_security_settings_stop_serve_before_the_database_is_touched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, "serve", "--db", f"sqlite:///{tmp_path / 'm.db'}", *flags)
    assert code == EXIT_USAGE and message in err, err
    assert not (tmp_path / "m.db").exists()


SERVE_ON_A_FREE_PORT = ("serve", "--host", "127.0.0.1", "--port", "0")


def test_serve_refuses_an_old_schema_without_migrating(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys, *SERVE_ON_A_FREE_PORT, "--no-migrate", "--db", f"sqlite:///{tmp_path / 'm.db'}"
    )
    assert code == EXIT_USAGE and "is not at the newest revision" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("analyze", "no_dot", "--uri", "thrift://h:1", "--path", "/p"), "must be given as DB"),
        (
            ("analyze", "d.t", "--uri", "thrift://h:1", "--path", "/p", "--format", "csv"),
            "format csv needs a schema",
        ),
        (
            ("analyze", "d.t", "--uri", "thrift://h:1", "--path", "/p", "--partition", "ds"),
            "'ds' is not key=value",
        ),
        (("analyze", "d.t", "--uri", "thrift://h:1", "--path", "/p", "--batch-size", "0"), "1"),
        (
            ("analyze", "d.t", "--uri", "thrift://h:1", "--spark-table", "s.t", "--format", "orc"),
            "--format applies to files",
        ),
        (("analyze", "d.t", "--uri", "thrift://h:1", "--schema", "a INT"), "--schema applies"),
    ],
)
def test_bad_job_options_are_one_line_and_exit_2_before_spark_starts(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USAGE
    assert err.startswith("metastore analyze: error: ") and message in err
    assert err.count("\n") == 1 and out == ""
