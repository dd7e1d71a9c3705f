"""An S3-compatible server on 127.0.0.1 for the tests: moto's server in a process of its own,
which checks credentials (a user with an access key and a policy that allows S3 is made
first, before every request must be signed with a key it knows)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.fs as pafs

REGION = "us-east-1"
BUCKET = "lake"
"""The bucket the tests' server has from the start."""
# The IAM calls made without credentials: the user, its access key, its policy.
_UNSIGNED_CALLS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class S3Server:
    """moto's server on a loopback port; its request log is LOG (one line a request)."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.log = folder / "s3-requests.log"
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_UNSIGNED_CALLS)}
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self._wait()
        self.access_key, self.secret_key = self._make_user()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto's server stopped: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("moto's server did not start within 60 s")

    def _make_user(self) -> tuple[str, str]:
        import boto3  # type: ignore[import-untyped]

        iam = boto3.client(
            "iam",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="unsigned",
            aws_secret_access_key="unsigned",
        )
        iam.create_user(UserName="colstats")
        key = iam.create_access_key(UserName="colstats")["AccessKey"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
        }
        iam.put_user_policy(UserName="colstats", PolicyName="s3", PolicyDocument=json.dumps(policy))
        return key["AccessKeyId"], key["SecretAccessKey"]

    def filesystem(self) -> pafs.S3FileSystem:
        """PyArrow's filesystem on this server, which may create buckets."""
        return pafs.S3FileSystem(
            access_key=self.access_key,
            secret_key=self.secret_key,
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            region=REGION,
            allow_bucket_creation=True,
        )

    def spark_conf(self) -> dict[str, str]:
        """Spark's S3A settings of this server, as a user gives them."""
        prefix = "spark.hadoop.fs.s3a."
        return {
            prefix + "endpoint": self.endpoint,
            prefix + "access.key": self.access_key,
            prefix + "secret.key": self.secret_key,
            prefix + "path.style.access": "true",
            prefix + "connection.ssl.enabled": "false",
            prefix + "endpoint.region": REGION,
        }

    def requests(self, text: str) -> int:
        """How many requests so far had TEXT in their log line."""
        return sum(text in line for line in self.log.read_text().splitlines())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def upload(s3: S3Server, local: Path, prefix: str) -> str:
    """Copy the folder LOCAL to BUCKET/PREFIX on S3; its s3a:// location."""
    pafs.copy_files(
        str(local),
        f"{BUCKET}/{prefix}",
        source_filesystem=pafs.LocalFileSystem(),
        destination_filesystem=s3.filesystem(),
    )
    return f"s3a://{BUCKET}/{prefix}"
