"""The errors the statistics job raises for anything a user can act on."""


class JobError(Exception):
    """The job cannot go on: data that does not fit the metastore's table, files it cannot
    read, an unreachable metastore. The message is one line that says what to change; the
    CLI prints it and exits 1, a program calling the job catches it."""


class OptionsError(JobError):
    """The options themselves are wrong: a malformed or contradictory option, or one that
    names something the table or its data does not have (the CLI exits 2: bad arguments)."""


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (Ctrl-C, SIGTERM); the message says what was written
    before it stopped (the CLI exits 130)."""
