"""`metastore serve` with a Flight port, started as a user starts it: the port from the
configuration file, the token from the environment, TLS from the server's certificate;
a bad setting."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.flight as flight
import pytest
from airport_client import AirportClient
from pki import Pki

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_with_a_flight_port_tls_and_a_token(tmp_path: Path, pki: Pki) -> None:
    thrift_port, flight_port = _free_port(), _free_port()
    config = tmp_path / "metastore.toml"
    config.write_text(
        f'flight_port = {flight_port}\ntls_cert = "{pki.cert("server")}"\n'
        f'tls_key = "{pki.key("server")}"\n'
    )
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "metastore.cli", "--config", str(config), "serve"),
            *("--host", "127.0.0.1", "--port", str(thrift_port)),
            *("--db", f"sqlite:///{tmp_path / 'm.db'}", "--warehouse", str(tmp_path / "wh")),
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "METASTORE_FLIGHT_TOKEN": "tok3n", "PYTHONWARNINGS": "ignore"},
    )
    location = f"grpc+tls://localhost:{flight_port}"
    root = pki.ca.read_bytes()
    try:
        client = AirportClient(location, "hive", token="tok3n", tls_root=root)
        deadline = time.monotonic() + 60
        while True:
            try:
                assert client.create_transaction() == {"identifier": None}
                break
            except flight.FlightUnavailableError:
                if time.monotonic() > deadline or server.poll() is not None:
                    server.kill()
                    raise AssertionError(server.communicate()[1]) from None
                time.sleep(0.2)
        assert [s["name"] for s in client.list_schemas()["schemas"]] == ["default"]
        client.close()
        anonymous = AirportClient(location, "hive", tls_root=root)
        with pytest.raises(flight.FlightUnauthenticatedError):
            anonymous.create_transaction()
        anonymous.close()
        plain = AirportClient(f"grpc://127.0.0.1:{flight_port}", "hive", token="tok3n")
        with pytest.raises(flight.FlightError):
            plain.create_transaction()
        plain.close()
    finally:
        server.send_signal(signal.SIGTERM)
        _, log = server.communicate(timeout=60)
    assert server.returncode == 0, log
    assert (
        f"serving Arrow Flight (DuckDB's Airport) on 127.0.0.1:{flight_port} (TLS, bearer token)"
        in log
    )


def test_a_bad_flight_port_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "metastore.cli", "serve", "--flight-port", "70000"),
            *("--db", f"sqlite:///{tmp_path / 'm.db'}"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode != 0
    assert "flight_port must be a port number, not 70000" in done.stderr


def test_a_flight_port_taken_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                *(sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1"),
                *("--port", str(_free_port()), "--flight-port", str(port)),
                *("--db", f"sqlite:///{tmp_path / 'm.db'}", "--warehouse", str(tmp_path / "wh")),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"metastore serve: error: cannot listen on 127.0.0.1:{port}: the port is in use "
        "(another metastore serve?); choose another with --flight-port"
    ]
    assert not (tmp_path / "m.db").exists()  # refused before the database is created
