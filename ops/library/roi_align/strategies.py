"""Hypothesis strategies of ``twinops.roi_align``'s cases, and the rois factory the declaration names.

Rois are drawn in image coordinates (the map's size divided by spatial_scale) from kinds that
cover the semantics' corners: inside the map, partly outside, tiny (below one bin), huge (many
times the map), on the borders, zero-size and inverted; coordinates are multiples of 1/8 so
float32 and float16 hold them exactly. Nothing here draws from a global random state.
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import strategies as st

POOL_MODES = ("avg", "max")
KINDS = ("inside", "partly_outside", "tiny", "huge", "border", "zero_size", "inverted")


def random_rois(k: int, n: int, h: int, w: int, scale: float, rng: np.random.Generator, kinds=KINDS) -> np.ndarray:
    """(k, 5) float64 rois (batch index in [0, n), x1, y1, x2, y2) of the given kinds, in image
    units of a (h, w) map seen at ``scale``."""
    ih, iw = h / scale, w / scale
    out = np.zeros((k, 5))
    for i in range(k):
        kind = kinds[rng.integers(len(kinds))]
        cx, cy = rng.uniform(0, iw), rng.uniform(0, ih)
        bw, bh = rng.uniform(0.1, 1.0) * iw, rng.uniform(0.1, 1.0) * ih
        if kind == "partly_outside":
            cx, cy = rng.uniform(-0.3, 1.3) * iw, rng.uniform(-0.3, 1.3) * ih
        elif kind == "tiny":
            bw, bh = rng.uniform(0, 1.0) / scale, rng.uniform(0, 1.0) / scale
        elif kind == "huge":
            bw, bh = rng.uniform(2, 6) * iw, rng.uniform(2, 6) * ih
        elif kind == "border":
            cx, bw = (0.0 if rng.integers(2) else iw), rng.uniform(0.5, 2) / scale
        elif kind == "zero_size":
            bw = 0.0
        x1, y1, x2, y2 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
        if kind == "inverted":
            x1, x2 = x2, x1
        out[i] = (rng.integers(n) if n > 0 else 0, x1, y1, x2, y2)
    out[:, 1:] = np.round(out[:, 1:] * 8) / 8
    return out


def rois_factory(ctx) -> torch.Tensor:
    """(K, 5) rois for the case's input (its N, H, W and spatial_scale) in ``ctx.dtype``, from ``ctx.seed``."""
    n, _, h, w = ctx.shapes["input"]
    scale = float(ctx.kwargs.get("spatial_scale", 1.0))
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(random_rois(ctx.shape[0], max(n, 1), h, w, scale, rng)).to(ctx.dtype)


@st.composite
def roi_align_kwargs(draw):
    """``output_size``, ``spatial_scale``, ``sampling_ratio``, ``aligned``, ``pool_mode``."""
    ph, pw = draw(st.integers(1, 14)), draw(st.integers(1, 14))
    size = ph if ph == pw and draw(st.booleans()) else (ph, pw)
    return dict(output_size=size, spatial_scale=draw(st.sampled_from((1.0, 0.5, 0.25, 0.125))),
                sampling_ratio=draw(st.integers(-1, 4)), aligned=draw(st.booleans()),
                pool_mode=draw(st.sampled_from(POOL_MODES)))


@st.composite
def roi_align_cases(draw, max_in: int = 12, max_k: int = 8):
    """``((input shape, rois shape), kwargs)`` for ``twinops.roi_align``: N in [1, 2], C in [1, 3],
    H and W in [1, max_in], K in [0, max_k]."""
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, max_in)), draw(st.integers(1, max_in))
    k = draw(st.integers(0, max_k))
    return ((n, c, h, w), (k, 5)), draw(roi_align_kwargs())


def multi_level_rois_factory(ctx) -> torch.Tensor:
    """(K, 5) rois over the image level0 covers (stride featmap_strides[0]): every kind, so the
    sizes spread over the levels, in ``ctx.dtype``, from ``ctx.seed``."""
    n, _, h, w = ctx.shapes["level0"]
    strides = ctx.kwargs.get("featmap_strides", (4.0,))
    rng = np.random.default_rng(ctx.seed)
    return torch.from_numpy(random_rois(ctx.shape[0], max(n, 1), h, w, 1.0 / float(strides[0]), rng)).to(ctx.dtype)


@st.composite
def multi_level_roi_align_cases(draw, max_k: int = 8):
    """``((rois shape, level shapes..., None...), kwargs)`` for ``multi_level_roi_align_nodes``: 1-4
    levels halving from up to 16x16 at stride 4, finest_scale small enough that rois spread."""
    from .declaration import MAX_LEVELS

    n, c, levels = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    h, w = draw(st.integers(levels, 16)), draw(st.integers(levels, 16))
    sizes = [(max(h >> l, 1), max(w >> l, 1)) for l in range(levels)]
    shapes = ((draw(st.integers(0, max_k)), 5),) + tuple((n, c, a, b) for a, b in sizes) + (None,) * (MAX_LEVELS - levels)
    kw = draw(roi_align_kwargs())
    del kw["spatial_scale"]
    kw.update(featmap_strides=tuple(4.0 * 2**l for l in range(levels)),
              finest_scale=draw(st.sampled_from((4.0, 8.0, 16.0, 56.0))),
              roi_scale_factor=draw(st.sampled_from((1.0, 1.0, 0.5, 1.5))),
              level_rule=draw(st.sampled_from(("mmdet", "torchvision"))))
    return shapes, kw
