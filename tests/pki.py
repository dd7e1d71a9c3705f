"""A test PKI made with the openssl command (and keytool for Java's truststore): a CA, the
server's certificate for localhost, 127.0.0.1 and ::1, client certificates for alice and bob,
and a second CA nobody trusts, with a server certificate of its own. EC P-256 keys: quick to
make."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

TRUSTSTORE_PASSWORD = "changeit"


class Pki:
    def __init__(self, directory: Path) -> None:
        self.dir = directory

    def path(self, name: str) -> Path:
        return self.dir / name

    @property
    def ca(self) -> Path:
        return self.path("ca.crt")

    @property
    def truststore(self) -> Path:
        """The CA in a JKS truststore for Hive's client (empty path without keytool)."""
        return self.path("truststore.jks")

    def cert(self, name: str) -> Path:
        return self.path(f"{name}.crt")

    def key(self, name: str) -> Path:
        return self.path(f"{name}.key")

    def make(self) -> Pki:
        self.dir.mkdir(parents=True, exist_ok=True)
        for ca, subject in (("ca", "colstats test CA"), ("other-ca", "an untrusted CA")):
            _openssl(
                *("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
                *("-nodes", "-keyout", str(self.key(ca)), "-out", str(self.cert(ca))),
                *("-days", "30", "-subj", f"/CN={subject}"),
                *("-addext", "basicConstraints=critical,CA:TRUE"),
                *("-addext", "keyUsage=critical,keyCertSign,cRLSign"),
            )
        server_ext = (
            "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n"
        )
        self._issue("server", "/CN=localhost", server_ext, "ca")
        self._issue("untrusted-server", "/CN=localhost", server_ext, "other-ca")
        for user in ("alice", "bob"):
            self._issue(user, f"/O=colstats/CN={user}", "extendedKeyUsage=clientAuth\n", "ca")
        self._issue("mallory", "/CN=alice", "extendedKeyUsage=clientAuth\n", "other-ca")
        if shutil.which("keytool"):
            subprocess.run(
                [
                    *("keytool", "-importcert", "-noprompt", "-alias", "colstats-ca"),
                    *("-file", str(self.ca), "-keystore", str(self.truststore)),
                    *("-storetype", "JKS", "-storepass", TRUSTSTORE_PASSWORD),
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
        return self

    def _issue(self, name: str, subject: str, extensions: str, ca: str) -> None:
        csr, ext = self.path(f"{name}.csr"), self.path(f"{name}.ext")
        _openssl(
            *("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(self.key(name)), "-out", str(csr), "-subj", subject),
        )
        ext.write_text(extensions)
        _openssl(
            *("x509", "-req", "-in", str(csr), "-CA", str(self.cert(ca))),
            *("-CAkey", str(self.key(ca)), "-CAcreateserial", "-out", str(self.cert(name))),
            *("-days", "30", "-extfile", str(ext)),
        )


def _openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed: {done.stderr.strip()}")
