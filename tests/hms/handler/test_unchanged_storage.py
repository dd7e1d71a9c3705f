"""An alter of a table or partition that gives its storage descriptor back unchanged (an
Iceberg commit, statistics written as parameters) keeps the stored descriptor; one that
changes anything in it, however small, stores the change (metastore.store.storage.
same_storage)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from metadata_builders import make_partitioned, partition_rows, table_rows

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client


def _column(sd: t.StorageDescriptor, **change: str) -> None:
    for key, value in change.items():
        setattr(sd.cols[0], key, value)


def _serde(sd: t.StorageDescriptor, **change: str) -> None:
    for key, value in change.items():
        setattr(sd.serdeInfo, key, value)


CHANGES: dict[str, Callable[[t.StorageDescriptor], None]] = {
    "location": lambda sd: setattr(sd, "location", sd.location + "_moved"),
    "inputFormat": lambda sd: setattr(sd, "inputFormat", "org.example.In"),
    "outputFormat": lambda sd: setattr(sd, "outputFormat", "org.example.Out"),
    "compressed": lambda sd: setattr(sd, "compressed", not sd.compressed),
    "numBuckets": lambda sd: setattr(sd, "numBuckets", 8),
    "storedAsSubDirectories": lambda sd: setattr(
        sd, "storedAsSubDirectories", not sd.storedAsSubDirectories
    ),
    "a column's comment": lambda sd: _column(sd, comment="the id"),
    "a column's type": lambda sd: _column(sd, type="string"),
    "a column's name": lambda sd: _column(sd, name="id2"),
    "the columns' order": lambda sd: sd.cols.reverse(),
    "the serde's name": lambda sd: _serde(sd, name="other"),
    "the serde's library": lambda sd: _serde(sd, serializationLib="org.example.Serde"),
    "the serde's description": lambda sd: _serde(sd, description="described"),
    "the serde's serializer": lambda sd: _serde(sd, serializerClass="org.example.S"),
    "the serde's deserializer": lambda sd: _serde(sd, deserializerClass="org.example.D"),
    "a serde parameter": lambda sd: sd.serdeInfo.parameters.update({"k": "v"}),
    "a descriptor parameter": lambda sd: sd.parameters.update({"k": "v"}),
    "the bucket columns": lambda sd: setattr(sd, "bucketCols", ["id"]),
    "the sort columns": lambda sd: setattr(sd, "sortCols", [t.Order("id", 0)]),
    "the skewed values": lambda sd: setattr(sd, "skewedInfo", t.SkewedInfo(["id"], [["7"]], {})),
}


def _sd_count(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        count: int = conn.execute(sa.text('SELECT count(*) FROM "SDS"')).scalar_one()
    return count


def test_a_table_given_its_descriptor_back_keeps_it(
    client: Client, engine: sa.Engine, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1"])
    before = client.get_table(db_name, "t")
    sd_id = table_rows(engine, db_name, ["t"]).sd_ids[0]  # the table's, then its partition's
    descriptors = _sd_count(engine)
    for n in range(3):  # an Iceberg commit moves the metadata location, nothing else
        changed = copy.deepcopy(before)
        changed.parameters = {**before.parameters, "metadata_location": f"m{n}"}
        client.alter_table_with_environment_context(db_name, "t", changed, None)
    after = client.get_table(db_name, "t")
    assert after.parameters["metadata_location"] == "m2"
    assert after.sd == before.sd
    assert table_rows(engine, db_name, ["t"]).sd_ids[0] == sd_id
    assert _sd_count(engine) == descriptors


def test_a_partition_given_its_descriptor_back_keeps_it(
    client: Client, engine: sa.Engine, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1"])
    before = client.get_partition(db_name, "t", ["1"])
    (sd_id,) = partition_rows(engine, db_name, "t", "ds=1").sd_ids
    changed = copy.deepcopy(before)
    changed.parameters = {**before.parameters, "numRows": "10", "totalSize": "100"}
    client.alter_partitions(db_name, "t", [changed])
    after = client.get_partition(db_name, "t", ["1"])
    assert after.parameters["numRows"] == "10"
    assert after.sd == before.sd
    assert partition_rows(engine, db_name, "t", "ds=1").sd_ids == [sd_id]


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_to_the_descriptor_is_stored(
    client: Client, engine: sa.Engine, db_name: str, change: str
) -> None:
    make_partitioned(client, db_name, values=["1"])
    table = client.get_table(db_name, "t")
    table.sd.parameters = table.sd.parameters or {}
    table.sd.serdeInfo.parameters = table.sd.serdeInfo.parameters or {}
    CHANGES[change](table.sd)
    part = client.get_partition(db_name, "t", ["1"])
    part.sd = copy.deepcopy(table.sd)
    part.sd.location = client.get_partition(db_name, "t", ["1"]).sd.location
    if change == "location":
        part.sd.location += "_moved"
    client.alter_table(db_name, "t", table)
    assert client.get_table(db_name, "t").sd == table.sd, change
    client.alter_partition(db_name, "t", part)
    assert client.get_partition(db_name, "t", ["1"]).sd == part.sd, change
