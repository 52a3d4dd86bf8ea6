"""nms: ``torchvision.ops.nms`` / ``batched_nms`` computed by the twinops kernels.

:func:`nms` and :func:`batched_nms` call the torch ops ``torch.ops.twinops.nms`` and
``torch.ops.twinops.batched_nms`` (CPU and CUDA; csrc/kernels/nms/nms.h has the rules). Their
output length depends on the data: the fake kernels here give it as a new unbacked size.
docs/ops/nms.md has the semantics.
"""
from __future__ import annotations

import numbers
from typing import Tuple

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_arg, check_tensor, renamed, type_name
from .declaration import (BOXES, CLASS_AGNOSTIC, IDXS, IOU_THRESHOLD, MAX_OUTPUT_BOXES, PADDED_BOXES, PADDED_SCORES,
                          PRE_NMS_TOP_K, SCORE_THRESHOLD, SCORES)

__all__ = ["nms", "batched_nms", "batched_nms_padded", "NMS", "BatchedNMS", "BatchedNMSPadded"]


def _check_threshold(attr, value, who: str) -> None:
    if isinstance(value, (bool, torch.Tensor)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {attr.name} must be a float, got {type_name(value)}")
    check_arg(attr, value, who)  # finite


def _check_tensors(boxes_arg, scores_arg, boxes, scores, who: str) -> None:
    check_tensor(boxes_arg, boxes, who)
    check_tensor(scores_arg, scores, who)
    if scores.dtype != boxes.dtype:
        raise TypeError(f"{who}: scores must have boxes' dtype ({str(boxes.dtype).replace('torch.', '')}), got "
                        f"{scores.dtype}")


def _check(boxes, scores, idxs, iou_threshold, who: str) -> None:
    """The Python API's checks: each tensor's type, rank and dtype, and the threshold's type (the
    C++ op checks shapes, devices and the threshold's range again, with its own name)."""
    _check_tensors(BOXES, SCORES, boxes, scores, who)
    if idxs is not None:
        check_tensor(IDXS, idxs, who)
    _check_threshold(IOU_THRESHOLD, iou_threshold, who)


def _call(op, args, who: str) -> Tensor:
    try:
        return op(*args)
    except RuntimeError as e:
        raise renamed(e, who) from None


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """``torchvision.ops.nms`` computed by the twinops kernels, with a fixed tie rule.

    Args:
        boxes: (K, 4) float32 / float64 / float16 / bfloat16 tensor of (x1, y1, x2, y2), any
            strides, on the CPU or a CUDA device (at most 4,194,240 boxes there).
        scores: (K,) tensor of ``boxes``' dtype and device.
        iou_threshold: in [0, 1]; a box is suppressed by a kept box with a higher rank when their
            IoU is greater than it (IoU computed in float32, float64 for float64 boxes).

    Returns:
        int64 (M,) tensor on ``boxes``' device: the indices of the kept boxes in decreasing score
        order; equal scores rank the lower index first, a NaN score above every number. Not
        differentiable (index boxes[keep] for gradients).
    """
    who = "twinops.nms"
    _check(boxes, scores, None, iou_threshold, who)
    return _call(torch.ops.twinops.nms, (boxes, scores, float(iou_threshold)), who)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """``torchvision.ops.batched_nms`` computed by the twinops kernels: :func:`nms` within each
    class of ``idxs``, boxes of different classes never suppressing each other.

    Args:
        boxes, scores, iou_threshold: as for :func:`nms`.
        idxs: (K,) int64 or int32 tensor on ``boxes``' device, the class of each box.

    Returns:
        int64 (M,) tensor: the kept boxes' indices over all classes, in decreasing score order
        (equal scores: lower index first). The same result whatever K, unlike torchvision's, whose
        coordinate-offset trick (below 4,000 boxes on the CPU, and when traced) rounds the IoU
        differently from its per-class loop.
    """
    who = "twinops.batched_nms"
    _check(boxes, scores, idxs, iou_threshold, who)
    return _call(torch.ops.twinops.batched_nms, (boxes, scores, idxs, float(iou_threshold)), who)


def batched_nms_padded(boxes: Tensor, scores: Tensor, score_threshold: float, iou_threshold: float,
                       max_output_boxes: int, pre_nms_top_k: int = -1, class_agnostic: bool = False
                       ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Per-image NMS into fixed-shape outputs (EfficientNMS_TRT's layout, plus the box indices).

    For each image b: the candidates are the (box n, class c) pairs whose score is greater than
    ``score_threshold``, ranked by decreasing score (equal scores: lower n * C + c first); the
    first ``pre_nms_top_k`` of them go through :func:`batched_nms` (classes kept apart) or, with
    ``class_agnostic``, :func:`nms`; the first ``max_output_boxes`` kept are the detections.

    Args:
        boxes: (B, N, 4) boxes shared by every class, or (B, N, C, 4) one box per class, as (x1,
            y1, x2, y2); float32 / float64 / float16 / bfloat16, on the CPU or a CUDA device.
        scores: (B, N, C) tensor of ``boxes``' dtype and device.
        score_threshold: finite; scores are compared with it in float64 (NaN scores never pass).
        iou_threshold: in [0, 1], as for :func:`nms`.
        max_output_boxes: K >= 1, the detections per image at most.
        pre_nms_top_k: -1 (default: every candidate) or >= 1.
        class_agnostic: False (default): boxes of different classes never suppress each other.

    Returns:
        ``(num_detections, detection_boxes, detection_scores, detection_classes,
        detection_indices)``: int32 (B, 1); (B, K, 4) and (B, K) in ``boxes``' dtype; int32 (B, K)
        classes; int64 (B, K) box indices n. Row b holds num_detections[b] detections by
        decreasing score, then zeros (indices: -1). Not differentiable (gather ``boxes`` and
        ``scores`` with the indices and classes for gradients).
    """
    who = "twinops.batched_nms_padded"
    _check_tensors(PADDED_BOXES, PADDED_SCORES, boxes, scores, who)
    _check_threshold(SCORE_THRESHOLD, score_threshold, who)
    _check_threshold(IOU_THRESHOLD, iou_threshold, who)
    for attr, value in ((MAX_OUTPUT_BOXES, max_output_boxes), (PRE_NMS_TOP_K, pre_nms_top_k),
                        (CLASS_AGNOSTIC, class_agnostic)):
        check_arg(attr, value, who)
    return _call(torch.ops.twinops.batched_nms_padded,
                 (boxes, scores, float(score_threshold), float(iou_threshold), int(max_output_boxes),
                  int(pre_nms_top_k), bool(class_agnostic)), who)


class NMS(torch.nn.Module):
    """Module form of :func:`nms`: ``NMS(iou_threshold=0.5)``, ``forward(boxes, scores)``."""

    def __init__(self, iou_threshold: float = 0.5):
        super().__init__()
        self.iou_threshold = iou_threshold

    def forward(self, boxes: Tensor, scores: Tensor) -> Tensor:
        return nms(boxes, scores, self.iou_threshold)

    def extra_repr(self) -> str:
        return f"iou_threshold={self.iou_threshold}"


class BatchedNMS(NMS):
    """Module form of :func:`batched_nms`: ``BatchedNMS(iou_threshold=0.5)``, ``forward(boxes,
    scores, idxs)``."""

    def forward(self, boxes: Tensor, scores: Tensor, idxs: Tensor) -> Tensor:
        return batched_nms(boxes, scores, idxs, self.iou_threshold)


class BatchedNMSPadded(torch.nn.Module):
    """Module form of :func:`batched_nms_padded`: ``BatchedNMSPadded(score_threshold=0.25,
    iou_threshold=0.5, max_output_boxes=100, pre_nms_top_k=-1, class_agnostic=False)``,
    ``forward(boxes, scores)``."""

    def __init__(self, score_threshold: float = 0.25, iou_threshold: float = 0.5, max_output_boxes: int = 100,
                 pre_nms_top_k: int = -1, class_agnostic: bool = False):
        super().__init__()
        self.score_threshold, self.iou_threshold = score_threshold, iou_threshold
        self.max_output_boxes, self.pre_nms_top_k, self.class_agnostic = max_output_boxes, pre_nms_top_k, class_agnostic

    def forward(self, boxes: Tensor, scores: Tensor):
        return batched_nms_padded(boxes, scores, self.score_threshold, self.iou_threshold, self.max_output_boxes,
                                  self.pre_nms_top_k, self.class_agnostic)

    def extra_repr(self) -> str:
        return (f"score_threshold={self.score_threshold}, iou_threshold={self.iou_threshold}, "
                f"max_output_boxes={self.max_output_boxes}, pre_nms_top_k={self.pre_nms_top_k}, "
                f"class_agnostic={self.class_agnostic}")


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels (the output length is data-dependent)
# ---------------------------------------------------------------------------------------

def _fake(op: str, boxes, scores, idxs, iou_threshold) -> Tensor:
    ids = (size_hints(idxs.shape), idxs.dtype, idxs.device) if idxs is not None else (None, None, None)
    torch.ops.twinops._nms_check(op, size_hints(boxes.shape), boxes.dtype, boxes.device, size_hints(scores.shape),
                                 scores.dtype, scores.device, *ids, iou_threshold)
    kept = torch.library.get_ctx().new_dynamic_size()
    torch._check(kept <= boxes.shape[0])
    return boxes.new_empty((kept,), dtype=torch.int64)


@torch.library.register_fake("twinops::nms")
def _nms_fake(boxes, scores, iou_threshold):
    return _fake("nms", boxes, scores, None, iou_threshold)


@torch.library.register_fake("twinops::batched_nms")
def _batched_nms_fake(boxes, scores, idxs, iou_threshold):
    return _fake("batched_nms", boxes, scores, idxs, iou_threshold)


@torch.library.register_fake("twinops::batched_nms_padded")
def _batched_nms_padded_fake(boxes, scores, score_threshold, iou_threshold, max_output_boxes, pre_nms_top_k=-1,
                             class_agnostic=False):
    torch.ops.twinops._nms_padded_check(size_hints(boxes.shape), boxes.dtype, boxes.device, size_hints(scores.shape),
                                        scores.dtype, scores.device, score_threshold, iou_threshold,
                                        max_output_boxes, pre_nms_top_k)
    B, K = scores.shape[0], max_output_boxes
    return (boxes.new_empty((B, 1), dtype=torch.int32), boxes.new_empty((B, K, 4)), boxes.new_empty((B, K)),
            boxes.new_empty((B, K), dtype=torch.int32), boxes.new_empty((B, K), dtype=torch.int64))


# Not differentiable: its floating outputs are gathered copies of the inputs, so a gradient asked
# through them fails here, by name, instead of silently leaving boxes and scores without one.
def _padded_setup(ctx, inputs, output):
    pass


def _padded_backward(ctx, *grads):
    raise RuntimeError("twinops.batched_nms_padded is not differentiable: take gradients through boxes and "
                       "scores gathered with its detection_indices and detection_classes")


torch.library.register_autograd("twinops::batched_nms_padded", _padded_backward, setup_context=_padded_setup)
