"""float64 references for ``twinops.grid_sample`` and its per-dtype tolerances.

* :func:`grid_sample_reference`: ``F.grid_sample`` in float64 with twinops' rule for NaN and
  +-Inf grid coordinates (also the node's ``onnx.reference`` kernel, in ops/library/grid_sample/export.py);
  never the twinops kernels.
* :func:`onnx_grid_sample_reference`: ONNX GridSample-20 through ``onnx.reference``, for the
  documented comparison with it (docs/ops/grid_sample.md, "References").
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...testing.tolerances import TOLERANCES as _DEFAULT

# float32: the kernels compute the sampling coordinate in float32, so an error of a few ulps of
# the coordinate (which grows with the input's length) times the local slope of the data; ATen's
# own float32 kernel is ~1e-5 * (1 + |expected|) off the float64 result on 32-long axes. The half
# types compute in float32 and round once, as the default table assumes.
TOLERANCES = {**_DEFAULT, torch.float32: (5e-5, 5e-5)}

# The ONNX attribute name of each F.grid_sample mode (GridSample-20).
ONNX_MODE = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


def grid_sample_reference(input: torch.Tensor, grid: torch.Tensor, mode: str = "bilinear",
                          padding_mode: str = "zeros", align_corners=None) -> torch.Tensor:
    """What the kernels compute, in float64: ``F.grid_sample`` on ``input`` and ``grid`` cast to
    float64 (CPU or their device), with twinops' rule for non-finite grid coordinates, which
    PyTorch's own CPU and CUDA kernels do not agree on:

    * a NaN coordinate: NaN in every channel at that point;
    * a +-Inf coordinate (no NaN): ``zeros`` -> 0 (the point is outside), ``border`` -> the
      value at the clamped edge, ``reflection`` -> NaN (a reflection of infinity has no limit).

    NaN and Inf in ``input`` propagate as F.grid_sample's float64 arithmetic propagates them.
    Returns a float64 tensor of the output's shape. Never calls the twinops kernels.
    """
    x, g = input.detach().double(), grid.detach().double()
    nan = torch.isnan(g).any(-1)
    inf = torch.isinf(g).any(-1) & ~nan
    if padding_mode == "border":
        # Far beyond every edge: the coordinate clamps there, and bicubic's four taps, clamped
        # one by one, all read the edge (weights summing to 1).
        g = torch.where(torch.isinf(g), torch.sign(g) * 4096.0, g)
    g = torch.where(torch.isfinite(g), g, torch.zeros_like(g))  # any finite point: overwritten below
    y = F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=bool(align_corners))
    special = {"zeros": 0.0, "reflection": float("nan")}.get(padding_mode)
    point = (slice(None), None)  # a (N, *out) mask broadcast over C
    if special is not None:
        y = torch.where(inf[point], torch.full_like(y, special), y)
    return torch.where(nan[point], torch.full_like(y, float("nan")), y)


def onnx_grid_sample_reference(input: torch.Tensor, grid: torch.Tensor, mode: str = "bilinear",
                               padding_mode: str = "zeros", align_corners=None) -> torch.Tensor:
    """ONNX GridSample-20 (``onnx.reference``) on the inputs in their own float dtype (float32 or
    float64; the half types as float32), with F.grid_sample's argument names; a CPU tensor of
    that dtype.

    onnx.reference computes the unnormalised coordinate in float32 whatever the input's dtype,
    clamps the continuous coordinate for cubic + border where PyTorch clamps each tap, and
    raises on a non-finite grid coordinate and on an empty output (docs/ops/grid_sample.md)."""
    x, g = input.detach().cpu(), grid.detach().cpu()
    if x.dtype not in (torch.float32, torch.float64):
        x, g = x.float(), g.float()
    y = onnx_grid_sample_run(x.numpy(), g.numpy(), ONNX_MODE[mode], padding_mode, int(bool(align_corners)))
    return torch.from_numpy(y)


def onnx_grid_sample_run(X, grid, mode: str = "linear", padding_mode: str = "zeros", align_corners: int = 0):
    """One ONNX GridSample-20 node (ONNX attribute names) run by onnx.reference on numpy arrays of
    one float dtype; its output as onnx.reference returns it."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    elem = helper.np_dtype_to_tensor_dtype(X.dtype)
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=padding_mode,
                            align_corners=int(align_corners))
    graph = helper.make_graph([node], "grid_sample", [helper.make_tensor_value_info("X", elem, None),
                                                      helper.make_tensor_value_info("grid", elem, None)],
                              [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    (y,) = ReferenceEvaluator(model).run(None, {"X": X, "grid": grid})
    return y
