"""nms: ``torchvision.ops.nms`` / ``batched_nms`` computed by the twinops kernels.

:func:`nms` and :func:`batched_nms` call the torch ops ``torch.ops.twinops.nms`` and
``torch.ops.twinops.batched_nms`` (CPU and CUDA; csrc/kernels/nms/nms.h has the rules). Their
output length depends on the data: the fake kernels here give it as a new unbacked size.
docs/ops/nms.md has the semantics.
"""
from __future__ import annotations

import numbers

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_arg, check_tensor, renamed, type_name
from .declaration import BOXES, IDXS, IOU_THRESHOLD, SCORES

__all__ = ["nms", "batched_nms", "NMS", "BatchedNMS"]


def _check(boxes, scores, idxs, iou_threshold, who: str) -> None:
    """The Python API's checks: each tensor's type, rank and dtype, and the threshold's type (the
    C++ op checks shapes, devices and the threshold's range again, with its own name)."""
    check_tensor(BOXES, boxes, who)
    check_tensor(SCORES, scores, who)
    if scores.dtype != boxes.dtype:
        raise TypeError(f"{who}: scores must have boxes' dtype ({str(boxes.dtype).replace('torch.', '')}), got "
                        f"{scores.dtype}")
    if idxs is not None:
        check_tensor(IDXS, idxs, who)
    if isinstance(iou_threshold, (bool, torch.Tensor)) or not isinstance(iou_threshold, numbers.Real):
        raise TypeError(f"{who}: iou_threshold must be a float, got {type_name(iou_threshold)}")
    check_arg(IOU_THRESHOLD, iou_threshold, who)  # finite


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
