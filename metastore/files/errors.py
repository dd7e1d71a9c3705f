"""The errors of reading a table's files. Each message is one line that names the location
or file and says what to check; the job raises them again as its own errors
(metastore.job.errors), the Flight door as Flight errors DuckDB shows."""


class FilesError(Exception):
    """Files that cannot be listed or read as the table says."""


class NotFound(FilesError):
    """A location that does not exist: no such folder or file, or no such bucket."""


class NotAFolder(FilesError):
    """A location that is a file where the folder of a table's files is wanted."""


class NotReadHere(FilesError):
    """Storage or a format the readers do not read (the message says what the table is
    stored as, or which scheme)."""


class UnknownFileSystem(NotReadHere):
    """A location of a file system PyArrow does not open here (hdfs:// without Hadoop's
    libraries, a scheme it does not know): LOCATION, and PyArrow's reason (DETAIL)."""

    def __init__(self, location: str, detail: str) -> None:
        self.location = location
        self.detail = detail
        super().__init__(f"{location} cannot be read here ({detail})")


class InvalidLocation(FilesError):
    """A location written wrong (an option of its query that is not one)."""
