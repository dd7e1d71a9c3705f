"""The object-storage run of analyze_bench.py: an S3-compatible server on loopback (moto's, from
PyPI) holding the same data, read by the job (PyArrow's S3 filesystem) and by Spark's own
ANALYZE (Hadoop's S3A), each configured with the same `spark.hadoop.fs.s3a.*` settings.

Spark's S3A needs hadoop-aws and an AWS SDK, which pyspark does not ship and no Maven
repository here serves; PyPI's sagemaker-pyspark carries hadoop-aws 3.3.1 and the AWS SDK
bundle 1.11.901. They are fetched once into bench/.cache. Hadoop 3.3.1's S3A reads some
durations as plain numbers where pyspark's Hadoop 3.4 defaults give them with units (`60s`),
and names SDK 2 credential providers it does not have: HADOOP_33_SETTINGS sets those.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
SAGEMAKER = "sagemaker-pyspark==1.4.5"
JARS = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")
BUCKET = "lake"
KEY = "bench"
"""moto's server takes any key when it checks none (the bench's does not)."""

HADOOP_33_SETTINGS = {
    "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    "spark.hadoop.fs.s3a.aws.credentials.provider": (
        "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
    ),
    "spark.hadoop.fs.s3a.assumed.role.session.duration": "1800000",
    "spark.hadoop.fs.s3a.connection.establish.timeout": "30000",
    "spark.hadoop.fs.s3a.connection.timeout": "200000",
    "spark.hadoop.fs.s3a.connection.ttl": "300000",
    "spark.hadoop.fs.s3a.threads.keepalivetime": "60",
    "spark.hadoop.fs.s3a.multipart.purge.age": "86400",
}


def s3a_jars() -> list[Path]:
    """hadoop-aws and the AWS SDK bundle, from PyPI's sagemaker-pyspark (downloaded once)."""
    found = [CACHE / name for name in JARS]
    if all(path.exists() for path in found):
        return found
    CACHE.mkdir(exist_ok=True)
    print(f"fetching {SAGEMAKER} (180 MB, once) for Spark's S3A jars ...")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(CACHE), SAGEMAKER],
        check=True,
    )
    archive = next(CACHE.glob("sagemaker_pyspark-*.tar.gz"))
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if name in JARS:
                source = tar.extractfile(member)
                assert source is not None
                (CACHE / name).write_bytes(source.read())
    archive.unlink()
    return found


class MotoServer:
    """moto's S3-compatible server on a loopback port, in a process of its own."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("moto's server did not start") from None
                time.sleep(0.1)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spark_conf(self) -> dict[str, str]:
        """The S3A settings of this server, which the job and Spark both read."""
        prefix = "spark.hadoop.fs.s3a."
        return {
            prefix + "endpoint": self.endpoint,
            prefix + "access.key": KEY,
            prefix + "secret.key": KEY,
            prefix + "path.style.access": "true",
            prefix + "connection.ssl.enabled": "false",
            prefix + "endpoint.region": "us-east-1",
        }

    def upload(self, local: Path, prefix: str) -> str:
        """Copy the folder LOCAL to the bucket; its s3a:// location."""
        import pyarrow.fs as pafs

        fs = pafs.S3FileSystem(
            access_key=KEY,
            secret_key=KEY,
            endpoint_override=f"127.0.0.1:{self.port}",
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        fs.create_dir(BUCKET)
        pafs.copy_files(
            str(local),
            f"{BUCKET}/{prefix}",
            source_filesystem=pafs.LocalFileSystem(),
            destination_filesystem=fs,
        )
        return f"s3a://{BUCKET}/{prefix}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
