"""``python -m twinops <command>``: the parity toolkit.

    python -m twinops check ...     every op on every available backend vs its reference (the main job)
    python -m twinops regress ...   numeric regression against the golden baselines (--update rewrites them)
    python -m twinops table ...     the quick table: twinops.interpolate vs F.interpolate per mode and device
    python -m twinops ops [--json]  every registered op with its faces (Python API, torch ops, ONNX node,
                                    plugin creators, reference, dtypes)

``python -m twinops`` with no command (or only options) runs ``check``. ``--help`` after a
command lists its options. A closed output pipe (``| head``) ends any command quietly (exit
status 141, as a process stopped by SIGPIPE).
"""
from __future__ import annotations

import sys

from ._cli import run_cli

COMMANDS = ("check", "regress", "table", "ops")


def main(argv=None) -> int:
    """The exit status of ``python -m twinops`` with ``argv`` (default ``sys.argv[1:]``)."""
    return run_cli(_dispatch, argv)


def _dispatch(argv) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    command = argv.pop(0) if argv and not argv[0].startswith("-") else "check"
    if command == "check":
        from .check import main as run
    elif command == "regress":
        from .regress import main as run
    elif command == "table":
        from .table import main as run
    elif command == "ops":
        from .ops_table import main as run
    else:
        print(f"python -m twinops: unknown command {command!r} (expected one of {', '.join(COMMANDS)})",
              file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
