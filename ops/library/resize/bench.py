"""Resize's bench: twinops resize vs ``torch.nn.functional.interpolate``
(``python -m twinops.bench resize``; the method is the harness's, see ``harness.py``).

Cases: mode x dtype x scale x shape x pass, ordered shape > mode > dtype > scale > pass.
A mode is an F.interpolate mode, optionally suffixed ``-antialias``.

What is timed:

* forward: ``F.interpolate(x, scale_factor=s, mode=..., antialias=...)`` vs
  ``twinops.interpolate`` with the same arguments; inputs without ``requires_grad``.
  Bytes = input + output.
* backward: ``torch.autograd.grad(F.interpolate(x, ...), x, grad_output,
  retain_graph=True)`` (precomputed ``grad_output``) vs the twinops backward op
  ``torch.ops.twinops.resize_backward(grad_output, list(x.shape), *attrs.op_args())``
  called directly (checked to be what autograd of ``twinops.interpolate`` calls, with the
  same gradient). Bytes = grad_output + grad_input.

After the table, ``target:`` lines: where the run stands against the speed targets stated in
docs/perf/resize.md (:func:`target_lines`). Options: ``--shapes NxCxHxW ...``, ``--modes``, ``--scales``
(``--quick``: first shape only).
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

import torch
import torch.nn.functional as F

from .api import _interpolate_plan, interpolate
from ...bench import harness
from ...bench.cli import parse_shape, split
from ...bench.harness import BenchCase, OpBench, Row
from ...bench.report import fmt_shape
from ...bench.timing import tensor_bytes

DEFAULT_SHAPES = ((8, 64, 256, 256), (1, 3, 1080, 1920))
DEFAULT_MODES = ("bicubic", "bilinear", "nearest", "bicubic-antialias")
DEFAULT_SCALES = (2.0, 0.5)
MODES = ("nearest", "nearest-exact", "bilinear", "bicubic", "area")
ANTIALIAS_MODES = ("bilinear", "bicubic")


@dataclass
class Config(harness.Config):
    """Resize's selection on top of the common settings: input shapes (NCHW), modes (an
    F.interpolate mode, optionally ``-antialias``) and scale factors (both axes)."""

    shapes: Sequence[Tuple[int, ...]] = DEFAULT_SHAPES
    modes: Sequence[str] = DEFAULT_MODES
    scales: Sequence[float] = DEFAULT_SCALES


@dataclass(frozen=True)
class Case(BenchCase):
    """One resize case. ``mode`` is an F.interpolate mode, optionally suffixed ``-antialias``;
    ``shape`` the NCHW input; ``scale`` the scale factor of both axes."""

    mode: str
    dtype: str
    shape: Tuple[int, int, int, int]
    scale: float
    direction: str  # "forward" | "backward"

    backward_op = "twinops::resize_backward"

    @property
    def interp_mode(self) -> str:
        """The F.interpolate ``mode`` argument."""
        return self.mode[: -len("-antialias")] if self.antialias else self.mode

    @property
    def antialias(self) -> bool:
        """The F.interpolate ``antialias`` argument."""
        return self.mode.endswith("-antialias")

    @property
    def output_shape(self) -> Tuple[int, int, int, int]:
        """F.interpolate's output size for ``scale_factor=scale``: floor(in * s) per axis."""
        n, c, h, w = self.shape
        return (n, c, math.floor(h * self.scale), math.floor(w * self.scale))

    def labels(self) -> Tuple[str, ...]:
        """Cells of the columns mode, dtype, input, scale."""
        return (self.mode, self.dtype, fmt_shape(self.shape), fmt_scale(self.scale))

    def to_dict(self) -> dict:
        """JSON fields: mode, dtype, shape, output_shape, scale."""
        return {"mode": self.mode, "dtype": self.dtype, "shape": list(self.shape),
                "output_shape": list(self.output_shape), "scale": self.scale}

    def make_inputs(self, device, generator) -> Tuple[torch.Tensor]:
        """``(x,)``: random normal, ``shape``, ``dtype``."""
        return (torch.randn(self.shape, generator=generator, device=device, dtype=self.torch_dtype),)

    def baseline(self, x):
        return _torch_forward(x, self)

    def candidate(self, x):
        return _twinops_forward(x, self)

    def nbytes(self) -> int:
        """Read one tensor, write the other, once each (forward: input and output; backward:
        grad_output and grad_input: the same total)."""
        return tensor_bytes([self.shape, self.output_shape], self.torch_dtype)

    def output_shapes(self) -> Tuple[Tuple[int, ...]]:
        return (self.output_shape,)

    def candidate_backward(self, inputs, grad_outputs) -> Callable[[], Tuple[torch.Tensor]]:
        """``resize_backward(grad_output, list(x.shape), *attrs)`` with the attributes planned
        once, outside the timed call."""
        (x,), (g,) = inputs, grad_outputs
        _, attrs = _interpolate_plan(x, None, self.scale, self.interp_mode, None, None, self.antialias)
        op, in_shape, args = _twinops_backward_op(), list(x.shape), attrs.op_args()
        return lambda: (op(g, in_shape, *args),)


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


def build_cases(cfg: Config) -> List[Case]:
    """The cross product of ``cfg``'s selection, ordered shape > mode > dtype > scale > pass
    (the table's grouping); backward passes only where ``cfg.backward``."""
    directions = harness.DIRECTIONS if cfg.backward else ("forward",)
    return [Case(m, d, tuple(s), float(sc), p)
            for s in cfg.shapes for m in cfg.modes for d in cfg.dtypes for sc in cfg.scales for p in directions]


def fmt_scale(s: float) -> str:
    """``2.0`` -> ``"2x"``."""
    return f"{s:g}x"


# The speed targets (on an H200; stated in docs/perf/resize.md): every forward at >= 60% of the
# HBM floor, every deterministic backward at >= 30%, and the bicubic 2x backward >= 3x (float32)
# and >= 10x (float16) faster than F.interpolate's.
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
            line = (f"{direction}s at {fmt_shape(shape)}: {len(timed) - len(below)} of {len(timed)} reach "
                    f"{target:g}% of the floor")
            if below:
                line += "; below: " + ", ".join(
                    f"{r.case.mode} {r.case.dtype} {fmt_scale(r.case.scale)} {r.twinops_pct:.0f}%"
                    + (f" (copy {r.copy_pct:.0f}%)" if r.copy_pct is not None and r.copy_pct < target else "")
                    for r in below)
            out.append(line)
    for r in rows:
        c = r.case
        need = BICUBIC_BACKWARD_SPEEDUP.get(c.dtype)
        if need and c.mode == "bicubic" and c.scale == 2.0 and c.direction == "backward" and r.speedup is not None:
            out.append(f"bicubic {c.dtype} 2x backward at {fmt_shape(c.shape)}: {r.speedup:.1f}x "
                       f"F.interpolate's speed ({'meets' if r.speedup >= need else 'below'} the {need:g}x target)")
    return out


# ---------------------------------------------------------------------------------------
# resize's own CLI options
# ---------------------------------------------------------------------------------------

def _parse_mode(text: str) -> str:
    """Validates an F.interpolate mode, optionally ``-antialias`` (bilinear/bicubic only)."""
    base = text[: -len("-antialias")] if text.endswith("-antialias") else text
    if base not in MODES or (base != text and base not in ANTIALIAS_MODES):
        raise argparse.ArgumentTypeError(
            f"mode must be nearest, nearest-exact, bilinear, bicubic, area, bilinear-antialias or "
            f"bicubic-antialias, got {text!r}")
    return text


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--shapes``, ``--modes``, ``--scales``."""
    p.add_argument("--shapes", nargs="+", metavar="NxCxHxW",
                   help=f"input shapes (default: {' '.join(fmt_shape(s) for s in DEFAULT_SHAPES)})")
    p.add_argument("--modes", nargs="+", metavar="MODE",
                   help=f"modes; MODE-antialias for antialias (default: {' '.join(DEFAULT_MODES)})")
    p.add_argument("--scales", nargs="+", type=float, metavar="S",
                   help=f"scale factors (default: {' '.join(f'{s:g}' for s in DEFAULT_SCALES)})")


def parse_options(args: argparse.Namespace) -> dict:
    """Config fields from resize's options (``--quick``: the first shape only); raises
    argparse.ArgumentTypeError on a bad shape, mode or scale."""
    shapes = [parse_shape(s) for s in split(args.shapes)] or list(DEFAULT_SHAPES)
    modes = [_parse_mode(m) for m in split(args.modes)] or list(DEFAULT_MODES)
    scales = list(args.scales or DEFAULT_SCALES)
    for s in scales:
        if not (math.isfinite(s) and s > 0):
            raise argparse.ArgumentTypeError(f"scales must be positive, got {s}")
    return dict(shapes=shapes[:1] if args.quick else shapes, modes=modes, scales=scales)


BENCH = OpBench(
    name="resize",
    summary="twinops resize against torch.nn.functional.interpolate",
    baseline_name="F.interpolate",
    baseline_short="F",
    candidate_name="twinops.interpolate",
    columns=("mode", "dtype", "input", "scale"),
    build_cases=build_cases,
    config_type=Config,
    add_arguments=add_arguments,
    parse_options=parse_options,
    targets=target_lines,
)
COLUMNS = BENCH.table_columns
