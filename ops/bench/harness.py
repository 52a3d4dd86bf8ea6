"""The generic benchmark harness behind ``python -m twinops.bench``; it names no op.

An op's bench (``twinops.library.<op>.bench``) describes its cases as :class:`BenchCase`
subclasses and the op as an :class:`OpBench`; this module checks and times them. For every
case it

1. checks parity first: the twinops output vs the baseline's (forward); the twinops gradient
   w.r.t. each differentiable input vs the autograd gradient of the baseline computed in
   float32 (backward: half dtypes against a float32 reference, because ATen's half backwards
   may accumulate in half with atomics). A case outside the dtype tolerance is ``MISMATCH``:
   a fast wrong kernel must be visible. Where the case times a twinops backward op called
   directly, it also checks that this op is the one autograd of the twinops forward calls,
   and that both give the same gradient;
2. times both implementations with CUDA events (``timing.Timer``): warm-up, then the
   median of many repetitions; before every repetition the L2 cache is flushed (by reading
   a 256 MiB buffer, so that no dirty line is left to write back) and the GPU is given a
   short head start (``torch.cuda._sleep``), so the events measure GPU time and not Python
   launch overhead;
3. relates each time to the HBM floor of the case: ``floor = (bytes read + bytes written) /
   copy bandwidth``, the copy bandwidth being measured in the same run with a large
   device-to-device copy. ``% floor = floor / time * 100``;
4. times a device-to-device copy of the case's bytes the same way (``copy % floor``): what a
   kernel that only moves those bytes reaches. For small cases this is well under 100%
   (launch latency, ramp-up and the flushed L2 weigh more), so it shows how far the floor
   can be approached at that size.

Neither side gets an ``out=`` tensor, so outputs are allocated by each call (a free-list pop
in the caching allocator). On a CPU device the same pipeline runs with ``perf_counter``
timing and no flush, so it can be tested without a GPU.

Statuses: ``OK``; ``MISMATCH`` (outside tolerance, or the timed backward is not what
autograd runs); ``ERROR`` (twinops raised); ``NO-REF`` (the baseline raised, so twinops is
timed but unchecked).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from .timing import Timer, copy_ms, floor_ms, measure_copy_bandwidth, pct_of_floor

Tensors = Union[torch.Tensor, Sequence[torch.Tensor]]

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Max |twinops - reference| allowed, relative to max(1, max |reference|). Half types: the
# two implementations may round the same float result to neighbouring values (bf16 has
# 8 mantissa bits: one ulp is up to 2^-7 of the magnitude).
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}

STATUS_OK, STATUS_MISMATCH, STATUS_ERROR = "OK", "MISMATCH", "ERROR"
STATUS_NO_REF = "NO-REF"  # the baseline failed (e.g. a dtype it lacks on this device): twinops unchecked
FAILED = (STATUS_MISMATCH, STATUS_ERROR)
DIRECTIONS = ("forward", "backward")


# ---------------------------------------------------------------------------------------
# what an op's bench provides
# ---------------------------------------------------------------------------------------

def declared_inputs(op: str, shapes, dtype: torch.dtype, device, generator: torch.Generator,
                    kwargs: Optional[dict] = None) -> Tuple[Optional[torch.Tensor], ...]:
    """The inputs of declared op ``op`` for ``shapes`` (one per input, None for an optional input
    left out) from its input factories (``twinops.testing.inputs.make_inputs``, seeded with the
    generator's initial seed), made on the CPU and moved to ``device``."""
    from .. import opdef
    from ..testing.inputs import make_inputs

    xs = make_inputs(opdef.get(op).inputs, shapes, dtype, generator.initial_seed(), kwargs)
    return tuple(x.to(device) if x is not None else None for x in xs)


class BenchCase:
    """One case of an op's bench; subclass it as a frozen dataclass holding the op's fields.

    A subclass has the attributes ``dtype`` (a key of :data:`DTYPES`, e.g. ``"float16"``) and
    ``direction`` (``"forward"`` or ``"backward"``) and defines:

    * ``labels() -> tuple of str``: the cells of the op's own table columns
      (:attr:`OpBench.columns`, e.g. ``("bilinear", "float32", "1x3x1080x1920")``);
    * ``make_inputs(device, generator) -> tuple of tensors``: every input of the op, drawn
      from ``generator`` on ``device`` (random, never all zeros), in ``dtype`` where floating;
      an op whose inputs must hold valid values (indices, boxes) returns
      :func:`declared_inputs`, its declaration's factories;
    * ``baseline(*inputs)`` and ``candidate(*inputs)``: the PyTorch op the twinops op
      stands in for, and twinops, each returning a tensor or a tuple of tensors of the same shapes;
    * ``nbytes() -> int``: the minimal HBM traffic of the timed pass, bytes read + written
      once each (:func:`tensor_bytes` adds up shapes); the floor is ``nbytes / bandwidth``;
    * for backward cases, ``output_shapes() -> tuple of shapes``: the shapes of the outputs,
      one random ``grad_output`` of each is drawn after the inputs.

    A backward case times ``torch.autograd.grad(baseline(*inputs), differentiable inputs,
    grad_outputs, retain_graph=True)`` against the twinops backward; set, as needed:

    * ``differentiable``: indices of the inputs the gradient is taken w.r.t. (default ``(0,)``;
      ``(0, 1)`` for an op differentiable in its first two inputs);
    * ``backward_op``: the qualified name of the op autograd of ``candidate`` must dispatch
      (``"twinops::<op>_backward"``); checked where the recording API is available;
    * ``candidate_backward(inputs, grad_outputs)``: a zero-argument callable that calls the
      twinops backward op directly and returns the gradients in ``differentiable`` order;
      it is timed instead of autograd, after checking it gives autograd's gradients exactly.
      The default, None, times autograd of ``candidate`` like the baseline's.
    """

    dtype: str
    direction: str
    differentiable: Tuple[int, ...] = (0,)
    backward_op: Optional[str] = None

    @property
    def torch_dtype(self) -> torch.dtype:
        """``DTYPES[self.dtype]``."""
        return DTYPES[self.dtype]

    def labels(self) -> Tuple[str, ...]:
        """The cells of the op's own columns (``OpBench.columns``), in order."""
        raise NotImplementedError

    def make_inputs(self, device: torch.device, generator: torch.Generator) -> Tuple[torch.Tensor, ...]:
        """Every input of the op, drawn from ``generator`` on ``device``."""
        raise NotImplementedError

    def baseline(self, *inputs: torch.Tensor) -> Tensors:
        """The reference implementation's output(s) for ``inputs``."""
        raise NotImplementedError

    def candidate(self, *inputs: torch.Tensor) -> Tensors:
        """twinops' output(s) for ``inputs`` (differentiable through its autograd)."""
        raise NotImplementedError

    def expected(self, inputs: Sequence[torch.Tensor], baseline_out: Tensors) -> Tensors:
        """What twinops' forward must equal: the baseline's output (default), or, where the
        baseline's arithmetic differs from twinops' by design (documented in the op's docs), the
        baseline computed so that it matches (untimed)."""
        return baseline_out

    def nbytes(self) -> int:
        """Minimal HBM bytes of the timed pass, read + written once each."""
        raise NotImplementedError

    def output_shapes(self) -> Tuple[Tuple[int, ...], ...]:
        """The output shapes (backward cases: the grad_outputs' shapes)."""
        raise NotImplementedError

    def candidate_backward(self, inputs: Sequence[torch.Tensor], grad_outputs: Sequence[torch.Tensor]
                           ) -> Optional[Callable[[], Sequence[torch.Tensor]]]:
        """A zero-argument call of the twinops backward op returning the gradients of the
        ``differentiable`` inputs, prepared outside the timing; None (default): time autograd."""
        return None

    def title(self) -> str:
        """``labels`` and the pass, space-separated: names the case in progress and problem lines."""
        return " ".join((*self.labels(), self.direction))

    def to_dict(self) -> dict:
        """The case's JSON fields (without the pass): its dataclass fields, tuples as lists."""
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in dataclasses.fields(self) for v in [getattr(self, f.name)] if f.name != "direction"}


@dataclass
class Config:
    """Run settings common to every op; an op's bench subclasses it with its own selection
    (shapes, modes, ...) and builds its cases from it.

    dtypes: keys of :data:`DTYPES`. backward: also the backward cases. warmup: untimed calls
    before each timing. reps: timed calls per timing, at most (see :meth:`Timer.median_ms`).
    flush: flush the L2 before each timed call (CUDA). copy_bytes: the buffer size of the
    copy-bandwidth measurement (per buffer; far larger than the L2).
    """

    dtypes: Sequence[str] = ("float32", "float16", "bfloat16")
    backward: bool = True
    warmup: int = 20
    reps: int = 100
    flush: bool = True
    copy_bytes: int = 1 << 30


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _no_options(args: argparse.Namespace) -> dict:
    return {}


def _no_targets(rows: Sequence["Row"]) -> List[str]:
    return []


@dataclass(frozen=True)
class OpBench:
    """An op's bench as the harness and the CLI see it (one per ``twinops.library.<op>.bench``,
    as its module attribute ``BENCH``).

    Attributes:
        name: the op's name, the CLI's ``OP`` argument.
        summary: ``"twinops X against Y"``, for ``--help``.
        baseline_name: the baseline in columns and messages (``"F.<op>"``).
        baseline_short: its short form in the ``"<short> % floor"`` column (``"F"``).
        candidate_name: the twinops API in messages about the backward (``"twinops.<op>"``).
        columns: the op's own leading table columns, filled by :meth:`BenchCase.labels`.
        build_cases: ``build_cases(config) -> list of BenchCase``, in table order.
        config_type: the :class:`Config` subclass holding the op's selection.
        add_arguments: ``add_arguments(parser)`` adds the op's own CLI options.
        parse_options: ``parse_options(args) -> dict`` of ``config_type`` fields from them
            (``args.quick`` is set too); raises ``argparse.ArgumentTypeError`` on bad values.
        targets: ``targets(rows) -> list of str``, the ``target:`` lines after the table.
        tolerance: ``{dtype: allowed error relative to max(1, max |reference|)}``.
    """

    name: str
    summary: str
    baseline_name: str
    baseline_short: str
    candidate_name: str
    columns: Tuple[str, ...]
    build_cases: Callable[[Config], List[BenchCase]]
    config_type: type = Config
    add_arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    parse_options: Callable[[argparse.Namespace], dict] = _no_options
    targets: Callable[[Sequence["Row"]], List[str]] = _no_targets
    tolerance: Mapping[torch.dtype, float] = field(default_factory=lambda: dict(TOLERANCE))

    @property
    def table_columns(self) -> Tuple[str, ...]:
        """Every column of the op's table: its own, the pass, then the timing columns."""
        return (*self.columns, "pass", "floor ms", "copy % floor", f"{self.baseline_name} ms",
                f"{self.baseline_short} % floor", "twinops ms", "twinops % floor", "speed-up", "check")


@dataclass
class Row:
    """The result of one case (times in milliseconds; ``None`` where not measured)."""

    case: BenchCase
    nbytes: int
    floor_ms: float
    torch_ms: Optional[float] = None  # the baseline's time
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
        """Baseline time / twinops time (> 1: twinops is faster)."""
        if not self.torch_ms or not self.twinops_ms:
            return None
        return self.torch_ms / self.twinops_ms

    def to_dict(self) -> dict:
        """A JSON-ready dict: the case's fields, the pass, then the measured and derived values."""
        return {
            **self.case.to_dict(),
            "pass": self.case.direction,
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


def speedup_lines(rows: Sequence[Row], speedup: float, against: str,
                  keep: Callable[[Row], bool] = lambda row: True) -> List[str]:
    """One line per pass (forward, backward) with timed rows that ``keep`` admits: how many reach
    ``speedup`` x the baseline (named ``against``) and which do not, as
    ``"forward: 3 of 4 rows >= 2x torchvision; below: <labels> 1.50x"``."""
    out = []
    for direction in DIRECTIONS:
        timed = [r for r in rows if r.case.direction == direction and keep(r) and r.speedup is not None]
        below = [f"{' '.join(r.case.labels())} {r.speedup:.2f}x" for r in timed if r.speedup < speedup]
        if timed:
            line = f"{direction}: {len(timed) - len(below)} of {len(timed)} rows >= {speedup:g}x {against}"
            out.append(line + ("; below: " + ", ".join(below) if below else ""))
    return out


# ---------------------------------------------------------------------------------------
# parity
# ---------------------------------------------------------------------------------------

def check_parity(ref: Tensors, got: Tensors, dtype: torch.dtype,
                 tolerance: Mapping[torch.dtype, float] = TOLERANCE) -> Tuple[bool, float, float]:
    """(ok, max |got - ref|, allowed), allowed = ``tolerance[dtype] * max(1, max |ref|)``.

    ``ref``/``got``: a tensor each, or sequences of tensors compared pairwise (then the
    worst pair, by error / allowed, is returned). A shape or count mismatch, or a non-finite
    difference (NaN/inf where the reference has none), is never ok.
    """
    if not isinstance(ref, torch.Tensor) or not isinstance(got, torch.Tensor):
        refs, gots = _as_tuple(ref), _as_tuple(got)
        if len(refs) != len(gots) or not refs:
            return False, float("inf"), 0.0
        results = [check_parity(r, g, dtype, tolerance) for r, g in zip(refs, gots)]
        return max(results, key=lambda res: (not res[0], res[1] / res[2] if res[2] else math.inf))
    if tuple(ref.shape) != tuple(got.shape):
        return False, float("inf"), 0.0
    ref32, got32 = ref.detach().float(), got.detach().float()
    scale = max(1.0, ref32.abs().max().item()) if ref32.numel() else 1.0
    allowed = tolerance[dtype] * scale
    err = (got32 - ref32).abs().max().item() if ref32.numel() else 0.0
    ok = math.isfinite(err) and err <= allowed
    return ok, err, allowed


def _as_tuple(t: Tensors) -> Tuple[torch.Tensor, ...]:
    return (t,) if isinstance(t, torch.Tensor) else tuple(t)


try:  # records which ops autograd dispatches (private torch API; the check is skipped without it)
    from torch.utils._python_dispatch import TorchDispatchMode as _TorchDispatchMode
except ImportError:  # pragma: no cover
    _TorchDispatchMode = None


def ops_called(fn: Callable[[], object]) -> Optional[List[str]]:
    """Qualified names (``ns::op[.overload]``) of the aten/custom ops that ``fn()`` dispatches,
    in order, or None when the recording API is unavailable."""
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


# ---------------------------------------------------------------------------------------
# one case
# ---------------------------------------------------------------------------------------

def _error_text(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 200 characters) for the row's detail."""
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]


def run_case(op: OpBench, case: BenchCase, device: torch.device, timer: Timer, bandwidth: float,
             seed: int = 0) -> Row:
    """Checks and times one case of ``op`` on ``device`` (inputs drawn from a generator seeded
    with ``seed``); never raises for a failing implementation (the row gets status ERROR and
    the exception's first line). ``bandwidth``: the copy bandwidth in bytes/s."""
    if case.direction not in DIRECTIONS:
        raise ValueError(f"a case's direction is forward or backward, got {case.direction!r}")
    nbytes = case.nbytes()
    row = Row(case, nbytes, floor_ms(nbytes, bandwidth))
    gen = torch.Generator(device=device).manual_seed(seed)
    inputs = tuple(case.make_inputs(device, gen))
    problems: List[str] = []
    try:
        if case.direction == "forward":
            _forward(op, case, inputs, timer, row, problems)
        else:
            _backward(op, case, inputs, timer, row, problems, gen)
    finally:
        del inputs
    if problems:
        row.detail = "; ".join(problems)
    return row


def _record_parity(op: OpBench, row: Row, problems: List[str], ref: Optional[Tensors], got: Tensors,
                   what: str) -> None:
    """Sets ``row``'s status and errors from twinops' ``got`` vs the baseline's ``ref``
    (None: the baseline failed, so the row is NO-REF unless already worse)."""
    if ref is None:
        row.status = STATUS_NO_REF if row.status == STATUS_OK else row.status
        return
    ok, row.max_abs_err, row.allowed_err = check_parity(ref, got, row.case.torch_dtype, op.tolerance)
    if not ok:
        row.status = STATUS_MISMATCH
        problems.append(f"twinops vs {op.baseline_name}{what}: max abs err {row.max_abs_err:.3g} > "
                        f"{row.allowed_err:.3g}")


def _forward(op: OpBench, case: BenchCase, inputs: Tuple[torch.Tensor, ...], timer: Timer, row: Row,
             problems: List[str]) -> None:
    """Forward: parity of the outputs, then both timings (fills ``row`` and ``problems``)."""
    ref = got = None
    try:
        ref = case.baseline(*inputs)
        row.torch_ms = timer.median_ms(lambda: case.baseline(*inputs))
        ref = case.expected(inputs, ref)
    except Exception as exc:  # the baseline may lack a dtype/mode; report, keep going
        problems.append(f"{op.baseline_name}: {_error_text(exc)}")
    try:
        got = case.candidate(*inputs)
    except Exception as exc:
        row.status = STATUS_ERROR
        problems.append(f"twinops: {_error_text(exc)}")
        return
    _record_parity(op, row, problems, ref, got, "")
    del ref, got
    row.twinops_ms = timer.median_ms(lambda: case.candidate(*inputs))


def leaves(inputs: Sequence[torch.Tensor], differentiable: Sequence[int],
           dtype: Optional[torch.dtype] = None) -> List[torch.Tensor]:
    """Detached inputs (floating ones cast to ``dtype`` if given), the differentiable ones
    requiring grad."""
    out = []
    for i, t in enumerate(inputs):
        t = t.detach()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        out.append(t.requires_grad_(True) if i in differentiable else t)
    return out


def grad_outputs(case: BenchCase, generator: torch.Generator, device) -> Tuple[torch.Tensor, ...]:
    """Random gradients for each of ``case``'s outputs (its dtype), from ``generator``."""
    return tuple(torch.randn(s, generator=generator, device=device, dtype=case.torch_dtype)
                 for s in case.output_shapes())


def gradient_call(fn: Callable, case: BenchCase, inputs: Sequence[torch.Tensor],
                  grads_out: Sequence[torch.Tensor]) -> Callable[[], Tuple[torch.Tensor, ...]]:
    """A call returning the gradients of ``fn(*inputs)`` w.r.t. ``case``'s differentiable inputs
    for ``grads_out``; the graph is built once here and kept for repeated calls."""
    xs = leaves(inputs, case.differentiable)
    out, wrt = fn(*xs), [xs[i] for i in case.differentiable]
    return lambda: torch.autograd.grad(out, wrt, grads_out, retain_graph=True)


def _backward(op: OpBench, case: BenchCase, inputs: Tuple[torch.Tensor, ...], timer: Timer, row: Row,
              problems: List[str], gen: torch.Generator) -> None:
    """Backward: the baseline's autograd gradients vs twinops' (its backward op called
    directly where the case gives one, after checking that op is what autograd runs)."""
    diff = case.differentiable
    grads_out = grad_outputs(case, gen, inputs[0].device)
    # Reference gradients in float32 (for half types ATen's own half backward may accumulate
    # in half through atomics, the less accurate one).
    ref = None
    try:
        xr = leaves(inputs, diff, torch.float32)
        ref = torch.autograd.grad(case.baseline(*xr), [xr[i] for i in diff], [g.float() for g in grads_out])
        del xr
    except Exception as exc:
        problems.append(f"{op.baseline_name} backward: {_error_text(exc)}")
    try:
        row.torch_ms = timer.median_ms(gradient_call(case.baseline, case, inputs, grads_out))
    except Exception as exc:
        problems.append(f"{op.baseline_name} backward: {_error_text(exc)}")

    try:
        direct_call = case.candidate_backward(inputs, grads_out)
        direct = None if direct_call is None else tuple(direct_call())
        xa = leaves(inputs, diff)
        out_a, wrt_a = case.candidate(*xa), [xa[i] for i in diff]
        via_autograd: list = []
        names = ops_called(lambda: via_autograd.extend(
            torch.autograd.grad(out_a, wrt_a, grads_out, retain_graph=direct_call is None)))
    except Exception as exc:
        row.status = STATUS_ERROR
        problems.append(f"twinops backward: {_error_text(exc)}")
        return
    # names == []: the recording mode did not reach autograd's thread; the equality check remains.
    if case.backward_op and names and case.backward_op not in names:
        row.status = STATUS_MISMATCH
        problems.append(f"autograd of {op.candidate_name} does not call {case.backward_op} (calls {names})")
    if direct is not None and (len(direct) != len(via_autograd)
                               or not all(torch.equal(a, d) for a, d in zip(via_autograd, direct))):
        row.status = STATUS_MISMATCH
        timed = case.backward_op.split("::")[-1] if case.backward_op else "backward"
        problems.append(f"autograd gradient of {op.candidate_name} differs from the timed {timed} call")
    _record_parity(op, row, problems, ref, direct if direct is not None else via_autograd, " grad")
    del ref, direct, via_autograd
    if direct_call is None:
        row.twinops_ms = timer.median_ms(lambda: torch.autograd.grad(out_a, wrt_a, grads_out, retain_graph=True))
    else:
        del out_a, wrt_a, xa
        row.twinops_ms = timer.median_ms(direct_call)


# ---------------------------------------------------------------------------------------
# the whole run
# ---------------------------------------------------------------------------------------

def environment(device: torch.device, bandwidth: float, cfg: Config) -> dict:
    """The header facts: GPU, versions, date, copy bandwidth (TB/s), timing settings."""
    from .. import __version__

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


def run_benchmark(op: OpBench, cfg: Config, device="cuda",
                  progress: Optional[Callable[[int, int, BenchCase], None]] = None,
                  bandwidth: Optional[float] = None) -> Tuple[dict, List[Row]]:
    """Runs every case of ``op.build_cases(cfg)``; returns (environment, rows).

    ``device``: "cuda" (the current device) or any torch device; on a CPU device the cases
    are timed with perf_counter and no flush, so the pipeline can be tested without a GPU.
    ``progress(i, n, case)`` is called before case i of n. ``bandwidth``: the copy bandwidth
    in bytes/s, measured here (``cfg.copy_bytes`` per buffer) when None.
    """
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    if bandwidth is None:
        bandwidth = measure_copy_bandwidth(device, cfg.copy_bytes)
    meta = environment(device, bandwidth, cfg)
    timer = Timer(device, cfg.warmup, cfg.reps, flush=cfg.flush)
    cases = op.build_cases(cfg)
    rows = []
    copies: Dict[int, float] = {}  # nbytes -> copy ms (cases often move the same bytes)
    for i, case in enumerate(cases):
        if progress is not None:
            progress(i, len(cases), case)
        row = run_case(op, case, device, timer, bandwidth)
        if row.nbytes not in copies:
            copies[row.nbytes] = copy_ms(device, timer, row.nbytes)
        row.copy_ms = copies[row.nbytes]
        rows.append(row)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return meta, rows
