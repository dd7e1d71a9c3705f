"""A throw-away MIT Kerberos realm for the tests: a KDC on a free port of 127.0.0.1, run from
one directory, with Debian's krb5-kdc and krb5-user tools.

Nothing outside the directory is read or written: krb5.conf and kdc.conf are generated there
and chosen with KRB5_CONFIG and KRB5_KDC_PROFILE; the database, keytabs, ticket caches, the
replay cache and the KDC's log (kdc.log: which ticket was asked for, issued or refused; the
first place to look when a test fails) live there too.

krb5.conf turns DNS canonicalization off, so a client asks for hive/localhost exactly as its
URI says, and makes every client (MIT and Java) use TCP.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

REALM = "COLSTATS.TEST"
SERVICE = f"hive/localhost@{REALM}"
USERS = ("alice", "bob")
TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "kdestroy")


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _free_port() -> int:
    """A port free for TCP and UDP on 127.0.0.1 (the KDC listens on both)."""
    while True:
        with socket.socket() as tcp:
            tcp.bind(("127.0.0.1", 0))
            port: int = tcp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port


class KerberosRealm:
    """The realm COLSTATS.TEST in DIRECTORY: the service principal hive/localhost with its
    keytab, and users alice and bob, each with a keytab (`keytab(user)`)."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.port = _free_port()
        self.krb5_conf = directory / "krb5.conf"
        self.service_keytab = directory / "hive.keytab"
        self._kdc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """Variables that point MIT's libraries and tools at this realm."""
        return {
            "KRB5_CONFIG": str(self.krb5_conf),
            "KRB5_KDC_PROFILE": str(self.dir / "kdc.conf"),
            "KRB5RCACHEDIR": str(self.dir),
        }

    def keytab(self, user: str) -> Path:
        return self.dir / f"{user}.keytab"

    def ccache(self, name: str) -> Path:
        return self.dir / f"{name}.ccache"

    def start(self) -> KerberosRealm:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.krb5_conf.write_text(
            f"""[libdefaults]
    default_realm = {REALM}
    dns_lookup_realm = false
    dns_lookup_kdc = false
    rdns = false
    dns_canonicalize_hostname = false
    udp_preference_limit = 1
    ticket_lifetime = 1h

[realms]
    {REALM} = {{
        kdc = 127.0.0.1:{self.port}
    }}

[domain_realm]
    localhost = {REALM}
"""
        )
        (self.dir / "kdc.conf").write_text(
            f"""[kdcdefaults]
    kdc_listen = 127.0.0.1:{self.port}
    kdc_tcp_listen = 127.0.0.1:{self.port}

[realms]
    {REALM} = {{
        database_name = {self.dir}/principal
        key_stash_file = {self.dir}/stash
        acl_file = {self.dir}/kadm5.acl
        max_life = 1h
    }}

[logging]
    kdc = FILE:{self.dir}/kdc.log
"""
        )
        (self.dir / "kadm5.acl").write_text("")
        self._run("kdb5_util", "create", "-s", "-r", REALM, "-P", "master-pw")
        queries = [f"addprinc -randkey {SERVICE}", f"ktadd -k {self.service_keytab} {SERVICE}"]
        for user in USERS:
            # -norandkey keeps the password working next to the exported key.
            queries += [
                f"addprinc -pw {user}-pw {user}@{REALM}",
                f"ktadd -norandkey -k {self.keytab(user)} {user}@{REALM}",
            ]
        for query in queries:
            self._run("kadmin.local", "-r", REALM, "-q", query)
        self._kdc = subprocess.Popen(
            ["krb5kdc", "-n", "-r", REALM],
            env={**os.environ, **self.env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while True:
            if self._kdc.poll() is not None:
                raise RuntimeError(f"krb5kdc exited ({self._kdc.returncode}); see {self.dir}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("krb5kdc did not start listening") from None
                time.sleep(0.05)

    def kinit(self, user: str, ccache: Path) -> None:
        """A ticket-granting ticket for USER, from its keytab, into CCACHE."""
        self._run("kinit", "-c", f"FILE:{ccache}", "-kt", str(self.keytab(user)), f"{user}@{REALM}")

    def kdc_log(self) -> str:
        path = self.dir / "kdc.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self._kdc is not None:
            self._kdc.terminate()
            try:
                self._kdc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._kdc.kill()
                self._kdc.wait()
            self._kdc = None

    def _run(self, *argv: str) -> None:
        done = subprocess.run(
            argv, capture_output=True, text=True, env={**os.environ, **self.env}, timeout=60
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
