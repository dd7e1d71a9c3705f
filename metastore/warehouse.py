"""The folders of databases, tables and partitions: default locations, and the file operations
HMS makes on them (create a missing folder, move it on a rename, delete it on a drop with
deleteData).

Engines rely on these: Spark writes a managed table's files under the location HMS chose,
expects the folder to move when it renames the table and to disappear when it drops it.
colstats does what HMS does where it can reach the files, on local paths (`file:` URIs and
bare paths). On other file systems (hdfs://, s3a://, ...) it changes the metadata only and
logs what it left to do: a drop leaves the data in place, and a rename keeps the table's
location (so that it still finds its data) instead of moving the folder.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

log = logging.getLogger(__name__)


def local_path(uri: str | None) -> Path | None:
    """The local path of URI, or None when it names another file system (or nothing)."""
    if not uri:
        return None
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file") and parsed.netloc in ("", "localhost"):
        return Path(parsed.path)
    return None


def join(base: str, name: str) -> str:
    """BASE/NAME, for URIs and paths alike."""
    return f"{base.rstrip('/')}/{name}"


def as_uri(location: str) -> str:
    """A location as HMS writes it: bare paths become file: URIs."""
    return f"file:{location}" if location.startswith("/") else location


class Warehouse:
    """The root folder of databases created without a location, and the file operations."""

    def __init__(self, root: str) -> None:
        self.root = as_uri(root)

    def database_location(self, name: str) -> str:
        """Where a database without a location lives: ROOT/NAME.db (ROOT itself for default)."""
        return self.root if name == "default" else join(self.root, f"{name}.db")

    def make_folder(self, uri: str | None) -> None:
        """Create URI's folder if it is local and missing, as HMS does on create."""
        path = local_path(uri)
        if path is None:
            return
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise WarehouseError(f"cannot create the folder {uri}: {e.strerror}") from e

    def delete_folder(self, uri: str | None) -> None:
        """Delete URI's folder and everything in it (a drop with deleteData)."""
        path = local_path(uri)
        if path is None:
            if uri:
                log.warning("the data at %s is left in place: it is not on a local path", uri)
            return
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=False)
        elif path.exists():
            path.unlink()

    def move_folder(self, source: str, target: str) -> bool:
        """Move the folder SOURCE to TARGET; False (nothing moved) when they are not local.

        Raises WarehouseError when TARGET exists already, as HMS refuses a rename then.
        """
        src, dst = local_path(source), local_path(target)
        if src is None or dst is None:
            return False
        if dst.exists():
            raise WarehouseError(f"cannot move {source} to {target}: the target exists")
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
        return True


def quick_stats(uri: str | None) -> tuple[int, int] | None:
    """(number of files, total bytes) under the local folder URI, as HMS's fast statistics
    count them: every file below it, hidden ones (starting with '.' or '_', such as Spark's
    _SUCCESS) left out; a folder that does not exist holds none. None when the folder is not
    local."""
    path = local_path(uri)
    if path is None:
        return None
    if not path.is_dir():
        return (1, path.stat().st_size) if path.is_file() else (0, 0)
    files = size = 0
    for folder, folders, names in os.walk(path):
        folders[:] = [f for f in folders if not f.startswith((".", "_"))]
        for name in names:
            if not name.startswith((".", "_")):
                files += 1
                size += os.path.getsize(os.path.join(folder, name))
    return files, size


class WarehouseError(Exception):
    """A file operation failed; the message says which folder and why."""
