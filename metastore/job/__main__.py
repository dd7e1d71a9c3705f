"""The job's application file for spark-submit, which wants a file to run:

    spark-submit "$(python -m metastore.job --path-of-script)" DB.TABLE --uri thrift://... ...

takes the options of `metastore analyze`.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    if argv == ["--path-of-script"]:
        print(os.path.abspath(__file__))
        return 0
    from metastore.cli import main as cli_main

    return cli_main(["analyze", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
