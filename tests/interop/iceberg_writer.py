"""One Iceberg writer of tests/interop/test_pyiceberg.py, in a process of its own: appends a
row ROUNDS times to TABLE through pyiceberg's HiveCatalog at URI, and prints one line per
append: "<id> ok" when the append returned, "<id> failed" when it raised
CommitFailedException (another writer's commit came first, or the lock was not granted in
time). Anything else ends the process with the error.

    python iceberg_writer.py URI WAREHOUSE DB.TABLE WRITER ROUNDS
"""

from __future__ import annotations

import sys

import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import CommitFailedException

# Polls check_lock every 10 to 100 ms while another writer holds the table (pyiceberg's
# defaults wait 2, 4, 8 s between four polls).
LOCK_WAITS = {
    "lock-check-min-wait-time": "0.01",
    "lock-check-max-wait-time": "0.1",
    "lock-check-retries": "200",
}


def main() -> None:
    uri, warehouse, table_name, writer, rounds = sys.argv[1:6]
    catalog = HiveCatalog("colstats", uri=uri, warehouse=warehouse, **LOCK_WAITS)
    for n in range(int(rounds)):
        row_id = int(writer) * 1000 + n
        table = catalog.load_table(table_name)
        rows = pa.table({"id": pa.array([row_id], pa.int64()), "writer": [f"w{writer}"]})
        try:
            table.append(rows)
        except CommitFailedException:
            print(f"{row_id} failed", flush=True)
        else:
            print(f"{row_id} ok", flush=True)


if __name__ == "__main__":
    main()
