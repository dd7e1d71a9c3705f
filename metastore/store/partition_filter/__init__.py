"""HMS partition filters: the text of get_partitions_by_filter, parsed and turned into SQL.

Clients select partitions with a small expression language over the partition keys (HMS's
Filter.g, Hive 2.x to 4.x, plus what Spark 4.1 sends), for example

    ds = "2024-01-01" and hr = 1
    (ds = "2024-01-01" or hr = 3)
    (hr) in (37, 1, 33)
    ds like "2024-01.*"

`parse_filter` turns the text into a small typed tree; `filter_sql` turns the tree into a
SQLAlchemy condition over PARTITIONS and PARTITION_KEY_VALS, so that the database does the
filtering (the value of key i of a partition is its PARTITION_KEY_VALS row with
INTEGER_IDX = i). `syntax.py` holds the tokenizer, the parser and the tree, `sql.py` the
translation; metastore/store_filter.py runs the queries (`partitions_by_filter`,
`count_partitions_by_filter`).

Grammar (keywords in any case; key names are case-insensitive)::

    filter   := [or] END                       an empty filter selects every partition
    or       := and ("or" and)*
    and      := unary ("and" unary)*           so "and" binds tighter than "or"
    unary    := "not" unary | primary
    primary  := "(" or ")"
              | ["("] KEY [")"] ["not"] "in" "(" literal ("," literal)* ")"
              | KEY ["not"] "between" literal "and" literal
              | KEY ("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=" | "like") literal
              | literal ("=" | "!=" | "<>" | "<" | "<=" | ">" | ">=") KEY
    literal  := "..." | '...'                  no escapes: the text between the quotes
              | ["-"] DIGITS                   a 64-bit integer
              | "date" "'yyyy-mm-dd'"          also with double quotes
              | ["date"] yyyy-mm-dd            unquoted, as in Hive 2.x/3.x's Filter.g

Comparisons follow the key's Hive type, as HMS 2.3 does (notes/spark §3.5 and §4):

* string, varchar, char: text in byte order (UTF-8, so code point order), whatever the
  database's collation. The default partition's value `__HIVE_DEFAULT_PARTITION__` is plain
  text here: `s != "a"` selects it and `s = "__HIVE_DEFAULT_PARTITION__"` finds it.
* tinyint, smallint, int, bigint: numbers. A stored value is a number when it is an
  optional sign and ASCII digits (leading zeros allowed: "01", "+3", "-5") within the
  64-bit range; anything else ("", "1e3", " 5", the default partition) is no number, and a
  comparison with it is unknown (SQL NULL): it matches neither `=`, `!=`, `in`, `not in`,
  `between` nor their negation with `not`. A literal is an integer or a quoted integer.
* date: dates. A stored value is a date when it is written yyyy-mm-dd (as Hive and Spark
  write them) and names a real day; then its text orders like the date. Other values
  ("2024-1-5", "2024-02-30", the default partition) are unknown as above. A literal is
  `date '...'`, an unquoted yyyy-mm-dd or a quoted yyyy-m-d (`d = "2024-1-15"` is
  2024-01-15, as in HMS).

`and`, `or` and `not` follow SQL's three-valued logic. `like` is for string keys only and
is case-sensitive; see `like_parts` for its two pattern styles.

Errors raise PartitionFilterError: text that does not parse with a message that starts with
"Error parsing partition filter" (Spark recognizes that text), other mistakes (a key that is
not a partition key, a literal of the wrong type) with a message that says what is wrong.
"""

from metastore.store.partition_filter.sql import FilterSql, filter_sql, text_in_byte_order
from metastore.store.partition_filter.syntax import (
    PARSE_ERROR,
    And,
    Between,
    Compare,
    DateValue,
    Everything,
    Filter,
    In,
    IntValue,
    Like,
    LikePart,
    Not,
    Or,
    PartitionFilterError,
    StringValue,
    Value,
    Wildcard,
    like_parts,
    parse_date,
    parse_filter,
    parse_integer,
)

__all__ = [
    "PARSE_ERROR",
    "And",
    "Between",
    "Compare",
    "DateValue",
    "Everything",
    "Filter",
    "FilterSql",
    "In",
    "IntValue",
    "Like",
    "LikePart",
    "Not",
    "Or",
    "PartitionFilterError",
    "StringValue",
    "Value",
    "Wildcard",
    "filter_sql",
    "like_parts",
    "parse_date",
    "parse_filter",
    "parse_integer",
    "text_in_byte_order",
]
