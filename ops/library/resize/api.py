"""Resize: the Python API over the one op ``torch.ops.twinops.resize``.

Three entry points share that op:

* :func:`interpolate` -- ``torch.nn.functional.interpolate`` for 4-D input (same signature,
  same output sizes, same arithmetic).
* :func:`resize` -- ONNX Resize-19 on 4-D NCHW input resizing H and W, every attribute.
* :func:`dynamic_resize` -- bicubic resize to ``size_tensor.shape[-2:]`` (MMDeploy's
  ``DynamicTRTResize`` contract).

The op's attributes use the ONNX Resize names; ``pytorch=1`` selects F.interpolate's
arithmetic (float coordinates, ATen's scale rules and antialias window).
"""
from __future__ import annotations

import math
import numbers
import struct
from typing import Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from . import export
from ...opdef import attrs_class, check_arg, check_tensor, renamed
from .declaration import (ASPECT_POLICIES, COORDINATE_MODES, DYNAMIC_RESIZE, INPUT, INTERPOLATE,
                         INTERPOLATE_MODES, LENGTH_MAX, NEAREST_MODES, ONNX_MODES, RESIZE, RESIZE_NODE)

__all__ = [
    "interpolate",
    "resize",
    "dynamic_resize",
    "Interpolate",
    "Resize",
    "DynamicResize",
    "ResizeAttrs",
    "INTERPOLATE_MODES",
    "ONNX_MODES",
    "COORDINATE_MODES",
    "NEAREST_MODES",
]

ResizeAttrs = attrs_class("ResizeAttrs", RESIZE_NODE, """The op's attributes (ONNX Resize names; exported verbatim as node attributes).

    One field per attribute of ``twinops.library.resize.declaration.RESIZE_NODE``, with its default; ``op_args()``
    gives them in the op's argument order. ``scales`` is per axis (H, W). With ``pytorch=1`` it is
    F.interpolate's scale factor (0 = none given: the kernel uses in/out); with ``pytorch=0`` it
    is the ONNX scale (0 = derived from the sizes as out/in). ``roi`` is (h_start, w_start, h_end,
    w_end).
    """, __name__)


# ---------------------------------------------------------------------------------------
# torch.library registrations: fake kernels (autograd: C++; backward is its own op)
# ---------------------------------------------------------------------------------------

def _suggest_format(t: Tensor) -> torch.memory_format:
    from torch._prims_common import suggest_memory_format

    return suggest_memory_format(t)


# The fake kernels take the node's attributes as ``*attrs`` (RESIZE_NODE's order, = the schema's).
@torch.library.register_fake("twinops::resize")
def _resize_fake(input, output_size, *attrs):
    # The C++ kernels' own checks (csrc/torch/resize/resize.cpp), so meta / fake calls reject
    # exactly what the CPU and CUDA kernels reject, with the same message.
    torch.ops.twinops._resize_check("resize", size_hints(input.shape), input.dtype, size_hints(output_size), *attrs)
    shape = (input.shape[0], input.shape[1], output_size[0], output_size[1])
    return input.new_empty(shape).contiguous(memory_format=_suggest_format(input))


@torch.library.register_fake("twinops::resize_backward")
def _resize_backward_fake(grad_output, input_size, *attrs):
    grad_shape, in_size = size_hints(grad_output.shape), size_hints(input_size)
    # N and C must agree; a symbolic one cannot be compared here (its hint may differ).
    for d in range(min(2, len(grad_shape), len(in_size))):
        if not (isinstance(grad_output.shape[d], int) and isinstance(input_size[d], int)):
            grad_shape[d] = in_size[d]
    torch.ops.twinops._resize_check("resize_backward", grad_shape, grad_output.dtype, in_size, *attrs)
    return grad_output.new_empty(tuple(input_size)).contiguous(memory_format=_suggest_format(grad_output))


# Autograd of both ops is registered in C++ (csrc/torch/resize/resize_autograd.cpp): each op's
# gradient is the other op, and the Python register_autograd path costs several times a
# small resize per call.


def _resize_op(input: Tensor, output_size: Sequence, attrs: ResizeAttrs, who: str) -> Tensor:
    try:
        return torch.ops.twinops.resize(input, list(output_size), *attrs.op_args())
    except RuntimeError as e:
        raise renamed(e, who) from None


# ---------------------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------------------

def _check_input(input, who: str) -> None:
    check_tensor(INPUT, input, who)  # type, rank and dtype: the declaration's generic messages
    hw = tuple(input.shape[2:])
    if any(isinstance(v, int) and not 1 <= v <= LENGTH_MAX for v in hw):
        raise ValueError(f"{who}: input H and W must be in [1, 2^31 - 1], got shape {tuple(input.shape)}")


def _check_args(op, who: str, **values) -> None:
    """The declared keyword arguments of ``op`` (type, choices), in declaration order."""
    for a in op.args:
        check_arg(a, values[a.name], who)


def _check_lengths(out, name: str, who: str, what=lambda: "") -> None:
    """Output lengths that are ints must not exceed LENGTH_MAX (positivity is checked where each
    argument is read); ``name`` is the argument they came from, ``what()`` describes them (a
    callable: formatting symbolic sizes into a string breaks torch.compile's graph, so the
    message is only built when it is raised)."""
    if any(isinstance(v, int) and v > LENGTH_MAX for v in out):
        raise ValueError(f"{who}: {name} must give output H and W of at most 2^31 - 1, got {what()}{tuple(out)}")


def _pair(value, name: str, who: str, kind) -> tuple:
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise ValueError(f"{who}: {name} must be a number or a pair (H, W), got {len(value)} values")
        out = tuple(value)
    else:
        out = (value, value)
    out = tuple(_int_tensor(v, name, who) if kind is int and isinstance(v, Tensor) else v for v in out)
    for v in out:
        if isinstance(v, bool) or not isinstance(v, (numbers.Number, torch.SymInt, torch.SymFloat)):
            raise TypeError(f"{who}: {name} must contain {kind.__name__}s, got {type(v).__name__}")
    return out


def _int_tensor(v: Tensor, name: str, who: str) -> int:
    """A 0-d integer tensor as an int (F.interpolate accepts them as sizes)."""
    if v.dim() != 0 or v.is_floating_point() or v.is_complex() or v.dtype == torch.bool:
        raise TypeError(f"{who}: {name} must contain ints or 0-d integer tensors, got a {v.dim()}-D {v.dtype} tensor")
    if torch.jit.is_tracing() and torch.onnx.is_in_onnx_export():
        # The TorchScript exporter traces x.shape as tensors; int() would record this export's
        # value as a constant, a silently fixed size for every other input shape.
        raise ValueError(f"{who}: {name} computed from a tensor (e.g. x.shape) cannot be exported by the "
                         "TorchScript exporter, which would record it as a constant; use the dynamo exporter "
                         "(dynamo=True) or scale_factor")
    return int(v)


def _to_list(value, name: str, who: str) -> Optional[list]:
    if value is None:
        return None
    if isinstance(value, Tensor):
        if value.dim() != 1:
            raise ValueError(f"{who}: {name} must be 1-D, got shape {tuple(value.shape)}")
        return value.detach().cpu().tolist()
    if isinstance(value, np.ndarray):
        return value.reshape(-1).tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError(f"{who}: {name} must be a sequence or a 1-D tensor, got {type(value).__name__}")


# ---------------------------------------------------------------------------------------
# F.interpolate
# ---------------------------------------------------------------------------------------

def _interpolate_plan(input: Tensor, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias,
                      who: str = "twinops.interpolate"):
    """Validates F.interpolate arguments; returns (output_size, ResizeAttrs)."""
    _check_input(input, who)
    _check_args(INTERPOLATE, who, mode=mode, align_corners=align_corners)
    if align_corners is not None and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"{who}: align_corners can only be set with mode 'bilinear' or 'bicubic', "
                         f"got mode={mode!r}")
    align = bool(align_corners)
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"{who}: antialias=True needs mode 'bilinear' or 'bicubic', got mode={mode!r}")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{who}: exactly one of size and scale_factor must be given"
                         + (", got both" if size is not None else ", got neither"))
    in_hw = (input.shape[2], input.shape[3])
    scales = (0.0, 0.0)
    if size is not None:
        if recompute_scale_factor is not None and recompute_scale_factor:
            raise ValueError(f"{who}: recompute_scale_factor is not meaningful with an explicit size")
        out = _pair(size, "size", who, int)
        for v in out:
            if isinstance(v, float) or (isinstance(v, numbers.Number) and not float(v).is_integer()):
                raise TypeError(f"{who}: size must contain ints, got {v!r}")
        out = tuple(int(v) if isinstance(v, numbers.Number) else v for v in out)
        for v in out:
            if isinstance(v, int) and v <= 0:
                raise ValueError(f"{who}: size must be positive, got {tuple(out)}")
        _check_lengths(out, "size", who)
    else:
        sf = _pair(scale_factor, "scale_factor", who, float)
        for v in sf:
            if not isinstance(v, (torch.SymFloat, torch.SymInt)) and not 0.0 < float(v) < math.inf:  # NaN fails too
                raise ValueError(f"{who}: scale_factor must be positive and finite, got {scale_factor!r}")
        # ATen's rule: out = floor(in * s) in double; the scale reaches the kernel unless recomputed.
        out = tuple(math.floor(torch.sym_float(i) * float(s)) for i, s in zip(in_hw, sf))
        for v in out:
            if isinstance(v, int) and v <= 0:
                raise ValueError(f"{who}: input size {tuple(in_hw)} times scale_factor {scale_factor!r} "
                                 f"gives an empty output size {tuple(out)}")
        _check_lengths(out, "scale_factor", who, lambda: f"input size {tuple(in_hw)} times {scale_factor!r} = ")
        if not recompute_scale_factor:
            scales = tuple(float(s) for s in sf)
    return out, interpolate_attrs(mode, align, antialias, scales)


def interpolate_attrs(mode: str, align_corners: bool, antialias: bool, scales) -> ResizeAttrs:
    """The op's attributes (``pytorch=1``) for F.interpolate's ``mode`` (one of
    :data:`INTERPOLATE_MODES`), ``align_corners`` and ``antialias`` (already validated) and
    ``scales`` (H, W): the scale factors the kernel uses, 0 where none (a size was given, or
    the scale is recomputed). :func:`interpolate` and the export of ATen's upsample ops
    (``export_onnx(replace=("interpolate",))``) both build the node from here."""
    scales = tuple(float(s) for s in scales)
    if mode == "nearest":
        return ResizeAttrs(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                           scales=scales, pytorch=1)
    if mode == "nearest-exact":
        return ResizeAttrs(mode="nearest", coordinate_transformation_mode="half_pixel",
                           nearest_mode="round_prefer_ceil", scales=scales, pytorch=1)
    if mode == "area":
        # The kernel ignores the scale for area; keeping it lets exporters rebuild a dynamic size.
        return ResizeAttrs(mode="area", coordinate_transformation_mode="half_pixel", scales=scales, pytorch=1)
    cubic = mode == "bicubic"
    return ResizeAttrs(mode="cubic" if cubic else "linear",
                       coordinate_transformation_mode="align_corners" if align_corners else "half_pixel",
                       cubic_coeff_a=(-0.5 if antialias else -0.75) if cubic else -0.75,
                       exclude_outside=int(bool(antialias)), antialias=int(bool(antialias)), scales=scales,
                       pytorch=1)


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """``torch.nn.functional.interpolate`` for 4-D input, computed by the twinops kernel.

    Args:
        input: (N, C, H, W) float32/float64/float16/bfloat16 tensor, any strides
            (channels_last input gives channels_last output).
        size: output (H_out, W_out), an int or a pair of positive ints. Exactly one of
            ``size`` and ``scale_factor``.
        scale_factor: a positive float or a pair; ``H_out = floor(H * s)`` in double.
        mode: ``nearest`` (default), ``nearest-exact``, ``bilinear``, ``bicubic``, ``area``.
        align_corners: bilinear/bicubic only; default None (= False).
        recompute_scale_factor: when True the kernel uses in/out instead of 1/scale_factor.
        antialias: bilinear/bicubic only; the PIL/ATen antialias filter (default False).

    Returns:
        (N, C, H_out, W_out) tensor, same dtype and device; differentiable (deterministic
        backward, also under ``torch.use_deterministic_algorithms(True)``).
    """
    return _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias,
                        "twinops.interpolate")


def _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias, who):
    out, attrs = _interpolate_plan(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                   antialias, who)
    y = _resize_op(input, out, attrs, who)
    if torch.jit.is_tracing() and recompute_scale_factor and scale_factor is not None:
        # The op keeps no scale here (the kernel uses in/out), so the TorchScript exporter learns
        # from this tag how to rebuild a dynamic output size.
        export.tag_traced_size(y, recompute_scale_factor=_pair(scale_factor, "scale_factor", who, float))
    return y


# ---------------------------------------------------------------------------------------
# ONNX Resize-19
# ---------------------------------------------------------------------------------------

# Written with comparisons and struct (not math.isfinite / numpy) so that torch.compile can
# trace the argument handling into the graph (fullgraph=True).
def _finite(v: float) -> bool:
    return -math.inf < v < math.inf


def _float32(v, name: str, who: str) -> float:
    """v rounded to float32 (ONNX passes scales and roi as float32 tensors)."""
    v = float(v)
    if _finite(v) and abs(v) > 3.4028234663852886e38:  # FLT_MAX: struct would overflow
        raise ValueError(f"{who}: {name} must fit in float32, got {v!r}")
    return struct.unpack("f", struct.pack("f", v))[0]


def _trunc(v):
    """int(v) for v >= 0, also for a SymFloat (floor == trunc there, and math.floor keeps the
    size symbolic under tracing where torch.sym_int does not trace)."""
    return int(v) if isinstance(v, (int, float)) else math.floor(v)


def _resize_plan(input: Tensor, roi, scales, sizes, antialias, axes, coordinate_transformation_mode, cubic_coeff_a,
                 exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode,
                 who: str = "twinops.resize"):
    """Validates ONNX Resize-19 arguments; returns (output_size, ResizeAttrs)."""
    _check_input(input, who)
    _check_args(RESIZE, who, mode=mode, coordinate_transformation_mode=coordinate_transformation_mode,
                nearest_mode=nearest_mode, keep_aspect_ratio_policy=keep_aspect_ratio_policy, antialias=antialias,
                exclude_outside=exclude_outside, cubic_coeff_a=cubic_coeff_a, extrapolation_value=extrapolation_value)
    if antialias and mode == "nearest":
        raise ValueError(f"{who}: antialias=1 is not defined for mode 'nearest'")

    rank = 4
    scales_l = _to_list(scales, "scales", who)
    sizes_l = _to_list(sizes, "sizes", who)
    roi_l = _to_list(roi, "roi", who)
    if scales_l is not None and len(scales_l) == 0:
        scales_l = None  # ONNX allows an empty scales input next to sizes
    if sizes_l is not None and len(sizes_l) == 0:
        sizes_l = None
    if (scales_l is None) == (sizes_l is None):
        raise ValueError(f"{who}: exactly one of scales and sizes must be given"
                         + (", got both" if scales_l is not None else ", got neither"))
    if axes is None:
        axes_l = list(range(rank))
    else:
        axes_l = [int(a) for a in _to_list(axes, "axes", who)]
        for a in axes_l:
            if not -rank <= a < rank:
                raise ValueError(f"{who}: axes must be in [-4, 3] for 4-D input, got {axes_l}")
        axes_l = [a % rank for a in axes_l]
        if len(set(axes_l)) != len(axes_l):
            raise ValueError(f"{who}: axes must not repeat, got {axes_l}")
    given = scales_l if scales_l is not None else sizes_l
    name = "scales" if scales_l is not None else "sizes"
    if len(given) != len(axes_l):
        raise ValueError(f"{who}: {name} must have one entry per axis ({len(axes_l)}), got {len(given)}")
    if keep_aspect_ratio_policy != "stretch" and sizes_l is None:
        raise ValueError(f"{who}: keep_aspect_ratio_policy applies only with sizes")

    # ints, or SymInts under torch.compile / torch.export (the TorchScript tracer hands out
    # 0-d tensors, whose float32 arithmetic would change int(scale * length): made ints).
    shape = [int(v) if isinstance(v, Tensor) else v for v in input.shape]
    full_roi = [0.0] * rank + [1.0] * rank
    if roi_l is not None and len(roi_l) > 0:
        if len(roi_l) != 2 * len(axes_l):
            raise ValueError(f"{who}: roi must have 2 * len(axes) = {2 * len(axes_l)} entries "
                             f"(starts then ends), got {len(roi_l)}")
        roi32 = [_float32(v, "roi", who) for v in roi_l]  # ONNX roi is a float32 tensor
        if not all(_finite(v) for v in roi32):
            raise ValueError(f"{who}: roi must be finite, got {roi_l}")
        for i, a in enumerate(axes_l):
            full_roi[a] = float(roi32[i])
            full_roi[rank + a] = float(roi32[len(axes_l) + i])
    # No roi with tf_crop_and_resize: the whole image (starts 0, ends 1), as ONNX Runtime takes it.

    def nc_error(out):
        return ValueError(f"{who}: only H and W (axes 2, 3) can be resized; the {name} for N and C "
                          f"must leave them unchanged (input shape {tuple(shape)}, output shape {tuple(out)})")

    # Per-axis scale (double; None = derived from the sizes as out/in, which the kernel does
    # itself, also for symbolic sizes) and output size, as onnx.reference computes them.
    if scales_l is not None:
        s32 = [_float32(v, "scales", who) for v in scales_l]  # ONNX scales are a float32 tensor
        if not all(_finite(v) and v > 0 for v in s32):
            raise ValueError(f"{who}: scales must be positive and finite, got {scales_l}")
        scale = [1.0] * rank
        for i, a in enumerate(axes_l):
            scale[a] = s32[i]
        out = [shape[d] if d < 2 else _trunc(scale[d] * shape[d]) for d in range(rank)]
        if not (math.isclose(scale[0], 1.0) and math.isclose(scale[1], 1.0)):
            raise nc_error([_trunc(scale[d] * shape[d]) for d in range(rank)])
    else:
        for v in sizes_l:
            if isinstance(v, Tensor):
                _int_tensor(v, "sizes", who)
            elif isinstance(v, bool) or not isinstance(v, numbers.Number) or (isinstance(v, float)
                                                                             and not v.is_integer()):
                raise TypeError(f"{who}: sizes must be integers, got {sizes_l}")
        req = {a: int(sizes_l[i]) for i, a in enumerate(axes_l)}
        if any(v <= 0 for v in req.values()):
            raise ValueError(f"{who}: sizes must be positive, got {sizes_l}")
        out = [req.get(d, shape[d]) for d in range(rank)]
        scale = [None] * rank
        if keep_aspect_ratio_policy != "stretch":
            # Needs concrete lengths: under tracing this specialises the input size.
            conc = [int(v) for v in shape]
            s = (min if keep_aspect_ratio_policy == "not_larger" else max)(req[a] / conc[a] for a in axes_l)
            scale = [s if d in axes_l else 1.0 for d in range(rank)]
            out = [int(s * conc[d] + 0.5) if d in axes_l else conc[d] for d in range(rank)]
        if any(d in req or scale[d] is not None for d in (0, 1)) and (out[0] != shape[0] or out[1] != shape[1]):
            raise nc_error(out)
    for d in (0, 1):
        if (full_roi[d] != 0.0 or full_roi[rank + d] != 1.0) and coordinate_transformation_mode == "tf_crop_and_resize":
            raise ValueError(f"{who}: roi may crop only H and W (axes 2, 3)")
    _check_lengths(out[2:], name, who, lambda: f"input {tuple(shape)} resized to ")
    if any(isinstance(o, int) and o <= 0 for o in out[2:]):
        raise ValueError(f"{who}: the output size {tuple(out)} is empty; scales {scales_l} are too small "
                         f"for input {tuple(shape)}")
    axis_scales = []
    for d in (2, 3):
        roi_identity = math.isclose(full_roi[d], 0.0) and math.isclose(full_roi[rank + d], 1.0)
        if scale[d] is None:
            axis_scales.append(0.0)  # out/in: exactly 1 on an identity axis
        elif math.isclose(scale[d], 1.0) and out[d] == shape[d] and roi_identity:
            # The reference skips identity axes; scale exactly 1 makes every mode an identity too.
            axis_scales.append(1.0)
        else:
            axis_scales.append(scale[d])
    use_roi = coordinate_transformation_mode == "tf_crop_and_resize"
    attrs = ResizeAttrs(
        mode=mode,
        coordinate_transformation_mode=coordinate_transformation_mode,
        nearest_mode=nearest_mode,
        cubic_coeff_a=float(cubic_coeff_a),
        exclude_outside=int(exclude_outside),
        antialias=int(antialias),
        scales=tuple(axis_scales),
        roi=(full_roi[2], full_roi[3], full_roi[6], full_roi[7]) if use_roi else (0.0, 0.0, 1.0, 1.0),
        extrapolation_value=float(extrapolation_value),
        pytorch=0,
    )
    return (out[2], out[3]), attrs


def resize(input: Tensor, roi=None, scales=None, sizes=None, *, antialias: int = 0, axes=None,
           coordinate_transformation_mode: str = "half_pixel", cubic_coeff_a: float = -0.75,
           exclude_outside: int = 0, extrapolation_value: float = 0.0, keep_aspect_ratio_policy: str = "stretch",
           mode: str = "nearest", nearest_mode: str = "round_prefer_floor") -> Tensor:
    """ONNX Resize-19 on a 4-D NCHW tensor (resizing H and W), computed by the twinops kernel.

    Inputs and attributes have ONNX's names and defaults; results match
    ``onnx.reference`` (coordinates in double, weights in the accumulation type).

    Args:
        input: (N, C, H, W) float32/float64/float16/bfloat16 tensor.
        roi: starts then ends, ``2 * len(axes)`` values (normalised); only read by
            ``tf_crop_and_resize``. A sequence or a 1-D tensor.
        scales: one float32 scale per axis in ``axes`` (default all 4 dims; N and C must be 1).
        sizes: one output length per axis in ``axes``. Exactly one of scales / sizes.
        antialias: 1 stretches the linear/cubic filter by the scale when downsampling.
        axes: subset of dims the scales/sizes/roi refer to (default all; negative allowed).
        coordinate_transformation_mode: half_pixel (default), pytorch_half_pixel,
            align_corners, asymmetric, half_pixel_symmetric, tf_crop_and_resize.
        cubic_coeff_a: Keys coefficient for cubic (default -0.75).
        exclude_outside: 1 gives taps outside the input zero weight and renormalises.
        extrapolation_value: value of tf_crop_and_resize samples outside the input (default 0).
        keep_aspect_ratio_policy: stretch (default), not_larger, not_smaller (sizes only).
        mode: nearest (default), linear, cubic.
        nearest_mode: round_prefer_floor (default), round_prefer_ceil, floor, ceil.

    Returns:
        (N, C, H_out, W_out) tensor; output sizes follow ONNX (``int(scale * length)`` with
        scales, ``round(scale * length)`` under keep_aspect_ratio_policy).
    """
    return _resize(input, roi, scales, sizes, antialias, axes, coordinate_transformation_mode, cubic_coeff_a,
                   exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode,
                   "twinops.resize")


def _resize(input, roi, scales, sizes, antialias, axes, coordinate_transformation_mode, cubic_coeff_a, exclude_outside,
            extrapolation_value, keep_aspect_ratio_policy, mode, nearest_mode, who):
    out, attrs = _resize_plan(input, roi, scales, sizes, antialias, axes, coordinate_transformation_mode,
                              cubic_coeff_a, exclude_outside, extrapolation_value, keep_aspect_ratio_policy, mode,
                              nearest_mode, who)
    y = _resize_op(input, out, attrs, who)
    if torch.jit.is_tracing() and keep_aspect_ratio_policy != "stretch":
        export.tag_traced_size(y, frozen="keep_aspect_ratio_policy")
    return y


# ---------------------------------------------------------------------------------------
# DynamicTRTResize (the classic size_tensor contract)
# ---------------------------------------------------------------------------------------

# The op (schema, kernel and autograd: csrc/torch/resize/resize_dynamic.cpp) is twinops::resize
# with the attributes below; its fake kernel is here with resize's.
_DYNAMIC_OP = "torch.ops.twinops.dynamic_resize"


def _dynamic_attrs(align_corners: int) -> ResizeAttrs:
    return ResizeAttrs(mode="cubic", coordinate_transformation_mode="align_corners" if align_corners else "half_pixel",
                       cubic_coeff_a=-0.75, pytorch=1)


@torch.library.register_fake("twinops::dynamic_resize")
def _dynamic_resize_fake(input, size_tensor, align_corners):
    for t, value in zip(DYNAMIC_RESIZE.inputs, (input, size_tensor)):
        if not t.accepts_rank(value.dim()):  # the declaration's ranks; the message of the op's own errors
            try:
                check_tensor(t, value, _DYNAMIC_OP)
            except (TypeError, ValueError) as e:
                raise RuntimeError(str(e)) from None
    try:
        torch.ops.twinops._resize_check("resize", size_hints(input.shape), input.dtype, size_hints(size_tensor.shape[-2:]),
                                        *_dynamic_attrs(align_corners).op_args())
    except RuntimeError as e:
        raise renamed(e, _DYNAMIC_OP) from None
    shape = (input.shape[0], input.shape[1], size_tensor.shape[-2], size_tensor.shape[-1])
    return input.new_empty(shape).contiguous(memory_format=_suggest_format(input))


def dynamic_resize(input: Tensor, size_tensor: Tensor, align_corners: bool = False) -> Tensor:
    """Bicubic resize of ``input`` to ``size_tensor.shape[-2:]`` (MMDeploy DynamicTRTResize).

    Equal to ``F.interpolate(input, size=size_tensor.shape[-2:], mode="bicubic",
    align_corners=align_corners)``; only the shape of ``size_tensor`` is read, so an
    exported model keeps a dynamic output size. Exports as node ``DynamicTRTResize``.

    Args:
        input: (N, C, H, W) floating tensor.
        size_tensor: tensor of rank >= 2 on input's device; its last two dims are (H_out, W_out).
        align_corners: as in F.interpolate (default False).
    """
    return _dynamic_resize(input, size_tensor, align_corners, "twinops.dynamic_resize")


def _dynamic_resize(input, size_tensor, align_corners, who):
    _check_input(input, who)
    check_tensor(DYNAMIC_RESIZE.input("size_tensor"), size_tensor, who)
    if size_tensor.device != input.device:
        raise ValueError(f"{who}: size_tensor is on {size_tensor.device} but input is on "
                         f"{input.device}; both must be on the same device")
    for v in size_tensor.shape[-2:]:
        if isinstance(v, int) and v <= 0:
            raise ValueError(f"{who}: size_tensor's last two dims (the output size) must be positive, "
                             f"got {tuple(size_tensor.shape[-2:])}")
    _check_args(DYNAMIC_RESIZE, who, align_corners=align_corners)
    _check_lengths(tuple(size_tensor.shape[-2:]), "size_tensor", who, lambda: "last two dims ")
    try:
        return torch.ops.twinops.dynamic_resize(input, size_tensor, int(align_corners))
    except RuntimeError as e:
        raise renamed(e, who) from None


# ---------------------------------------------------------------------------------------
# nn.Module wrappers
# ---------------------------------------------------------------------------------------

class Interpolate(torch.nn.Module):
    """Module form of :func:`interpolate`; constructor takes its keyword arguments."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None, antialias: bool = False):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor, self.antialias = align_corners, recompute_scale_factor, antialias

    def forward(self, input: Tensor) -> Tensor:
        return _interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                            self.recompute_scale_factor, self.antialias, "twinops.Interpolate")

    def extra_repr(self) -> str:
        return (f"size={self.size}, scale_factor={self.scale_factor}, mode={self.mode!r}, "
                f"align_corners={self.align_corners}, antialias={self.antialias}")


# resize's keyword arguments and their defaults: the declared ones, and axes (checked by _resize_plan)
_RESIZE_DEFAULTS = dict(sorted({**{a.name: a.default for a in RESIZE.args}, "axes": None}.items()))


class Resize(torch.nn.Module):
    """Module form of :func:`resize`; the constructor takes roi/scales/sizes and the attributes.

    Compiles with ``torch.compile(fullgraph=True)`` with symbolic input shapes (the default
    automatic dynamic shapes, or ``torch._dynamo.mark_dynamic``); ``dynamic=True`` also turns
    the module's float scales into symbols, which the float32 rounding of ONNX scales cannot
    trace."""

    def __init__(self, roi=None, scales=None, sizes=None, **attributes):
        super().__init__()
        self.roi, self.scales, self.sizes, self.attributes = roi, scales, sizes, dict(attributes)

    def forward(self, input: Tensor) -> Tensor:
        kw = {**_RESIZE_DEFAULTS, **self.attributes}
        unknown = sorted(set(kw) - set(_RESIZE_DEFAULTS))
        if unknown:
            raise TypeError(f"twinops.Resize: unknown attribute(s) {', '.join(unknown)} (expected some of "
                            f"{', '.join(_RESIZE_DEFAULTS)})")
        return _resize(input, self.roi, self.scales, self.sizes, who="twinops.Resize", **kw)


class DynamicResize(torch.nn.Module):
    """Module form of :func:`dynamic_resize`: ``forward(input, size_tensor)``."""

    def __init__(self, align_corners: bool = False):
        super().__init__()
        self.align_corners = align_corners

    def forward(self, input: Tensor, size_tensor: Tensor) -> Tensor:
        return _dynamic_resize(input, size_tensor, self.align_corners, "twinops.DynamicResize")
