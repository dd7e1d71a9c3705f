"""metastore.stats.validate: what makes statistics wrong for their column (a kind that does
not fit the column's type, NaN or infinite numbers where a number is needed, a low value
above the high one, text longer than the schema keeps) is InvalidInput naming the column;
nothing is cut short or coerced, and a row that passes comes back as a copy with the
column's type, lower case, when it named none."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from core_builders import stats_row

from metastore.errors import InvalidInput
from metastore.stats import validate
from metastore.stats.rows import StatsRow


def row(kind: str, column: str = "c", column_type: str = "", **fields: Any) -> StatsRow:
    """A row of KIND for COLUMN, naming no type unless COLUMN_TYPE."""
    return stats_row(column, kind, column_type, **fields)


def refused(message: str) -> Any:
    """pytest.raises of InvalidInput with exactly MESSAGE."""
    return pytest.raises(InvalidInput, match=f"^{re.escape(message)}$")


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "column_type", "expected"),
    [
        ("long", "string", "stringStats"),
        ("string", "int", "longStats"),
        ("double", "decimal(10,2)", "decimalStats"),
        ("date", "timestamp", "timestampStats or longStats"),
        ("boolean", "varchar(3)", "stringStats"),
        ("binary", "BOOLEAN", "booleanStats"),
    ],
)
def test_a_kind_that_does_not_fit_the_type_names_the_ones_that_do(
    kind: str, column_type: str, expected: str
) -> None:
    member = f"{kind}Stats"
    with refused(
        f"column 'c': {member} does not fit a column of type '{column_type}'; expected {expected}"
    ):
        validate.checked(row(kind), column_type)


@pytest.mark.parametrize("column_type", ["array<int>", "map<string,int>", "struct<a:int>", "void"])
def test_types_without_statistics_take_none(column_type: str) -> None:
    with refused(
        f"column 'c': longStats does not fit a column of type '{column_type}'; "
        "expected none (no statistics are kept for this type)"
    ):
        validate.checked(row("long"), column_type)


@pytest.mark.parametrize("field", ["DOUBLE_LOW_VALUE", "DOUBLE_HIGH_VALUE"])
def test_nan_is_no_double_bound(field: str) -> None:
    name = "lowValue" if "LOW" in field else "highValue"
    with refused(f"column 'x': doubleStats.{name} is NaN"):
        nan: dict[str, Any] = {field: math.nan}
        validate.checked(row("double", column="x", **nan), "double")


@pytest.mark.parametrize("kind", ["string", "binary"])
@pytest.mark.parametrize(("value", "problem"), [(math.nan, "NaN"), (math.inf, "infinite")])
def test_an_average_length_is_a_finite_number(kind: str, value: float, problem: str) -> None:
    with refused(f"column 'c': {kind}Stats.avgColLen is {problem}"):
        validate.checked(row(kind, AVG_COL_LEN=value), kind)
    with refused(f"column 'c': {kind}Stats.avgColLen is {problem}"):
        validate.checked(row(kind, AVG_COL_LEN=-value), kind)


@pytest.mark.parametrize(
    ("kind", "column_type", "low", "high", "shown"),
    [
        ("long", "bigint", ("LONG_LOW_VALUE", 5), ("LONG_HIGH_VALUE", 4), "5 is greater than 4"),
        ("date", "date", ("LONG_LOW_VALUE", 1), ("LONG_HIGH_VALUE", -1), "1 is greater than -1"),
        (
            "timestamp",
            "timestamp",
            ("LONG_LOW_VALUE", 2**63 - 1),
            ("LONG_HIGH_VALUE", -(2**63)),
            f"{2**63 - 1} is greater than {-(2**63)}",
        ),
        ("long", "timestamp", ("LONG_LOW_VALUE", 1), ("LONG_HIGH_VALUE", 0), "1 is greater than 0"),
        (
            "double",
            "float",
            ("DOUBLE_LOW_VALUE", math.inf),
            ("DOUBLE_HIGH_VALUE", 0.0),
            "inf is greater than 0.0",
        ),
        # Decimals compare by value, not as text, and are shown as given.
        (
            "decimal",
            "decimal(10,3)",
            ("BIG_DECIMAL_LOW_VALUE", "10.0"),
            ("BIG_DECIMAL_HIGH_VALUE", "9.999"),
            "10.0 is greater than 9.999",
        ),
        (
            "decimal",
            "decimal(10,2)",
            ("BIG_DECIMAL_LOW_VALUE", "-1.00"),
            ("BIG_DECIMAL_HIGH_VALUE", "-10.50"),
            "-1.00 is greater than -10.50",
        ),
    ],
)
def test_a_low_value_above_the_high_value_is_refused(
    kind: str, column_type: str, low: tuple[str, Any], high: tuple[str, Any], shown: str
) -> None:
    low_shown, high_shown = shown.split(" is greater than ")
    with refused(f"column 'c': lowValue {low_shown} is greater than highValue {high_shown}"):
        validate.checked(row(kind, **dict([low, high])), column_type)


def test_text_longer_than_the_schema_keeps_is_refused_not_cut() -> None:
    assert validate.MAX_TYPE_LENGTH == 128
    assert validate.MAX_DECIMAL_TEXT_LENGTH == 4000
    long_type = "decimal(10,2)" + " " * 116  # 129 characters, still a decimal type
    with refused("column 'c': colType is 129 characters long; at most 128 are kept"):
        validate.checked(row("decimal"), long_type)
    with refused("column 'c': colType is 129 characters long; at most 128 are kept"):
        validate.checked(row("decimal", column_type=long_type), "decimal(10,2)")
    digits = "1" + "0" * 3999 + ".5"  # 4,002 characters
    with refused(
        "column 'c': decimalStats.highValue is 4002 characters long; at most 4000 are kept"
    ):
        validate.checked(row("decimal", BIG_DECIMAL_HIGH_VALUE=digits), "decimal(38,1)")
    with refused(
        "column 'c': decimalStats.lowValue is 4002 characters long; at most 4000 are kept"
    ):
        validate.checked(row("decimal", BIG_DECIMAL_LOW_VALUE="-" + digits[1:]), "decimal(38,1)")


def test_an_engine_name_longer_than_the_schema_keeps_is_refused() -> None:
    assert validate.MAX_ENGINE_LENGTH == 128
    validate.check_engine("e" * 128)
    validate.check_engine("")
    with refused("engine is 129 characters long; at most 128 are kept"):
        validate.check_engine("é" * 129)


def test_bad_builds_the_error_of_a_column() -> None:
    error = validate.bad("Ünïcode 'col'", "is wrong")
    assert isinstance(error, InvalidInput)
    assert error.message == "column \"Ünïcode 'col'\": is wrong"


# -- rows that pass --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "column_type"),
    [
        ("boolean", "boolean"),
        ("long", "tinyint"),
        ("long", "INT"),
        ("long", "timestamp"),  # Trino writes longStats for timestamps
        ("timestamp", "timestamp"),
        ("double", "double precision"),
        ("decimal", "decimal(38,18)"),
        ("string", "char(3)"),
        ("string", "varchar(65535)"),
        ("binary", "binary"),
        ("date", "date"),
    ],
)
def test_every_kind_fits_its_types(kind: str, column_type: str) -> None:
    checked = validate.checked(row(kind), column_type)
    assert checked["COLUMN_TYPE"] == column_type.lower()
    assert checked["STATS_KIND"] == kind


def test_a_row_that_passes_is_a_copy_typed_as_its_column_when_it_names_no_type() -> None:
    given = row("long", LONG_LOW_VALUE=1, LONG_HIGH_VALUE=1, NUM_DISTINCTS=1)
    checked = validate.checked(given, "BIGINT")
    assert checked is not given
    assert given["COLUMN_TYPE"] == ""
    assert checked == {**given, "COLUMN_TYPE": "bigint"}
    # A type the row names wins over the column's (HMS keeps the caller's colType).
    named = validate.checked(row("long", column_type="INT"), "bigint")
    assert named["COLUMN_TYPE"] == "int"


def test_edges_that_pass() -> None:
    # Equal bounds, bounds of one side only, unbounded doubles, NaN nowhere.
    validate.checked(row("long", LONG_LOW_VALUE=3, LONG_HIGH_VALUE=3), "int")
    validate.checked(row("long", LONG_LOW_VALUE=None, LONG_HIGH_VALUE=-5), "int")
    validate.checked(row("long", LONG_LOW_VALUE=5, LONG_HIGH_VALUE=None), "int")
    validate.checked(
        row("double", DOUBLE_LOW_VALUE=-math.inf, DOUBLE_HIGH_VALUE=math.inf), "double"
    )
    validate.checked(
        row("decimal", BIG_DECIMAL_LOW_VALUE="1.0", BIG_DECIMAL_HIGH_VALUE="1.00"), "decimal"
    )
    validate.checked(row("string", AVG_COL_LEN=0.0, MAX_COL_LEN=0), "string")
    # A text exactly as long as the schema keeps.
    digits = "9" * 4000
    kept = validate.checked(
        row("decimal", BIG_DECIMAL_LOW_VALUE=digits, BIG_DECIMAL_HIGH_VALUE=digits), "decimal"
    )
    assert kept["BIG_DECIMAL_LOW_VALUE"] == digits
    # Checks of other kinds do not apply: a boolean's stray double is not looked at.
    validate.checked(row("boolean", DOUBLE_LOW_VALUE=math.nan), "boolean")
