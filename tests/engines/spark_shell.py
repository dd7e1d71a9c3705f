"""A Spark session with Hive support in a process of its own, driven line by line: the tests
send SQL on its stdin and read the rows back, so that one session can be kept open while
other processes (the statistics job, another session) change the metastore.

    python tests/engines/spark_shell.py --uri thrift://127.0.0.1:9083 --warehouse /tmp/wh

The session is spark_workload.build_session's (local[2], UTC). Each request is one JSON line
`{"sql": "...", "session": "NAME"}`; NAME (default "main") picks a session of this JVM,
`spark.newSession()` made on first use (its own catalog state, the same metastore client
configuration). The answer is one line starting with ANSWER and a JSON object, `{"rows":
[[...], ...]}` (values as spark_workload.json_value gives them) or `{"error": "..."}`;
anything else on stdout is Spark's own output. EOF on stdin stops the session.

SparkShell is the tests' side: it starts the process and sends the requests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_workload import build_session, json_value

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ANSWER = "@colstats-answer "
ANSWER_TIMEOUT_S = 600.0


class SparkShell:
    """This script in a process of its own, on the metastore at PORT: SQL in, rows out. Its
    stderr (Spark's log) goes to LOG."""

    def __init__(self, port: int, warehouse: Path, log: Path) -> None:
        self.log = log
        with log.open("wb") as sink:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    *("--uri", f"thrift://127.0.0.1:{port}"),
                    *("--warehouse", str(warehouse)),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=sink,
                text=True,
                start_new_session=True,
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[str] = self.process.stdin
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,))
        self.reader.start()
        self._answer()  # ready

    def _read(self, stdout: IO[str]) -> None:
        with stdout:
            for line in stdout:
                if line.startswith(ANSWER):
                    self.answers.put(line[len(ANSWER) :])
        self.answers.put(None)

    def _answer(self) -> dict[str, Any]:
        try:
            line = self.answers.get(timeout=ANSWER_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError(f"no answer in {ANSWER_TIMEOUT_S:.0f} s (see {self.log})") from None
        if line is None:
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])
            raise RuntimeError(f"the Spark shell exited ({self.process.wait()}):\n{tail}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def sql(self, text: str, session: str = "main") -> list[list[Any]]:
        """The rows of TEXT in SESSION; RuntimeError with Spark's message when it fails."""
        self.stdin.write(json.dumps({"sql": text, "session": session}) + "\n")
        self.stdin.flush()
        answer = self._answer()
        if "error" in answer:
            raise RuntimeError(f"{text}: {answer['error']}")
        rows: list[list[Any]] = answer["rows"]
        return rows

    def close(self) -> None:
        """Stop the session (EOF on its stdin) and wait for the process."""
        try:
            with contextlib.suppress(BrokenPipeError):  # it may have exited already
                self.stdin.close()
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join()


def answer(sessions: dict[str, SparkSession], request: dict[str, Any]) -> dict[str, Any]:
    name = str(request.get("session", "main"))
    if name not in sessions:
        sessions[name] = sessions["main"].newSession()
    try:
        rows = sessions[name].sql(str(request["sql"])).collect()
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e).strip()[:2000]}"}
    return {"rows": [json_value(list(row)) for row in rows]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", required=True, help="thrift://HOST:PORT of the metastore")
    parser.add_argument("--warehouse", required=True, type=Path, help="spark.sql.warehouse.dir")
    args = parser.parse_args(argv)
    warehouse = args.warehouse.resolve()
    warehouse.mkdir(parents=True, exist_ok=True)
    sessions = {"main": build_session(args.uri, warehouse)}
    print(ANSWER + json.dumps({"ready": True}), flush=True)
    try:
        for line in sys.stdin:
            if line.strip():
                print(ANSWER + json.dumps(answer(sessions, json.loads(line))), flush=True)
    finally:
        sessions["main"].stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
