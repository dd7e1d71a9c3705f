"""A Hive table's files: where they are and how to read them, for the statistics job and the
Flight door alike (neither imports the other).

* :mod:`metastore.files.layout` - a table's layout from what the metastore says of it:
  where its files are, their format, its columns and partition keys, read one way;
* :mod:`metastore.files.formats` - how files are read (ReadSpec), from a format and serde;
* :mod:`metastore.files.locations` - a location's file system: local, object storage, ...;
* :mod:`metastore.files.object_storage` - S3 settings, as Spark's S3A ones;
* :mod:`metastore.files.listing` - listing folders and Hive-style partition folders, and
  splitting files into pieces of work;
* :mod:`metastore.files.reading` - reading a piece into Arrow record batches;
* :mod:`metastore.files.text` - csv and json as Spark reads them;
* :mod:`metastore.files.errors` - the errors, one line each.

It uses PyArrow, and neither Spark nor a database.
"""
