"""``python -m twinops.bench [OP ...] [options]``: the CLI every op's bench shares.

Usage::

    python -m twinops.bench                       # every registered op, full tables
    python -m twinops.bench OP --quick            # one op; few repetitions, first shape only
    python -m twinops.bench OP --dtypes float16 --shapes 1x3x1080x1920   # with the op's own options
    python -m twinops.bench --json out/bench.json --markdown out/bench.md

The ops are the op families (ops/op_list.py) whose ``twinops.library.<op>.bench`` module
defines ``BENCH`` (an :class:`~twinops.bench.harness.OpBench`), found by :func:`registered`.
Options common to every op: ``--dtypes``, ``--quick``, ``--no-backward``, ``--warmup``,
``--reps``, ``--no-flush``, ``--json``, ``--markdown``, ``--kernels`` (each case's kernels with
their time, twinops' and the baseline's, ``twinops.bench.kernels``). An op's own options (e.g.
``--shapes``, ``--modes``) are accepted when it is the only op run (named, or the only one
registered).

Exit status: 0 no case is ``MISMATCH``/``ERROR``, 1 some case is, 2 no CUDA GPU or twinops
built without its CUDA kernels (nothing is timed; also argparse's status for a bad option
or an unknown op).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from .._ext import has_cuda_kernels
from ..op_list import OPS
from .harness import DTYPES, FAILED, BenchCase, Config, OpBench, run_benchmark
from .report import print_results, write_json, write_markdown

EXIT_OK, EXIT_MISMATCH, EXIT_NO_CUDA = 0, 1, 2
PROG = "python -m twinops.bench"


def registered() -> Dict[str, OpBench]:
    """``{name: OpBench}`` of every op with a bench, by name: the ``BENCH`` of each op family's
    ``twinops.library.<op>.bench`` module (ops/op_list.py; a family without one has no bench)."""
    benches = {}
    for op in OPS:
        name = f"twinops.library.{op}.bench"
        if importlib.util.find_spec(name) is None:
            continue
        bench = getattr(importlib.import_module(name), "BENCH", None)
        if isinstance(bench, OpBench):
            benches[bench.name] = bench
    return dict(sorted(benches.items()))


def split(values: Optional[Sequence[str]]) -> List[str]:
    """Flattens ``nargs='+'`` values that may also be comma-separated: ``["a,b", "c"]`` ->
    ``["a", "b", "c"]``; None -> ``[]``."""
    return [v for item in (values or []) for v in item.replace(",", " ").split()]


def parse_shape(text: str, dims: str = "NxCxHxW") -> Tuple[int, ...]:
    """``"8x64x256x256"`` -> (8, 64, 256, 256): as many positive ints as ``dims`` names
    (``"NxHxWx2"`` for a grid); ``argparse.ArgumentTypeError`` otherwise."""
    try:
        values = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        values = ()
    if len(values) != len(dims.split("x")) or any(d <= 0 for d in values):
        raise argparse.ArgumentTypeError(f"a shape is {dims} with positive ints, got {text!r}")
    return values


def build_parser(benches: Sequence[OpBench], named: bool = False) -> argparse.ArgumentParser:
    """The parser for a run of ``benches``: the op's own options where there is one op, then
    the common ones. ``named``: the ops were named on the command line (shown in ``prog``)."""
    one = benches[0] if len(benches) == 1 else None
    p = argparse.ArgumentParser(
        prog=PROG + "".join(f" {b.name}" for b in benches if named),
        description=f"Times {'; '.join(b.summary for b in benches)} on CUDA (forward and backward), with a parity "
                    "check per case, each time's percentage of the HBM copy floor, and what a "
                    "device-to-device copy of the case's bytes reaches (copy % floor).",
        epilog="Exit status: 0 ok, 1 a case is MISMATCH or ERROR, 2 no CUDA GPU / no twinops CUDA kernels. "
               f"Ops: {', '.join(registered())}; `{PROG} OP [OP ...] [options]` runs those only (default: all; "
               "an op's own options need it to run alone).")
    # Shown in the usage line and --help; main() takes the names off before parsing, so a name
    # that reaches the parser came after an option.
    p.add_argument("ops", nargs="*", metavar="OP",
                   help=f"ops to time, before any option (default: all): {', '.join(registered())}")
    if one is not None:
        one.add_arguments(p)
    default_dtypes = (one.config_type if one else Config)().dtypes
    p.add_argument("--dtypes", nargs="+", metavar="DTYPE", help=f"dtypes (default: {' '.join(default_dtypes)})")
    p.add_argument("--quick", action="store_true", help="few repetitions, first shape only, smaller copy buffer")
    p.add_argument("--no-backward", action="store_true", help="forward only")
    p.add_argument("--warmup", type=int, default=None, help="warm-up calls per timing (default 20; --quick 3)")
    p.add_argument("--reps", type=int, default=None, help="timed calls per timing, at most (default 100; --quick 10)")
    p.add_argument("--no-flush", action="store_true", help="do not flush the L2 cache before each repetition")
    p.add_argument("--json", metavar="PATH", help="write the environment and all rows as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the header and table as markdown (for the README)")
    p.add_argument("--kernels", action="store_true",
                   help="after the tables, each case's kernels with their time per call, twinops' and "
                        "the baseline's (torch.profiler; see twinops.bench.kernels)")
    return p


def config_from_args(op: OpBench, args: argparse.Namespace) -> Config:
    """``op``'s validated Config from parsed arguments: the common settings, then the op's own
    options (their defaults where the parser lacked them). Raises argparse.ArgumentTypeError."""
    dtypes = split(args.dtypes)
    for d in dtypes:
        if d not in DTYPES:
            raise argparse.ArgumentTypeError(f"dtype must be one of {', '.join(DTYPES)}, got {d!r}")
    common = dict(backward=not args.no_backward, flush=not args.no_flush)
    if dtypes:
        common["dtypes"] = dtypes
    if args.quick:
        common.update(warmup=3, reps=10, copy_bytes=256 << 20)
    if args.warmup is not None:
        common["warmup"] = max(0, args.warmup)
    if args.reps is not None:
        common["reps"] = max(1, args.reps)
    own = argparse.ArgumentParser(add_help=False)
    op.add_arguments(own)
    merged = argparse.Namespace(**{**vars(own.parse_args([])), **vars(args)})
    return op.config_type(**common, **op.parse_options(merged))


def _progress(i: int, n: int, case: BenchCase) -> None:
    print(f"\r[{i + 1}/{n}] {case.title()}".ljust(78), end="", file=sys.stderr, flush=True)


def _print_kernels(benches: Sequence[OpBench], configs: Sequence[Config]) -> None:
    from .kernels import case_calls, kernel_lines, kernel_times

    device = torch.device("cuda")
    for bench, cfg in zip(benches, configs):
        for case in bench.build_cases(cfg):
            inputs = case.make_inputs(device, torch.Generator(device).manual_seed(0))
            ours, theirs = case_calls(case, inputs)
            print("\n".join(kernel_lines(f"{bench.name} {case.title()}", kernel_times(ours))))
            try:
                print("\n".join(kernel_lines(f"  {bench.baseline_name}", kernel_times(theirs))))
            except Exception as exc:  # a baseline without this dtype or direction
                print(f"  {bench.baseline_name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI entry point: ``argv`` (default ``sys.argv[1:]``) is ``[OP ...] [options]``; returns
    the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    available = registered()
    names = []
    while argv and not argv[0].startswith("-"):
        names.append(argv.pop(0))
    unknown = [n for n in names if n not in available]
    benches = [available[n] for n in dict.fromkeys(names) if n in available] or list(available.values())
    parser = build_parser(benches, named=bool(names) and not unknown)
    if unknown:
        parser.error(f"unknown op {unknown[0]!r} (ops with a bench: {', '.join(available)})")
    args = parser.parse_args(argv)
    if args.ops:
        parser.error(f"name the ops before the options (got {' '.join(args.ops)!r} after them)")
    try:
        configs = [config_from_args(b, args) for b in benches]
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    if not torch.cuda.is_available():
        print("twinops.bench: no CUDA GPU available (torch.cuda.is_available() is False); nothing was timed.",
              file=sys.stderr)
        return EXIT_NO_CUDA
    if not has_cuda_kernels():
        print("twinops.bench: twinops was built without its CUDA kernels; rebuild with "
              "TWINOPS_CUDA=1 pip install --no-build-isolation -e . (nothing was timed).", file=sys.stderr)
        return EXIT_NO_CUDA

    tty = sys.stderr.isatty()
    results, meta, bandwidth = [], {}, None
    for bench, cfg in zip(benches, configs):
        meta, rows = run_benchmark(bench, cfg, "cuda", _progress if tty else None, bandwidth)
        bandwidth = meta["copy_bandwidth_tbps"] * 1e12  # measured once per run
        results.append((bench, rows))
    if tty:
        print("\r" + " " * 78 + "\r", end="", file=sys.stderr, flush=True)
    print_results(meta, results)
    if args.json:
        write_json(args.json, meta, results)
    if args.markdown:
        write_markdown(args.markdown, meta, results)
    if args.kernels:
        _print_kernels(benches, configs)
    total = sum(len(rows) for _, rows in results)
    bad = sum(r.status in FAILED for _, rows in results for r in rows)
    if bad:
        print(f"twinops.bench: {bad} of {total} cases are MISMATCH or ERROR (see the table).", file=sys.stderr)
        return EXIT_MISMATCH
    return EXIT_OK
