"""Reading csv and json files (and Hive's delimited text) in record batches, as Spark reads
them: a value that does not parse as its column's type is NULL, and counted (Text.unparsed,
with a few examples naming the file, the row and the column), unless the run is strict,
where the first such value is a FilesError naming the file, the row and the column.

Rows are numbered from 1, data rows only (a csv header line is not counted), as a person
finds them in the file. A csv row with more or fewer fields than the columns is read as
Spark reads it: missing fields are NULL, extra ones dropped, each counted as not parsed.
A json line that is not an object has all its columns NULL (counted). PyArrow reads json
fast but fails a whole block on a value of another JSON type than the column's; such a file
is read again from where it failed, a line at a time, with Python's json module.
"""

from __future__ import annotations

import csv as pycsv
import dataclasses
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from metastore import arrow_types
from metastore.files.errors import FilesError, NotReadHere
from metastore.files.formats import BATCH_ROWS, ReadSpec
from metastore.vocabulary import HiveTypeError, base_type

if TYPE_CHECKING:
    from metastore.columns import Column

TEXT_BLOCK_BYTES = 16 * 1024 * 1024
EXAMPLES = 3
"""Values that did not parse, kept as examples for the summary."""
_SMALL = 16
"""Below this many values, the failing ones of a cast are found one by one."""


# The types read from text files (csv, json, delimited text).
_TEXT_TYPES = frozenset(
    {
        *("boolean", "tinyint", "smallint", "int", "bigint", "float", "double"),
        *("decimal", "string", "varchar", "char", "binary", "date", "timestamp"),
    }
)


def text_arrow_type(hive_type: str) -> pa.DataType:
    """The Arrow type a column of HIVE_TYPE is read as from text files (a primitive type);
    NotReadHere for other types."""
    if base_type(hive_type) not in _TEXT_TYPES:
        raise NotReadHere(f"columns of type {hive_type} are not read from text files")
    try:
        return arrow_types.arrow_type(hive_type)
    except HiveTypeError as e:
        raise NotReadHere(f"columns of type {hive_type} are not read: {e}") from None


def arrow_type_or_null(hive_type: str) -> pa.DataType:
    """text_arrow_type, or Arrow's null type for a column that is not read from text."""
    try:
        return text_arrow_type(hive_type)
    except NotReadHere:
        return pa.null()


@dataclasses.dataclass
class Text:
    """What reading one text file found besides its rows."""

    path: str
    strict: bool
    unparsed: int = 0
    examples: list[str] = dataclasses.field(default_factory=list)

    def bad(self, row: int, column: str | None, text: object, why: str) -> None:
        """A value of ROW (1-based) that does not parse (COLUMN None: the row as a whole):
        counted, or with STRICT an error."""
        where = f"{self.path} row {row}" + (f", column {column}" if column else "")
        if self.strict:
            raise FilesError(
                f"{where}: {text!r} {why} (correct the file, or run without --strict to read "
                "such values as NULL)"
            )
        self.unparsed += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(f"{where}: {text!r}")


def read_text(
    f: Any, spec: ReadSpec, columns: Sequence[Column], found: Text
) -> Iterator[pa.RecordBatch]:
    """The rows of the csv or json file F as batches of the readable COLUMNS (by name)."""

    types = {c.name: arrow_type_or_null(c.hive_type) for c in columns}
    readable = [c for c in columns if not pa.types.is_null(types[c.name])]
    if spec.format == "json":
        yield from _json(f, spec, readable, types, found)
    else:
        yield from _csv(f, spec, readable, types, found)


def _csv(
    f: Any,
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> Iterator[pa.RecordBatch]:
    import pyarrow.csv as csv

    odd: list[tuple[int, str]] = []
    rows = 0

    def on_invalid(row: Any) -> str:
        # PyArrow does not say where the row is: its line is found when it is shown.
        odd.append((row.number or 0, row.text))
        return "error" if found.strict else "skip"

    try:
        reader = csv.open_csv(
            f,
            read_options=csv.ReadOptions(
                block_size=TEXT_BLOCK_BYTES,
                column_names=list(spec.names),
                skip_rows=int(spec.header),
            ),
            parse_options=csv.ParseOptions(
                delimiter=spec.delimiter,
                quote_char=spec.quote or False,
                escape_char=spec.escape or False,
                newlines_in_values=False,
                invalid_row_handler=on_invalid,
            ),
            convert_options=csv.ConvertOptions(
                column_types={c.name: pa.string() for c in readable},
                include_columns=[c.name for c in readable],
                include_missing_columns=True,
                null_values=list(spec.null_text),
                strings_can_be_null=True,
            ),
        )
        for batch in reader:
            yield _typed(batch, rows, spec, readable, types, found)
            rows += batch.num_rows
            if odd:
                yield _odd_rows(f, odd, spec, readable, types, found)
                odd.clear()
    except pa.ArrowInvalid:
        if odd:  # strict: the row the handler refused
            _odd_rows(f, odd, spec, readable, types, found)
        raise


def _odd_rows(
    f: Any,
    odd: list[tuple[int, str]],
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> pa.RecordBatch:
    """Rows of more or fewer fields than the columns: those there are, NULL for the rest."""
    values: dict[str, list[str | None]] = {c.name: [] for c in readable}
    positions = {name.lower(): i for i, name in enumerate(spec.names)}
    room = 1 if found.strict else max(EXAMPLES - len(found.examples), 0)
    numbers = [
        line_of(f, line, int(spec.header)) if i < room else 0 for i, (_, line) in enumerate(odd)
    ]
    for number, (_, line) in zip(numbers, odd, strict=True):
        fields = next(
            pycsv.reader(
                [line],
                delimiter=spec.delimiter,
                quotechar=spec.quote or None,
                quoting=pycsv.QUOTE_MINIMAL if spec.quote else pycsv.QUOTE_NONE,
                escapechar=spec.escape or None,
            ),
            [],
        )
        if len(fields) != len(spec.names):
            found.bad(
                number, None, line, f"has {len(fields)} field(s), the table {len(spec.names)}"
            )
        for column in readable:
            index = positions[column.name.lower()]
            text = fields[index] if index < len(fields) else None
            values[column.name].append(None if text in spec.null_text else text)
    strings = pa.RecordBatch.from_pydict(
        values, schema=pa.schema([(c.name, pa.string()) for c in readable])
    )
    arrays = [
        _converted(strings.column(c.name), types[c.name], spec, c, found, numbers) for c in readable
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in readable])


def line_of(f: Any, text: str, header: int) -> int:
    """The data row (the line, after HEADER lines) of the first line of the file F that is
    TEXT; read with read_at, so that the reader's position does not move (0: not found)."""
    wanted = text.encode("utf-8")
    offset, number, rest = 0, 0, b""
    while chunk := f.read_at(1 << 20, offset):
        offset += len(chunk)
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            number += 1
            if line.rstrip(b"\r") == wanted and number > header:
                return number - header
    return number + 1 - header if rest.rstrip(b"\r") == wanted else 0


def _typed(
    batch: pa.RecordBatch,
    rows_before: int,
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> pa.RecordBatch:
    numbers = range(rows_before + 1, rows_before + 1 + batch.num_rows)
    arrays = [
        _converted(batch.column(c.name), types[c.name], spec, c, found, numbers) for c in readable
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in readable])


def _converted(
    array: pa.Array,
    to: pa.DataType,
    spec: ReadSpec,
    column: Column,
    found: Text,
    numbers: Sequence[int],
) -> pa.Array:
    """Text values as TO; those that do not parse NULL (FOUND counts them, by their row
    NUMBERS), as Spark's reader of csv and json makes them."""
    if array.type == to:
        return array
    if pa.types.is_string(to):
        return array.cast(to)
    if spec.empty_is_null and pa.types.is_string(array.type):
        array = pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)
    if pa.types.is_boolean(to) and pa.types.is_string(array.type):
        array = pc.utf8_lower(array)
    failing = _failing(array, to, 0)
    if not failing:
        return array.cast(to)
    for index in failing:
        found.bad(
            numbers[index],
            column.name,
            array[index].as_py(),
            f"does not parse as {column.hive_type}",
        )
    bad = set(failing)
    mask = pa.array([i in bad for i in range(len(array))])
    return pc.if_else(mask, pa.scalar(None, array.type), array).cast(to)


def _failing(array: pa.Array, to: pa.DataType, start: int) -> list[int]:
    """The indices (from START) of the values of ARRAY that do not cast to TO: halves are
    tried, so a few bad values among many cost a few casts."""
    try:
        array.cast(to)
        return []
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if len(array) <= _SMALL:
        out = []
        for i in range(len(array)):
            try:
                array.slice(i, 1).cast(to)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                out.append(start + i)
        return out
    middle = len(array) // 2
    return _failing(array.slice(0, middle), to, start) + _failing(
        array.slice(middle), to, start + middle
    )


def _json(
    f: Any,
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> Iterator[pa.RecordBatch]:
    import pyarrow.json as pajson

    # JSON has no dates: they are text, converted after parsing.
    as_read = {
        c.name: pa.string() if pa.types.is_date(types[c.name]) else types[c.name] for c in readable
    }
    rows = 0
    try:
        reader = pajson.open_json(
            f,
            read_options=pajson.ReadOptions(block_size=TEXT_BLOCK_BYTES),
            parse_options=pajson.ParseOptions(
                explicit_schema=pa.schema(list(as_read.items())),
                unexpected_field_behavior="ignore",
            ),
        )
        for batch in reader:
            yield _typed(batch, rows, spec, readable, types, found)
            rows += batch.num_rows
        return
    except pa.ArrowInvalid:
        pass  # a value of another JSON type: read the rest a line at a time
    f.seek(0)
    yield from _json_lines(f, rows, spec, readable, types, found)


def _json_lines(
    f: Any,
    skip: int,
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> Iterator[pa.RecordBatch]:
    """The json lines of F after the first SKIP records, a batch per BATCH lines."""
    values: dict[str, list[str | None]] = {c.name: [] for c in readable}
    numbers: list[int] = []
    row = 0
    for raw in f.read().decode("utf-8").splitlines():
        if not raw.strip():
            continue
        row += 1
        if row <= skip:
            continue
        numbers.append(row)
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            found.bad(row, None, raw[:80], "is not a JSON object")
            record = {}
        lowered = {str(k).lower(): v for k, v in record.items()}
        for column in readable:
            values[column.name].append(_json_text(lowered.get(column.name.lower())))
        if len(numbers) == BATCH_ROWS:
            yield _json_batch(values, numbers, spec, readable, types, found)
            values = {c.name: [] for c in readable}
            numbers = []
    if numbers:
        yield _json_batch(values, numbers, spec, readable, types, found)


def _json_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _json_batch(
    values: dict[str, list[str | None]],
    numbers: list[int],
    spec: ReadSpec,
    readable: Sequence[Column],
    types: dict[str, pa.DataType],
    found: Text,
) -> pa.RecordBatch:
    strings = pa.RecordBatch.from_pydict(
        values, schema=pa.schema([(c.name, pa.string()) for c in readable])
    )
    arrays = [
        _converted(strings.column(c.name), types[c.name], spec, c, found, numbers) for c in readable
    ]
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in readable])
