"""Input factories and Hypothesis strategies for ``twinops.ms_deform_attn``.

The factories make valid index inputs from the case's shapes: ``spatial_shapes`` splits value's S
into L levels (a pyramid: each level about four times the next, every level at least 1x1; a level
of prime size is 1 x w), ``level_start_index`` is their exclusive cumulative sum, and the sampling
locations cover [0, 1] and a little beyond, with some exactly on 0 and 1.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from hypothesis import strategies as st


def level_sizes(s: int, levels: int) -> list:
    """S split into ``levels`` sizes >= 1 (largest first, each about 4x the next), summing to S."""
    if levels < 1 or s < levels:
        raise ValueError(f"spatial_shapes: {levels} levels of at least 1x1 need S >= {levels}, got S = {s}")
    weights = [4.0 ** (levels - 1 - i) for i in range(levels)]
    total = sum(weights)
    sizes = [max(1, int(s * w / total)) for w in weights]
    sizes[0] += s - sum(sizes)  # the remainder (either sign) to the largest level
    while sizes[0] < 1:  # rounding up of the small levels took more than the largest had
        i = max(range(1, levels), key=lambda k: sizes[k])
        sizes[i] -= 1
        sizes[0] += 1
    return sizes


def level_shape(size: int) -> tuple:
    """(h, w) with h * w = size and h the largest divisor <= sqrt(size)."""
    h = max(d for d in range(1, math.isqrt(size) + 1) if size % d == 0)
    return h, size // h


def spatial_shapes_factory(ctx) -> torch.Tensor:
    """(L, 2) level shapes (h, w) whose sizes sum to value's S, in ``ctx.dtype`` (int64 or int32);
    the seed transposes some levels."""
    levels, s = ctx.shape[0], ctx.shapes["value"][1]
    rng = np.random.default_rng(ctx.seed)
    shapes = []
    for size in level_sizes(s, levels):
        h, w = level_shape(size)
        shapes.append((w, h) if rng.integers(0, 2) else (h, w))
    return torch.tensor(shapes, dtype=torch.int64).reshape(levels, 2).to(ctx.dtype)


def level_start_index_factory(ctx) -> torch.Tensor:
    """(L,) the exclusive cumulative sum of the levels' h * w, in ``ctx.dtype``."""
    shapes = ctx.made["spatial_shapes"].long()
    sizes = shapes[:, 0] * shapes[:, 1]
    return (torch.cumsum(sizes, 0) - sizes).to(ctx.dtype)


def locations_factory(ctx) -> torch.Tensor:
    """Locations uniform in [-0.05, 1.05] (so some points sit partly or wholly outside their
    level), one in eight exactly 0 or 1, in ``ctx.dtype``."""
    g = ctx.generator()
    loc = torch.rand(tuple(ctx.shape), generator=g, dtype=torch.float64) * 1.1 - 0.05
    edge = torch.rand(tuple(ctx.shape), generator=g, dtype=torch.float64)
    loc = torch.where(edge < 1 / 16, torch.zeros_like(loc), loc)
    loc = torch.where(edge > 15 / 16, torch.ones_like(loc), loc)
    return loc.to(ctx.dtype)


@st.composite
def _case(draw):
    levels = draw(st.integers(1, 5))
    s = draw(st.integers(levels, 90))
    n, m, d = draw(st.integers(0, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 12))
    lq, p = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    return ((n, s, m, d), (levels, 2), (levels,), (n, lq, m, levels, p, 2), (n, lq, m, levels, p)), {}


def ms_deform_attn_cases():
    """Hypothesis strategy of (shapes, kwargs) for the generic checks: L 1-5, P 1-4, M 1-4,
    D 1-12, S up to 90, N 0-2, Lq 0-6 (the op's own tests draw level shapes directly)."""
    return _case()


@st.composite
def pyramids(draw, max_levels: int = 5, max_side: int = 9):
    """A list of L level shapes (h, w), 1 <= h, w <= max_side: 1x1, 1xW and Hx1 levels included."""
    levels = draw(st.integers(1, max_levels))
    side = st.integers(1, max_side)
    return [(draw(side), draw(side)) for _ in range(levels)]
