"""`metastore describe DB.TABLE [COLUMN]`: the statistics a metastore holds, read through its
Thrift port, like Hive's `describe formatted TABLE COLUMN`.

For a column: every statistic of its kind, when it was analyzed and by which engine, whether
COLUMN_STATS_ACCURATE says it is current, and a histogram drawn from its KLL sketch when the
metastore returns one (colstats does when started with --fetch-histogram, HMS 4 with
metastore.stats.fetch.kll). For the table, or a partition with --partition: its basic
statistics (numRows, numFiles, totalSize, rawDataSize) and a row per column. It makes only
HMS calls, so it reads a Hive Metastore as well as colstats.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.cli import remote, stats_view
from metastore.cli.errors import EXIT_USAGE, CliError
from metastore.iceberg import parameters as iceberg_params
from metastore.job.client import MetastoreClient
from metastore.job.errors import NoSuchObject
from metastore.job.options import parse_partition_spec
from metastore.stats import accurate
from metastore.vocabulary import DEFAULT_ENGINE

BASIC_STATISTICS = ("numRows", "numFiles", "totalSize", "rawDataSize")

ICEBERG_STATISTICS = (
    "Iceberg keeps this table's statistics in its own metadata (per-file bounds and counts "
    "in the manifests, distinct counts in Puffin files), where Iceberg engines read them; "
    "`metastore analyze DB.TABLE` computes them (a Puffin file of distinct counts, and these "
    "statistics)"
)


def iceberg_metadata(parameters: dict[str, str] | None) -> str | None:
    """The current metadata file of an Iceberg table (its parameter table_type ICEBERG, as
    Iceberg's Hive catalog writes it); None for any other table."""
    parameters = parameters or {}
    if parameters.get("table_type", "").upper() != "ICEBERG":
        return None
    return parameters.get("metadata_location") or ""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "describe",
        help="show the statistics of a table, partition or column",
        description="Show what a metastore holds for a table, a partition or a column, like "
        "Hive's `describe formatted TABLE COLUMN`: basic statistics, column statistics, a "
        "histogram drawn from the stored KLL sketch.",
    )
    parser.add_argument("table", help="DB.TABLE")
    parser.add_argument("column", nargs="?", help="one column: all its statistics, histogram")
    parser.add_argument(
        "--partition",
        metavar="SPEC",
        help="a partition instead of the table, e.g. ds=2024-01-01 or ds=2024-01-01/hr=1",
    )
    parser.add_argument("--engine", default=DEFAULT_ENGINE, help="statistics engine (default hive)")
    parser.add_argument("--json", action="store_true", help="print JSON, for scripts")
    parser.add_argument(
        "--bins", type=int, default=10, help="histogram bins of equal width (default 10)"
    )
    remote.add_arguments(parser)
    parser.set_defaults(run=run)


@dataclass
class ColumnDescription:
    name: str
    type: str
    stats: t.ColumnStatisticsObj | None
    accurate: bool
    last_analyzed: int | None
    """Epoch seconds; known for engine hive, the one the single-column calls read."""


@dataclass
class Description:
    db: str
    table: str
    table_type: str
    location: str | None
    iceberg_metadata: str | None
    """The metadata file of an Iceberg table (iceberg_metadata); None for another table."""
    partition_keys: list[tuple[str, str]]
    partition: str | None
    engine: str
    basic: dict[str, int | None]
    basic_accurate: bool
    columns: list[ColumnDescription] = field(default_factory=list)
    iceberg_statistics_snapshot: str | None = None
    """The snapshot of an Iceberg table its statistics describe (metastore analyze)."""


def run(args: argparse.Namespace) -> int:
    if args.bins < 1:
        raise CliError(f"--bins must be at least 1, not {args.bins}", EXIT_USAGE)
    db_name, dot, table_name = args.table.partition(".")
    if not dot or not db_name or not table_name or "." in table_name:
        raise CliError(f"table {args.table!r} must be given as DB.TABLE", EXIT_USAGE)
    client, _ = remote.connect(remote.connection(args))
    try:
        description = fetch(client, db_name, table_name, args.column, args.partition, args.engine)
    finally:
        client.close()
    if args.json:
        print(json.dumps(as_json(description, args.bins), indent=2))
    else:
        print("\n".join(text_lines(description, args.bins, one_column=args.column is not None)))
    return 0


def fetch(
    client: MetastoreClient,
    db_name: str,
    table_name: str,
    column: str | None,
    partition_spec: str | None,
    engine: str,
) -> Description:
    """What the metastore behind CLIENT holds; CliError naming what does not exist."""
    db, name = names.identifier(db_name), names.identifier(table_name)
    table = find_table(client, db, name)
    columns = [(c.name, c.type) for c in (table.sd.cols if table.sd else [])]
    keys = [(k.name, k.type) for k in table.partitionKeys or []]
    if column is not None:
        columns = _one_column(columns, keys, column, f"{db}.{name}")
    part_name, parameters = None, table.parameters or {}
    if partition_spec is not None:
        part_name = _partition_name(keys, partition_spec, f"{db}.{name}")
        parameters = _partition(client, db, name, part_name).parameters or {}
    col_names = [c for c, _ in columns]
    if part_name is None:
        objs = client.call(
            "get_table_statistics_req",
            t.TableStatsRequest(dbName=db, tblName=name, colNames=col_names, engine=engine),
        ).tableStats
    else:
        objs = client.call(
            "get_partitions_statistics_req",
            t.PartitionsStatsRequest(
                dbName=db, tblName=name, colNames=col_names, partNames=[part_name], engine=engine
            ),
        ).partStats.get(part_name, [])
    by_column = {o.colName: o for o in objs}
    current = accurate.accurate_columns(parameters.get(accurate.KEY))
    description = Description(
        db=db,
        table=name,
        table_type=table.tableType or "",
        location=table.sd.location if table.sd else None,
        iceberg_metadata=iceberg_metadata(table.parameters),
        partition_keys=keys,
        partition=part_name,
        engine=engine,
        basic={key: _int_or_none(parameters.get(key)) for key in BASIC_STATISTICS},
        basic_accurate=accurate.basic_accurate(parameters.get(accurate.KEY)),
        iceberg_statistics_snapshot=(table.parameters or {}).get(
            iceberg_params.STATISTICS_SNAPSHOT
        ),
    )
    for col, col_type in columns:
        obj = by_column.get(col)
        analyzed = None
        if obj is not None and engine == DEFAULT_ENGINE:
            analyzed = _last_analyzed(client, db, name, part_name, col)
        description.columns.append(ColumnDescription(col, col_type, obj, col in current, analyzed))
    return description


def find_table(client: MetastoreClient, db: str, name: str) -> t.Table:
    try:
        table: t.Table = client.call("get_table", db, name)
    except NoSuchObject as e:
        try:
            client.call("get_database", db)
        except NoSuchObject:
            databases = client.call("get_all_databases")
            raise CliError(
                f"no database {db} in {client.uri}; it has {listing(databases)}", EXIT_USAGE
            ) from e
        tables = client.call("get_all_tables", db)
        raise CliError(
            f"no table {db}.{name} in {client.uri}; {db} has {listing(tables, 'no tables')}",
            EXIT_USAGE,
        ) from e
    return table


def listing(items: list[str], empty: str = "none", most: int = 10) -> str:
    if not items:
        return empty
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _one_column(
    columns: list[tuple[str, str]], keys: list[tuple[str, str]], column: str, table: str
) -> list[tuple[str, str]]:
    wanted = names.identifier(column)
    chosen = [c for c in columns if c[0] == wanted]
    if chosen:
        return chosen
    if any(k == wanted for k, _ in keys):
        raise CliError(
            f"{wanted} is a partition key of {table}; statistics are kept for its other columns",
            EXIT_USAGE,
        )
    shown = listing([c for c, _ in columns], most=50)
    raise CliError(f"{table} has no column {wanted}; its columns are {shown}", EXIT_USAGE)


def _partition_name(keys: list[tuple[str, str]], spec: str, table: str) -> str:
    if not keys:
        raise CliError(f"{table} is not partitioned; leave out --partition", EXIT_USAGE)
    values = parse_partition_spec(spec)
    key_names = [k for k, _ in keys]
    if sorted(values) != sorted(key_names):
        raise CliError(
            f"partition {spec!r} must give a value for each key of {table}: "
            + "/".join(f"{k}=..." for k in key_names),
            EXIT_USAGE,
        )
    return names.make_partition_name(key_names, [values[k] for k in key_names])


def _partition(client: MetastoreClient, db: str, table: str, part_name: str) -> t.Partition:
    try:
        partition: t.Partition = client.call("get_partition_by_name", db, table, part_name)
    except NoSuchObject as e:
        existing = client.call("get_partition_names", db, table, -1)
        raise CliError(
            f"no partition {part_name} of {db}.{table}; it has "
            f"{listing(existing, 'no partitions', most=5)}",
            EXIT_USAGE,
        ) from e
    return partition


def _last_analyzed(
    client: MetastoreClient, db: str, table: str, part_name: str | None, column: str
) -> int | None:
    try:
        if part_name is None:
            stats = client.call("get_table_column_statistics", db, table, column)
        else:
            stats = client.call("get_partition_column_statistics", db, table, part_name, column)
    except NoSuchObject:  # deleted since the first read
        return None
    value = stats.statsDesc.lastAnalyzed
    return int(value) if value is not None else None


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------
# Output


def as_json(description: Description, bins: int) -> dict[str, Any]:
    columns = []
    for c in description.columns:
        histogram = stats_view.histogram(c.stats, bins) if c.stats else None
        kind = stats_view.kind_of(c.stats) if c.stats else None
        columns.append(
            {
                "name": c.name,
                "type": c.type,
                "kind": str(kind) if kind else None,
                "statistics": stats_view.statistics(c.stats) if c.stats else None,
                "accurate": c.accurate,
                "last_analyzed": stats_view.timestamp_text(c.last_analyzed)
                if c.last_analyzed is not None
                else None,
                "histogram": histogram.as_json() if histogram else None,
            }
        )
    return {
        "table": f"{description.db}.{description.table}",
        "table_type": description.table_type,
        "location": description.location,
        "iceberg_metadata_location": description.iceberg_metadata,
        "iceberg_statistics_snapshot": description.iceberg_statistics_snapshot,
        "partition_keys": [{"name": k, "type": v} for k, v in description.partition_keys],
        "partition": description.partition,
        "engine": description.engine,
        "basic_statistics": description.basic,
        "basic_statistics_accurate": description.basic_accurate,
        "columns": columns,
    }


def text_lines(description: Description, bins: int, *, one_column: bool) -> list[str]:
    where = f"{description.db}.{description.table}"
    if description.partition:
        where += f" partition {description.partition}"
    keys = ", ".join(f"{k} {v}" for k, v in description.partition_keys)
    lines = [
        f"# {where}",
        f"table type: {description.table_type}"
        + (f", partitioned by {keys}" if keys else "")
        + (f", location {description.location}" if description.location else ""),
        "basic statistics"
        + (" (accurate)" if description.basic_accurate else " (not marked accurate)")
        + ": "
        + ", ".join(
            f"{key} {'-' if value is None else value}" for key, value in description.basic.items()
        ),
    ]
    iceberg = description.iceberg_metadata is not None
    if iceberg:
        lines.insert(2, f"iceberg table, metadata {description.iceberg_metadata or '(none)'}")
        if description.iceberg_statistics_snapshot:
            lines.insert(
                3,
                f"statistics of snapshot {description.iceberg_statistics_snapshot} (metastore "
                "analyze; its Puffin file is in the table's metadata; not marked accurate once "
                "another commit came)",
            )
    if iceberg and not any(c.stats for c in description.columns):
        lines.append(f"column statistics: none in the metastore; {ICEBERG_STATISTICS}")
    elif one_column:
        lines.append("")
        lines.extend(_column_lines(description.columns[0], description.engine, bins))
    else:
        lines.append(f"column statistics (engine {description.engine}):")
        lines.extend(_column_table(description.columns))
    return lines


def _column_lines(column: ColumnDescription, engine: str, bins: int) -> list[str]:
    rows: list[tuple[str, str]] = [("col_name", column.name), ("data_type", column.type)]
    if column.stats is None:
        rows.append(("statistics", f"none for engine {engine}"))
        return _aligned(rows)
    for key, value in stats_view.statistics(column.stats).items():
        rows.append((key, stats_view.text(value)))
    kind = stats_view.kind_of(column.stats)
    blob = stats_view.histogram_blob(column.stats)
    if blob is not None:
        rows.append(("histogram", f"KLL sketch, {len(blob)} bytes"))
    elif kind is not None and kind.has_range:
        rows.append(("histogram", "none returned (colstats: serve --fetch-histogram)"))
    rows.append(
        (
            "last_analyzed",
            stats_view.timestamp_text(column.last_analyzed) + " UTC"
            if column.last_analyzed is not None
            else "",
        )
    )
    rows.append(("engine", engine))
    rows.append(("COLUMN_STATS_ACCURATE", "true" if column.accurate else "false"))
    lines = _aligned(rows)
    histogram = stats_view.histogram(column.stats, bins)
    if histogram is not None:
        lines.append("")
        lines.append(f"histogram of {column.name} ({bins} bins of equal width, KLL estimate):")
        lines.extend(histogram.lines())
    return lines


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = max(len(k) for k, _ in rows)
    return [f"{key.ljust(width)}  {value}".rstrip() for key, value in rows]


_TABLE_FIELDS = ("min", "max", "num_nulls", "distinct_count", "avg_col_len", "max_col_len")


def _column_table(columns: list[ColumnDescription]) -> list[str]:
    header = ("column", "type", *_TABLE_FIELDS, "trues", "falses", "accurate", "last_analyzed")
    rows: list[tuple[str, ...]] = [header]
    for c in columns:
        stats = stats_view.statistics(c.stats) if c.stats else {}
        rows.append(
            (
                c.name,
                c.type,
                *(stats_view.text(stats.get(f)) for f in _TABLE_FIELDS),
                stats_view.text(stats.get("num_trues")),
                stats_view.text(stats.get("num_falses")),
                ("true" if c.accurate else "false") if c.stats else "no statistics",
                stats_view.timestamp_text(c.last_analyzed) if c.last_analyzed else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    out.insert(1, "  ".join("-" * w for w in widths))
    return out
