"""get_aggr_stats_for right after a write of one partition's statistics, on the real Hive
Metastore 2.3.10 (the session's oracle, tests/hms_oracle.py) and on colstats (both backends,
with its cache of answers): both answer the merge that holds the new statistics.

HMS 2.3 answers this call from its aggregate stats cache when that is on (its default),
which a write of statistics leaves as it was: the answer right after a write is then the one
before it. The oracle runs with that cache off (hive.metastore.aggregate.stats.cache.enabled),
so that it computes every answer, as colstats does; this test fails if it does not.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from hms_oracle import client as oracle_client
from hms_process import HiveMetastoreProcess

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

pytestmark = pytest.mark.hms

Client = ThriftHiveMetastore.Client
PARTS = ["ds=1", "ds=2", "ds=3"]


@pytest.fixture
def oracle(hms_oracle: HiveMetastoreProcess) -> Iterator[Client]:
    client, transport = oracle_client(hms_oracle.port)
    yield client
    transport.close()


def _statistics(db: str, part: str, low: int, high: int) -> t.ColumnStatistics:
    data = t.ColumnStatisticsData(longStats=t.LongColumnStatsData(low, high, 1, high - low + 1))
    return t.ColumnStatistics(
        t.ColumnStatisticsDesc(False, db, "t", part), [t.ColumnStatisticsObj("n", "bigint", data)]
    )


def _located(sd: t.StorageDescriptor, location: str) -> t.StorageDescriptor:
    """SD with another LOCATION."""
    return t.StorageDescriptor(
        cols=sd.cols,
        location=location,
        inputFormat=sd.inputFormat,
        outputFormat=sd.outputFormat,
        serdeInfo=sd.serdeInfo,
    )


def _merged_after_a_write(client: Client, db: str, location: str) -> list[t.LongColumnStatsData]:
    """The merged statistics of column n over every partition: before a write of one
    partition's, and right after it."""
    client.create_database(t.Database(db, None, f"{location}/{db}.db", {}))
    sd = t.StorageDescriptor(
        cols=[t.FieldSchema("n", "bigint", None)],
        location=f"{location}/{db}.db/t",
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=t.SerDeInfo("t", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}),
    )
    client.create_table(
        t.Table(
            tableName="t",
            dbName=db,
            sd=sd,
            partitionKeys=[t.FieldSchema("ds", "string", None)],
            parameters={"EXTERNAL": "TRUE"},
            tableType="EXTERNAL_TABLE",
        )
    )
    client.add_partitions(
        [
            t.Partition(
                values=[part.split("=")[1]],
                dbName=db,
                tableName="t",
                sd=_located(sd, f"{sd.location}/{part}"),
            )
            for part in PARTS
        ]
    )
    for i, part in enumerate(PARTS):
        client.update_partition_column_statistics(_statistics(db, part, -i, i))
    request = t.PartitionsStatsRequest(db, "t", ["n"], PARTS)
    merged = [client.get_aggr_stats_for(request).colStats[0].statsData.longStats]
    client.update_partition_column_statistics(_statistics(db, PARTS[1], -1000, 1000))
    merged.append(client.get_aggr_stats_for(request).colStats[0].statsData.longStats)
    client.drop_database(db, True, True)
    return merged


def test_the_merge_right_after_a_write_holds_it_as_on_hms(
    oracle: Client, client: Client, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = f"aggr_{uuid.uuid4().hex[:10]}"
    location = str(tmp_path_factory.mktemp("aggr-after-write"))
    hms = _merged_after_a_write(oracle, db, location)
    ours = _merged_after_a_write(client, db, location)
    assert (hms[1].lowValue, hms[1].highValue) == (-1000, 1000), hms
    assert ours == hms
