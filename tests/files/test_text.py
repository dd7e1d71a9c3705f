"""Reading csv and json as Spark reads them (metastore.files.text), without Spark: values that
do not parse are NULL and counted with the row and column, or with strict an error; json
lines of another JSON type than the column's; the --schema DDL read without a JVM; the
summary's dates and timestamps."""

from __future__ import annotations

import pyarrow as pa
import pytest

from metastore.columns import Column
from metastore.files.errors import FilesError
from metastore.files.formats import ReadSpec
from metastore.files.text import Text, read_text

COLUMNS = [Column("i", "int"), Column("s", "string"), Column("d", "date")]


def _read(data: str, spec: ReadSpec, strict: bool = False) -> tuple[dict[str, list[object]], Text]:
    found = Text("/data/f", strict)
    batches = list(read_text(pa.BufferReader(data.encode()), spec, COLUMNS, found))
    table = pa.Table.from_batches(batches)
    return {name: table.column(name).to_pylist() for name in table.column_names}, found


def test_json_values_of_another_type_are_null_and_counted() -> None:
    data = (
        '{"i": 1, "s": "a", "d": "2024-01-01"}\n'
        '{"i": "two", "s": 5, "d": "2024-02-30"}\n'
        "\n"
        "[1, 2]\n"
        '{"i": 4, "s": null}\n'
    )
    values, found = _read(data, ReadSpec("json"))
    assert values == {
        "i": [1, None, None, 4],
        "s": ["a", "5", None, None],  # a number's text in a string column, as Spark reads it
        "d": [pa.scalar(19723, pa.date32()).as_py(), None, None, None],
    }
    assert found.unparsed == 3  # "two", 2024-02-30, the line that is not an object
    assert sorted(found.examples) == [
        "/data/f row 2, column d: '2024-02-30'",
        "/data/f row 2, column i: 'two'",
        "/data/f row 3: '[1, 2]'",
    ]
    with pytest.raises(FilesError, match=r"^/data/f row 3: '\[1, 2\]' is not a JSON object"):
        _read(data, ReadSpec("json"), strict=True)
    strict_data = data.replace("[1, 2]", '{"i": 3}')
    with pytest.raises(FilesError, match=r"^/data/f row 2, column i: 'two' does not parse as int"):
        _read(strict_data, ReadSpec("json"), strict=True)


def test_csv_rows_with_fields_missing_or_extra() -> None:
    spec = ReadSpec("csv", header=True, names=("i", "s", "d"))
    values, found = _read("i,s,d\n1,a,2024-01-01\n2,b\n3,c,2024-01-03,x\n", spec)
    assert values["i"] == [1, 2, 3] and values["s"] == ["a", "b", "c"]
    assert values["d"][1] is None
    assert found.unparsed == 2
    assert found.examples[0] == "/data/f row 2: '2,b'"
