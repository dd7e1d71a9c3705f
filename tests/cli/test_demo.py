"""`metastore demo` as the Quickstart has a user type it, run once for the module: its whole
output, stderr included, is a line naming its log, a line per stage and the tables, and the
logs of Spark, the job and the embedded metastore are in that file, which alone is left."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_runs import metastore

pytestmark = pytest.mark.spark

# The demo's output; <name> stands for what changes from run to run (see PATTERNS).
EXPECTED = """\
logs of Spark, the statistics job and the embedded metastore: <tmp>/colstats-demo-<id>.log
[1/5] starting a metastore on a new SQLite database
      listening on thrift://127.0.0.1:<port>, database sqlite:///<tmp>/colstats-demo-<id>/metastore.db (<s> s)
[2/5] writing a sample table of 20000 orders to <tmp>/colstats-demo-<id>/orders
      7 daily partitions (ds=2024-01-01 .. ds=2024-01-07), Parquet (<s> s)
[3/5] starting Spark (local)
      Spark <version> (<s> s)
[4/5] computing the statistics of sales.orders and writing them to thrift://127.0.0.1:<port>
      9 columns, 7 partitions analyzed in <s> s (<s> s)
[5/5] reading them back: metastore describe sales.orders [COLUMN] --uri thrift://127.0.0.1:<port>
# sales.orders
table type: EXTERNAL_TABLE, partitioned by ds string, location file:<tmp>/colstats-demo-<id>/orders
basic statistics (accurate): numRows 20000, numFiles 7, totalSize <n>, rawDataSize 697669
column statistics (engine hive):
column      type          min                  max                  num_nulls  distinct_count  avg_col_len  max_col_len  trues  falses  accurate  last_analyzed
----------  ------------  -------------------  -------------------  ---------  --------------  -----------  -----------  -----  ------  --------  -------------------
order_id    bigint        1                    20000                0          20000                                                    true      <time>
customer    string                                                  0          1494            14           14                          true      <time>
country     string                                                  381        11              2            2                           true      <time>
amount      double        0.87                 1103.24              209        8763                                                     true      <time>
quantity    int           1                    10                   0          10                                                       true      <time>
discount    decimal(8,2)  0.00                 49.98                0          3399                                                     true      <time>
is_gift     boolean                                                 964                                                  2308   16728   true      <time>
ordered_at  timestamp     2024-01-01 03:21:20  2024-01-07 23:59:59  0          18475                                                    true      <time>
ship_date   date          2024-01-01           2024-01-12           1634       13                                                       true      <time>

# sales.orders
table type: EXTERNAL_TABLE, partitioned by ds string, location file:<tmp>/colstats-demo-<id>/orders
basic statistics (accurate): numRows 20000, numFiles 7, totalSize <n>, rawDataSize 697669

col_name               amount
data_type              double
min                    0.87
max                    1103.24
num_nulls              209
distinct_count         8763
avg_col_len
max_col_len
num_trues
num_falses
bit_vector
histogram              KLL sketch, <n> bytes
last_analyzed          <time> UTC
engine                 hive
COLUMN_STATS_ACCURATE  true

histogram of amount (10 bins of equal width, KLL estimate):
  [0.87, 111.107)     <bar>  <n>
  [111.107, 221.344)  <bar>  <n>
  [221.344, 331.581)  <bar>  <n>
  [331.581, 441.818)  <bar>  <n>
  [441.818, 552.055)  <bar>  <n>
  [552.055, 662.292)  <bar>  <n>
  [662.292, 772.529)  <bar>  <n>
  [772.529, 882.766)  <bar>  <n>
  [882.766, 993.003)  <bar>  <n>
  [993.003, 1103.24]  <bar>  <n>

# sales.orders partition ds=2024-01-03
table type: EXTERNAL_TABLE, partitioned by ds string, location file:<tmp>/colstats-demo-<id>/orders
basic statistics (accurate): numRows 2857, numFiles 1, totalSize <n>, rawDataSize 99635

col_name               quantity
data_type              int
min                    1
max                    10
num_nulls              0
distinct_count         10
avg_col_len
max_col_len
num_trues
num_falses
bit_vector
histogram              KLL sketch, <n> bytes
last_analyzed          <time> UTC
engine                 hive
COLUMN_STATS_ACCURATE  true

histogram of quantity (10 bins of equal width, KLL estimate):
  [1, 1.9)    <bar>  <n>
  [1.9, 2.8)  <bar>  <n>
  [2.8, 3.7)  <bar>  <n>
  [3.7, 4.6)  <bar>  <n>
  [4.6, 5.5)  <bar>  <n>
  [5.5, 6.4)  <bar>  <n>
  [6.4, 7.3)  <bar>  <n>
  [7.3, 8.2)  <bar>  <n>
  [8.2, 9.1)  <bar>  <n>
  [9.1, 10]   <bar>  <n>
      metastore stopped, temporary files removed (<s> s)
done in <s> s
"""  # noqa: E501

PATTERNS = {
    "id": r"[a-z0-9_]{8}",  # of tempfile's names
    "port": r"\d+",
    "s": r"\d+\.\d",
    "version": r"\d+\.\d+\.\d+",
    "n": r"\d+",  # figures of the files' encoding and the KLL sketches' estimates
    "time": r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d",
    "bar": r"[# ]{40}",
}


def line_pattern(expected: str, tmp: Path) -> re.Pattern[str]:
    """EXPECTED as a regular expression: <tmp> is TMP, <name> PATTERNS[name]."""
    patterns = {**PATTERNS, "tmp": re.escape(str(tmp))}
    parts = re.split(r"<(\w+)>", expected)
    return re.compile(
        "".join(
            re.escape(part) if i % 2 == 0 else f"(?:{patterns[part]})"
            for i, part in enumerate(parts)
        )
    )


@dataclass
class Run:
    done: subprocess.CompletedProcess[str]
    tmp: Path
    """The run's temporary folder ($TMPDIR)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("tmp")
    home = tmp_path_factory.mktemp("home") / "colstats"
    done = metastore("demo", env={"TMPDIR": str(tmp), "METASTORE_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert not home.exists()  # the demo never touches the user's metastore
    return Run(done, tmp)


def test_the_output_is_a_line_per_stage_and_the_tables(demo: Run) -> None:
    assert demo.done.stderr == ""
    lines = demo.done.stdout.splitlines()
    expected = EXPECTED.splitlines()
    for number, (line, wanted) in enumerate(zip(lines, expected, strict=False), start=1):
        assert line_pattern(wanted, demo.tmp).fullmatch(line), (number, line, wanted)
    assert len(lines) == len(expected), demo.done.stdout


def test_the_logs_are_in_the_file_it_names_which_alone_is_left(demo: Run) -> None:
    first = demo.done.stdout.splitlines()[0]
    log = Path(first.removeprefix("logs of Spark, the statistics job and the embedded metastore: "))
    assert [p.name for p in demo.tmp.iterdir()] == [log.name]
    text = log.read_text()
    assert "Using Spark's default log4j profile" in text  # Spark's JVM
    assert re.search(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d WARN ", text, re.M)  # Spark's log4j
    assert " INFO metastore.hms.server: serving the Hive Metastore protocol on 127.0.0.1:" in text
    assert (
        " WARNING metastore.operation: get_table failed: NoSuchObjectException: database "
        "hive.sales does not exist\n" in text
    )  # the embedded server's
    assert " INFO metastore.job: stage 1/3: analyzing sales.orders" in text  # the job's
    assert " INFO metastore.job: scan: [####################] 7/7 partitions " in text
    assert "[Stage " not in text  # no progress bar of Spark's
