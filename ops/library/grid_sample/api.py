"""grid_sample: ``torch.nn.functional.grid_sample`` computed by the twinops kernel.

:func:`grid_sample` and :class:`GridSample` call the torch op ``torch.ops.twinops.grid_sample``
(attributes with ONNX GridSample-20's names: mode ``linear | nearest | cubic``, padding_mode,
align_corners as an int); its gradient is the op ``twinops::grid_sample_backward``, deterministic
(no atomics). This module holds what the declaration (``declaration.py``) cannot express: the
checks that relate two arguments and the fake kernels (autograd is C++'s, the node's
``onnx.reference`` kernel is in ``export.py``). docs/ops/grid_sample.md has the semantics.
"""
from __future__ import annotations

import functools
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import attrs_class, check_arg, check_tensor, renamed
from .declaration import GRID, GRID_SAMPLE, GRID_SAMPLE_NODE, INPUT, MODES, ONNX_MODES, PADDING_MODES

__all__ = ["grid_sample", "GridSample", "GridSampleAttrs", "GRID_SAMPLE_MODES", "GRID_SAMPLE_PADDING_MODES"]

GRID_SAMPLE_MODES = MODES
GRID_SAMPLE_PADDING_MODES = PADDING_MODES

GridSampleAttrs = attrs_class("GridSampleAttrs", GRID_SAMPLE_NODE, """The op's attributes (ONNX GridSample-20 names; exported verbatim as node attributes).

    ``mode`` (linear, nearest, cubic), ``padding_mode`` (zeros, border, reflection),
    ``align_corners`` (0 or 1); ``op_args()`` gives them in the op's argument order.
    """, __name__)

# F.grid_sample's mode names -> the node's (GridSample-20).
_TO_NODE = dict(zip(MODES, ONNX_MODES))


# ---------------------------------------------------------------------------------------
# argument checks (the public API's; the C++ op checks the same again with its own name)
# ---------------------------------------------------------------------------------------

def _check(input, grid, mode, padding_mode, align_corners, who: str) -> None:
    """Every check of the public API, in order: each tensor (type, rank, dtype: the
    declaration's generic messages), the keyword arguments, then what relates them."""
    check_tensor(INPUT, input, who)
    check_tensor(GRID, grid, who)
    for a in GRID_SAMPLE.args:
        check_arg(a, {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}[a.name], who)
    rank = input.dim()
    dims = rank - 2
    if grid.dim() != rank:
        raise ValueError(f"{who}: grid must be {rank}-D like input ({_grid_layout(rank)}), got {grid.dim()}-D "
                         f"with shape {tuple(grid.shape)}")
    if isinstance(grid.shape[-1], int) and grid.shape[-1] != dims:
        raise ValueError(f"{who}: grid's last dim must be {dims} ({_coords(dims)}) for a {rank}-D input, got "
                         f"shape {tuple(grid.shape)}")
    # ints; SymInts under torch.compile; 0-d tensors under the TorchScript tracer, which runs the
    # op itself on the example (its own check then)
    n_in, n_grid = input.shape[0], grid.shape[0]
    if isinstance(n_in, int) and isinstance(n_grid, int):
        if n_in != n_grid:
            raise ValueError(f"{who}: grid's batch size ({n_grid}) must equal input's ({n_in}); shapes "
                             f"{tuple(grid.shape)} and {tuple(input.shape)}")
    elif isinstance(n_in, torch.SymInt) or isinstance(n_grid, torch.SymInt):  # a runtime assertion in the graph
        torch._check(n_in == n_grid, lambda: f"{who}: grid's batch size must equal input's")
    if grid.device != input.device:
        raise ValueError(f"{who}: grid is on {grid.device} but input is on {input.device}; both must be on the "
                         "same device")
    if grid.dtype != input.dtype:
        raise TypeError(f"{who}: grid must have input's dtype ({str(input.dtype).replace('torch.', '')}), got "
                        f"{grid.dtype}")
    if mode == "bicubic" and rank != 4:
        raise ValueError(f"{who}: mode 'bicubic' needs a 4-D input (N, C, H, W), got {rank}-D with shape "
                         f"{tuple(input.shape)}")
    if any(isinstance(v, int) and v == 0 for v in input.shape[2:]):
        raise ValueError(f"{who}: input's spatial dims ({'D, H, W' if dims == 3 else 'H, W'}) must be non-empty, "
                         f"got shape {tuple(input.shape)}")


def _grid_layout(rank: int) -> str:
    return "N, H_out, W_out, 2" if rank == 4 else "N, D_out, H_out, W_out, 3"


def _coords(dims: int) -> str:
    return "x, y" if dims == 2 else "x, y, z"


def _attrs(mode: str, padding_mode: str, align_corners) -> GridSampleAttrs:
    return GridSampleAttrs(mode=_TO_NODE[mode], padding_mode=padding_mode, align_corners=int(bool(align_corners)))


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------

def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Optional[bool] = None) -> Tensor:
    """``torch.nn.functional.grid_sample`` computed by the twinops kernel (same signature and results).

    Args:
        input: (N, C, H, W) or (N, C, D, H, W) float32/float64/float16/bfloat16 tensor, any
            strides (channels_last included); D, H, W at least 1, N and C may be 0.
        grid: (N, H_out, W_out, 2) for 4-D input or (N, D_out, H_out, W_out, 3) for 5-D, same
            dtype and device as ``input``; the last dim is (x, y[, z]) normalised so that -1 and
            1 are the input's edges (``align_corners=False``) or its corner elements' centres
            (``True``). Values outside [-1, 1] are padded; a NaN coordinate gives NaN in every
            channel (docs/ops/grid_sample.md has the NaN and Inf rules).
        mode: ``bilinear`` (default; trilinear for 5-D), ``nearest`` (round half to even),
            ``bicubic`` (4-D only; Keys, A = -0.75).
        padding_mode: ``zeros`` (default), ``border``, ``reflection``.
        align_corners: default None (= False, without F.grid_sample's warning).

    Returns:
        (N, C, H_out, W_out) or (N, C, D_out, H_out, W_out) contiguous tensor of input's dtype
        and device; differentiable with respect to ``input`` and ``grid`` (deterministic
        backward, also under ``torch.use_deterministic_algorithms(True)``).
    """
    return _grid_sample(input, grid, mode, padding_mode, align_corners, "twinops.grid_sample")


def _grid_sample(input, grid, mode, padding_mode, align_corners, who: str) -> Tensor:
    _check(input, grid, mode, padding_mode, align_corners, who)
    try:
        return torch.ops.twinops.grid_sample(input, grid, *_attrs(mode, padding_mode, align_corners).op_args())
    except RuntimeError as e:
        raise renamed(e, who) from None


class GridSample(torch.nn.Module):
    """Module form of :func:`grid_sample`: ``GridSample(mode="bilinear", padding_mode="zeros",
    align_corners=None)``, ``forward(input, grid)``."""

    def __init__(self, mode: str = "bilinear", padding_mode: str = "zeros", align_corners: Optional[bool] = None):
        super().__init__()
        self.mode, self.padding_mode, self.align_corners = mode, padding_mode, align_corners

    def forward(self, input: Tensor, grid: Tensor) -> Tensor:
        return _grid_sample(input, grid, self.mode, self.padding_mode, self.align_corners, "twinops.GridSample")

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}, padding_mode={self.padding_mode!r}, align_corners={self.align_corners}"


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels
# ---------------------------------------------------------------------------------------

def _fake_check(op: str, input, grid, attrs, grad_output=None) -> None:
    """The C++ op's checks under FakeTensorMode (twinops::_grid_sample_check, csrc/torch), so meta
    and fake calls reject what the kernels reject, with the same message. A size that is symbolic
    cannot be compared here: where one of two sizes that must agree is symbolic, the other is used."""
    in_shape, grid_shape = size_hints(input.shape), size_hints(grid.shape)
    if input.dim() and grid.dim() and not (isinstance(input.shape[0], int) and isinstance(grid.shape[0], int)):
        grid_shape[0] = in_shape[0]
    go = grad_output if grad_output is not None else input
    go_shape = size_hints(go.shape)
    if grad_output is not None and len(in_shape) >= 2 and len(go_shape) == len(grid_shape) >= 2:
        want = in_shape[:2] + grid_shape[1:-1]
        go_shape = [w if not isinstance(v, int) else h for v, h, w in zip(grad_output.shape, go_shape, want)]
    torch.ops.twinops._grid_sample_check(op, in_shape, input.dtype, input.device, grid_shape, grid.dtype, grid.device,
                                         go_shape, go.dtype, go.device, *attrs)


@torch.library.register_fake("twinops::grid_sample")
def _grid_sample_fake(input, grid, *attrs):
    _fake_check("grid_sample", input, grid, attrs)
    # ATen's grid_sampler returns a contiguous (N, C, [D_out,] H_out, W_out) tensor whatever input's layout.
    return input.new_empty((input.shape[0], input.shape[1], *grid.shape[1:-1]))


@torch.library.register_fake("twinops::grid_sample_backward")
def _grid_sample_backward_fake(grad_output, input, grid, mode, padding_mode, align_corners, output_mask):
    _fake_check("grid_sample_backward", input, grid, (mode, padding_mode, align_corners), grad_output)
    # a result that was not asked for is an empty (0,) tensor; the others are contiguous
    grad_input = input.new_empty(input.shape) if output_mask[0] else input.new_empty((0,))
    grad_grid = grid.new_empty(grid.shape) if output_mask[1] else input.new_empty((0,))
    return grad_input, grad_grid


# Autograd of both ops is registered in C++ at the Autograd key
# (csrc/torch/grid_sample/grid_sample_autograd.cpp): grid_sample's gradient is
# grid_sample_backward, whose own derivatives are ATen's grid sampler double backward.


@functools.lru_cache(maxsize=None)
def aten_double_backward_available() -> bool:
    """Whether this PyTorch differentiates its grid sampler backward (F.grid_sample's second
    derivatives; older releases raise "derivative for aten::grid_sampler_2d_backward is not
    implemented"). twinops' second derivatives exist exactly when this is True."""
    x = torch.ones(1, 1, 2, 2, dtype=torch.float64, requires_grad=True)
    g = torch.zeros(1, 1, 1, 2, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        gx, = torch.autograd.grad(F.grid_sample(x, g, align_corners=False).sum(), x, create_graph=True)
        try:
            torch.autograd.grad(gx.sum(), g, allow_unused=True)
        except RuntimeError as e:
            if "not implemented" in str(e):
                return False
            raise
    return True
