"""A/B of grid_sample's CUDA forward variants (experiment scaffolding, branch gs-fwd).

    python tools/grid_sample_fwd_variants.py                  # every variant, every case (~30 s on an H200)
    python tools/grid_sample_fwd_variants.py --variants base i32p --reps 200

The forward launcher (csrc/kernels/grid_sample.cu, ``launch_forward``) runs the variant named
by the environment variable ``TWINOPS_GRID_SAMPLE_FWD``, read at every launch, so this one
process switches variants with ``os.environ`` between calls. The variants are the rows of
``kForwardVariants`` in csrc/kernels/grid_sample_tuning.h (read from there, so the two stay in
step). For each smooth-grid case of the bench (``twinops.bench.grid_sample``'s grid maker,
zeros padding, align_corners=False; 8x64x128x128, 1x3x1080x1920 and 2x32x32x64x64 with
bilinear float32 / float16 and nearest float32) it

1. checks which kernel each variant launches (one profiled call per variant on the first
   case: the forward_kernel template arguments are printed, so a variant switch that did not
   happen shows);
2. checks every variant's output is bitwise the default's (same taps, same order), and the
   default's is close to F.grid_sample's; also on small edge cases (odd channel counts for
   the remainder / predicate paths, every padding, NaN / Inf / far-out grid values, a
   non-contiguous input, 4-D and 5-D, float32 and float16);
3. times F.grid_sample and every variant with the bench's timer (CUDA events, L2 flushed by
   a 256 MiB read before each repetition, median), in ``--rounds`` passes over the variants
   (alternating order), keeping each one's best median;

then prints one table: per variant and case the time in ms, the ratio ATen time / variant
time (>1 = faster than ATen) and the % of the HBM floor (bytes / copy bandwidth measured
here). Needs CUDA and twinops built with its CUDA kernels. Exit status 1 when a variant's
output differs from the default's or the default is not close to ATen's.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ENV = "TWINOPS_GRID_SAMPLE_FWD"
TUNING_H = Path(__file__).resolve().parent.parent / "csrc" / "kernels" / "grid_sample_tuning.h"
SHAPES = ((8, 64, 128, 128), (1, 3, 1080, 1920), (2, 32, 32, 64, 64))
CASES = (("bilinear", torch.float32), ("bilinear", torch.float16), ("nearest", torch.float32))
SHORT = {torch.float32: "f32", torch.float16: "f16"}


def variant_names():
    """The variant names of kForwardVariants, in table order, and the default's name."""
    text = TUNING_H.read_text()
    table = text[text.index("kForwardVariants[] = {"):]
    table = table[:table.index("};")]
    names = re.findall(r'\{"([A-Za-z0-9_]+)",', table)
    default = int(re.search(r"kForwardVariantDefault = (\d+);", text).group(1))
    return names, names[default]


def set_variant(name: str) -> None:
    os.environ[ENV] = name  # putenv: the launcher's getenv sees it at the next launch


def kernel_of(fn) -> str:
    """The template arguments of the forward_kernel one call of fn launches."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        events = prof.events()
    except Exception as exc:  # the check is informative only: a profiler failure must not end the run
        return f"(profiler failed: {exc})"
    for e in events:
        if "forward_kernel" in e.name:
            m = re.search(r"forward_kernel<(.*?)>\(", e.name)
            args = m.group(1) if m else e.name
            return re.sub(r"\(twinops::grid_sample::Mode\)", "mode", args).replace("long", "int64").replace("int,", "int32,")
    return "(no forward_kernel seen)"


def short_label(label: str) -> str:
    """'8x64x128x128 bili f32' -> '8x64 bl32' (table columns)."""
    shape, mode, dtype = label.split()
    dims = shape.split("x")
    size = "5d" if len(dims) == 5 else ("1080" if dims[2] == "1080" else f"{dims[0]}x{dims[1]}")
    return f"{size} {'bl' if mode == 'bili' else 'nn'}{dtype[1:]}"


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    ints = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
    return torch.equal(a.contiguous().view(ints), b.contiguous().view(ints))


def edge_failures(variants, default, dev) -> list:
    """Bitwise checks of every variant against the default on small edge cases."""
    import twinops

    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    failures = []
    for shape in ((2, 5, 7, 9), (1, 67, 6, 11), (1, 1, 3, 4), (2, 7, 3, 5, 6)):
        for dtype in (torch.float32, torch.float16):
            x = torch.randn(shape, generator=gen, device=dev, dtype=dtype)
            if len(shape) == 4:  # channels-last input: other strides than the bench's
                x = x.contiguous(memory_format=torch.channels_last)
            grid_shape = (shape[0], 4, 5, 6, 3) if len(shape) == 5 else (shape[0], 8, 10, 2)
            grid = (torch.rand(grid_shape, generator=gen, device=dev) * 2.6 - 1.3)
            flat = grid.view(-1)
            flat[::17] = float("nan")
            flat[5::23] = float("inf")
            flat[7::29] = -float("inf")
            flat[3::31] = 1e30
            grid = grid.to(dtype)
            for mode in ("bilinear", "nearest"):
                for padding in ("zeros", "border", "reflection"):
                    for align in (False, True):
                        def run():
                            return twinops.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=align)

                        set_variant(default)
                        ref = run()
                        for v in variants:
                            set_variant(v)
                            if not bitwise_equal(run(), ref):
                                failures.append(f"edge {tuple(shape)} {dtype} {mode} {padding} align={align}: "
                                                f"variant {v} is not bitwise the default's")
    set_variant(default)
    return failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", help="names to time (default: every variant)")
    ap.add_argument("--reps", type=int, default=200, help="timed repetitions per measurement (default 200)")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the variants; best median kept (default 3)")
    ap.add_argument("--no-profile", action="store_true", help="skip the kernel-name check")
    ap.add_argument("--device", default="cuda",
                    help="cuda (default); cpu only dry-runs this script's logic (no variants there)")
    args = ap.parse_args(argv)
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("grid_sample_fwd_variants: needs a CUDA device", file=sys.stderr)
        return 2
    import twinops
    from twinops.bench.grid_sample import make_grid
    from twinops.bench.timing import Timer, floor_ms, measure_copy_bandwidth, tensor_bytes

    if dev.type == "cuda" and not twinops.has_cuda_kernels():
        print("grid_sample_fwd_variants: twinops was built without CUDA kernels", file=sys.stderr)
        return 2
    names, default = variant_names()
    variants = args.variants or names
    unknown = [v for v in variants if v not in names]
    if unknown:
        ap.error(f"--variants: unknown {unknown}; known: {names}")
    if default not in variants:
        variants = [default] + list(variants)
    t_start = time.time()
    bandwidth = measure_copy_bandwidth(dev)
    timer = Timer(dev, warmup=5, reps=args.reps)
    gen = torch.Generator(device=dev)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"{name}, copy bandwidth {bandwidth / 1e12:.2f} TB/s, default variant {default}")

    failures = edge_failures(variants, default, dev)
    print(f"edge cases: {len(failures)} mismatches ({time.time() - t_start:.1f} s)")
    results = {}  # (case label) -> {impl: ms}
    labels = []
    for shape in SHAPES:
        for mode, dtype in CASES:
            gen.manual_seed(0)
            x = torch.randn(shape, generator=gen, device=dev, dtype=dtype)
            grid_shape = (shape[0], *shape[2:], len(shape) - 2)
            grid = make_grid(grid_shape, "smooth", gen, dev).to(dtype)
            label = f"{'x'.join(map(str, shape))} {mode[:4]} {SHORT[dtype]}"
            labels.append(label)
            out_shape = (*shape[:2], *grid_shape[1:-1])
            floor = floor_ms(tensor_bytes([shape, grid_shape, out_shape], dtype), bandwidth)

            def ours():
                return twinops.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)

            def aten():
                return F.grid_sample(x, grid, mode=mode, padding_mode="zeros", align_corners=False)

            set_variant(default)
            ref = ours()
            # the reference in float32 from the same (rounded) inputs; the bench's tolerance
            want = F.grid_sample(x.float(), grid.float(), mode=mode, padding_mode="zeros", align_corners=False)
            tol = (1e-4 if dtype == torch.float32 else 1e-2) * max(1.0, want.abs().max().item())
            err = (ref.float() - want).abs().max().item()
            if not err <= tol:
                failures.append(f"{label}: default {default} differs from F.grid_sample (max |diff| {err:.3g})")
            for v in variants:
                set_variant(v)
                got = ours()
                if not bitwise_equal(got, ref):
                    failures.append(f"{label}: variant {v} is not bitwise the default's")
                if not args.no_profile and dev.type == "cuda" and label == labels[0]:
                    print(f"  {v:10s} launches forward_kernel<{kernel_of(ours)}>")
            times = {}
            for r in range(args.rounds):
                order = variants if r % 2 == 0 else list(reversed(variants))
                ms = timer.median_ms(aten)
                times["ATen"] = min(times.get("ATen", ms), ms)
                for v in order:
                    set_variant(v)
                    ms = timer.median_ms(ours)
                    times[v] = min(times.get(v, ms), ms)
            set_variant(default)
            times["_floor"] = floor
            results[label] = times

    # Three compact blocks, one row per implementation, one column per case: ms, ATen ms / ms
    # (> 1: faster than ATen) and % of the HBM floor.
    short = [short_label(lab) for lab in labels]
    impls = ["ATen"] + list(variants)
    blocks = (("ms", lambda t, ms: f"{ms:.4f}"), ("x ATen", lambda t, ms: f"{t['ATen'] / ms:.2f}"),
              ("% floor", lambda t, ms: f"{t['_floor'] / ms * 100:.0f}"))
    for title, cell in blocks:
        print()
        print(f"{title:10s} " + " ".join(f"{c:>9s}" for c in short))
        if title == "ms":
            print(f"{'(floor)':10s} " + " ".join(f"{results[lab]['_floor']:>9.4f}" for lab in labels))
        for impl in impls:
            name = impl + ("*" if impl == default else "")
            print(f"{name:10s} " + " ".join(f"{cell(results[lab], results[lab][impl]):>9s}" for lab in labels))
    print("* = default variant; columns: shape (8x64 = 8x64x128x128, 1080 = 1x3x1080x1920, 5d = 2x32x32x64x64), "
          "mode (bl bilinear, nn nearest), dtype bits")
    print(f"total {time.time() - t_start:.1f} s")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
