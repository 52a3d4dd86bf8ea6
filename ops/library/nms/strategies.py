"""Hypothesis strategies of nms's inputs: boxes of several kinds and scores with ties.

``nms_inputs()`` draws ``(boxes (K, 4) float64, scores (K,) float64, classes (K,) int64,
iou_threshold)``: K from 0 to 120; boxes clustered around a few centres, nested, identical,
degenerate (zero width or height, inverted), far apart, or a mix with NaN / Inf coordinates;
scores from a few distinct values (many ties), with a NaN now and then; thresholds 0, 0.5, 1 or
any in [0, 1]. Tests cast to the dtype under test.

For the toolkit (``twinops check`` / ``regress``, the conformance tests): ``nms_cases()`` and
``batched_nms_cases()`` draw ``(shapes, kwargs)``, and the declaration's input factories
(``boxes_factory``, ``scores_factory``, ``classes_factory``) make valid inputs for any shape:
clustered boxes (so that some overlap), scores from a few levels (ties), classes in [0, 3).

``batched_nms_padded``: ``padded_inputs()`` draws ``(boxes (B, N, 4) or (B, N, C, 4), scores
(B, N, C), kwargs)`` in float64 (boxes of the kinds above, scores from a few levels with a NaN
now and then, every argument of the op); ``batched_nms_padded_cases()`` draws ``(shapes,
kwargs)`` for the toolkit, whose factories ``padded_boxes_factory`` / ``padded_scores_factory``
make clustered boxes and scores from five levels in [0, 1].
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

__all__ = ["nms_inputs", "BOX_KINDS", "nms_cases", "batched_nms_cases", "boxes_factory", "scores_factory",
           "classes_factory", "padded_inputs", "batched_nms_padded_cases", "padded_boxes_factory",
           "padded_scores_factory"]

BOX_KINDS = ("clustered", "nested", "identical", "degenerate", "far", "nonfinite")


def _boxes(kind: str, k: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "clustered":
        centres = rng.uniform(0, 100, (3, 2))[rng.integers(0, 3, k)]
        half = rng.uniform(2, 12, (k, 2))
        xy = centres + rng.normal(0, 3, (k, 2))
        return np.concatenate([xy - half, xy + half], 1)
    if kind == "nested":
        half = rng.uniform(1, 30, (k, 1)) * np.ones((1, 2))
        return np.concatenate([50 - half, 50 + half], 1)
    if kind == "identical":
        return np.tile(rng.uniform(0, 10, (1, 4)).cumsum(1), (k, 1))
    if kind == "degenerate":
        b = rng.uniform(0, 20, (k, 4))
        b[::3, 2] = b[::3, 0]  # zero width
        b[1::3, 3] = b[1::3, 1] - 1  # inverted height
        return b
    if kind == "far":
        xy = rng.uniform(-1e4, 1e4, (k, 2))
        return np.concatenate([xy, xy + rng.uniform(0, 50, (k, 2))], 1)
    b = _boxes("clustered", k, rng)
    if k:
        b[rng.integers(0, k, max(1, k // 8)), rng.integers(0, 4)] = np.nan
        b[rng.integers(0, k, max(1, k // 8)), 2] = np.inf
    return b


@st.composite
def nms_inputs(draw, max_boxes: int = 120):
    k = draw(st.integers(0, max_boxes))
    kind = draw(st.sampled_from(BOX_KINDS))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    boxes = torch.from_numpy(_boxes(kind, k, rng))
    levels = draw(st.integers(1, 6))
    scores = torch.from_numpy(rng.integers(0, levels, k) / levels + 0.0)
    if k and draw(st.booleans()):
        scores[rng.integers(0, k)] = float("nan")
    classes = torch.from_numpy(rng.integers(0, draw(st.integers(1, 4)), k))
    threshold = draw(st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1)))
    return boxes, scores, classes, threshold


def boxes_factory(ctx) -> torch.Tensor:
    """(K, 4) clustered boxes (x1 < x2, y1 < y2) in ``ctx.dtype``, from ``ctx.seed``."""
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(_boxes("clustered", ctx.shape[0], rng)).to(ctx.dtype)


def scores_factory(ctx) -> torch.Tensor:
    """(K,) scores from four levels (many ties) in ``ctx.dtype``, from ``ctx.seed``."""
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(rng.integers(1, 5, ctx.shape[0]) / 4).to(ctx.dtype)


def classes_factory(ctx) -> torch.Tensor:
    """(K,) classes in [0, 3) in ``ctx.dtype`` (int64 or int32), from ``ctx.seed``."""
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(rng.integers(0, 3, ctx.shape[0])).to(ctx.dtype)


def _thresholds():
    return st.one_of(st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]), st.floats(0, 1))


@st.composite
def _nms_case(draw, batched: bool, max_boxes: int = 60):
    k = draw(st.integers(0, max_boxes))
    shapes = ((k, 4), (k,), (k,)) if batched else ((k, 4), (k,))
    return shapes, dict(iou_threshold=draw(_thresholds()))


def nms_cases():
    """Hypothesis strategy of ``(shapes, kwargs)`` for ``twinops.nms``."""
    return _nms_case(False)


def batched_nms_cases():
    """Hypothesis strategy of ``(shapes, kwargs)`` for ``twinops.batched_nms``."""
    return _nms_case(True)


def _padded_kwargs(draw, n: int) -> dict:
    return dict(score_threshold=draw(st.one_of(st.sampled_from([0.0, 0.25, 0.5]), st.floats(-1, 1))),
                iou_threshold=draw(_thresholds()), max_output_boxes=draw(st.integers(1, 30)),
                pre_nms_top_k=draw(st.one_of(st.just(-1), st.integers(1, max(1, 2 * n)))),
                class_agnostic=draw(st.booleans()))


@st.composite
def _padded_shapes(draw, max_boxes: int):
    b, n, c = draw(st.integers(1, 3)), draw(st.integers(0, max_boxes)), draw(st.integers(1, 4))
    per_class = draw(st.booleans())
    return ((b, n, c, 4) if per_class else (b, n, 4)), (b, n, c)


@st.composite
def padded_inputs(draw, max_boxes: int = 40):
    """``(boxes, scores, kwargs)`` in float64 for ``twinops.batched_nms_padded`` (module docstring)."""
    box_shape, score_shape = draw(_padded_shapes(max_boxes))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    count = int(np.prod(box_shape[:-1]))
    boxes = torch.from_numpy(_boxes(draw(st.sampled_from(BOX_KINDS)), count, rng).reshape(box_shape))
    levels = draw(st.integers(1, 6))
    scores = torch.from_numpy(rng.integers(0, levels + 1, score_shape) / levels + 0.0)
    if scores.numel() and draw(st.booleans()):
        scores.view(-1)[int(rng.integers(0, scores.numel()))] = float("nan")
    return boxes, scores, _padded_kwargs(draw, score_shape[1])


@st.composite
def _padded_case(draw, max_boxes: int = 30):
    shapes = draw(_padded_shapes(max_boxes))
    return shapes, _padded_kwargs(draw, shapes[1][1])


def batched_nms_padded_cases():
    """Hypothesis strategy of ``(shapes, kwargs)`` for ``twinops.batched_nms_padded``."""
    return _padded_case()


def padded_boxes_factory(ctx) -> torch.Tensor:
    """(B, N, 4) or (B, N, C, 4) clustered boxes in ``ctx.dtype``, from ``ctx.seed``."""
    rng = np.random.default_rng(ctx.seed)
    count = int(np.prod(ctx.shape[:-1]))
    return torch.from_numpy(_boxes("clustered", count, rng).reshape(ctx.shape)).to(ctx.dtype)


def padded_scores_factory(ctx) -> torch.Tensor:
    """(B, N, C) scores from five levels in [0, 1] (ties, some at the thresholds) in ``ctx.dtype``."""
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(rng.integers(0, 5, ctx.shape) / 4).to(ctx.dtype)
