"""Where files are: a location's file system (local, object storage, or any PyArrow opens),
the path within it, and a location as the metastore keeps it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from metastore.files import object_storage
from metastore.files.errors import FilesError, NotReadHere, UnknownFileSystem


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """PyArrow's filesystem of a local path or URI, and the path within it."""
    parsed = urlparse(location)
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        if parsed.scheme == "file":
            # Hive keeps file: locations as written (ds=b%2Fc is a folder of that name); a
            # URI made by a library encodes them (ds%3Da for ds=a).
            path = parsed.path
            if not os.path.exists(path) and os.path.exists(unquote(path)):
                path = unquote(path)
            return pafs.LocalFileSystem(), path
        if parsed.scheme.lower() in object_storage.S3_SCHEMES:
            if not parsed.netloc:
                raise NotReadHere(f"{location} names no bucket (s3a://BUCKET/PATH)")
            # PyArrow's S3 paths start with the bucket.
            return object_storage.current().filesystem(parsed.netloc), parsed.netloc + parsed.path
        try:
            fs, inner = pafs.FileSystem.from_uri(location)
            return fs, str(inner)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise UnknownFileSystem(location, object_storage.one_line(e)) from None
    return pafs.LocalFileSystem(), os.path.abspath(location)


def location_of(path: str) -> str:
    """PATH as a location the metastore keeps: a URI, local paths as HMS writes them
    ('file:/data/t/ds=a b', not percent-encoded)."""
    parsed = urlparse(path)
    if parsed.scheme and len(parsed.scheme) > 1:
        return path
    return "file:" + os.path.abspath(path)


def uri_prefix(location: str) -> str:
    """What to put before a path of the listing to open it again ('' for local files;
    the scheme alone for object storage, whose paths start with the bucket)."""
    parsed = urlparse(location)
    if not parsed.scheme or len(parsed.scheme) == 1 or parsed.scheme == "file":
        return ""
    if parsed.scheme.lower() in object_storage.S3_SCHEMES:
        return f"{parsed.scheme}://"
    return f"{parsed.scheme}://{parsed.netloc}"


@contextlib.contextmanager
def listing_errors(location: str) -> Iterator[None]:
    """A failure to list LOCATION (credentials refused, no such bucket, an endpoint that does
    not answer) as a FilesError of one line that says what to check."""
    try:
        yield
    except OSError as e:
        raise FilesError(f"cannot list {location}: {object_storage.explain(location, e)}") from None
