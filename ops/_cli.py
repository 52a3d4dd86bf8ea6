"""What every command-line entry point of twinops shares (``python -m twinops ...``, ``python -m
twinops.bench``)."""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Optional, Sequence

# A reader that closed the pipe early (``python -m twinops ops --json | head``) ends the command
# as it ends ``git log | head``: quietly, with the status of a process that SIGPIPE stopped.
EXIT_CLOSED_PIPE = 128 + int(getattr(signal, "SIGPIPE", 13))


def run_cli(main: Callable[[Optional[Sequence[str]]], int], argv: Optional[Sequence[str]] = None) -> int:
    """``main(argv)``'s exit status: argparse's ``SystemExit`` (0 for ``--help``, 2 for a bad
    argument) becomes its status, and a closed standard output (``BrokenPipeError``) ends the
    command without a traceback, with :data:`EXIT_CLOSED_PIPE`."""
    try:
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        sys.stdout.flush()  # a closed pipe shows here when the output was still buffered
        return status
    except BrokenPipeError:
        # Python flushes stdout once more at exit, which would raise again: from here on the
        # output goes nowhere.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_CLOSED_PIPE


def console(**kwargs):
    """A ``rich.console.Console(**kwargs)`` whose closed output raises ``BrokenPipeError`` for
    :func:`run_cli` (rich's own handling exits with status 1). Raises ImportError without rich."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(**kwargs)
