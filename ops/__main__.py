"""``python -m twinops <command>``: the parity toolkit.

``python -m twinops`` with no command (or only options) runs ``check``; ``--help`` lists the
commands (the generic ones below, then those an op family adds in its package's ``COMMANDS``),
and ``--help`` after a command lists its options. A closed output pipe (``| head``) ends any
command quietly (exit status 141, as a process stopped by SIGPIPE).
"""
from __future__ import annotations

import importlib
import sys
from typing import Dict, Tuple

from ._cli import run_cli

# name -> ("module:function", one line for --help)
GENERIC: Dict[str, Tuple[str, str]] = {
    "check": ("twinops.check:main", "every op on every available backend vs its reference (the main job)"),
    "regress": ("twinops.regress:main", "numeric regression against the golden baselines (--update rewrites them)"),
    "ops": ("twinops.ops_table:main", "every registered op with its faces (Python API, torch ops, ONNX node, "
                                      "plugin creators, reference, dtypes); --json too"),
}


def commands() -> Dict[str, Tuple[str, str]]:
    """Every command: :data:`GENERIC`, then each op family's ``COMMANDS`` (ops/op_list.py order)."""
    from .op_list import OPS

    out = dict(GENERIC)
    for op in OPS:
        out.update(getattr(importlib.import_module(f"twinops.library.{op}"), "COMMANDS", {}))
    return out


def main(argv=None) -> int:
    """The exit status of ``python -m twinops`` with ``argv`` (default ``sys.argv[1:]``)."""
    return run_cli(_dispatch, argv)


def _dispatch(argv) -> int:
    from .opdef import resolve

    argv = list(sys.argv[1:] if argv is None else argv)
    known = commands()
    if argv and argv[0] in ("-h", "--help"):
        print("usage: python -m twinops [COMMAND] [options]\n\ncommands:")
        for name, (_, summary) in known.items():
            print(f"  {name:9s} {summary}")
        print("\n" + __doc__.split("\n\n", 1)[1].strip())
        return 0
    command = argv.pop(0) if argv and not argv[0].startswith("-") else "check"
    if command not in known:
        print(f"python -m twinops: unknown command {command!r} (expected one of {', '.join(known)})", file=sys.stderr)
        return 2
    return resolve(known[command][0])(argv)


if __name__ == "__main__":
    sys.exit(main())
