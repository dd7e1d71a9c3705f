"""A PostgreSQL cluster of the test's own (initdb in a temporary directory, a free port on
127.0.0.1), for tests that restart the database server: restarting the shared one at
127.0.0.1:5432 would break whatever else uses it. As root, the cluster runs as the
`postgres` user (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian's layout), or where pg_ctl is."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version(path: str) -> float:
    try:
        return float(Path(path).parts[-3])
    except ValueError:
        return 0.0


class PrivateCluster:
    def __init__(self, bin_dir: Path) -> None:
        self._bin = bin_dir
        self._user = "postgres" if os.geteuid() == 0 else None
        self.dir = Path(tempfile.mkdtemp(prefix="colstats-pg-"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self.data = self.dir / "data"

    def _run(self, *argv: str) -> None:
        command = [str(self._bin / argv[0]), *argv[1:]]
        if self._user:
            command = ["runuser", "-u", self._user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stdout}{done.stderr}")

    def start(self) -> PrivateCluster:
        if self._user:
            entry = pwd.getpwnam(self._user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-N")
        self._run(*self._pg_ctl("start"))
        return self

    def _pg_ctl(self, action: str) -> list[str]:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=on "
            "-c max_connections=50"
        )
        return [
            *("pg_ctl", action, "-D", str(self.data), "-w", "-t", "60", "-m", "fast"),
            *("-l", str(self.dir / "postgres.log"), "-o", options),
        ]

    def restart(self) -> float:
        """Restart (fast shutdown: open connections are cut); the seconds it took."""
        started = time.monotonic()
        self._run(*self._pg_ctl("restart"))
        return time.monotonic() - started

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "stop", "-D", str(self.data), "-w", "-m", "immediate")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
