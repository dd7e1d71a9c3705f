"""HMS name patterns, read as a real Hive Metastore reads them.

`get_databases`, `get_tables`, `get_tables_by_type`, `get_table_meta` (both patterns),
`get_functions` and `GetTablesRequest.tablesPattern` take a pattern. Hive's documentation
promises `*` (any text) and `|` (alternatives); what HMS does with the rest comes from its
store, the same in 2.3, 3.x and 4.x (ObjectStore, the default RawStore):

1. The whole pattern is trimmed (Java's `trim`: characters up to U+0020) and, but for
   `get_databases`, lower-cased; every match is case-insensitive anyway.
2. It is split on `|` by Java's `String.split`: empty alternatives stay ("|a" is "" or "a"),
   except trailing ones ("a|" is "a"). Alternatives are not trimmed: "a | b" matches neither
   "a" nor "b". A pattern of nothing but `|` leaves no alternative: HMS builds an empty JDOQL
   filter and fails with MetaException ("Method/Identifier expected at character ...");
   colstats raises InvalidPatternError, answered as MetaException with a clear message.
3. In each alternative `*` becomes `.*`, and the result goes to JDOQL's
   `name.matches("(?i)...")`. That is no regular expression: DataNucleus translates it to SQL
   `LOWER(name) LIKE ...` (its RegularExpressionConverter; see `like_pattern`): `.*` is any
   text, `.` any one character, and every other character stands for itself, `_` and `%`
   included. So `?`, `[ab]`, `(a|b)`, `+`, `^`, `$`, `{2}` are literal (and match no Hive name),
   "(" is no error, `.*` matches every name and `a.*` needs a character after the `a`.
4. The empty pattern matches nothing; no pattern at all (null) matches every name.

Hive 3+'s `@catalog#` prefix of a database pattern is taken off before (names.split_catalog).
HMS's optional CachedStore (hive.metastore.rawstore.impl; off by default) matches the names
it holds with a Java regex instead (CacheUtils.matches: `?` one character, the rest a regex);
colstats follows ObjectStore, the default and what HMS 2.3.10 answers
(tests/test_name_patterns_hms.py compares the two).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from metastore.errors import InvalidInput

# Java's String.trim removes every character up to U+0020 from both ends.
_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))
_LIKE_ESCAPE = "\\"


class InvalidPatternError(InvalidInput):
    """A pattern HMS fails on; the message says why and what to send instead."""


class _Wildcard(enum.Enum):
    ONE = "_"  # any one character
    TEXT = "%"  # any text, the empty one included


# One alternative as LIKE reads it: literal characters and wildcards.
_Like = Sequence[str | _Wildcard]


def filter_names(names: Iterable[str], pattern: str | None) -> list[str]:
    """The NAMES that PATTERN matches, in their order; None matches every name."""
    if pattern is None:
        return list(names)
    alternatives = [_like_tokens(like_pattern(a)) for a in _alternatives(pattern)]
    return [n for n in names if any(_like_matches(like, n.lower()) for like in alternatives)]


def like_pattern(alternative: str) -> str:
    """The SQL LIKE pattern (escape character `\\`) HMS matches ALTERNATIVE with: `*` made
    `.*` by HMS, then DataNucleus's RegularExpressionConverter, which turns `.*` into `%`,
    `.` into `_`, escapes `_` and `%`, and copies the rest; `\\.` is a literal dot and any
    other backslash a literal backslash (so `\\_` is a backslash and then any character)."""
    source = alternative.replace("*", ".*")
    out: list[str] = []
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 1
            if i == len(source):
                out.append(_LIKE_ESCAPE + "\\")
            elif source[i] == ".":
                out.append(".")
            elif source[i] == "\\":
                out.append(_LIKE_ESCAPE + "\\" + _LIKE_ESCAPE + "\\")
            else:
                out.append(_LIKE_ESCAPE + "\\" + source[i])
        elif c == ".":
            if source[i + 1 : i + 2] == "*":
                out.append("%")
                i += 1
            else:
                out.append("_")
        elif c in "_%":
            out.append(_LIKE_ESCAPE + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _alternatives(pattern: str) -> list[str]:
    """PATTERN trimmed, lower-cased and split on '|' as Java's String.split does: trailing
    empty parts dropped, but a text without '|' is itself the one part ("" gives [""])."""
    text = pattern.strip(_JAVA_TRIMMED).lower()
    if "|" not in text:
        return [text]
    parts = text.split("|")
    while parts and not parts[-1]:
        parts.pop()
    if not parts:
        raise InvalidPatternError(
            f"name pattern {pattern!r} has no alternatives (nothing but '|'); "
            "use '*' for every name"
        )
    return parts


def _like_tokens(like: str) -> list[str | _Wildcard]:
    """LIKE pattern LIKE as literal characters and wildcards (the escape character makes the
    next one literal; `like_pattern` escapes only `_`, `%` and itself)."""
    tokens: list[str | _Wildcard] = []
    i = 0
    while i < len(like):
        c = like[i]
        if c == _LIKE_ESCAPE and i + 1 < len(like):
            i += 1
            tokens.append(like[i])
        elif c == "%":
            tokens.append(_Wildcard.TEXT)
        elif c == "_":
            tokens.append(_Wildcard.ONE)
        else:
            tokens.append(c)
        i += 1
    return tokens


def _like_matches(like: _Like, name: str) -> bool:
    """Whether NAME matches LIKE as a whole. On a mismatch only the last `%` takes one more
    character, which is enough for `%` and `_` and keeps the work within len(LIKE) x
    len(NAME) steps. (A backtracking regex grows as len(NAME) to the power of the number of
    `%`: Python's took 6 s for '*a' nine times and then '*b' on a name of 40 a's.)"""
    p = n = 0
    last_text, resume = -1, 0  # the last `%` met, and where NAME resumes after it
    while n < len(name):
        if p < len(like) and (like[p] is _Wildcard.ONE or like[p] == name[n]):
            p += 1
            n += 1
        elif p < len(like) and like[p] is _Wildcard.TEXT:
            last_text, resume = p, n
            p += 1
        elif last_text >= 0:
            resume += 1
            p, n = last_text + 1, resume
        else:
            return False
    return all(token is _Wildcard.TEXT for token in like[p:])
