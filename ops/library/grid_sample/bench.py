"""grid_sample's bench: ``twinops.grid_sample`` vs ``torch.nn.functional.grid_sample``
(``python -m twinops.bench grid_sample``; the method is the harness's, see ``harness.py``).

Cases: input shape x grid kind x mode x padding x dtype x pass (ordered so). The grid samples an
output of the input's own spatial size (a "same-size grid": (N, H, W, 2) for (N, C, H, W) input,
(N, D, H, W, 3) for 5-D), ``align_corners=False``. Grid kinds:

* ``smooth``: what models use -- an affine map (rotation by 5 degrees, a small shift; the corners
  fall outside the image, so the padding matters there) plus a small smooth flow (a few sine
  periods, amplitude 1% of the image): neighbouring outputs read neighbouring inputs;
* ``random``: every coordinate uniform in [-1.1, 1.1] (slightly outside the image): the worst
  case for caches and, in ATen's backward, for atomics on the same input cells.

The default selection keeps the run short (under two minutes on an H200): every dtype for the
smooth bilinear rows; every other row in the first dtype only; random grids with the first
padding only; bicubic on 4-D input only (F.grid_sample has no 5-D bicubic). ``--all`` gives the
whole cross product.

What is timed:

* forward: ``F.grid_sample(x, grid, mode, padding_mode, align_corners=False)`` vs
  ``twinops.grid_sample`` with the same arguments; inputs without ``requires_grad``.
  Bytes = input + grid + output.
* backward: ``torch.autograd.grad(F.grid_sample(x, grid, ...), (x, grid), grad_output,
  retain_graph=True)`` (ATen's atomic backward) vs the twinops backward op
  ``torch.ops.twinops.grid_sample_backward(grad_output, x, grid, mode, padding_mode,
  align_corners, [True, True])`` called directly (checked to be what autograd of
  ``twinops.grid_sample`` calls, with the same gradients). Bytes = grad_output + input + grid
  read, grad_input + grad_grid written.

After the table, ``target:`` lines: where the run stands against the speed targets
(:func:`target_lines`, :func:`target_speedup`; stated in docs/perf/grid_sample-notes.md, "Where
the targets stand"). Options: ``--shapes``, ``--modes``, ``--paddings``, ``--grids``,
``--all``, ``--channels-last`` (inputs in channels-last memory format; the output stays
contiguous in both ops) (``--quick``: first shape only).
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

import torch
import torch.nn.functional as F

from ...bench import harness
from ...bench.cli import parse_shape, split
from ...bench.harness import BenchCase, OpBench, Row
from ...bench.report import fmt_shape
from ...bench.timing import tensor_bytes

DEFAULT_SHAPES = ((8, 64, 128, 128), (1, 3, 1080, 1920), (2, 32, 32, 64, 64))
MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
GRIDS = ("smooth", "random")
DEFAULT_PADDINGS = ("zeros", "border")
# F.grid_sample's mode names -> the torch op's (ONNX GridSample-20 names)
OP_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


@dataclass
class Config(harness.Config):
    """grid_sample's selection on top of the common settings: input shapes (NCHW or NCDHW; the
    grid samples an output of the same spatial size), modes, paddings, grid kinds, ``all``
    (the whole cross product instead of the default selection, see the module's docstring) and
    ``channels_last`` (the inputs in channels-last memory format)."""

    shapes: Sequence[Tuple[int, ...]] = DEFAULT_SHAPES
    modes: Sequence[str] = MODES
    paddings: Sequence[str] = DEFAULT_PADDINGS
    grids: Sequence[str] = GRIDS
    all: bool = False
    channels_last: bool = False


@dataclass(frozen=True)
class Case(BenchCase):
    """One grid_sample case: ``shape`` the input (4-D or 5-D), ``grid`` its kind
    (``smooth``/``random``), ``mode`` and ``padding`` F.grid_sample's names; ``channels_last``:
    the input in torch.channels_last (channels_last_3d for 5-D) memory format."""

    mode: str
    padding: str
    grid: str
    dtype: str
    shape: Tuple[int, ...]
    direction: str  # "forward" | "backward"
    channels_last: bool = False

    differentiable = (0, 1)
    backward_op = "twinops::grid_sample_backward"

    @property
    def grid_shape(self) -> Tuple[int, ...]:
        """(N, *spatial, rank - 2): a grid with the input's spatial size."""
        return (self.shape[0], *self.shape[2:], len(self.shape) - 2)

    @property
    def output_shape(self) -> Tuple[int, ...]:
        """(N, C, *the grid's spatial size)."""
        return (*self.shape[:2], *self.grid_shape[1:-1])

    def labels(self) -> Tuple[str, ...]:
        """Cells of the columns mode, padding, grid, dtype, input."""
        return (self.mode, self.padding, self.grid, self.dtype,
                fmt_shape(self.shape) + (" channels_last" if self.channels_last else ""))

    def to_dict(self) -> dict:
        """JSON fields: mode, padding, grid, dtype, shape, grid_shape, channels_last."""
        return {"mode": self.mode, "padding": self.padding, "grid": self.grid, "dtype": self.dtype,
                "shape": list(self.shape), "grid_shape": list(self.grid_shape),
                "channels_last": self.channels_last}

    def make_inputs(self, device, generator) -> Tuple[torch.Tensor, torch.Tensor]:
        """``(x, grid)``: x random normal (channels-last where asked); grid per :func:`make_grid`;
        both in ``dtype``."""
        x = torch.randn(self.shape, generator=generator, device=device, dtype=self.torch_dtype)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
        return x, make_grid(self.grid_shape, self.grid, generator, device).to(self.torch_dtype)

    def baseline(self, x, grid):
        return _torch_forward(x, grid, self)

    def candidate(self, x, grid):
        return _twinops_forward(x, grid, self)

    def nbytes(self) -> int:
        """Forward: input + grid read, output written. Backward: grad_output, input and grid
        read, grad_input and grad_grid written."""
        if self.direction == "forward":
            shapes = [self.shape, self.grid_shape, self.output_shape]
        else:
            shapes = [self.output_shape, self.shape, self.grid_shape, self.shape, self.grid_shape]
        return tensor_bytes(shapes, self.torch_dtype)

    def output_shapes(self) -> Tuple[Tuple[int, ...]]:
        return (self.output_shape,)

    def candidate_backward(self, inputs, grad_outputs) -> Callable[[], Tuple[torch.Tensor, torch.Tensor]]:
        """``grid_sample_backward(grad_output, x, grid, mode, padding, 0, [True, True])``."""
        (x, grid), (g,) = inputs, grad_outputs
        op, mode = _twinops_backward_op(), OP_MODES[self.mode]
        return lambda: tuple(op(g, x, grid, mode, self.padding, 0, [True, True]))


def make_grid(shape: Sequence[int], kind: str, generator: torch.Generator, device) -> torch.Tensor:
    """A float32 sampling grid of ``shape`` (N, *spatial, k) with k = len(spatial).

    ``smooth``: per batch item, the identity grid rotated by 5 degrees (in the first two axes,
    x and y) and shifted by up to 0.05, plus a flow ``0.02 * sin(3 pi u + phase)`` per component
    (u: the next coordinate); ``random``: uniform in [-1.1, 1.1].
    """
    n, spatial, k = shape[0], tuple(shape[1:-1]), shape[-1]
    if kind == "random":
        return torch.rand(tuple(shape), generator=generator, device=device) * 2.2 - 1.1
    if kind != "smooth":
        raise ValueError(f"grid kind must be smooth or random, got {kind!r}")
    # coordinates per axis in grid order (x = last spatial axis first), align_corners=False centres
    axes = [((torch.arange(s, device=device, dtype=torch.float32) + 0.5) / s) * 2 - 1 for s in spatial]
    mesh = torch.meshgrid(*axes, indexing="ij")  # one per spatial axis, outermost first
    base = torch.stack(mesh[::-1], dim=-1)  # (*spatial, k): x, y[, z]
    angle = math.radians(5.0)
    rot = torch.eye(k, device=device)
    rot[0, 0] = rot[1, 1] = math.cos(angle)
    rot[0, 1], rot[1, 0] = -math.sin(angle), math.sin(angle)
    shift = (torch.rand((n, k), generator=generator, device=device) - 0.5) * 0.1
    phase = torch.rand((n, k), generator=generator, device=device) * 2 * math.pi
    grid = base @ rot.T  # (*spatial, k)
    grid = grid.unsqueeze(0).repeat(n, *([1] * (len(spatial) + 1)))
    for c in range(k):
        other = base[..., (c + 1) % k]  # the flow of each component varies along another axis
        flow = torch.sin(3 * math.pi * other.unsqueeze(0) + phase[:, c].view(n, *([1] * len(spatial))))
        grid[..., c] += 0.02 * flow + shift[:, c].view(n, *([1] * len(spatial)))
    return grid.contiguous()


# The implementations being compared; module-level so a test can substitute a wrong kernel.

def _torch_forward(x, grid, case: Case):
    """The reference: F.grid_sample with the case's arguments."""
    return F.grid_sample(x, grid, mode=case.mode, padding_mode=case.padding, align_corners=False)


def _twinops_forward(x, grid, case: Case):
    """The public twinops API with the same arguments."""
    from .api import grid_sample

    return grid_sample(x, grid, mode=case.mode, padding_mode=case.padding, align_corners=False)


def _twinops_backward_op():
    """The op timed for the twinops backward (checked to be the one autograd calls)."""
    return torch.ops.twinops.grid_sample_backward


def build_cases(cfg: Config) -> List[Case]:
    """``cfg``'s selection (the default rule or, with ``cfg.all``, the cross product), ordered
    shape > grid > mode > padding > dtype > pass; bicubic only on 4-D shapes; backward passes
    only where ``cfg.backward``."""
    directions = harness.DIRECTIONS if cfg.backward else ("forward",)
    dtypes, paddings = list(cfg.dtypes), list(cfg.paddings)
    cases = []
    for shape in cfg.shapes:
        for grid in cfg.grids:
            for mode in cfg.modes:
                if mode == "bicubic" and len(shape) != 4:
                    continue
                for padding in paddings if (cfg.all or grid == "smooth") else paddings[:1]:
                    full = cfg.all or (grid == "smooth" and mode == "bilinear")
                    for dtype in dtypes if full else dtypes[:1]:
                        cases += [Case(mode, padding, grid, dtype, tuple(shape), p, cfg.channels_last)
                                  for p in directions]
    return cases


# The speed targets (stated in docs/perf/grid_sample-notes.md, "Where the targets stand"), on
# every grid kind: a forward never slower than F.grid_sample (a drop-in must not slow a model
# down), smooth bilinear forwards at 64 channels or more 1.5x; the deterministic backward at
# least ATen's atomic one in float32 and 2x in float16 / bfloat16 at 32 channels or more, and
# 0.7x with few channels (C <= 4: 1080p images).
FORWARD_MIN, FORWARD_SMOOTH_BILINEAR = 1.0, 1.5
BACKWARD_MIN = {"float32": 1.0, "float16": 2.0, "bfloat16": 2.0, "float64": 1.0}
BACKWARD_FEW_CHANNELS = 0.7


def target_speedup(case: "Case") -> float:
    """The speed-up over PyTorch's the case's target asks for."""
    channels = case.shape[1]
    if case.direction == "forward":
        smooth_bilinear = case.grid == "smooth" and case.mode == "bilinear" and channels >= 64
        return FORWARD_SMOOTH_BILINEAR if smooth_bilinear else FORWARD_MIN
    return BACKWARD_FEW_CHANNELS if channels <= 4 else BACKWARD_MIN[case.dtype]


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where the rows stand against the targets (``target_speedup``), one line per input shape
    and pass: how many meet them and which do not. Rows without a time are left out."""
    out = []
    for shape in dict.fromkeys(r.case.shape for r in rows):
        for direction in harness.DIRECTIONS:
            timed = [r for r in rows if r.case.shape == shape and r.case.direction == direction
                     and r.speedup is not None]
            if not timed:
                continue
            below = [f"{r.case.mode} {r.case.padding} {r.case.grid} {r.case.dtype} {r.speedup:.2f}x "
                     f"(needs {target_speedup(r.case):g}x)" for r in timed if r.speedup < target_speedup(r.case)]
            line = f"{direction}s at {fmt_shape(shape)}: {len(timed) - len(below)} of {len(timed)} reach their target"
            if below:
                line += "; below: " + ", ".join(below)
            out.append(line)
    return out


# ---------------------------------------------------------------------------------------
# grid_sample's own CLI options
# ---------------------------------------------------------------------------------------

def _parse_input_shape(text: str) -> Tuple[int, ...]:
    """``NxCxHxW`` or ``NxCxDxHxW``; argparse.ArgumentTypeError otherwise."""
    dims = "NxCxDxHxW" if text.lower().count("x") == 4 else "NxCxHxW"
    return parse_shape(text, dims)


def _choices(values: Sequence[str], allowed: Sequence[str], what: str) -> List[str]:
    for v in values:
        if v not in allowed:
            raise argparse.ArgumentTypeError(f"{what} must be one of {', '.join(allowed)}, got {v!r}")
    return list(values)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--shapes``, ``--modes``, ``--paddings``, ``--grids``, ``--all``, ``--channels-last``."""
    p.add_argument("--shapes", nargs="+", metavar="NxCx[D]xHxW",
                   help=f"input shapes; the grid has the same spatial size "
                        f"(default: {' '.join(fmt_shape(s) for s in DEFAULT_SHAPES)})")
    p.add_argument("--modes", nargs="+", metavar="MODE", help=f"modes (default: {' '.join(MODES)})")
    p.add_argument("--paddings", nargs="+", metavar="PADDING",
                   help=f"padding modes (default: {' '.join(DEFAULT_PADDINGS)})")
    p.add_argument("--grids", nargs="+", metavar="GRID", help=f"grid kinds (default: {' '.join(GRIDS)})")
    p.add_argument("--all", action="store_true",
                   help="every dtype and padding for every row (default: all dtypes only for smooth bilinear rows, "
                        "random grids with the first padding only)")
    p.add_argument("--channels-last", action="store_true",
                   help="inputs in channels-last memory format (default: contiguous NCHW / NCDHW)")


def parse_options(args: argparse.Namespace) -> dict:
    """Config fields from grid_sample's options (``--quick``: the first shape only); raises
    argparse.ArgumentTypeError on a bad shape, mode, padding or grid kind."""
    shapes = [_parse_input_shape(s) for s in split(args.shapes)] or list(DEFAULT_SHAPES)
    modes = _choices(split(args.modes), MODES, "mode") or list(MODES)
    paddings = _choices(split(args.paddings), PADDINGS, "padding") or list(DEFAULT_PADDINGS)
    grids = _choices(split(args.grids), GRIDS, "grid") or list(GRIDS)
    return dict(shapes=shapes[:1] if args.quick else shapes, modes=modes, paddings=paddings, grids=grids,
                all=bool(args.all), channels_last=bool(getattr(args, "channels_last", False)))


BENCH = OpBench(
    name="grid_sample",
    summary="twinops grid_sample against torch.nn.functional.grid_sample",
    baseline_name="F.grid_sample",
    baseline_short="F",
    candidate_name="twinops.grid_sample",
    columns=("mode", "padding", "grid", "dtype", "input"),
    build_cases=build_cases,
    config_type=Config,
    add_arguments=add_arguments,
    parse_options=parse_options,
    targets=target_lines,
)
