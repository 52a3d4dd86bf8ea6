"""deform_conv2d's ONNX faces beyond the generic ones: the node's ``onnx.reference`` kernel and the
export of an unmodified model's ``torchvision::deform_conv2d`` calls.

Both exporters write ``twinops::TwinopsDeformConv2d`` on the torch op's inputs (input, offset,
weight, then bias and mask where given) through the generic symbolic and translation
(``twinops.onnx_nodes``). ``twinops.export_onnx(..., replace=("deform_conv2d",))`` writes the same
node for torchvision's op, whose calls always carry a bias (zeros when the model gave none) and a
mask (a placeholder when ``use_mask`` is false, left out of the node).
"""
from __future__ import annotations

import numpy as np
import torch

from ... import onnx_nodes as N
from ...onnx_replace import AtenReplacement, aten_translation, register_replacement
from .declaration import DEFORM_CONV2D_NODE
from .reference import deform_conv2d_composite

__all__ = ["twinops_deform_conv2d_reference"]


def twinops_deform_conv2d_reference(input, offset, weight, bias=None, mask=None, stride=(1, 1), padding=(0, 0),
                                    dilation=(1, 1)):
    """The ``onnx.reference`` kernel of ``twinops::TwinopsDeformConv2d``: the float64 composite
    (:func:`~twinops.library.deform_conv2d.reference.deform_conv2d_composite`) on numpy arrays,
    output (N, C_out, H_out, W_out) in input's dtype. Absent attributes take the node's defaults."""
    t = [torch.tensor(np.asarray(a), dtype=torch.float64) if a is not None else None
         for a in (input, offset, weight, bias, mask)]
    out = deform_conv2d_composite(*t, stride=tuple(stride), padding=tuple(padding), dilation=tuple(dilation))
    return out.numpy().astype(np.asarray(input).dtype)


def _attrs(sh, sw, ph, pw, dh, dw) -> dict:
    return {"stride": [int(sh), int(sw)], "padding": [int(ph), int(pw)], "dilation": [int(dh), int(dw)]}


def _ts_torchvision_deform_conv2d(g, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h,
                                  dil_w, groups, offset_groups, use_mask):
    """TorchScript symbolic of ``torchvision::deform_conv2d``: the node on (input, offset, weight,
    bias, mask where use_mask), typed as traced. groups and offset_groups follow from the shapes."""
    from torch.onnx import symbolic_helper as sh

    ints = [sh._maybe_get_const(v, "i") for v in (stride_h, stride_w, pad_h, pad_w, dil_h, dil_w)]
    inputs = [input, offset, weight, bias] + ([mask] if sh._maybe_get_const(use_mask, "b") else [])
    return N.ts_typed(g, N.ts_node(g, DEFORM_CONV2D_NODE, inputs, _attrs(*ints)))


def _translations() -> dict:
    try:
        import torchvision  # noqa: F401  (registers torch.ops.torchvision)
    except ImportError:  # no torchvision: no model calls its deform_conv2d
        return {}
    op = torch.ops.torchvision.deform_conv2d.default
    node = N.onnxscript_op(DEFORM_CONV2D_NODE)

    def body(a: dict):
        attrs = _attrs(a["stride_h"], a["stride_w"], a["pad_h"], a["pad_w"], a["dilation_h"], a["dilation_w"])
        inputs = [a["input"], a["offset"], a["weight"], a["bias"]] + ([a["mask"]] if a["use_mask"] else [])
        return node(*inputs, **N.node_attributes(DEFORM_CONV2D_NODE, attrs))

    return {op: aten_translation(op, body)}


register_replacement(AtenReplacement(
    name="deform_conv2d",
    summary="torchvision.ops.deform_conv2d (torchvision::deform_conv2d; DeformConv2d through it) -> TwinopsDeformConv2d",
    symbolics={"torchvision::deform_conv2d": _ts_torchvision_deform_conv2d},
    translations=_translations))
