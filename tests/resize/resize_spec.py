"""The resize op's test spec for the twinops suite: references, strategies and tolerances.

One copy: everything lives in the public package ``twinops.testing`` (which ``twinops check``
and ``regress`` use too); this module only keeps the names the tests import and the suite's
dtype-keyed allclose check.
"""
from __future__ import annotations

from twinops.testing import TOLERANCES, random_input  # noqa: F401
from twinops.testing import assert_close as _assert_close
from twinops.library.resize.reference import (  # noqa: F401
    _nearest_formula,
    interpolate_reference,
    onnx_reference,
    onnx_reference_is_unstable,
)
from twinops.library.resize.strategies import COORDS, NEAREST, interpolate_configs, onnx_configs  # noqa: F401

DTYPES = list(TOLERANCES)

# Every F.interpolate mode and flag combination twinops implements.
ALL_INTERPOLATE = [
    dict(mode="nearest"),
    dict(mode="nearest-exact"),
    dict(mode="area"),
    dict(mode="bilinear", align_corners=False),
    dict(mode="bilinear", align_corners=True),
    dict(mode="bicubic", align_corners=False),
    dict(mode="bicubic", align_corners=True),
    dict(mode="bilinear", antialias=True),
    dict(mode="bicubic", antialias=True),
    dict(mode="bilinear", antialias=True, align_corners=True),
    dict(mode="bicubic", antialias=True, align_corners=True),
]


def assert_close(actual, expected, dtype=None, what: str = "") -> None:
    """|actual - expected| <= atol + rtol * |expected| with the dtype's :data:`TOLERANCES`
    (default: actual's dtype), no NaN/Inf in ``actual``; a readable report otherwise."""
    atol, rtol = TOLERANCES[dtype or actual.dtype]
    _assert_close(actual, expected, atol, rtol, what)
