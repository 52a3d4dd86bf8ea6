"""``python -m twinops.bench``: twinops resize vs ``torch.nn.functional.interpolate`` on CUDA.

A benchmark, not a test. For every case (mode x dtype x scale x shape x pass) it

1. checks parity first: twinops output vs F.interpolate output (forward), twinops
   ``resize_backward`` vs the autograd gradient of F.interpolate (backward; half
   dtypes against a float32 reference, because ATen's half backward accumulates in
   half with atomics). A case outside the dtype tolerance is marked ``MISMATCH`` --
   a fast wrong kernel must be visible. It also checks that the op timed for the
   twinops backward is the op autograd calls, and gives the same gradient;
2. times both implementations with CUDA events: warm-up, then the median of many
   repetitions; before every repetition the L2 cache is flushed (by reading a 256 MiB
   buffer, so that no dirty line is left to write back) and the GPU is given
   a short head start (``torch.cuda._sleep``), so the events measure GPU time and
   not Python launch overhead;
3. relates each time to the HBM floor of the case: ``floor = (bytes read + bytes
   written) / copy bandwidth``, the copy bandwidth being measured in the same run
   with a large device-to-device copy. ``% floor = floor / time * 100``;
4. times a device-to-device copy of the case's bytes the same way (``copy % floor``):
   what a kernel that only moves those bytes reaches. For small cases this is well
   under 100% (launch latency, ramp-up and the flushed L2 weigh more), so it shows
   how far the floor can be approached at that size;
5. after the table, ``target:`` lines: where the run stands against issue 2's speed
   targets (``target_lines``).

What is timed:

* forward: ``F.interpolate(x, scale_factor=s, mode=..., antialias=...)`` vs
  ``twinops.interpolate`` with the same arguments; inputs without ``requires_grad``.
  Bytes = input + output.
* backward: ``torch.autograd.grad(F.interpolate(x, ...), x, grad_output,
  retain_graph=True)`` (precomputed ``grad_output``) vs the twinops backward op
  ``torch.ops.twinops.resize_backward(grad_output, list(x.shape), *attrs.op_args())``
  called directly. Bytes = grad_output + grad_input.

Neither API has an ``out=`` variant, so outputs are allocated by each call (a free-list
pop in the caching allocator); inputs and grad_outputs are random normal (never zeros).

Usage::

    python -m twinops.bench                       # full table (about a minute on an H200)
    python -m twinops.bench --quick               # few repetitions, first shape only
    python -m twinops.bench --modes bicubic --dtypes float16 --shapes 1x3x1080x1920
    python -m twinops.bench --json out/bench.json --markdown out/bench.md

The ``check`` column: ``OK``; ``MISMATCH`` (outside tolerance, or the timed backward is
not what autograd runs); ``ERROR`` (twinops raised); ``NO-REF`` (F.interpolate raised, so
twinops is timed but unchecked). Problems are listed under the table.

Exit status: 0 no case is ``MISMATCH``/``ERROR``, 1 some case is, 2 no CUDA GPU or
twinops built without its CUDA kernels (nothing is timed; also argparse's status for a
bad option).
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from ._ext import has_cuda_kernels
from .resize import _interpolate_plan, interpolate

__all__ = [
    "Case",
    "Row",
    "main",
    "build_cases",
    "run_benchmark",
    "measure_copy_bandwidth",
    "floor_ms",
    "case_bytes",
    "pct_of_floor",
    "check_parity",
    "format_rows",
    "to_markdown",
    "render_text",
    "COLUMNS",
]

DEFAULT_SHAPES = ((8, 64, 256, 256), (1, 3, 1080, 1920))
DEFAULT_MODES = ("bicubic", "bilinear", "nearest", "bicubic-antialias")
DEFAULT_DTYPES = ("float32", "float16", "bfloat16")
DEFAULT_SCALES = (2.0, 0.5)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Max |twinops - reference| allowed, relative to max(1, max |reference|). Half types: the
# two implementations may round the same float result to neighbouring values (bf16 has
# 8 mantissa bits: one ulp is up to 2^-7 of the magnitude).
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}

EXIT_OK, EXIT_MISMATCH, EXIT_NO_CUDA = 0, 1, 2
STATUS_OK, STATUS_MISMATCH, STATUS_ERROR = "OK", "MISMATCH", "ERROR"
STATUS_NO_REF = "NO-REF"  # F.interpolate failed (e.g. a dtype it lacks on this device): twinops unchecked
FAILED = (STATUS_MISMATCH, STATUS_ERROR)

# Table columns, in order (format_rows / to_markdown / render_text all use them).
COLUMNS = (
    "mode",
    "dtype",
    "input",
    "scale",
    "pass",
    "floor ms",
    "copy % floor",
    "F.interpolate ms",
    "F % floor",
    "twinops ms",
    "twinops % floor",
    "speed-up",
    "check",
)


# ---------------------------------------------------------------------------------------
# cases and rows
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One benchmark case. ``mode`` is an F.interpolate mode, optionally suffixed ``-antialias``."""

    mode: str
    dtype: str
    shape: Tuple[int, int, int, int]
    scale: float
    direction: str  # "forward" | "backward"

    @property
    def interp_mode(self) -> str:
        """The F.interpolate ``mode`` argument."""
        return self.mode[: -len("-antialias")] if self.antialias else self.mode

    @property
    def antialias(self) -> bool:
        """The F.interpolate ``antialias`` argument."""
        return self.mode.endswith("-antialias")

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    @property
    def output_shape(self) -> Tuple[int, int, int, int]:
        """F.interpolate's output size for ``scale_factor=scale``: floor(in * s) per axis."""
        n, c, h, w = self.shape
        return (n, c, math.floor(h * self.scale), math.floor(w * self.scale))


@dataclass
class Row:
    """The result of one case (times in milliseconds; ``None`` where not measured)."""

    case: Case
    nbytes: int
    floor_ms: float
    torch_ms: Optional[float] = None
    twinops_ms: Optional[float] = None
    status: str = STATUS_OK
    max_abs_err: Optional[float] = None
    allowed_err: Optional[float] = None
    detail: str = ""
    copy_ms: Optional[float] = None  # a device-to-device copy of ``nbytes`` (read + write), timed alike

    @property
    def copy_pct(self) -> Optional[float]:
        return pct_of_floor(self.floor_ms, self.copy_ms)

    @property
    def torch_pct(self) -> Optional[float]:
        return pct_of_floor(self.floor_ms, self.torch_ms)

    @property
    def twinops_pct(self) -> Optional[float]:
        return pct_of_floor(self.floor_ms, self.twinops_ms)

    @property
    def speedup(self) -> Optional[float]:
        """F.interpolate time / twinops time (> 1: twinops is faster)."""
        if not self.torch_ms or not self.twinops_ms:
            return None
        return self.torch_ms / self.twinops_ms

    def to_dict(self) -> dict:
        """A JSON-ready dict with the case fields flattened and the derived columns added."""
        c = self.case
        return {
            "mode": c.mode,
            "dtype": c.dtype,
            "shape": list(c.shape),
            "output_shape": list(c.output_shape),
            "scale": c.scale,
            "pass": c.direction,
            "bytes": self.nbytes,
            "floor_ms": self.floor_ms,
            "copy_ms": self.copy_ms,
            "copy_pct_of_floor": self.copy_pct,
            "torch_ms": self.torch_ms,
            "twinops_ms": self.twinops_ms,
            "torch_pct_of_floor": self.torch_pct,
            "twinops_pct_of_floor": self.twinops_pct,
            "speedup": self.speedup,
            "status": self.status,
            "max_abs_err": self.max_abs_err,
            "allowed_err": self.allowed_err,
            "detail": self.detail,
        }


def build_cases(shapes: Sequence[Tuple[int, ...]], modes: Sequence[str], dtypes: Sequence[str],
                scales: Sequence[float], backward: bool = True) -> List[Case]:
    """The cross product, ordered shape > mode > dtype > scale > pass (the table's grouping)."""
    directions = ("forward", "backward") if backward else ("forward",)
    return [Case(m, d, tuple(s), float(sc), p)
            for s in shapes for m in modes for d in dtypes for sc in scales for p in directions]


# ---------------------------------------------------------------------------------------
# the HBM floor
# ---------------------------------------------------------------------------------------

def case_bytes(in_shape: Sequence[int], out_shape: Sequence[int], element_size: int) -> int:
    """Minimal HBM traffic of a resize: read one tensor, write the other, once each.

    Forward reads the input and writes the output; backward reads grad_output (output
    shape) and writes grad_input (input shape) -- the same total.
    """
    return (math.prod(in_shape) + math.prod(out_shape)) * element_size


def floor_ms(nbytes: int, bandwidth: float) -> float:
    """Time to move ``nbytes`` at ``bandwidth`` bytes/s, in milliseconds."""
    if bandwidth <= 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth}")
    return nbytes / bandwidth * 1e3


def pct_of_floor(floor: float, time_ms: Optional[float]) -> Optional[float]:
    """``floor / time * 100``: 100% means the kernel moves its bytes at copy speed."""
    if not time_ms:
        return None
    return floor / time_ms * 100.0


# ---------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------

class _Timer:
    """Median wall time of ``fn`` on one device: CUDA events on GPU, perf_counter on CPU.

    ``flush``: evict the L2 before each repetition by reading a ``flush_bytes`` buffer, or by
    writing it where ``flush_write`` (the benchmark's flush before 2026-11-30, kept for
    ``tools/l2_flush.py``, which compares the two).
    """

    def __init__(self, device: torch.device, warmup: int, reps: int, flush: bool = True,
                 budget_ms: float = 2000.0, flush_bytes: int = 256 << 20, flush_write: bool = False):
        self.device, self.warmup, self.reps, self.budget_ms = device, warmup, reps, budget_ms
        self.cuda = device.type == "cuda"
        self.flush_write = flush_write
        self.flush_buf = torch.zeros(flush_bytes // 4, dtype=torch.float32, device=device) if (self.cuda and flush) else None

    def _prepare(self) -> None:
        # Evict the L2 (the floor is an HBM floor) and keep the GPU busy while Python
        # enqueues the timed call, so the start event fires right before its first kernel.
        # The flush reads its buffer: writing it (zero_) left the L2 full of dirty lines,
        # whose write-back the timed call then paid (2-3 us per call on the H200, also for a
        # plain copy), bytes that are not the case's.
        if self.flush_buf is not None:
            if self.flush_write:
                self.flush_buf.zero_()
            else:
                self.flush_buf.amax()
        if self.cuda and hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(100_000)

    def median_ms(self, fn: Callable[[], object]) -> float:
        """Median of the timed repetitions after ``warmup`` calls.

        The repetition count adapts down (to no fewer than 10, or ``reps`` if smaller) when
        ``reps`` calls would exceed ``budget_ms``.
        """
        for _ in range(self.warmup):
            fn()
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            est = (time.perf_counter() - t0) * 1e3
            times = []
            for _ in range(self._reps_for(est)):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return statistics.median(times)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self._prepare()
        start.record()
        fn()
        end.record()
        end.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(self._reps_for(start.elapsed_time(end)))]
        for s, e in events:
            self._prepare()
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize(self.device)
        return statistics.median(s.elapsed_time(e) for s, e in events)

    def _reps_for(self, estimate_ms: float) -> int:
        if estimate_ms <= 0 or not math.isfinite(self.budget_ms):
            return self.reps
        return max(min(self.reps, 10), min(self.reps, int(self.budget_ms / estimate_ms)))


def measure_copy_bandwidth(device: torch.device, nbytes: int = 1 << 30, warmup: int = 5, reps: int = 20) -> float:
    """Device-to-device copy bandwidth in bytes/s: (bytes read + bytes written) / median time.

    ``nbytes`` (per buffer) should be far larger than the L2 so the copy runs from HBM.
    """
    n = nbytes // 4
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    timer = _Timer(device, warmup, reps, flush=False, budget_ms=float("inf"))
    ms = timer.median_ms(lambda: dst.copy_(src))
    return 2 * n * 4 / (ms * 1e-3)


def copy_ms(device: torch.device, timer: "_Timer", nbytes: int) -> float:
    """Median time in ms of a device-to-device copy moving ``nbytes`` in all (``nbytes // 2``
    read, as many written), timed by ``timer`` like the cases (L2 flushed before each)."""
    n = max(nbytes // 2, 1)
    src = torch.randint(1, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return timer.median_ms(lambda: dst.copy_(src))


# ---------------------------------------------------------------------------------------
# parity
# ---------------------------------------------------------------------------------------

def check_parity(ref: torch.Tensor, got: torch.Tensor, dtype: torch.dtype) -> Tuple[bool, float, float]:
    """(ok, max |got - ref|, allowed): allowed = TOLERANCE[dtype] * max(1, max |ref|).

    A shape mismatch or a non-finite difference (NaN/inf where the reference has none)
    is never ok.
    """
    if tuple(ref.shape) != tuple(got.shape):
        return False, float("inf"), 0.0
    ref32, got32 = ref.detach().float(), got.detach().float()
    scale = max(1.0, ref32.abs().max().item()) if ref32.numel() else 1.0
    allowed = TOLERANCE[dtype] * scale
    err = (got32 - ref32).abs().max().item() if ref32.numel() else 0.0
    ok = math.isfinite(err) and err <= allowed
    return ok, err, allowed


try:  # records which ops autograd dispatches (private torch API; the check is skipped without it)
    from torch.utils._python_dispatch import TorchDispatchMode as _TorchDispatchMode
except ImportError:  # pragma: no cover
    _TorchDispatchMode = None


def _ops_called(fn: Callable[[], object]) -> Optional[List[str]]:
    """Qualified names (``ns::op``) of the aten/custom ops that ``fn`` dispatches, or None
    when the recording API is unavailable."""
    if _TorchDispatchMode is None:  # pragma: no cover
        return None

    class _Recorder(_TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names: List[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func.name())
            return func(*args, **(kwargs or {}))

    rec = _Recorder()
    with rec:
        fn()
    return rec.names


# The implementations being compared; module-level so a test can substitute a wrong kernel.

def _torch_forward(x, case: Case):
    """The reference: F.interpolate with the case's arguments."""
    return F.interpolate(x, scale_factor=case.scale, mode=case.interp_mode, antialias=case.antialias)


def _twinops_forward(x, case: Case):
    """The public twinops API with the same arguments."""
    return interpolate(x, scale_factor=case.scale, mode=case.interp_mode, antialias=case.antialias)


def _twinops_backward_op():
    """The op timed for the twinops backward (checked to be the one autograd calls)."""
    return torch.ops.twinops.resize_backward


# ---------------------------------------------------------------------------------------
# one case
# ---------------------------------------------------------------------------------------

def _error_text(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters) for the row's detail."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]


def run_case(case: Case, device: torch.device, timer: _Timer, bandwidth: float, seed: int = 0) -> Row:
    """Checks and times one case on ``device``; never raises for a failing implementation
    (the row gets status ERROR and the exception's first line)."""
    dtype = case.torch_dtype
    nbytes = case_bytes(case.shape, case.output_shape, torch.empty((), dtype=dtype).element_size())
    row = Row(case, nbytes, floor_ms(nbytes, bandwidth))
    gen = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(case.shape, generator=gen, device=device, dtype=dtype)
    problems: List[str] = []
    try:
        if case.direction == "forward":
            _forward(case, x, timer, row, problems)
        else:
            _backward(case, x, timer, row, problems, gen)
    finally:
        del x
    if problems:
        row.detail = "; ".join(problems)
    return row


def _forward(case: Case, x, timer: _Timer, row: Row, problems: List[str]) -> None:
    """Forward: parity of the outputs, then both timings (fills ``row`` and ``problems``)."""
    ref = got = None
    try:
        ref = _torch_forward(x, case)
        row.torch_ms = timer.median_ms(lambda: _torch_forward(x, case))
    except Exception as exc:  # the reference may lack a dtype/mode; report, keep going
        problems.append(f"F.interpolate: {_error_text(exc)}")
    try:
        got = _twinops_forward(x, case)
    except Exception as exc:
        row.status = STATUS_ERROR
        problems.append(f"twinops: {_error_text(exc)}")
        return
    if ref is None:
        row.status = STATUS_NO_REF
    else:
        ok, row.max_abs_err, row.allowed_err = check_parity(ref, got, case.torch_dtype)
        if not ok:
            row.status = STATUS_MISMATCH
            problems.append(f"twinops vs F.interpolate: max abs err {row.max_abs_err:.3g} > {row.allowed_err:.3g}")
    del ref, got
    row.twinops_ms = timer.median_ms(lambda: _twinops_forward(x, case))


def _backward(case: Case, x, timer: _Timer, row: Row, problems: List[str], gen: torch.Generator) -> None:
    """Backward: F.interpolate's autograd gradient vs the twinops backward op called
    directly, after checking that op is what autograd of twinops.interpolate runs."""
    dtype = case.torch_dtype
    g = torch.randn(case.output_shape, generator=gen, device=x.device, dtype=dtype)
    # Reference gradient: ATen's own in fp32; for half types an fp32 computation (ATen's
    # half backward accumulates in half through atomics and is the less accurate one).
    ref = None
    try:
        xr = x.detach().float().requires_grad_(True)
        (ref,) = torch.autograd.grad(_torch_forward(xr, case), xr, g.float())
        del xr
    except Exception as exc:
        problems.append(f"F.interpolate backward: {_error_text(exc)}")
    try:
        xt = x.detach().requires_grad_(True)
        out = _torch_forward(xt, case)
        row.torch_ms = timer.median_ms(lambda: torch.autograd.grad(out, xt, g, retain_graph=True))
        del out, xt
    except Exception as exc:
        problems.append(f"F.interpolate backward: {_error_text(exc)}")

    try:
        size, attrs = _interpolate_plan(x, None, case.scale, case.interp_mode, None, None, case.antialias)
        op, in_shape, args = _twinops_backward_op(), list(x.shape), attrs.op_args()
        direct = op(g, in_shape, *args)
        # The timed op must be the one autograd runs for twinops.interpolate, with the same result.
        xa = x.detach().requires_grad_(True)
        out_a = _twinops_forward(xa, case)
        via_autograd: list = []
        names = _ops_called(lambda: via_autograd.extend(torch.autograd.grad(out_a, xa, g)))
        del out_a, xa
    except Exception as exc:
        row.status = STATUS_ERROR
        problems.append(f"twinops backward: {_error_text(exc)}")
        return
    # names == []: the recording mode did not reach autograd's thread; the equality check remains.
    if names and "twinops::resize_backward" not in names:
        row.status = STATUS_MISMATCH
        problems.append(f"autograd of twinops.interpolate does not call twinops::resize_backward (calls {names})")
    if not torch.equal(via_autograd[0], direct):
        row.status = STATUS_MISMATCH
        problems.append("autograd gradient of twinops.interpolate differs from the timed resize_backward call")
    if ref is None:
        row.status = STATUS_NO_REF if row.status == STATUS_OK else row.status
    else:
        ok, row.max_abs_err, row.allowed_err = check_parity(ref, direct, dtype)
        if not ok:
            row.status = STATUS_MISMATCH
            problems.append(f"twinops vs F.interpolate grad: max abs err {row.max_abs_err:.3g} > {row.allowed_err:.3g}")
    del ref, direct, via_autograd
    row.twinops_ms = timer.median_ms(lambda: op(g, in_shape, *args))


# ---------------------------------------------------------------------------------------
# the whole run
# ---------------------------------------------------------------------------------------

@dataclass
class Config:
    """Run settings (the CLI fills these in)."""

    shapes: Sequence[Tuple[int, ...]] = DEFAULT_SHAPES
    modes: Sequence[str] = DEFAULT_MODES
    dtypes: Sequence[str] = DEFAULT_DTYPES
    scales: Sequence[float] = DEFAULT_SCALES
    backward: bool = True
    warmup: int = 20
    reps: int = 100
    flush: bool = True
    copy_bytes: int = 1 << 30
    extra: dict = field(default_factory=dict)


def environment(device: torch.device, bandwidth: float, cfg: Config) -> dict:
    """The header facts: GPU, versions, date, copy bandwidth, timing settings."""
    from . import __version__

    if device.type == "cuda":
        gpu = torch.cuda.get_device_name(device)
    else:
        gpu = f"CPU ({device})"
    return {
        "gpu": gpu,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "twinops": __version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "copy_bandwidth_tbps": bandwidth / 1e12,
        "warmup": cfg.warmup,
        "reps": cfg.reps,
        "l2_flush": bool(cfg.flush and device.type == "cuda"),
    }


def run_benchmark(cfg: Config, device="cuda", progress: Optional[Callable[[int, int, Case], None]] = None
                  ) -> Tuple[dict, List[Row]]:
    """Measures the copy bandwidth, then runs every case. Returns (environment, rows).

    Works on a CPU device too (perf_counter timing, no flush) so the pipeline can be
    tested without a GPU; the CLI itself requires CUDA.
    """
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    bandwidth = measure_copy_bandwidth(device, cfg.copy_bytes)
    meta = environment(device, bandwidth, cfg)
    timer = _Timer(device, cfg.warmup, cfg.reps, flush=cfg.flush)
    cases = build_cases(cfg.shapes, cfg.modes, cfg.dtypes, cfg.scales, cfg.backward)
    rows = []
    copies = {}  # nbytes -> copy ms (cases of one shape, dtype and scale move the same bytes)
    for i, case in enumerate(cases):
        if progress is not None:
            progress(i, len(cases), case)
        row = run_case(case, device, timer, bandwidth)
        if row.nbytes not in copies:
            copies[row.nbytes] = copy_ms(device, timer, row.nbytes)
        row.copy_ms = copies[row.nbytes]
        rows.append(row)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return meta, rows


# ---------------------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------------------

def _fmt_ms(v: Optional[float]) -> str:
    if v is None:
        return "n/a"
    return f"{v:.4f}" if v < 10 else f"{v:.2f}"


def _fmt_pct(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:.0f}%"


def _fmt_scale(s: float) -> str:
    return f"{s:g}x"


def _fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


def _detail_lines(rows: Sequence[Row]) -> List[str]:
    """``<mode> <dtype> <shape> <scale> <pass>: <detail>`` for each row with a detail."""
    return [f"{r.case.mode} {r.case.dtype} {_fmt_shape(r.case.shape)} {_fmt_scale(r.case.scale)} "
            f"{r.case.direction}: {r.detail}" for r in rows if r.detail]


def format_rows(rows: Sequence[Row]) -> List[List[str]]:
    """The table cells, one list of strings per row, in ``COLUMNS`` order."""
    cells = []
    for r in rows:
        c = r.case
        cells.append([
            c.mode,
            c.dtype,
            _fmt_shape(c.shape),
            _fmt_scale(c.scale),
            "fwd" if c.direction == "forward" else "bwd",
            _fmt_ms(r.floor_ms),
            _fmt_pct(r.copy_pct),
            _fmt_ms(r.torch_ms),
            _fmt_pct(r.torch_pct),
            _fmt_ms(r.twinops_ms),
            _fmt_pct(r.twinops_pct),
            "n/a" if r.speedup is None else f"{r.speedup:.2f}x",
            r.status,
        ])
    return cells


# The speed targets of issue 2 (on an H200): every forward at >= 60% of the HBM floor, every
# deterministic backward at >= 30%, and the bicubic 2x backward >= 3x (float32) and >= 10x
# (float16) faster than F.interpolate's.
TARGET_PCT = {"forward": 60.0, "backward": 30.0}
BICUBIC_BACKWARD_SPEEDUP = {"float32": 3.0, "float16": 10.0}


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where ``rows`` stand against the speed targets, one line per input shape and pass:
    how many reach the pass's % of the floor and which do not (with the copy's % where a
    device-to-device copy of the case's bytes stays under the target too: no kernel that
    moves those bytes reaches it at that size); then the bicubic 2x backward's speed-up per
    dtype with a target. Rows without a time (errors, mismatches) are left out."""
    out = []
    shapes = list(dict.fromkeys(r.case.shape for r in rows))
    for shape in shapes:
        for direction, target in TARGET_PCT.items():
            timed = [r for r in rows
                     if r.case.shape == shape and r.case.direction == direction and r.twinops_pct is not None]
            if not timed:
                continue
            below = [r for r in timed if r.twinops_pct < target]
            line = (f"{direction}s at {_fmt_shape(shape)}: {len(timed) - len(below)} of {len(timed)} reach "
                    f"{target:g}% of the floor")
            if below:
                line += "; below: " + ", ".join(
                    f"{r.case.mode} {r.case.dtype} {_fmt_scale(r.case.scale)} {r.twinops_pct:.0f}%"
                    + (f" (copy {r.copy_pct:.0f}%)" if r.copy_pct is not None and r.copy_pct < target else "")
                    for r in below)
            out.append(line)
    for r in rows:
        c = r.case
        need = BICUBIC_BACKWARD_SPEEDUP.get(c.dtype)
        if need and c.mode == "bicubic" and c.scale == 2.0 and c.direction == "backward" and r.speedup is not None:
            out.append(f"bicubic {c.dtype} 2x backward at {_fmt_shape(c.shape)}: {r.speedup:.1f}x "
                       f"F.interpolate's speed ({'meets' if r.speedup >= need else 'below'} the {need:g}x target)")
    return out


def header_lines(meta: dict) -> List[str]:
    """Human-readable header: GPU, versions, date, copy bandwidth, timing method."""
    flush = "L2 flushed (256 MiB read) before each" if meta.get("l2_flush") else "no L2 flush"
    return [
        f"GPU: {meta['gpu']}",
        f"torch {meta['torch']}, CUDA {meta['cuda']}, twinops {meta['twinops']}",
        f"date: {meta['date']}",
        f"copy bandwidth (read + write): {meta['copy_bandwidth_tbps']:.2f} TB/s",
        f"timing: median of up to {meta['reps']} reps after {meta['warmup']} warm-up, {flush}; "
        "floor = (bytes in + bytes out) / copy bandwidth; speed-up = F.interpolate / twinops",
        "copy % floor: a device-to-device copy of the case's bytes, timed the same way "
        "(what a kernel that only moves those bytes reaches)",
    ]


def to_markdown(meta: dict, rows: Sequence[Row]) -> str:
    """The header as a bullet list, then the table as a GitHub markdown table."""
    out = [f"- {line}" for line in header_lines(meta)]
    out.append("")
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "|".join("---" if i < 5 or i == len(COLUMNS) - 1 else "---:" for i in range(len(COLUMNS))) + "|")
    for cells in format_rows(rows):
        out.append("| " + " | ".join(cells) + " |")
    targets = target_lines(rows)
    if targets:
        out.append("")
        out.append("Targets:")
        out.extend(f"- {line}" for line in targets)
    details = _detail_lines(rows)
    if details:
        out.append("")
        out.extend(f"- {line}" for line in details)
    return "\n".join(out) + "\n"


def render_text(meta: dict, rows: Sequence[Row]) -> str:
    """Plain-text table (used when ``rich`` is not installed)."""
    cells = format_rows(rows)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(COLUMNS)]

    def line(values):
        return "  ".join(v.rjust(w) if 5 <= i < len(COLUMNS) - 1 else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    out = header_lines(meta) + ["", line(COLUMNS), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    out += _detail_lines(rows)
    out += [f"target: {line}" for line in target_lines(rows)]
    return "\n".join(out) + "\n"


def print_table(meta: dict, rows: Sequence[Row], file=None) -> None:
    """Prints the table with ``rich`` when importable, else as plain text."""
    file = file or sys.stdout
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        file.write(render_text(meta, rows))
        return
    # Never squeeze columns (a pipe or CI log gets rich's default 80 columns).
    cells = format_rows(rows)
    needed = sum(max([len(h)] + [len(c[i]) for c in cells]) + 3 for i, h in enumerate(COLUMNS)) + 1
    console = Console(file=file, width=max(needed, 100))
    for line in header_lines(meta):
        console.print(line, highlight=False)
    table = Table(show_lines=False)
    for i, col in enumerate(COLUMNS):
        table.add_column(col, justify="right" if 5 <= i < len(COLUMNS) - 1 else "left", no_wrap=True)
    for r, row_cells in zip(rows, cells):
        style = "bold red" if r.status in FAILED else (None if r.status == STATUS_OK else "yellow")
        table.add_row(*row_cells, style=style)
    console.print(table)
    for line in _detail_lines(rows) + [f"target: {line}" for line in target_lines(rows)]:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


# ---------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------

def _split(values: Optional[Sequence[str]]) -> List[str]:
    """Flattens ``nargs='+'`` values that may also be comma-separated."""
    return [v for item in (values or []) for v in item.replace(",", " ").split()]


def parse_shape(text: str) -> Tuple[int, int, int, int]:
    """``"8x64x256x256"`` -> (8, 64, 256, 256)."""
    try:
        dims = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        dims = ()
    if len(dims) != 4 or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"a shape is NxCxHxW with positive ints, got {text!r}")
    return dims


def _parse_mode(text: str) -> str:
    """Validates an F.interpolate mode, optionally ``-antialias`` (bilinear/bicubic only)."""
    base = text[: -len("-antialias")] if text.endswith("-antialias") else text
    ok = base in ("nearest", "nearest-exact", "bilinear", "bicubic", "area")
    if not ok or (base != text and base not in ("bilinear", "bicubic")):
        raise argparse.ArgumentTypeError(
            f"mode must be nearest, nearest-exact, bilinear, bicubic, area, bilinear-antialias or "
            f"bicubic-antialias, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The CLI's argument parser."""
    p = argparse.ArgumentParser(
        prog="python -m twinops.bench",
        description="Times twinops resize against torch.nn.functional.interpolate on CUDA (forward and backward), "
                    "with a parity check per case, each time's percentage of the HBM copy floor, and what a "
                    "device-to-device copy of the case's bytes reaches (copy % floor).",
        epilog="Exit status: 0 ok, 1 a case is MISMATCH or ERROR, 2 no CUDA GPU / no twinops CUDA kernels.")
    p.add_argument("--shapes", nargs="+", metavar="NxCxHxW",
                   help="input shapes (default: 8x64x256x256 1x3x1080x1920)")
    p.add_argument("--modes", nargs="+", metavar="MODE",
                   help=f"modes; MODE-antialias for antialias (default: {' '.join(DEFAULT_MODES)})")
    p.add_argument("--dtypes", nargs="+", metavar="DTYPE", help=f"dtypes (default: {' '.join(DEFAULT_DTYPES)})")
    p.add_argument("--scales", nargs="+", type=float, metavar="S", help="scale factors (default: 2 0.5)")
    p.add_argument("--quick", action="store_true", help="few repetitions, first shape only, smaller copy buffer")
    p.add_argument("--no-backward", action="store_true", help="forward only")
    p.add_argument("--warmup", type=int, default=None, help="warm-up calls per timing (default 20; --quick 3)")
    p.add_argument("--reps", type=int, default=None, help="timed calls per timing, at most (default 100; --quick 10)")
    p.add_argument("--no-flush", action="store_true", help="do not flush the L2 cache before each repetition")
    p.add_argument("--json", metavar="PATH", help="write the environment and all rows as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the header and table as markdown (for the README)")
    return p


def config_from_args(args: argparse.Namespace) -> Config:
    """Validated Config from parsed arguments (raises argparse.ArgumentTypeError)."""
    shapes = [parse_shape(s) for s in _split(args.shapes)] or list(DEFAULT_SHAPES)
    modes = [_parse_mode(m) for m in _split(args.modes)] or list(DEFAULT_MODES)
    dtypes = _split(args.dtypes) or list(DEFAULT_DTYPES)
    for d in dtypes:
        if d not in DTYPES:
            raise argparse.ArgumentTypeError(f"dtype must be one of {', '.join(DTYPES)}, got {d!r}")
    scales = list(args.scales or DEFAULT_SCALES)
    for s in scales:
        if not (math.isfinite(s) and s > 0):
            raise argparse.ArgumentTypeError(f"scales must be positive, got {s}")
    cfg = Config(shapes=shapes, modes=modes, dtypes=dtypes, scales=scales, backward=not args.no_backward,
                 flush=not args.no_flush)
    if args.quick:
        cfg.shapes, cfg.warmup, cfg.reps, cfg.copy_bytes = shapes[:1], 3, 10, 256 << 20
    if args.warmup is not None:
        cfg.warmup = max(0, args.warmup)
    if args.reps is not None:
        cfg.reps = max(1, args.reps)
    return cfg


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = config_from_args(args)
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

    def progress(i: int, n: int, case: Case) -> None:
        print(f"\r[{i + 1}/{n}] {case.mode} {case.dtype} {_fmt_shape(case.shape)} "
              f"{_fmt_scale(case.scale)} {case.direction}".ljust(78), end="", file=sys.stderr, flush=True)

    meta, rows = run_benchmark(cfg, "cuda", progress if sys.stderr.isatty() else None)
    if sys.stderr.isatty():
        print("\r" + " " * 78 + "\r", end="", file=sys.stderr, flush=True)
    print_table(meta, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": meta, "rows": [r.to_dict() for r in rows]}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(to_markdown(meta, rows))
    bad = [r for r in rows if r.status in FAILED]
    if bad:
        print(f"twinops.bench: {len(bad)} of {len(rows)} cases are MISMATCH or ERROR (see the table).",
              file=sys.stderr)
        return EXIT_MISMATCH
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
