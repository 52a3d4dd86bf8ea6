"""``python -m twinops table``: the quick parity table of twinops.interpolate against F.interpolate.

Runs every mode of F.interpolate (nearest, nearest-exact, bilinear, bicubic, area,
antialias, align_corners) over a few shapes, scale factors and dtypes on every available
device (CPU, and CUDA when present), compares with F.interpolate computed in float64 (same
dtype for nearest modes, whose indices ATen computes in float32), prints a table and exits
non-zero when any case is out of tolerance.

    python -m twinops table [--devices cpu cuda] [--dtypes float32 float16 ...] [--seed 0]
"""
from __future__ import annotations

import argparse
import sys

import torch
import torch.nn.functional as F

import twinops
from ..._cli import console
from ...testing.tolerances import TOLERANCES

MODES = [
    ("nearest", {}), ("nearest-exact", {}), ("area", {}),
    ("bilinear", {}), ("bilinear", {"align_corners": True}), ("bilinear", {"antialias": True}),
    ("bicubic", {}), ("bicubic", {"align_corners": True}), ("bicubic", {"antialias": True}),
]
SIZES = [{"scale_factor": 2.0}, {"scale_factor": 0.5}, {"size": (37, 23)}]


def check_case(device, dtype, mode, extra, size, seed):
    """Returns (max abs error, ok) for one configuration."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(2, 3, 20, 31, generator=g, dtype=torch.float64) + 0.25).to(device=device, dtype=dtype)
    kw = dict(mode=mode, **extra, **size)
    ours = twinops.interpolate(x, **kw).double().cpu()
    ref = F.interpolate(x if mode.startswith("nearest") else x.double(), **kw).double().cpu()
    atol, rtol = TOLERANCES[dtype]
    err = (ours - ref).abs()
    bound = atol + rtol * ref.abs()
    return err.max().item(), bool((err <= bound).all() and torch.isfinite(ours).all())


def main(argv=None) -> int:
    no_cuda = twinops.cuda_unavailable_reason()
    available = ["cpu"] + ([] if no_cuda else ["cuda"])
    parser = argparse.ArgumentParser(prog="python -m twinops table", description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs="+", default=available, choices=["cpu", "cuda"])
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32", "float16", "bfloat16"],
                        choices=["float64", "float32", "float16", "bfloat16"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for d in args.devices:
        if d not in available:
            parser.error(f"device {d!r} is not available here (available: {', '.join(available)}); {no_cuda}")
    if no_cuda:
        print(f"twinops: CUDA not checked: {no_cuda}", file=sys.stderr)
    rows, failed = [], 0
    for device in args.devices:
        for dtype_name in args.dtypes:
            dtype = getattr(torch, dtype_name)
            for mode, extra in MODES:
                worst, ok = 0.0, True
                for size in SIZES:
                    err, good = check_case(device, dtype, mode, extra, size, args.seed)
                    worst, ok = max(worst, err), ok and good
                failed += not ok
                label = mode + "".join(f" {k}" for k in extra)
                rows.append((device, dtype_name, label, f"{worst:.2e}", "{:.0e}/{:.0e}".format(*TOLERANCES[dtype]),
                             "OK" if ok else "FAIL"))
    header = ("device", "dtype", "mode", "max abs err", "atol/rtol", "result")
    try:
        from rich.table import Table

        table = Table(title="twinops.interpolate vs F.interpolate")
        for h in header:
            table.add_column(h)
        for r in rows:
            table.add_row(*r)
        console().print(table)
    except ImportError:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        for r in (header, *rows):
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    from ..._cli import run_cli

    sys.exit(run_cli(main))
