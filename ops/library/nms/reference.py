"""nms's reference: the rules of csrc/kernels/nms/nms.h in numpy, operation by operation in the
kernels' precision (float32 for float32 / float16 / bfloat16 boxes, float64 for float64), so
that the kernels must match it exactly. torchvision.ops.nms is the outside reference the tests
hold both to (on inputs without ties, where torchvision's order is defined)."""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

__all__ = ["nms_reference", "score_order", "nms_case_reference", "batched_nms_case_reference",
           "batched_nms_padded_reference", "trt_batched_nms_reference", "TOLERANCES"]


def score_order(scores: np.ndarray) -> np.ndarray:
    """Indices by decreasing score: NaN first, -0 equal to +0, ties by increasing index."""
    s = np.asarray(scores, dtype=np.float64)
    nan = np.isnan(s)
    key = np.where(nan, 0.0, -s) + 0.0  # + 0.0: -0 -> +0
    # lexsort: last key is primary -> (not NaN, -score, index)
    return np.lexsort((np.arange(len(s)), key, ~nan))


def _max_of(a, b):  # std::max's selection: b only when a < b
    return np.where(a < b, b, a)


def _min_of(a, b):  # std::min's selection: b only when b < a
    return np.where(b < a, b, a)


def nms_reference(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float,
                  idxs: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Greedy NMS by the kernels' rules: (K, 4) boxes, (K,) scores, optional (K,) classes ->
    int64 indices of the kept boxes in score order (CPU)."""
    acc = np.float64 if boxes.dtype == torch.float64 else np.float32
    b = boxes.detach().to("cpu", torch.float64).numpy().astype(acc)
    order = score_order(scores.detach().to("cpu", torch.float64).numpy())
    b = b[order]
    cls = None if idxs is None else idxs.detach().cpu().numpy().astype(np.int64)[order]
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    alive = np.ones(len(order), dtype=bool)
    keep = []
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for r in range(len(order)):
            if not alive[r]:
                continue
            keep.append(order[r])
            rest = np.arange(r + 1, len(order))
            rest = rest[alive[rest]]
            if cls is not None:
                rest = rest[cls[rest] == cls[r]]
            if rest.size == 0:
                continue
            a, o = b[r], b[rest]
            zero = acc(0)
            w = _max_of(zero, _min_of(a[2], o[:, 2]) - _max_of(a[0], o[:, 0]))
            h = _max_of(zero, _min_of(a[3], o[:, 3]) - _max_of(a[1], o[:, 1]))
            inter = (w * h).astype(acc)
            iou = inter / ((area[r] + area[rest]) - inter)
            alive[rest[iou.astype(np.float64) > iou_threshold]] = False
    return torch.tensor(np.array(keep, dtype=np.int64), dtype=torch.int64)


# The kept indices are exact: every backend must give the reference's, element for element.
TOLERANCES = {dtype: (0.0, 0.0) for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16)}


def nms_case_reference(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """The declaration's reference of ``twinops.nms`` (:func:`nms_reference`)."""
    return nms_reference(boxes, scores, iou_threshold)


def batched_nms_case_reference(boxes: torch.Tensor, scores: torch.Tensor, idxs: torch.Tensor,
                               iou_threshold: float) -> torch.Tensor:
    """The declaration's reference of ``twinops.batched_nms`` (:func:`nms_reference` per class)."""
    return nms_reference(boxes, scores, iou_threshold, idxs)


def batched_nms_padded_reference(boxes: torch.Tensor, scores: torch.Tensor, score_threshold: float,
                                 iou_threshold: float, max_output_boxes: int, pre_nms_top_k: int = -1,
                                 class_agnostic: bool = False):
    """``twinops.batched_nms_padded`` by its rules (docs/ops/nms.md): per image, the (box, class)
    pairs scoring above the threshold (compared in float64) by decreasing score, ties by flat index
    n * C + c, the first ``pre_nms_top_k``, :func:`nms_reference` over them (per class unless
    ``class_agnostic``), the first ``max_output_boxes`` kept. Returns the five padded outputs (CPU)."""
    B, N, C = scores.shape
    K = int(max_output_boxes)
    per_class = boxes.dim() == 4
    s_all = scores.detach().to("cpu", torch.float64).reshape(B, N * C).numpy()
    num = torch.zeros((B, 1), dtype=torch.int32)
    out_boxes = torch.zeros((B, K, 4), dtype=boxes.dtype)
    out_scores = torch.zeros((B, K), dtype=scores.dtype)
    out_classes = torch.zeros((B, K), dtype=torch.int32)
    out_indices = torch.full((B, K), -1, dtype=torch.int64)
    for b in range(B):
        s = s_all[b]
        with np.errstate(invalid="ignore"):
            cand = np.nonzero(s > score_threshold)[0]
        picked = cand[score_order(s[cand])]
        if pre_nms_top_k != -1:
            picked = picked[:pre_nms_top_k]
        if picked.size == 0:
            continue
        n, c = picked // C, picked % C
        pick = torch.from_numpy(picked)
        bx = boxes[b].detach().cpu().reshape(N * C, 4)[pick] if per_class else boxes[b].detach().cpu()[torch.from_numpy(n)]
        sc = scores[b].detach().cpu().reshape(N * C)[pick]
        keep = nms_reference(bx, sc, iou_threshold, None if class_agnostic else torch.from_numpy(c))[:K]
        m = len(keep)
        num[b, 0] = m
        out_boxes[b, :m] = bx[keep]
        out_scores[b, :m] = sc[keep]
        out_classes[b, :m] = torch.from_numpy(c)[keep].to(torch.int32)
        out_indices[b, :m] = torch.from_numpy(n)[keep]
    return num, out_boxes, out_scores, out_classes, out_indices


def trt_batched_nms_reference(boxes: torch.Tensor, scores: torch.Tensor, background_label_id: int, num_classes: int,
                              topk: int, keep_topk: int, score_threshold: float, iou_threshold: float,
                              clip_boxes: bool = True, return_index: bool = False):
    """MMDeploy's ``TRTBatchedNMS`` node by the rules twinops' drop-in is to follow
    (csrc/trt/nms/README.md, "The drop-ins to come"): boxes (N, P, 1 or num_classes, 4), scores
    (N, P, num_classes). Per image and class (``background_label_id`` skipped; a value outside
    [0, num_classes) skips none): the priors scoring above ``score_threshold`` by decreasing
    score, ties by prior index, the first ``topk`` (all P when topk <= 0 or > P), NMS by
    :func:`nms_reference`'s rules. Then the image's survivors by decreasing score, ties by class
    and then by their order within the class, the first ``keep_topk``.

    Returns ``(dets, labels)`` or ``(dets, labels, index)``: dets (N, keep_topk, 5) float32, the
    box (clamped to [0, 1] when ``clip_boxes``) and the score; labels int32 (N, keep_topk), the
    class; index int32 (N, keep_topk), the prior n for shared boxes, ``c * P + n`` for per-class
    boxes. Past the detections: dets 0, labels and index -1. (Where MMDeploy's kernels leave the
    outputs unwritten, keep_topk > topk, this pads too; a NaN coordinate stays NaN when clamped.)"""
    N, P, C = scores.shape
    shared = boxes.shape[2] == 1
    k = topk if 0 < topk <= P else P
    s_all = scores.detach().to("cpu", torch.float32).numpy()
    dets = torch.zeros((N, keep_topk, 5), dtype=torch.float32)
    labels = torch.full((N, keep_topk), -1, dtype=torch.int32)
    index = torch.full((N, keep_topk), -1, dtype=torch.int32)
    for b in range(N):
        found = []  # (score, class, rank in class, prior)
        for c in range(C):
            if c == background_label_id:
                continue
            s = s_all[b, :, c]
            with np.errstate(invalid="ignore"):
                cand = np.nonzero(s > np.float32(score_threshold))[0]
            cand = cand[score_order(s[cand])][:k]
            if cand.size == 0:
                continue
            pick = torch.from_numpy(cand)
            bx = boxes[b, :, 0 if shared else c].detach().cpu()[pick]
            keep = nms_reference(bx, torch.from_numpy(s[cand]), iou_threshold).numpy()
            found += [(float(s[cand[r]]), c, i, int(cand[r])) for i, r in enumerate(keep)]
        found.sort(key=lambda f: (-f[0], f[1], f[2]))  # no NaN: a NaN score is no candidate
        for j, (score, c, _, n) in enumerate(found[:keep_topk]):
            box = boxes[b, n, 0 if shared else c].detach().to("cpu", torch.float32)
            dets[b, j, :4] = box.clamp(0, 1) if clip_boxes else box
            dets[b, j, 4] = score
            labels[b, j] = c
            index[b, j] = n if shared else c * P + n
    return (dets, labels, index) if return_index else (dets, labels)
