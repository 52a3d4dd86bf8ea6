"""nms's reference: the rules of csrc/kernels/nms/nms.h in numpy, operation by operation in the
kernels' precision (float32 for float32 / float16 / bfloat16 boxes, float64 for float64), so
that the kernels must match it exactly. torchvision.ops.nms is the outside reference the tests
hold both to (on inputs without ties, where torchvision's order is defined)."""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

__all__ = ["nms_reference", "score_order", "nms_case_reference", "batched_nms_case_reference",
           "batched_nms_padded_reference", "trt_batched_nms_reference", "efficient_nms_reference", "TOLERANCES"]


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
    """MMDeploy's ``TRTBatchedNMS`` node by the rules twinops' drop-in follows
    (csrc/trt/nms/README.md, "The drop-ins: what they match"): boxes (N, P, 1 or num_classes, 4), scores
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


def _efficient_iou(a: np.ndarray, b: np.ndarray) -> np.float32:
    """EfficientNMS_TRT's IoU of two corner boxes in float32: each box's corners put in order
    first; no overlap, or a union of at most 0, is IoU 0."""
    a = np.concatenate([np.minimum(a[:2], a[2:]), np.maximum(a[:2], a[2:])])
    b = np.concatenate([np.minimum(b[:2], b[2:]), np.maximum(b[:2], b[2:])])

    def area(x):
        w, h = x[2] - x[0], x[3] - x[1]
        return np.float32(0) if w <= 0 or h <= 0 else np.float32(w * h)

    inter = area(np.concatenate([np.maximum(a[:2], b[:2]), np.minimum(a[2:], b[2:])]))
    if inter <= 0:
        return np.float32(0)
    union = np.float32(area(a) + area(b) - inter)
    return np.float32(0) if union <= 0 else np.float32(inter / union)


def efficient_nms_reference(boxes: torch.Tensor, scores: torch.Tensor, anchors: Optional[torch.Tensor] = None, *,
                            score_threshold: float, iou_threshold: float, max_output_boxes: int,
                            background_class: int = -1, score_activation: bool = False, class_agnostic: bool = False,
                            box_coding: int = 0, max_candidates: int = 5000):
    """TensorRT's ``EfficientNMS_TRT`` node by the rules twinops' drop-in follows
    (csrc/trt/nms/README.md, "The drop-ins: what they match"): boxes (B, N, 4) or (B, N, C, 4), scores
    (B, N, C), optional anchors (1 or B, N, 4) (box decoding).

    Per image: the (box, class) pairs with ``score >= score_threshold`` (with
    ``score_activation``, ``sigmoid(score) >= score_threshold``, which TensorRT tests as a raw
    score at least the threshold's logit; a threshold of at most 0 admits every score), the
    background class excluded, by decreasing score, ties by the lower flat index ``n * C + c``
    (TensorRT leaves ties unordered), the first ``max_candidates``; greedy NMS in that order, a
    pair suppressed when its IoU is at least ``iou_threshold`` (same class, unless
    ``class_agnostic``), IoU by :func:`_efficient_iou`; the first ``max_output_boxes`` kept.

    Boxes: ``box_coding`` 0, corners (any axis order: IoU reorders them); 1, (center, size),
    turned into corners ``center -/+ size / 2``. With anchors, boxes are offsets: corners add
    the anchor's, center-size ones give ``(c * anchor_size + anchor_center, anchor_size *
    exp(s))``. Computed in float32.

    Returns ``(num_detections, detection_boxes, detection_scores, detection_classes)``: int32
    (B, 1), float32 (B, K, 4) corners, (B, K) scores (sigmoid-activated with
    ``score_activation``), int32 (B, K) classes; zeros past the detections."""
    B, N, C = scores.shape
    K = max_output_boxes
    bx = boxes.detach().to("cpu", torch.float32).numpy()
    bx = bx if bx.ndim == 4 else np.broadcast_to(bx[:, :, None, :], (B, N, C, 4))
    if anchors is not None:
        an = np.broadcast_to(anchors.detach().to("cpu", torch.float32).numpy()[:, :, None, :], (B, N, C, 4))
        if box_coding == 0:
            bx = bx + an
        else:
            bx = np.concatenate([bx[..., :2] * an[..., 2:] + an[..., :2], an[..., 2:] * np.exp(bx[..., 2:])], -1)
    if box_coding == 1:
        half = bx[..., 2:] * np.float32(0.5)
        bx = np.concatenate([bx[..., :2] - half, bx[..., :2] + half], -1)
    sc = scores.detach().to("cpu", torch.float32).numpy()
    if score_activation:
        thr = np.float32(-32768.0) if score_threshold <= 0 else np.float32(
            np.log(np.float32(score_threshold) / (np.float32(1) - np.float32(score_threshold))))
    else:
        thr = np.float32(score_threshold)
    num = torch.zeros((B, 1), dtype=torch.int32)
    out_boxes = torch.zeros((B, K, 4), dtype=torch.float32)
    out_scores = torch.zeros((B, K), dtype=torch.float32)
    out_classes = torch.zeros((B, K), dtype=torch.int32)
    for b in range(B):
        flat = sc[b].reshape(-1)
        with np.errstate(invalid="ignore"):
            ok = flat >= thr
        if 0 <= background_class < C:
            ok &= np.arange(N * C) % C != background_class
        cand = np.nonzero(ok)[0]
        cand = cand[score_order(flat[cand])][:max_candidates]
        kept = []
        for g in cand:
            n, c = divmod(int(g), C)
            box = bx[b, n, c]
            if any((class_agnostic or c == kc) and _efficient_iou(kb, box) >= np.float32(iou_threshold)
                   for kb, kc in kept):
                continue
            kept.append((box, c))
            j = len(kept) - 1
            out_boxes[b, j] = torch.from_numpy(np.array(box, dtype=np.float32))
            s = np.float32(flat[g])
            out_scores[b, j] = float(np.float32(1) / (np.float32(1) + np.exp(-s))) if score_activation else float(s)
            out_classes[b, j] = c
            if len(kept) == K:
                break
        num[b, 0] = len(kept)
    return num, out_boxes, out_scores, out_classes

