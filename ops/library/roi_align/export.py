"""roi_align's ONNX faces beyond the generic ones: the node's ``onnx.reference`` kernel and the export
of an unedited model's ``torchvision.ops.roi_align`` as ``TwinopsRoiAlign``.

Both exporters write ``TwinopsRoiAlign(input, rois)`` (attributes output_height, output_width,
spatial_scale, sampling_ratio, aligned, pool_mode) through the generic symbolic and translation
(``twinops.onnx_nodes``). ``twinops.export_onnx(model, args, replace=("roi_align",))``
(``twinops.onnx_replace``) writes the op ``torchvision::roi_align`` (which torchvision's own export
writes as a RoiAlign-16 node with sampling_ratio and aligned translated) as ``TwinopsRoiAlign`` with
both exporters, pool_mode "avg".
"""
from __future__ import annotations

import numpy as np
import torch

from ... import onnx_nodes as N
from ...onnx_replace import AtenReplacement, aten_translation, register_replacement
from .declaration import ROI_ALIGN_NODE
from .reference import multi_level_roi_align_reference, roi_align_reference

__all__ = ["twinops_roi_align_reference", "twinops_multi_level_roi_align_reference"]


def twinops_roi_align_reference(input, rois, output_height=1, output_width=1, spatial_scale=1.0, sampling_ratio=0,
                                aligned=0, pool_mode="avg"):
    """The ``onnx.reference`` kernel of ``twinops::TwinopsRoiAlign``: (K, C, PH, PW) in input's dtype."""
    x = np.asarray(input)
    out = roi_align_reference(torch.from_numpy(x), torch.from_numpy(np.asarray(rois)),
                              (int(output_height), int(output_width)), float(spatial_scale), int(sampling_ratio),
                              bool(aligned), str(pool_mode))
    return out.numpy().astype(x.dtype)


def twinops_multi_level_roi_align_reference(rois, *levels, output_height=1, output_width=1, featmap_strides=(),
                                            sampling_ratio=0, aligned=1, pool_mode="avg", finest_scale=56.0,
                                            roi_scale_factor=1.0, level_rule="mmdet"):
    """The ``onnx.reference`` kernel of ``twinops::TwinopsMultiLevelRoiAlign``: (K, C, PH, PW) in the
    levels' dtype (the node's inputs: rois, then the levels)."""
    dtype = np.asarray(levels[0]).dtype
    out = multi_level_roi_align_reference(
        torch.from_numpy(np.asarray(rois)), *[torch.from_numpy(np.asarray(t)) for t in levels if t is not None],
        output_size=(int(output_height), int(output_width)), featmap_strides=[float(s) for s in featmap_strides],
        sampling_ratio=int(sampling_ratio), aligned=bool(aligned), pool_mode=str(pool_mode),
        finest_scale=float(finest_scale), roi_scale_factor=float(roi_scale_factor), level_rule=str(level_rule))
    return out.numpy().astype(dtype)


def _attrs(pooled_height, pooled_width, spatial_scale, sampling_ratio, aligned) -> dict:
    return {"output_height": int(pooled_height), "output_width": int(pooled_width),
            "spatial_scale": float(spatial_scale), "sampling_ratio": int(sampling_ratio), "aligned": int(aligned),
            "pool_mode": "avg"}


def _ts_torchvision_roi_align(g, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """TorchScript symbolic of ``torchvision::roi_align``: the node on (input, rois), typed as traced."""
    from torch.onnx import symbolic_helper as sh

    a = _attrs(sh._maybe_get_const(pooled_height, "i"), sh._maybe_get_const(pooled_width, "i"),
               sh._maybe_get_const(spatial_scale, "f"), sh._maybe_get_const(sampling_ratio, "i"),
               sh._maybe_get_const(aligned, "b"))
    return N.ts_typed(g, N.ts_node(g, ROI_ALIGN_NODE, [input, rois], a))


def _translations() -> dict:
    try:
        import torchvision  # noqa: F401  (registers torch.ops.torchvision)
    except ImportError:  # no torchvision: no model calls its roi_align
        return {}
    op = torch.ops.torchvision.roi_align.default
    node = N.onnxscript_op(ROI_ALIGN_NODE)

    def body(a: dict):
        attrs = _attrs(a["pooled_height"], a["pooled_width"], a["spatial_scale"], a["sampling_ratio"], a["aligned"])
        return node(a["input"], a["rois"], **N.node_attributes(ROI_ALIGN_NODE, attrs))

    return {op: aten_translation(op, body)}


register_replacement(AtenReplacement(
    name="roi_align",
    summary="torchvision.ops.roi_align (torchvision::roi_align) -> TwinopsRoiAlign",
    symbolics={"torchvision::roi_align": _ts_torchvision_roi_align},
    translations=_translations))
