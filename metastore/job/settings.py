"""The configuration the job and its metastore client read besides their own options:
Spark's (spark-submit's, `spark-defaults.conf`, the job's `--conf`) and Hadoop's and Hive's
XML files (`core-site.xml` in `$HADOOP_CONF_DIR`, `hive-site.xml` in `$HIVE_CONF_DIR` or
given), where Spark's and Hive's own clients find the metastore's address and security."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path

from metastore.job.errors import OptionsError

SPARK_HADOOP = "spark.hadoop."
"""Spark gives its Hadoop configuration (and its Hive client) these settings, without it."""


def spark_conf(extra: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Spark's configuration as the job's session will have it, read before Spark starts:
    spark-submit's (when the job runs under it) or spark-defaults.conf, then EXTRA (--conf)."""
    conf: dict[str, str] = {}
    if os.environ.get("PYSPARK_GATEWAY_PORT"):  # under spark-submit: its JVM runs already
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()
        conf.update(SparkConf().getAll())
    else:
        conf.update(spark_defaults())
    conf.update(extra)
    return conf


def spark_defaults() -> dict[str, str]:
    """The settings of spark-defaults.conf in $SPARK_CONF_DIR or $SPARK_HOME/conf, as
    spark-submit reads it ('key value' or 'key=value' lines, # comments)."""
    folder = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None
    )
    if folder is None:
        return {}
    path = Path(folder) / "spark-defaults.conf"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([^\s=:]+)\s*[\s=:]\s*(.*)$", line)
        if match:
            out[match.group(1)] = match.group(2).strip()
    return out


def hadoop_settings(hive_site: str | None, spark: Mapping[str, str]) -> dict[str, str]:
    """Hadoop's and Hive's settings as the Hive client of a Spark job sees them, each source
    over the ones before: core-site.xml in $HADOOP_CONF_DIR, hive-site.xml (HIVE_SITE, else
    the one in $HIVE_CONF_DIR), then SPARK's `spark.hadoop.*` settings. A HIVE_SITE that
    cannot be read is an OptionsError; a folder without the file adds nothing."""
    settings: dict[str, str] = {}
    hadoop_conf = os.environ.get("HADOOP_CONF_DIR")
    if hadoop_conf and (Path(hadoop_conf) / "core-site.xml").is_file():
        settings.update(read_xml(Path(hadoop_conf) / "core-site.xml"))
    if hive_site is not None:
        settings.update(read_xml(Path(hive_site)))
    elif os.environ.get("HIVE_CONF_DIR"):
        found = Path(os.environ["HIVE_CONF_DIR"]) / "hive-site.xml"
        if found.is_file():
            settings.update(read_xml(found))
    settings.update(
        {
            key[len(SPARK_HADOOP) :]: value
            for key, value in spark.items()
            if key.startswith(SPARK_HADOOP)
        }
    )
    return settings


def read_xml(path: Path) -> dict[str, str]:
    """The properties of a Hadoop configuration file (<configuration><property><name>,
    <value>), names and values stripped; an OptionsError when it cannot be read."""
    try:
        root = ET.parse(path).getroot()
    except OSError as e:
        raise OptionsError(f"cannot read {path}: {e.strerror or e}") from None
    except ET.ParseError as e:
        raise OptionsError(f"{path} is not a Hadoop configuration file: {e}") from None
    out = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and value is not None:
            out[name.strip()] = value.strip()
    return out
