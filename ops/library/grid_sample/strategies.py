"""Hypothesis strategies of ``twinops.grid_sample``'s cases and grids; the generic ones are in ``strategies``.

Every strategy is a plain ``hypothesis.strategies`` object, so it composes with ``@given``,
``st.data()`` and ``find``; nothing here draws from a global random state.
"""
from __future__ import annotations

import torch
from hypothesis import strategies as st

MODES = ("bilinear", "nearest", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")


@st.composite
def grid_sample_kwargs(draw, rank: int = 4, modes=MODES):
    """``{"mode", "padding_mode", "align_corners"}`` for a ``rank``-D input (bicubic is 4-D only);
    align_corners is True, False or None (F.grid_sample's default, False)."""
    modes = [m for m in modes if rank == 4 or m != "bicubic"]
    return dict(mode=draw(st.sampled_from(modes)), padding_mode=draw(st.sampled_from(PADDING_MODES)),
                align_corners=draw(st.sampled_from((False, True, None))))


@st.composite
def grid_sample_shapes(draw, rank=None, max_n: int = 2, max_c: int = 3, max_in: int = 9, max_out: int = 6):
    """``(input shape, grid shape)``: 4-D ``(N, C, H, W)`` with ``(N, H_out, W_out, 2)`` or 5-D
    ``(N, C, D, H, W)`` with ``(N, D_out, H_out, W_out, 3)`` (``rank`` None: either); input
    lengths in [1, max_in] (5-D: [1, max_in // 2 + 1]), output lengths in [1, max_out]."""
    rank = rank or draw(st.sampled_from((4, 5)))
    n, c = draw(st.integers(1, max_n)), draw(st.integers(1, max_c))
    hi = max_in if rank == 4 else max_in // 2 + 1
    spatial = [draw(st.integers(1, hi)) for _ in range(rank - 2)]
    out = [draw(st.integers(1, max_out)) for _ in range(rank - 2)]
    return (n, c, *spatial), (n, *out, rank - 2)


@st.composite
def grid_sample_cases(draw, rank=None, max_in: int = 9, max_out: int = 6):
    """``((input shape, grid shape), kwargs)`` for ``twinops.grid_sample`` (what ``twinops check``
    draws; its grid data is ``random_input``'s, normal around 0.25: about a third of the points
    fall outside [-1, 1])."""
    shapes = draw(grid_sample_shapes(rank, max_in=max_in, max_out=max_out))
    return shapes, draw(grid_sample_kwargs(len(shapes[0])))


@st.composite
def grids(draw, shape, dtype=torch.float64, bound: float = 1.5, special: bool = False, snap: bool = True,
          device="cpu"):
    """A grid tensor of ``shape``: seeded uniform values in [-bound, bound] (outside [-1, 1] with
    ``bound > 1``), with ``snap`` some of them snapped to the multiples of 1/8 (exact input
    positions and rounding ties for nearest at small lengths); with ``special``, a few coordinates
    NaN, +Inf or -Inf. Generated in float64 on the CPU, then cast."""
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(tuple(shape), generator=g, dtype=torch.float64) * 2 - 1) * bound
    if snap and draw(st.booleans()):
        snap = torch.rand(tuple(shape), generator=g) < 0.3
        x = torch.where(snap, torch.round(x * 8) / 8, x)
    if special and x.numel():
        picks = torch.rand(tuple(shape), generator=g)
        kinds = torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=torch.float64)
        which = torch.randint(0, 3, tuple(shape), generator=g)
        x = torch.where(picks < 0.1, kinds[which], x)
    return x.to(device=device, dtype=dtype)
