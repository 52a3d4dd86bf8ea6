"""Public Hypothesis strategies for NCHW ops: dtypes, shapes, scale factors, and seeded input data.

Each op's own strategies (its attributes, its cases) live in a file named after it
(``twinops.library.<op>.strategies``). Every strategy is a plain ``hypothesis.strategies`` object, so it
composes with ``@given``, ``st.data()`` and ``find``; nothing here draws from a global random state.
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import assume
from hypothesis import strategies as st

from .inputs import random_input

__all__ = ["FLOAT_DTYPES", "dtypes", "nchw_shapes", "scale_factors", "random_input"]

FLOAT_DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)


def dtypes(allowed=FLOAT_DTYPES) -> st.SearchStrategy:
    """One of ``allowed`` torch dtypes (default: float64, float32, float16, bfloat16)."""
    return st.sampled_from(list(allowed))


@st.composite
def nchw_shapes(draw, max_n: int = 2, max_c: int = 3, max_hw: int = 12, max_elements: int = 4096,
                min_hw: int = 1):
    """An ``(N, C, H, W)`` tuple with ``1 <= N <= max_n``, ``1 <= C <= max_c``,
    ``min_hw <= H, W <= max_hw`` and ``N*C*H*W <= max_elements`` (bounded work per example)."""
    if max_elements < min_hw * min_hw:
        raise ValueError(f"max_elements={max_elements} is smaller than one {min_hw}x{min_hw} plane")
    n, c = draw(st.integers(1, max_n)), draw(st.integers(1, max_c))
    h = draw(st.integers(min_hw, max_hw))
    w = draw(st.integers(min_hw, max_hw))
    assume(n * c * h * w <= max_elements)
    return n, c, h, w


def scale_factors(common=(0.5, 2.0, 1.5, 0.25, 3.0, 1.0, 0.75), lo: float = 0.2, hi: float = 4.0,
                  digits: int = 3, float32: bool = False) -> st.SearchStrategy:
    """A scale factor: one of ``common``, or a float in [lo, hi] rounded to ``digits`` decimals
    (then to the nearest float32 when ``float32``: such a scale survives ONNX export, whose
    FLOATS attribute would otherwise narrow it)."""
    rounded = st.floats(lo, hi, allow_nan=False, allow_infinity=False).map(lambda v: round(v, digits))
    if float32:
        rounded = rounded.map(lambda v: float(np.float32(v)))
    return st.one_of(st.sampled_from(list(common)), rounded)

