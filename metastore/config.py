"""Server settings: defaults, overridden by a TOML file, then by environment, then by flags.

The file is the one named by --config or METASTORE_CONFIG, with keys at the top level:

    db = "postgresql+psycopg://metastore@db/metastore"
    host = "0.0.0.0"
    port = 9083
    framed = false
    workers = 100
    fetch_bitvector = false
    fetch_histogram = false
    migrate = true
    warehouse = "/data/warehouse"
    log_level = "INFO"

Each key has an environment variable METASTORE_<KEY in upper case>, e.g. METASTORE_DB.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A settings file, variable or flag that cannot be used; the message names it."""


def default_data_dir() -> Path:
    """Where the embedded SQLite database lives: $METASTORE_HOME, else the XDG data dir."""
    home = os.environ.get("METASTORE_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "colstats"


@dataclasses.dataclass(frozen=True)
class Settings:
    db: str | None = None
    """SQLAlchemy URL; None means a SQLite file in the data directory."""
    host: str = "0.0.0.0"
    port: int = 9083
    framed: bool = False
    """Framed transport; HMS and its clients use the unframed (buffered) one."""
    workers: int = 100
    """Connections served at once; HMS clients keep their connection open between calls."""
    fetch_bitvector: bool = False
    """Return bit vectors on reads, like HMS's metastore.stats.fetch.bitvector."""
    fetch_histogram: bool = False
    """Return KLL histograms on reads, like HMS's metastore.stats.fetch.kll."""
    migrate: bool = True
    """Bring the schema to the newest revision on start."""
    warehouse: str | None = None
    """The folder of databases created without a location (and of `default`), like HMS's
    metastore.warehouse.dir; None means a folder `warehouse` in the data directory."""
    log_level: str = "INFO"

    def database_url(self) -> str:
        if self.db:
            return self.db
        data_dir = default_data_dir()
        data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{data_dir / 'metastore.db'}"

    def warehouse_root(self) -> str:
        return self.warehouse or str(default_data_dir() / "warehouse")


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _coerce(key: str, value: Any, source: str) -> Any:
    """VALUE of setting KEY in the field's type; text (from the environment) is parsed."""
    kind = _FIELDS[key].type
    if kind == "bool":
        if isinstance(value, bool):
            return value
        lowered = str(value).strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{source}: {key} must be true or false, not {value!r}")
    if kind == "int":
        if isinstance(value, bool):
            raise SettingsError(f"{source}: {key} must be an integer, not {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{source}: {key} must be an integer, not {value!r}") from None
    if value is not None and not isinstance(value, str):
        raise SettingsError(f"{source}: {key} must be text, not {value!r}")
    return value


def load(config_file: str | None = None, **flags: Any) -> Settings:
    """Settings from the file, the environment and FLAGS (None flags are ignored).

    Raises SettingsError for an unreadable file, an unknown key and a value of the wrong type.
    """
    values: dict[str, Any] = {}
    path = config_file or os.environ.get("METASTORE_CONFIG")
    if path:
        try:
            with open(path, "rb") as f:
                from_file = tomllib.load(f)
        except OSError as e:
            raise SettingsError(f"cannot read the settings file {path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise SettingsError(f"{path} is not valid TOML: {e}") from None
        unknown = sorted(set(from_file) - set(_FIELDS))
        if unknown:
            raise SettingsError(
                f"{path}: unknown setting(s) {', '.join(unknown)}; "
                f"the settings are {', '.join(_FIELDS)}"
            )
        values.update({k: _coerce(k, v, path) for k, v in from_file.items()})
    for key in _FIELDS:
        variable = f"METASTORE_{key.upper()}"
        env = os.environ.get(variable)
        if env is not None:
            values[key] = _coerce(key, env, variable)
    for key, value in flags.items():
        if key not in _FIELDS:
            raise TypeError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = _coerce(key, value, f"--{key.replace('_', '-')}")
    return Settings(**values)
