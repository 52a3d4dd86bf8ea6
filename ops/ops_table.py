"""``python -m twinops ops [--json]``: every declared op (``twinops.opdef``) with its faces.

One row per op: the Python API and module, the torch ops, the ONNX node and domain, the TensorRT
plugin creators with their versions (and interfaces), the reference and the supported dtypes.
``--json`` prints the same as a JSON list (:meth:`twinops.opdef.OpDef.faces`, one object per op).
Exit status: 0, or 2 on bad arguments (argparse's one-line error).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List

from . import opdef
from ._cli import console

COLUMNS = ("op", "Python API", "torch ops", "ONNX node (domain)", "plugin creators (version: interface)",
           "reference", "dtypes (torch; TensorRT)")


def _dtypes(f: dict) -> str:
    """The API's dtypes, those without CUDA kernels marked ``(CPU)``."""
    return ", ".join(d + (" (CPU)" if d in f["cpu_only_dtypes"] else "") for d in f["dtypes"])


def rows(faces: List[dict]) -> List[tuple]:
    """The table's rows (strings) from :meth:`OpDef.faces` of each op."""
    out = []
    for f in faces:
        api = f"{f['python']}({', '.join(f['inputs'])}, ...)"
        if f["module"]:
            api += f"\n{f['module']}"
        plugins = "\n".join(f"{p['name']} " + ", ".join(f"{v}: {i}" for v, i in p["versions"].items())
                            + (f" (TensorRT >= {p['min_tensorrt']})" if p["min_tensorrt"] > 8 else "")
                            for p in f["plugins"]) or "-"
        out.append((f["name"], api, "\n".join(f["torch_ops"]), f"{f['onnx']['op_type']} ({f['onnx']['domain']})",
                    plugins, f["reference"] or "-",
                    _dtypes(f) + "; " + (", ".join(f["tensorrt_dtypes"]) or "-")))
    return out


def _print_plain(table: List[tuple]) -> None:
    # Multi-line cells become continuation lines under their column.
    cells = [[c.split("\n") for c in r] for r in [COLUMNS] + table]
    widths = [max(len(line) for r in cells for line in r[i]) for i in range(len(COLUMNS))]
    for r in cells:
        for k in range(max(len(c) for c in r)):
            print("  ".join((c[k] if k < len(c) else "").ljust(w) for c, w in zip(r, widths)).rstrip())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m twinops ops", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="print the registry as JSON instead of a table")
    p.add_argument("--plain", action="store_true", help="a plain-text table even when rich is installed")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    import twinops  # noqa: F401  (imports every op's declaration)

    faces = [op.faces() for op in opdef.registered().values()]
    if args.json:
        print(json.dumps(faces, indent=1))
        return 0
    table = rows(faces)
    try:
        if args.plain:
            raise ImportError
        from rich.table import Table
    except ImportError:
        _print_plain(table)
        return 0
    t = Table(title="twinops ops", show_lines=True)
    for c in COLUMNS:
        t.add_column(c)
    for r in table:
        t.add_row(*r)
    console(width=200).print(t)
    return 0


if __name__ == "__main__":
    from ._cli import run_cli

    sys.exit(run_cli(main))
