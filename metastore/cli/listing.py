"""`metastore ls [DB[.TABLE]]`: what a metastore holds, a line per database, table or
partition, with the basic statistics of tables and partitions (numRows, numFiles,
totalSize, rawDataSize) and whether they are marked accurate.

    metastore ls                  the databases, with their number of tables
    metastore ls sales            the tables of sales: type, format, partitions, statistics
                                  (and the metadata file of each Iceberg table)
    metastore ls sales.orders     the partitions of sales.orders (or the table itself)

It makes only HMS calls, so it lists a Hive Metastore as well as colstats.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.cli import describe, remote
from metastore.cli.errors import EXIT_USAGE, CliError
from metastore.cli.stats_view import timestamp_text
from metastore.job.client import MetastoreClient
from metastore.job.errors import NoSuchObject
from metastore.stats import accurate

BASIC = describe.BASIC_STATISTICS
PAGE = 500
FORMATS = {
    "parquet": "parquet",
    "orc": "orc",
    "jsonserde": "json",
    "opencsvserde": "csv",
    "lazysimpleserde": "text",
    "avro": "avro",
    "sequencefile": "sequencefile",
}


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "ls",
        help="list databases, tables or partitions with their basic statistics",
        description="List the databases of a metastore, the tables of a database, or the "
        "partitions of a table, with their basic statistics (numRows, numFiles, totalSize, "
        "rawDataSize).",
    )
    parser.add_argument("name", nargs="?", help="DB (its tables) or DB.TABLE (its partitions)")
    parser.add_argument("--json", action="store_true", help="print JSON, for scripts")
    remote.add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    name = args.name or ""
    db_name, _, table_name = name.partition(".")
    if name and (not db_name or "." in table_name or (name.endswith(".") and not table_name)):
        raise CliError(f"{name!r} must be given as DB or DB.TABLE", EXIT_USAGE)
    client, _ = remote.connect(remote.connection(args))
    try:
        if not db_name:
            rows = databases(client)
        elif not table_name:
            rows = tables(client, names.identifier(db_name))
        else:
            rows = partitions(client, names.identifier(db_name), names.identifier(table_name))
    finally:
        client.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("\n".join(text_lines(rows)))
    return 0


def databases(client: MetastoreClient) -> list[dict[str, Any]]:
    out = []
    for db in client.call("get_all_databases"):
        database = client.call("get_database", db)
        out.append(
            {
                "database": db,
                "tables": len(client.call("get_all_tables", db)),
                "location": database.locationUri,
            }
        )
    return out


def tables(client: MetastoreClient, db: str) -> list[dict[str, Any]]:
    try:
        client.call("get_database", db)
    except NoSuchObject as e:
        databases_ = client.call("get_all_databases")
        raise CliError(
            f"no database {db} in {client.uri}; it has {describe.listing(databases_)}",
            EXIT_USAGE,
        ) from e
    names_ = sorted(client.call("get_all_tables", db))
    out = []
    for start in range(0, len(names_), PAGE):
        for table in client.call("get_table_objects_by_name", db, names_[start : start + PAGE]):
            keys = [k.name for k in table.partitionKeys or []]
            row: dict[str, Any] = {
                "table": table.tableName,
                "type": table.tableType,
                "format": storage_format(table),
                "metadata_location": describe.iceberg_metadata(table.parameters),
                "partitions": len(client.call("get_partition_names", db, table.tableName, -1))
                if keys
                else None,
            }
            row.update(_basic(table.parameters))
            row["changed"] = _ddl_time(table.parameters)
            out.append(row)
    return out


def partitions(client: MetastoreClient, db: str, table_name: str) -> list[dict[str, Any]]:
    table = describe.find_table(client, db, table_name)
    if not table.partitionKeys:
        row: dict[str, Any] = {"table": f"{db}.{table_name}", "partition": None}
        metadata = describe.iceberg_metadata(table.parameters)
        if metadata is not None:  # Iceberg's partitions are hidden in its metadata
            row = {"table": f"{db}.{table_name}", "format": "iceberg"}
            row["metadata_location"] = metadata
        row.update(_basic(table.parameters))
        row["changed"] = _ddl_time(table.parameters)
        return [row]
    names_ = client.call("get_partition_names", db, table_name, -1)
    keys = [k.name for k in table.partitionKeys]
    out = []
    for start in range(0, len(names_), PAGE):
        chunk = client.call("get_partitions_by_names", db, table_name, names_[start : start + PAGE])
        for part in chunk:
            row = {"partition": names.make_partition_name(keys, part.values)}
            row.update(_basic(part.parameters))
            row["changed"] = _ddl_time(part.parameters)
            out.append(row)
    return sorted(out, key=lambda r: str(r["partition"]))


def storage_format(table: t.Table) -> str:
    """The table's storage in a word: parquet, orc, csv, json, text, a Spark provider, a
    view, or what its SerDe is called."""
    params = table.parameters or {}
    if describe.iceberg_metadata(params) is not None:
        return "iceberg"
    provider = params.get("spark.sql.sources.provider")
    if provider:
        return str(provider).rsplit(".", 1)[-1].lower()
    if table.tableType == "VIRTUAL_VIEW":
        return "view"
    sd = table.sd or t.StorageDescriptor()
    lib = (sd.serdeInfo.serializationLib if sd.serdeInfo else None) or sd.inputFormat or ""
    lowered = lib.lower()
    for marker, word in FORMATS.items():
        if marker in lowered:
            return word
    return lib.rsplit(".", 1)[-1] or "none"


def _basic(params: dict[str, str] | None) -> dict[str, Any]:
    params = params or {}
    out: dict[str, Any] = {key: _number(params.get(key)) for key in BASIC}
    out["accurate"] = accurate.basic_accurate(params.get(accurate.KEY))
    return out


def _number(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _ddl_time(params: dict[str, str] | None) -> str | None:
    seconds = _number((params or {}).get("transient_lastDdlTime"))
    return timestamp_text(seconds) if seconds is not None else None


# ------------------------------------------------------------------------------------------
# Output


_WHEN_SET = {"metadata_location"}


def text_lines(rows: list[dict[str, Any]]) -> list[str]:
    """ROWS as an aligned table, sizes in KiB, MiB, ...; '-' where a value is unknown. The
    metadata files of Iceberg tables have a column only when some row has one."""
    if not rows:
        return ["(none)"]
    header = [
        key for key in rows[0] if key not in _WHEN_SET or any(row[key] is not None for row in rows)
    ]
    cells = [header] + [[_cell(key, row[key]) for key in header] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    right = {"tables", "partitions", "numRows", "numFiles", "totalSize", "rawDataSize"}
    lines = []
    for line in cells:
        lines.append(
            "  ".join(
                value.rjust(width) if key in right else value.ljust(width)
                for key, value, width in zip(header, line, widths, strict=True)
            ).rstrip()
        )
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in ("totalSize", "rawDataSize") and isinstance(value, int):
        return _size(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(count) < 1024 or unit == "TiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")
