"""Hypothesis strategies of nms's inputs: boxes of several kinds and scores with ties.

``nms_inputs()`` draws ``(boxes (K, 4) float64, scores (K,) float64, classes (K,) int64,
iou_threshold)``: K from 0 to 120; boxes clustered around a few centres, nested, identical,
degenerate (zero width or height, inverted), far apart, or a mix with NaN / Inf coordinates;
scores from a few distinct values (many ties), with a NaN now and then; thresholds 0, 0.5, 1 or
any in [0, 1]. Tests cast to the dtype under test.
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

__all__ = ["nms_inputs", "BOX_KINDS"]

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
