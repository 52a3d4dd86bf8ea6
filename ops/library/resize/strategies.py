"""Hypothesis strategies of the resize ops' arguments and cases (``twinops.interpolate``,
``twinops.resize``, ``twinops.dynamic_resize``); the generic ones are in ``strategies``.

Every strategy is a plain ``hypothesis.strategies`` object, so it composes with ``@given``,
``st.data()`` and ``find``; nothing here draws from a global random state.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from ...testing.strategies import nchw_shapes, scale_factors

INTERPOLATE_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic", "area")
ONNX_MODES = ("nearest", "linear", "cubic")
COORDS = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
          "tf_crop_and_resize")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


@st.composite
def size_or_scale(draw, in_hw, max_out: int = 20, scale=None):
    """Keyword arguments for F.interpolate's output size on input ``in_hw = (H, W)``:
    ``{"size": (H_out, W_out)}`` with ``1 <= H_out, W_out <= max_out``, or
    ``{"scale_factor": (sh, sw)[, "recompute_scale_factor": bool]}`` whose
    ``floor(H * sh)``/``floor(W * sw)`` lie in ``[1, 3 * max_out]`` (F.interpolate's rule)."""
    h, w = in_hw
    if draw(st.booleans()):
        return {"size": (draw(st.integers(1, max_out)), draw(st.integers(1, max_out)))}
    scale = scale if scale is not None else scale_factors()
    sf = (draw(scale), draw(scale))
    assume(1 <= math.floor(h * sf[0]) <= 3 * max_out and 1 <= math.floor(w * sf[1]) <= 3 * max_out)
    kw = {"scale_factor": sf}
    if draw(st.booleans()):
        kw["recompute_scale_factor"] = draw(st.booleans())
    return kw


@st.composite
def interpolate_attrs(draw, modes=INTERPOLATE_MODES):
    """``{"mode": ..., ["align_corners": bool, "antialias": bool]}`` (the last two for
    bilinear/bicubic only, as F.interpolate requires)."""
    mode = draw(st.sampled_from(list(modes)))
    kw = {"mode": mode}
    if mode in ("bilinear", "bicubic"):
        kw["align_corners"] = draw(st.booleans())
        kw["antialias"] = draw(st.booleans())
    return kw


@st.composite
def interpolate_configs(draw, max_hw: int = 12, max_out: int = 20, modes=INTERPOLATE_MODES,
                        float32_scales: bool = False):
    """``(input shape, kwargs)`` for ``F.interpolate`` / ``twinops.interpolate``; with
    ``float32_scales`` every scale factor is a float32 value (exportable without narrowing)."""
    shape = draw(nchw_shapes(max_c=3, max_hw=max_hw, max_elements=2 * 3 * max_hw * max_hw))
    kw = draw(interpolate_attrs(modes))
    kw.update(draw(size_or_scale(shape[2:], max_out, scale_factors(float32=float32_scales))))
    return shape, kw


def interpolate_cases() -> st.SearchStrategy:
    """:func:`interpolate_configs` with float32 scale factors: what ``twinops check`` draws for
    interpolate (the graph backends, ONNX, plugin and TensorRT, then get the same scale)."""
    return interpolate_configs(float32_scales=True)


@st.composite
def dynamic_resize_cases(draw, max_hw: int = 12, max_out: int = 20):
    """``((input shape, size_tensor shape), {"align_corners": bool})`` for
    ``twinops.dynamic_resize``; size_tensor has rank 2 to 4 and ends with (H_out, W_out)."""
    shape = draw(nchw_shapes(max_c=3, max_hw=max_hw, max_elements=2 * 3 * max_hw * max_hw))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    out = (draw(st.integers(1, max_out)), draw(st.integers(1, max_out)))
    return (shape, lead + out), {"align_corners": draw(st.booleans())}


@st.composite
def onnx_resize_attrs(draw, modes=ONNX_MODES, coords=COORDS):
    """ONNX Resize-19 attributes (mode, coordinate_transformation_mode and the ones that
    mode uses: nearest_mode, or antialias/exclude_outside and cubic_coeff_a)."""
    mode = draw(st.sampled_from(list(modes)))
    kw = {"mode": mode, "coordinate_transformation_mode": draw(st.sampled_from(list(coords)))}
    if mode == "nearest":
        kw["nearest_mode"] = draw(st.sampled_from(list(NEAREST)))
    else:
        kw["antialias"] = draw(st.sampled_from([0, 1]))
        kw["exclude_outside"] = draw(st.sampled_from([0, 1]))
        if mode == "cubic":
            kw["cubic_coeff_a"] = draw(st.sampled_from([-0.75, -0.5, -0.6]))
    return kw


@st.composite
def onnx_configs(draw, max_hw: int = 10, max_out: int = 16, modes=ONNX_MODES, coords=COORDS):
    """``(input shape, kwargs)`` for ``twinops.resize`` with ONNX names: attributes, ``sizes``
    (with a keep_aspect_ratio_policy) or float32-exact ``scales``, ``axes``, ``roi``."""
    n, c, h, w = draw(nchw_shapes(max_c=2, max_hw=max_hw, max_elements=2 * 2 * max_hw * max_hw))
    kw = draw(onnx_resize_attrs(modes, coords))
    coord = kw["coordinate_transformation_mode"]
    use_axes = draw(st.booleans())
    if draw(st.booleans()):
        hw = (draw(st.integers(1, max_out)), draw(st.integers(1, max_out)))
        policy = draw(st.sampled_from(["stretch", "stretch", "not_larger", "not_smaller"]))
        use_axes = use_axes or policy != "stretch"  # over all 4 axes the policy would rescale N and C
        kw["keep_aspect_ratio_policy"] = policy
        if policy != "stretch":
            assume(coord != "tf_crop_and_resize")
            s = (min if policy == "not_larger" else max)(hw[0] / h, hw[1] / w)
            assume(1 <= int(s * h + 0.5) <= 3 * max_out and 1 <= int(s * w + 0.5) <= 3 * max_out)
        kw["sizes"] = list(hw) if use_axes else [n, c, hw[0], hw[1]]
    else:
        scale = scale_factors((0.5, 2.0, 1.5, 0.25, 3.0, 1.0, 0.6), 0.2, 3.0, 2)
        sc = (draw(scale), draw(scale))
        s32 = np.asarray(sc, dtype=np.float32).astype(np.float64)
        assume(int(s32[0] * h) >= 1 and int(s32[1] * w) >= 1)
        kw["scales"] = list(sc) if use_axes else [1.0, 1.0, sc[0], sc[1]]
    if use_axes:
        kw["axes"] = [2, 3] if draw(st.booleans()) else [-2, -1]
    if coord == "tf_crop_and_resize":
        r = st.floats(-0.2, 1.2, allow_nan=False).map(lambda v: round(v, 2))
        h0, w0, h1, w1 = draw(r), draw(r), draw(r), draw(r)
        kw["roi"] = [h0, w0, h1, w1] if use_axes else [0, 0, h0, w0, 1, 1, h1, w1]
        kw["extrapolation_value"] = draw(st.sampled_from([0.0, -1.5, 10.0]))
    return (n, c, h, w), kw
