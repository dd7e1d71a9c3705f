"""The error the statistics job raises for anything a user can act on."""


class JobError(Exception):
    """The job cannot go on: bad options, data that does not fit the metastore's table, an
    unreachable metastore. The message is one line that says what to change; the CLI prints
    it and exits non-zero, a program calling the job catches it."""
