"""Input factories and Hypothesis strategies for ``twinops.deform_conv2d``.

The offset factory draws offsets that move samples within a pixel or two, some exactly integral
(samples on pixel centres and on the borders), some far outside the image; the strategies draw
valid shapes (groups and offset_groups dividing the channels, the output size by the convolution
arithmetic) with and without bias and mask.
"""
from __future__ import annotations

import torch
from hypothesis import strategies as st

from .declaration import _shapes


def offset_factory(ctx) -> torch.Tensor:
    """Offsets uniform in [-2.5, 2.5], one in eight moved to the nearest half pixel (a sample
    midway between pixels on that axis) and one in sixteen moved 10 pixels out, in ``ctx.dtype``.
    No offset is integral: the bilinear sample has a kink on whole pixels, where a numerical
    gradient (gradcheck) and the analytical one differ by design; the op's own tests put samples
    there."""
    g = ctx.generator()
    off = torch.rand(tuple(ctx.shape), generator=g, dtype=torch.float64) * 5 - 2.5
    pick = torch.rand(tuple(ctx.shape), generator=g, dtype=torch.float64)
    off = torch.where(pick < 1 / 8, (off - 0.5).round() + 0.5, off)
    off = torch.where(off == off.round(), off + 0.25, off)
    off = torch.where(pick > 15 / 16, off + 10 * off.sign(), off)
    return off.to(ctx.dtype)


@st.composite
def geometry(draw, max_kernel: int = 3, max_side: int = 9):
    """(shapes, kwargs) of one valid call: kernel 1..max_kernel per axis, stride and dilation 1-3,
    padding 0-2 (each axis its own), groups 1-2, offset_groups 1-3, bias and mask either way."""
    groups = draw(st.integers(1, 2))
    offset_groups = draw(st.sampled_from([1, 2, 3]))
    unit = groups * offset_groups // _gcd(groups, offset_groups)
    c_in = unit * draw(st.integers(1, 3 if unit < 4 else 1))
    c_out = groups * draw(st.integers(1, 3))
    k = (draw(st.integers(1, max_kernel)), draw(st.integers(1, max_kernel)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    dilation = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    side = []
    for a in range(2):
        need = max(1, dilation[a] * (k[a] - 1) + 1 - 2 * padding[a])
        side.append(draw(st.integers(need, max(need, max_side))))
    n = draw(st.integers(0, 2))
    return _shapes(n, c_in, side[0], side[1], c_out, k, groups, offset_groups, stride, padding, dilation,
                   bias=draw(st.booleans()), mask=draw(st.booleans()))


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def deform_conv2d_cases():
    """Hypothesis strategy of (shapes, kwargs) for the generic checks (kernels up to 3x3, sides up
    to 9; the op's own tests draw kernels up to 5)."""
    return geometry()
