"""grid_sample's ONNX faces beyond the generic ones: the node's ``onnx.reference`` kernel
(:func:`twinops_grid_sample_reference`) and the export of an unedited model's ``F.grid_sample``
as ``TwinopsGridSample``.

``twinops.export_onnx(model, args, replace=("grid_sample",))`` (``twinops.onnx_replace``) writes
the ATen ops F.grid_sample lowers to as the twinops node (declared in ``twinops.library.grid_sample.declaration``),
with both exporters:

* TorchScript: ``aten::grid_sampler`` (what F.grid_sample calls; also ``aten::grid_sampler_2d`` /
  ``_3d`` for a model calling those directly);
* dynamo: ``aten.grid_sampler.default`` (torch.export keeps it as F.grid_sample called it),
  ``aten.grid_sampler_2d.default`` and ``aten.grid_sampler_3d.default``.

ATen's integer codes become the node's ONNX GridSample-20 names: interpolation_mode 0 bilinear
-> ``linear``, 1 -> ``nearest``, 2 bicubic -> ``cubic``; padding_mode 0 -> ``zeros``, 1 ->
``border``, 2 -> ``reflection``; align_corners -> INT 0/1. The output shape needs no size
arithmetic (it is the grid's), so dynamic shapes export as they are. Bicubic on 5-D input is
refused, as F.grid_sample refuses it.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np
import torch

from ... import onnx_nodes as N
from .declaration import GRID_SAMPLE_NODE, MODES, ONNX_MODES, PADDING_MODES
from .reference import grid_sample_reference
from ...onnx_replace import AtenReplacement, aten_translation, register_replacement

__all__ = ["ATEN_MODES", "ATEN_PADDINGS", "node_values", "twinops_grid_sample_reference"]

# ATen's GridSamplerInterpolation / GridSamplerPadding enums -> the node's names (the
# declaration lists them in the enums' order)
ATEN_MODES = dict(enumerate(ONNX_MODES))
ATEN_PADDINGS = dict(enumerate(PADDING_MODES))
_ATEN_OPS = ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d")


def node_values(interpolation_mode: int, padding_mode: int, align_corners, rank: Optional[int]) -> Dict[str, object]:
    """The node's attribute values for ATen's arguments (``rank``: the input's, None if unknown).

    Raises:
        ValueError: an integer code ATen does not define, or bicubic with 5-D input.
    """
    mode, padding = int(interpolation_mode), int(padding_mode)
    if mode not in ATEN_MODES:
        raise ValueError(f"twinops ONNX export: grid_sampler interpolation_mode must be 0 (bilinear), 1 (nearest) or "
                         f"2 (bicubic), got {mode}")
    if padding not in ATEN_PADDINGS:
        raise ValueError(f"twinops ONNX export: grid_sampler padding_mode must be 0 (zeros), 1 (border) or "
                         f"2 (reflection), got {padding}")
    if mode == 2 and rank == 5:
        raise ValueError("twinops ONNX export: grid_sampler with bicubic interpolation supports 4-D input only, "
                         "got 5-D")
    return {"mode": ATEN_MODES[mode], "padding_mode": ATEN_PADDINGS[padding], "align_corners": int(bool(align_corners))}


def _ts_grid_sampler(g, input, grid, interpolation_mode, padding_mode, align_corners):
    """TorchScript symbolic of ``aten::grid_sampler`` (and ``_2d`` / ``_3d``): the node on
    (input, grid), typed (N, C, *grid's spatial dims)."""
    from torch.onnx import symbolic_helper as sh

    values = node_values(sh._maybe_get_const(interpolation_mode, "i"), sh._maybe_get_const(padding_mode, "i"),
                         sh._maybe_get_const(align_corners, "b"), sh._get_tensor_rank(input))
    y = N.ts_node(g, GRID_SAMPLE_NODE, [input, grid], values)
    in_sizes = sh._get_tensor_sizes(input)
    grid_sizes = sh._get_tensor_sizes(grid)
    if in_sizes is not None and grid_sizes is not None:
        y.setType(input.type().with_sizes(list(in_sizes[:2]) + list(grid_sizes[1:-1])))
    return y


def _translate_grid_sampler(a: dict):
    """dynamo translation body of the grid_sampler overloads (``a``: their arguments by name)."""
    input, grid = a["input"], a["grid"]
    rank = len(input.shape) if input.shape is not None else None
    values = node_values(a["interpolation_mode"], a["padding_mode"], a["align_corners"], rank)
    return N.onnxscript_op(GRID_SAMPLE_NODE)(input, grid, **N.node_attributes(GRID_SAMPLE_NODE, values))


def _translations() -> dict:
    ops = [getattr(torch.ops.aten, name).default for name in _ATEN_OPS]
    return {op: aten_translation(op, _translate_grid_sampler) for op in ops}


register_replacement(AtenReplacement(
    name="grid_sample",
    summary="F.grid_sample (ATen's grid_sampler, grid_sampler_2d, grid_sampler_3d) -> TwinopsGridSample",
    symbolics={f"aten::{name}": _ts_grid_sampler for name in _ATEN_OPS},
    translations=_translations))


# ---------------------------------------------------------------------------------------
# onnx.reference
# ---------------------------------------------------------------------------------------

# The node's mode names (GridSample-20's, and GridSample-16's spellings) -> F.grid_sample's.
_FROM_NODE = {**dict(zip(ONNX_MODES, MODES)), "bilinear": "bilinear", "bicubic": "bicubic"}


def twinops_grid_sample_reference(X, grid, mode: str = "linear", padding_mode: str = "zeros", align_corners: int = 0):
    """The ``onnx.reference`` kernel of ``twinops::TwinopsGridSample``: :func:`~twinops.library.grid_sample.reference.grid_sample_reference`
    on numpy arrays with the node's attributes (GridSample-20 or -16 mode names, checked against the
    declaration by ``twinops.onnx_nodes.reference_op``), output in X's dtype."""
    y = grid_sample_reference(torch.from_numpy(np.asarray(X)), torch.from_numpy(np.asarray(grid)), _FROM_NODE[mode],
                            padding_mode, bool(align_corners))
    return y.numpy().astype(np.asarray(X).dtype)
