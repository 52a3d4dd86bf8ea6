"""Time ms_deform_attn's CUDA layouts against each other on the bench's shapes, in one process.

    python tools/ms_deform_attn/layouts.py [--reps 15] [--warmup 3] [--dtypes float32,float16]

Forward: TWINOPS_MS_DEFORM_ATTN_FORWARD = elements, heads, vectors, and unset (the default: the
vector layout where value's rows allow it and its blocks fill the device twice over, else the
head layout). Backward (all three gradients): TWINOPS_MS_DEFORM_ATTN_BACKWARD = lanes and table
(the default), and the default without grad_value (grad_loc and grad_weight only: the
difference is what the fixed-point scatter of grad_value costs). Each layout's result is checked
bitwise against the first one's before it is timed. The timer is the bench's
(ops/bench/timing.py: CUDA events, median, L2 flushed before each call). Prints a markdown table
of milliseconds, and each layout's ratio to the first one of its direction (above 1: faster).

Then (unless --no-atomics) what the grad_value scatter's additions cost by themselves: every
(sample, tap, channel) contribution of the encoder shape (N = 1, float32) added with torch's
scatter_add_ (one atomic add each on CUDA) into a float32 and into an int64 tensor, the same
addresses in the same order (grouped by level and tap corner, channels innermost; not the
kernel's order): mmcv's backward adds float32 atomics, twinops' fixed-point scatter 64-bit
integer ones.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

import twinops
from twinops.bench.timing import Timer
from twinops.library.ms_deform_attn.bench import SHAPES, Case

FORWARD = ("elements", "heads", "vectors", None)
BACKWARD = ("lanes", "table")
NO_GRAD_VALUE = "bwd default, no grad_value"


def _with_layout(var, layout, fn):
    old = os.environ.pop(var, None)
    if layout is not None:
        os.environ[var] = layout
    try:
        return fn()
    finally:
        os.environ.pop(var, None)
        if old is not None:
            os.environ[var] = old


def _same(a, b):
    return all(torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0)) for x, y in zip(a, b))


def atomics(timer: Timer, dev) -> str:
    """The encoder's grad_value contributions added as float32 and as int64 atomics (ms each)."""
    shape, levels, n, lq = next(x for x in SHAPES if x[0] == "encoder" and x[2] == 1)
    q = lq if lq is not None else sum(h * w for h, w in levels)
    case = Case(shape=shape, levels=levels, n=n, lq=q, baseline_kind="eager", dtype="float32", direction="forward")
    value, _, starts, loc, _ = case.make_inputs(dev, torch.Generator(device=dev).manual_seed(0))
    _, s, m, d = value.shape
    rows = []
    for lvl, (h, w) in enumerate(levels):  # the taps of F.grid_sample at 2 * loc - 1 (align_corners=False)
        x = loc[:, :, :, lvl, :, 0] * w - 0.5
        y = loc[:, :, :, lvl, :, 1] * h - 0.5
        x0, y0 = x.floor().long(), y.floor().long()
        for dy in (0, 1):
            for dx in (0, 1):
                xi, yi = x0 + dx, y0 + dy
                inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
                row = int(starts[lvl]) + yi * w + xi  # (N, Lq, M, P)
                heads = torch.arange(m, device=dev).view(1, 1, m, 1).expand_as(row)
                rows.append(((row * m + heads) * d)[inside])
    elem = torch.cat(rows).view(-1, 1) + torch.arange(d, device=dev)  # every channel of every tap
    elem = elem.flatten()
    src = torch.rand(elem.numel(), device=dev)
    out = []
    for dtype, values in ((torch.float32, src), (torch.int64, (src * 2**40).long())):
        acc = torch.zeros(n * s * m * d, dtype=dtype, device=dev)
        out.append(timer.median_ms(lambda: acc.scatter_add_(0, elem, values)))
    return (f"atomics ({elem.numel():,} additions, the encoder N = 1): float32 {out[0]:.3f} ms, "
            f"int64 {out[1]:.3f} ms ({out[1] / out[0]:.2f}x the float32 time)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--no-atomics", action="store_true", help="skip timing the scatter's additions alone")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available() or not twinops.has_cuda_kernels():
        print("layouts.py: needs a GPU and twinops built with its CUDA kernels", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    timer = Timer(dev, warmup=args.warmup, reps=args.reps)
    names = ([f"fwd {x or 'default'}" for x in FORWARD] + [f"bwd {x or 'default'}" for x in BACKWARD]
             + [NO_GRAD_VALUE])
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; ms (ratio to the first layout)\n")
    print("| case | dtype | " + " | ".join(names) + " |")
    print("|---|---|" + "---:|" * len(names))
    status = 0
    for dtype in args.dtypes.split(","):
        for shape, levels, n, lq in SHAPES:
            q = lq if lq is not None else sum(h * w for h, w in levels)
            case = Case(shape=shape, levels=levels, n=n, lq=q, baseline_kind="eager", dtype=dtype,
                        direction="forward")
            g = torch.Generator(device=dev).manual_seed(0)
            xs = case.make_inputs(dev, g)
            go = torch.randn(n, q, xs[0].shape[2] * xs[0].shape[3], generator=g, device=dev).to(xs[0].dtype)
            cells = []
            for var, layouts, call in (
                    ("TWINOPS_MS_DEFORM_ATTN_FORWARD", FORWARD, lambda: (twinops.ms_deform_attn(*xs),)),
                    ("TWINOPS_MS_DEFORM_ATTN_BACKWARD", BACKWARD,
                     lambda: torch.ops.twinops.ms_deform_attn_backward(go, *xs, [True, True, True]))):
                first = first_ms = None
                for layout in layouts:
                    out = _with_layout(var, layout, call)
                    if first is None:
                        first = out
                    elif not _same(first, out):
                        print(f"MISMATCH: {shape} N={n} Lq={q} {dtype} {var}={layout}", file=sys.stderr)
                        status = 1
                    ms = _with_layout(var, layout, lambda: timer.median_ms(call))
                    first_ms = first_ms or ms
                    cells.append(f"{ms:.3f} ({first_ms / ms:.2f}x)")
            partial = lambda: torch.ops.twinops.ms_deform_attn_backward(go, *xs, [False, True, True])  # noqa: E731
            cells.append(f"{timer.median_ms(partial):.3f}")
            print(f"| {shape} N={n} Lq={q} | {dtype} | " + " | ".join(cells) + " |", flush=True)
    if not args.no_atomics:
        print("\n" + atomics(timer, dev))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
