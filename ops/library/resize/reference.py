"""float64 references for twinops' resize ops (F.interpolate and ONNX Resize-19) and their
per-dtype tolerances.

These are the references the twinops suite, ``twinops check`` and users' own suites compare
against; they never call the twinops kernels (``onnx_reference_is_unstable`` only uses the
Python argument planner to find the output sizes).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ...testing.tolerances import TOLERANCES  # noqa: F401  (the generic table, which interpolate and dynamic_resize use)

# onnx.reference computes cubic weights in float32 (its cubic_coeff_a is a float32 attribute):
# float64 results can only be held to float32's tolerance against it.
ONNX_TOLERANCES = {**TOLERANCES, torch.float64: TOLERANCES[torch.float32]}


def _nearest_formula(x: torch.Tensor, out_hw, scales) -> torch.Tensor:
    """mode='nearest' as ATen's CUDA kernel computes it: min(floor(dst * scale), in - 1)
    with scale = float(1 / scale_factor) or float(in) / out, all in float32."""
    idx = []
    for in_len, out_len, s in zip(x.shape[2:], out_hw, scales):
        r = torch.tensor(1.0 / s, dtype=torch.float32) if s else \
            torch.tensor(in_len, dtype=torch.float32) / torch.tensor(out_len, dtype=torch.float32)
        d = torch.arange(out_len, dtype=torch.float32)
        idx.append(torch.clamp(torch.floor(d * r).long(), max=in_len - 1).to(x.device))
    return x[:, :, idx[0]][:, :, :, idx[1]]


def interpolate_reference(x: torch.Tensor, **kw) -> torch.Tensor:
    """F.interpolate as the reference: float64 for interpolating modes; for nearest modes
    the same dtype (ATen computes their indices in float whatever the dtype).

    Documented exceptions, where ATen's CPU kernels are not the reference:
    * ATen's CPU kernels short-cut an axis whose output length equals the input length
      (nearest also 2x) to a copy even when the scale factor given says otherwise; ATen's
      CUDA kernels and twinops apply the formula. There the formula is the reference
      (``_nearest_formula``; for the other modes twinops.library.resize.export's float64 reference).
    * ATen's CPU antialias kernels return zeros when W_out == 1 while H changes.
    """
    from .export import _aten_resize
    from .api import _interpolate_plan

    out, attrs = _interpolate_plan(x, kw.get("size"), kw.get("scale_factor"), kw["mode"], kw.get("align_corners"),
                                   kw.get("recompute_scale_factor"), kw.get("antialias", False))
    in_hw = tuple(x.shape[2:])
    if x.device.type == "cpu" and kw["mode"] != "nearest-exact":  # nearest_exact_idx has no short cut
        factors = (1, 2) if kw["mode"] == "nearest" else (1,)
        short_cut = attrs.coordinate_transformation_mode != "align_corners" and any(
            s > 0 and o in [f * i for f in factors] and s != o / i for o, i, s in zip(out, in_hw, attrs.scales))
        aa_bug = bool(kw.get("antialias")) and out[1] == 1 and out[0] not in (1, in_hw[0])
        if kw["mode"] == "nearest" and short_cut:
            return _nearest_formula(x, out, attrs.scales)
        if kw["mode"] != "nearest" and (short_cut or aa_bug):
            y = _aten_resize(x.detach().double().numpy(), out, attrs.mode, attrs.coordinate_transformation_mode,
                             attrs.cubic_coeff_a, attrs.antialias, attrs.scales)
            return torch.from_numpy(np.asarray(y))
    if kw["mode"] in ("nearest", "nearest-exact"):
        return F.interpolate(x, **kw)
    return F.interpolate(x.double(), **kw)


def onnx_reference(x: torch.Tensor, **kw) -> torch.Tensor:
    """ONNX Resize-19 through onnx.reference.ReferenceEvaluator.

    It interpolates in float64 but computes cubic weights in float32 (cubic_coeff_a is a
    float32 attribute), so compare float32 results against it, not float64 ones."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    kw = dict(kw)
    if "axes" in kw:  # the reference mishandles negative axes; ONNX allows them
        kw["axes"] = [a % x.dim() for a in kw["axes"]]
    inputs = ["X", "roi", "scales", "sizes"]
    feeds = {"X": x.detach().cpu().float().numpy() if x.dtype != torch.float64 else x.detach().cpu().numpy()}
    elem = TensorProto.DOUBLE if x.dtype == torch.float64 else TensorProto.FLOAT
    roi = kw.pop("roi", None)
    scales = kw.pop("scales", None)
    sizes = kw.pop("sizes", None)
    feeds["roi"] = np.asarray(roi if roi is not None else [], dtype=np.float32)
    feeds["scales"] = np.asarray(scales if scales is not None else [], dtype=np.float32)
    feeds["sizes"] = np.asarray(sizes if sizes is not None else [], dtype=np.int64)
    if sizes is None:
        inputs = inputs[:3]
        del feeds["sizes"]
    node = helper.make_node("Resize", inputs, ["Y"], **kw)
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("X", elem, None),
         helper.make_tensor_value_info("roi", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, None)]
        + ([helper.make_tensor_value_info("sizes", TensorProto.INT64, None)] if sizes is not None else []),
        [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (y,) = ReferenceEvaluator(model).run(None, feeds)
    return torch.from_numpy(np.asarray(y, dtype=np.float64))


def dynamic_resize_reference(x: torch.Tensor, size_tensor: torch.Tensor, align_corners: bool = False) -> torch.Tensor:
    """twinops.dynamic_resize's reference: F.interpolate to ``size_tensor.shape[-2:]``, bicubic,
    in float64 (the short cut exceptions of :func:`interpolate_reference` apply)."""
    return interpolate_reference(x, size=tuple(size_tensor.shape[-2:]), mode="bicubic", align_corners=align_corners)


def onnx_unsuitable(shape, kw):
    """Why ``twinops check`` skips a resize draw (None: it does not): see :func:`onnx_reference_is_unstable`."""
    if onnx_reference_is_unstable(shape, kw):
        return "onnx.reference picks a shifted tap window here (a source coordinate an ulp above an integer)"
    return None


def onnx_reference_is_unstable(shape, kw) -> bool:
    """True when onnx.reference itself is unreliable for this case.

    The reference picks its tap window from ``x + pad`` but its weights from ``x``; when a
    source coordinate lies within an ulp above an integer (half_pixel_symmetric produces
    1.0000000000000002 for what is exactly 1), ``x + pad`` rounds to the integer and the
    window shifts by one tap. Such draws are skipped, not papered over with a tolerance.
    """
    from .api import _resize_plan
    from onnx.reference.ops.op_resize import _compute_x_ori

    x = torch.zeros(shape)
    kw = dict(kw)
    args = {k: kw.pop(k, None) for k in ("roi", "scales", "sizes")}
    (oh, ow), attrs = _resize_plan(x, args["roi"], args["scales"], args["sizes"], kw.pop("antialias", 0),
                                   kw.pop("axes", None), kw.pop("coordinate_transformation_mode", "half_pixel"),
                                   kw.pop("cubic_coeff_a", -0.75), kw.pop("exclude_outside", 0),
                                   kw.pop("extrapolation_value", 0.0), kw.pop("keep_aspect_ratio_policy", "stretch"),
                                   kw.pop("mode", "nearest"), kw.pop("nearest_mode", "round_prefer_floor"))
    roi = attrs.roi
    for in_len, out_len, scale, r in ((shape[2], oh, attrs.scales[0], (roi[0], roi[2])),
                                      (shape[3], ow, attrs.scales[1], (roi[1], roi[3]))):
        scale = scale if scale > 0 else out_len / in_len  # 0: derived from the sizes
        xo, _ = _compute_x_ori(attrs.coordinate_transformation_mode, np.arange(out_len, dtype=np.float64), scale,
                               in_len, scale * in_len, out_len, np.asarray(r, dtype=np.float32))
        frac = xo - np.floor(xo)
        if np.any((frac > 0) & (frac < 1e-9)):
            return True
    return False
