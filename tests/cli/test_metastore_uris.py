"""Several metastores in --uri and $METASTORE_URI, as Hive's clients take them
(`thrift://a:9083,thrift://b:9083`): the first that answers, in order or at random; one line
naming each when none does; a malformed one is a usage error. (The failover of a connection
lost between calls is tested with the client itself, tests/job/test_client.py.)"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from cli_runs import metastore
from conftest import RunningServer

from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from metastore.config import Settings
from metastore.store import migrate

REFUSED = "connection refused (is `metastore serve` running there, and is the port right?)"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('uris') / 'metastore.db'}"
    migrate.upgrade(url)
    server = RunningServer(url, Settings())
    yield f"thrift://127.0.0.1:{server.port}"
    server.stop()


def test_a_metastore_that_is_down_is_skipped(live: str) -> None:
    down = f"thrift://127.0.0.1:{closed_port()}"
    done = metastore("ping", "--uri", f"{down},{live}")
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.startswith(f"{live}: a Hive Metastore answered in ")
    done = metastore("ls", env={"METASTORE_URI": f"{down}, {live}"})
    assert done.returncode == EXIT_OK, done.stderr
    for _ in range(4):  # either order finds the live one
        done = metastore("ping", "--uri", f"{down},{live}", "--uri-selection", "random")
        assert done.returncode == EXIT_OK, done.stderr


def test_when_none_answers_each_is_named() -> None:
    first, second = (f"thrift://127.0.0.1:{closed_port()}" for _ in range(2))
    done = metastore("ls", "--uri", f"{first},{second}")
    assert done.returncode == EXIT_FAILED
    assert done.stderr == (
        "metastore ls: error: cannot reach the metastore at any of its URIs: "
        f"{first}: {REFUSED}; {second}: {REFUSED}\n"
    )


@pytest.mark.parametrize("uri", ["thrift://127.0.0.1:1,localhost:9083", "thrift://a:b", ","])
def test_a_malformed_uri_is_a_usage_error(uri: str) -> None:
    for command in ("ping", "ls", "describe"):
        done = metastore(command, *(["db.t"] if command == "describe" else []), "--uri", uri)
        assert done.returncode == EXIT_USAGE, done.stderr
        assert done.stderr.startswith(f"metastore {command}: error: metastore URI '")
        assert done.stderr.endswith("' is not of the form thrift://HOST:PORT\n"), done.stderr
    done = metastore("ping", "--uri-selection", "first")
    assert done.returncode == EXIT_USAGE
    assert "argument --uri-selection: invalid choice: 'first'" in done.stderr
