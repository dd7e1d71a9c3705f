"""The job's progress: a bar redrawn in place on a terminal, log lines otherwise."""

from __future__ import annotations

import io
import logging
import time

import pytest

from metastore.files.listing import Split
from metastore.job.progress import Channel, Progress, Reporter, duration_text, size_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_sizes_and_durations_read_as_people_write_them() -> None:
    assert size_text(512) == "512 B"
    assert size_text(1536) == "1.5 KiB"
    assert size_text(3 * 1024**3) == "3.0 GiB"
    assert duration_text(3725.4) == "1:02:05"
    assert duration_text(-1) == "0:00:00"


def test_terminal_bar_shows_partitions_bytes_rate_and_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress(1000, 200 * 1024**2, out, clock=clock, terminal=True)
    progress.update(0, 0)
    assert out.getvalue() == (
        "\r[....................] 0/1,000 partitions  0 B/200.0 MiB  0 B/s  time left unknown\x1b[K"
    )
    clock.now += 10
    progress.update(250.0, 50 * 1024**2)
    last = out.getvalue().rsplit("\r", 1)[1]
    assert last == (
        "[#####...............] 250/1,000 partitions  50.0 MiB/200.0 MiB  5.0 MiB/s  "
        "0:00:30 left\x1b[K"
    )
    clock.now += 30
    progress.update(999.9999999999, 200 * 1024**2)  # shares of split partitions add up
    progress.finish()
    assert out.getvalue().endswith(
        "[####################] 1,000/1,000 partitions  200.0 MiB/200.0 MiB  5.0 MiB/s  "
        "read; writing the statistics\x1b[K\n"
    )
    assert "done" not in out.getvalue()  # not before the statistics are written
    progress.done(1000)
    assert out.getvalue().endswith("200.0 MiB/200.0 MiB  5.0 MiB/s  done\x1b[K\n")


def test_a_partition_counts_once_all_its_pieces_are_read() -> None:
    progress = Progress(3, 300, io.StringIO(), clock=Clock(), terminal=True)
    progress.update(1.5, 150)
    assert "1/3 partitions" in progress.line()


def test_without_a_terminal_it_logs_a_line_every_ten_seconds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, out = Clock(), io.StringIO()
    caplog.set_level(logging.INFO, logger="metastore.job")
    progress = Progress(10, 1000, out, clock=clock, terminal=False)
    for step in range(1, 25):  # every second for 24 seconds
        clock.now += 1
        progress.update(step / 3, step * 40)
    progress.finish()
    progress.done(10)
    lines = [r.getMessage() for r in caplog.records]
    assert out.getvalue() == ""
    assert len(lines) == 5  # at 1 s, 11 s, 21 s, the end of the scan, the end of the writes
    assert lines[0].startswith("scan: [") and "0/10 partitions" in lines[0]
    assert "7/10 partitions  840 B/1000 B" in lines[2]
    assert lines[3].endswith("writing the statistics")
    assert lines[4].endswith("done")


def test_tasks_report_how_far_they_have_read_through_the_channel() -> None:
    """The bytes of a split move with the fraction its task reports, before the task ends;
    reports of another run (another token) are ignored."""
    splits = [
        Split("/d/a", 1000, "ds=a", share=1.0, index=0),
        Split("/d/b", 3000, "ds=b", share=0.75, index=1),
        Split("/d/b", 3000, "ds=b", row_groups=(1,), counts_file=False, share=0.25, index=2),
    ]
    channel = Channel("127.0.0.1")
    try:
        send = channel.reporter.sender()
        send(0, 0.5)
        send(1, 0.2)  # within REPORT_EVERY of the last: not sent
        send(1, 1.0)  # a split's end always is
        send.close()
        stranger = Reporter("127.0.0.1", channel.reporter.port, b"12345678").sender()
        stranger(2, 1.0)
        stranger.close()
        channel.receive(time.monotonic() + 1.0)
        done_bytes, partitions = channel.read(splits, [1000, 3000, 1000])
        assert channel.fractions == {0: 0.5, 1: 1.0}
        assert (done_bytes, partitions) == (500 + 3000, 0.5 + 0.75)
    finally:
        channel.close()
