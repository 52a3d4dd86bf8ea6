"""nms's ONNX faces beyond the generic ones: the nodes' ``onnx.reference`` kernels and the export
of an unedited model's ``torchvision.ops.nms`` as ``TwinopsNMS``.

Both exporters write ``TwinopsNMS(boxes, scores)`` and ``TwinopsBatchedNMS(boxes, scores, idxs)``
(attribute ``iou_threshold``, FLOAT) through the generic symbolic and translation
(``twinops.onnx_nodes``); the output ``keep`` is int64 with a data-dependent length.
``TwinopsBatchedNMSPadded(boxes, scores)`` has five outputs of fixed shape.

``twinops.export_onnx(model, args, replace=("nms",))`` (``twinops.onnx_replace``) writes the op
``torchvision::nms`` as ``TwinopsNMS`` with both exporters (torchvision's own export is a
NonMaxSuppression subgraph that reorders the boxes' coordinates). ``torchvision.ops.batched_nms``
is Python over ``torchvision::nms`` (its coordinate-offset trick when traced), so it exports as
``TwinopsNMS`` on the offset boxes. The result is torchvision's wherever torchvision's is defined
(equal scores: the lower index first).
"""
from __future__ import annotations

import numpy as np
import torch

from ... import onnx_nodes as N
from ...onnx_replace import AtenReplacement, aten_translation, register_replacement
from .declaration import NMS_NODE
from .reference import batched_nms_padded_reference, nms_reference

__all__ = ["twinops_nms_reference", "twinops_batched_nms_reference", "twinops_batched_nms_padded_reference"]


def twinops_nms_reference(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """``onnx.reference`` kernel of ``twinops::TwinopsNMS``: int64 (M,) kept indices."""
    return nms_reference(torch.from_numpy(np.asarray(boxes)), torch.from_numpy(np.asarray(scores)),
                         float(iou_threshold)).numpy()


def twinops_batched_nms_reference(boxes: np.ndarray, scores: np.ndarray, idxs: np.ndarray,
                                  iou_threshold: float) -> np.ndarray:
    """``onnx.reference`` kernel of ``twinops::TwinopsBatchedNMS``: int64 (M,) kept indices."""
    return nms_reference(torch.from_numpy(np.asarray(boxes)), torch.from_numpy(np.asarray(scores)),
                         float(iou_threshold), torch.from_numpy(np.asarray(idxs))).numpy()


def twinops_batched_nms_padded_reference(boxes: np.ndarray, scores: np.ndarray, score_threshold: float,
                                         iou_threshold: float, max_output_boxes: int, pre_nms_top_k: int = -1,
                                         class_agnostic: int = 0):
    """``onnx.reference`` kernel of ``twinops::TwinopsBatchedNMSPadded``: the five padded outputs."""
    outs = batched_nms_padded_reference(torch.from_numpy(np.asarray(boxes)), torch.from_numpy(np.asarray(scores)),
                                        float(score_threshold), float(iou_threshold), int(max_output_boxes),
                                        int(pre_nms_top_k), bool(class_agnostic))
    return tuple(t.numpy() for t in outs)


def _ts_torchvision_nms(g, dets, scores, iou_threshold):
    """TorchScript symbolic of ``torchvision::nms``: the node on (dets, scores), typed as traced."""
    from torch.onnx import symbolic_helper as sh

    threshold = sh._maybe_get_const(iou_threshold, "f")
    return N.ts_typed(g, N.ts_node(g, NMS_NODE, [dets, scores], {"iou_threshold": float(threshold)}))


def _translations() -> dict:
    try:
        import torchvision  # noqa: F401  (registers torch.ops.torchvision)
    except ImportError:  # no torchvision: no model calls its nms
        return {}
    op = torch.ops.torchvision.nms.default
    node = N.onnxscript_op(NMS_NODE)

    def body(a: dict):
        return node(a["dets"], a["scores"], **N.node_attributes(NMS_NODE, {"iou_threshold": a["iou_threshold"]}))

    return {op: aten_translation(op, body)}


register_replacement(AtenReplacement(
    name="nms",
    summary="torchvision.ops.nms (torchvision::nms; batched_nms through it) -> TwinopsNMS",
    symbolics={"torchvision::nms": _ts_torchvision_nms},
    translations=_translations))
