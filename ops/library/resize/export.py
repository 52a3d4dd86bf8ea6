"""ONNX faces of resize's nodes: their TorchScript symbolics, dynamo translations and onnx.reference kernels.

Nodes (domain ``twinops``; the op_type is the TensorRT plugin name; declared in
``twinops.library.resize.declaration``, whose :class:`~twinops.opdef.Node` entries point here):

* ``TwinopsResize(X, sizes) -> Y`` for ``torch.ops.twinops.resize``. ``sizes`` is a 1-D int64
  tensor ``[H_out, W_out]``: a constant when the output size is static, computed from
  ``Shape(X)`` when it follows a dynamic input size. Attributes: mode, coordinate_transformation_mode,
  nearest_mode (STRING), cubic_coeff_a (FLOAT), exclude_outside, antialias (INT), scales (FLOATS, 2),
  roi (FLOATS, 4), extrapolation_value (FLOAT), pytorch (INT) and
  tensorrt_plugin_shape_input_indices (INTS = [1], so a TensorRT IPluginV3 receives the *values*
  of ``sizes``). A dynamic ``sizes`` is computed from ``Shape(X)`` in int64 exactly as eager
  computes it (:func:`twinops.onnx_sizes.exact_size_constants`).
* ``DynamicTRTResize(input, size_tensor) -> output`` for ``torch.ops.twinops.dynamic_resize``,
  attribute align_corners (INT); MMDeploy's contract (only ``size_tensor``'s shape is read). Its
  dynamo translation is the generic one (``twinops.onnx_nodes.default_translation``).

Both carry ``plugin_version="1"`` and ``plugin_namespace=""`` (STRING), see
:func:`twinops.onnx_nodes.plugin_attributes`. ``twinops.onnx_export`` registers what is here
for every exporter; onnx and onnxscript are imported lazily.

Size rules of the exporters (what ``twinops.onnx_export`` documents for the user):

* TorchScript (covers opsets 7 and up; 9 and up where a size is rebuilt): static output sizes
  export as a constant ``sizes`` input. With ``dynamic_axes`` on H/W, an output size that eager
  derived from a scale (twinops.interpolate's ``scale_factor``, also with
  ``recompute_scale_factor=True``, or twinops.resize's ``scales``) is rebuilt in the graph
  exactly in int64; ``keep_aspect_ratio_policy`` with dynamic H/W raises a ValueError (its size
  is computed in Python from the traced lengths). Any other output size stays the constant seen
  while tracing: the tracer records the op's SymInt[] as constants, which is right for a
  ``size=`` / ``sizes=`` given as numbers.
* dynamo: ``output_size`` reaches :func:`translate_resize` as python ints (static) or INT64
  scalar values (symbolic, from ``dynamic_shapes``); they become the 1-D int64 ``sizes`` input.
  Symbolic sizes that eager derived from a scale the op keeps are rebuilt exactly in int64,
  because torchlib evaluates ``sym_float`` in float32; a symbolic size that still reaches the
  node through floating point (``recompute_scale_factor=True``) raises a ValueError.
"""
import functools
import math
import warnings
from typing import List, Optional, Sequence

import numpy as np
import torch

from ... import onnx_nodes as N
from ...onnx_sizes import _emit_exact_sizes
from .declaration import DYNAMIC_NODE, RESIZE_NODE

__all__ = ["RESIZE_OP_TYPE", "DYNAMIC_RESIZE_OP_TYPE", "tag_traced_size", "ts_resize", "ts_dynamic_resize",
           "translate_resize", "twinops_resize_reference", "dynamic_trt_resize_reference"]

RESIZE_OP_TYPE = RESIZE_NODE.op_type
DYNAMIC_RESIZE_OP_TYPE = DYNAMIC_NODE.op_type

# ONNX TensorProto data types (avoid importing onnx for a few integers).
_FLOAT, _FLOAT16, _DOUBLE, _BFLOAT16 = 1, 10, 11, 16
_FLOAT_TYPE_IDS = (_FLOAT, _FLOAT16, _DOUBLE, _BFLOAT16)


# ---------------------------------------------------------------------------------------
# shared attribute handling
# ---------------------------------------------------------------------------------------

def _node_scales(scales: Sequence[float], output_size: Sequence, input_hw: Sequence, pytorch: int) -> List[float]:
    """The ``scales`` attribute: the op's scales, warned about when float32 narrows them.

    With ``pytorch=0`` a scale that equals out/in exactly (what twinops.resize derives from
    ``sizes``) is written as 0, which the kernel and the reference define as "derived out/in in
    double" -- the same number without the float32 rounding of the attribute. Only on a static
    axis: on a dynamic one (``input_hw`` None) the graph rebuilds the output length from the
    scale, and at another input length out/in is another number than the scale eager uses
    (scale 0.5: 3/6 at the traced length, 3/7 at length 7).
    """
    out, narrowed = [], []
    for axis, s in enumerate(scales):
        s = float(s)
        o, i = output_size[axis], input_hw[axis]
        if not pytorch and s > 0 and isinstance(o, int) and isinstance(i, int) and i > 0 and o / i == s:
            s = 0.0
        if float(np.float32(s)) != s:
            narrowed.append(f"{s!r} (axis {'HW'[axis]}) -> {float(np.float32(s))!r}")
        out.append(s)
    if narrowed:
        warnings.warn(
            f"twinops ONNX export: scale {', '.join(narrowed)} is not representable in float32 and the "
            "FLOATS attribute 'scales' narrows it, which can change results slightly; a scale that is a float32 "
            "value (e.g. 2, 0.5, 1.25) exports exactly", UserWarning, stacklevel=3)
    return out


def _recompute_axes(scales: Sequence[float], dynamic: Sequence[bool]) -> List[bool]:
    """Axes whose output length is rebuilt in the graph as eager's ``floor(in * scale)``.

    A scale > 0 on the op is the one eager derived the output length from: twinops.interpolate
    stores F.interpolate's scale factor exactly then (``pytorch=1``; area too), twinops.resize its
    float32 ONNX scale (``pytorch=0``; 0 when ``sizes`` were given). A static axis keeps its
    constant, which is the same number.
    """
    return [float(s) > 0 and d for s, d in zip(scales, dynamic)]


# ---------------------------------------------------------------------------------------
# output sizes the TorchScript tracer records
# ---------------------------------------------------------------------------------------

def tag_traced_size(output: torch.Tensor, recompute_scale_factor=None, frozen: Optional[str] = None) -> None:
    """Marks the traced twinops::resize node that produced ``output`` (TorchScript ONNX export only).

    The tracer records the op's ``output_size`` as constants. ``recompute_scale_factor``
    (the pair of scale factors) lets the symbolic rebuild a dynamic size exactly; ``frozen``
    (the argument that made the size depend on the input's lengths in Python) makes it refuse a
    dynamic input instead of exporting a silently fixed size. The tags reach the symbolic as
    keyword arguments.
    """
    if not torch.onnx.is_in_onnx_export():
        return
    try:
        node = torch._C._get_value_trace(output).node()
    except Exception:  # noqa: BLE001 - not traced (e.g. an exporter that does not trace): nothing to tag
        return
    if node.kind() != "twinops::resize":
        return
    if recompute_scale_factor is not None:
        node.s_("twinops_recompute_scale_factor", ",".join(repr(float(v)) for v in recompute_scale_factor))
    if frozen is not None:
        node.s_("twinops_frozen_size", frozen)


# ---------------------------------------------------------------------------------------
# TorchScript exporter (torch.onnx.export(..., dynamo=False))
# ---------------------------------------------------------------------------------------

def _ts_const(g, value: torch.Tensor):
    return g.op("Constant", value_t=value)


def _ts_original_list(g, index: int, fallback):
    """The double values of a float[] argument from the traced node (the converted graph holds float32)."""
    try:
        value = g.original_node.inputsAt(index).toIValue()
        if isinstance(value, (list, tuple)) and len(value) == len(fallback):
            return [float(v) for v in value]
    except Exception:  # noqa: BLE001 - any failure means "not available": use the float32 copy
        pass
    return [float(v) for v in fallback]


def _ts_emitter(g):
    """``emit`` for :func:`_emit_exact_sizes` over a TorchScript GraphContext."""
    def emit(op_type, inputs, attrs):
        if op_type == "Constant":
            return g.op("Constant", value_t=torch.from_numpy(np.ascontiguousarray(attrs["value"])))
        return g.op(op_type, *inputs, **{f"{k}_i": v for k, v in attrs.items()})
    return emit


# The traced node's inputs are (input, output_size, *attrs): where scales sits among them.
_TS_SCALES_INDEX = 2 + [a.name for a in RESIZE_NODE.attrs].index("scales")


def ts_resize(g, input, output_size, *attrs, twinops_recompute_scale_factor=None, twinops_frozen_size=None):
    """TorchScript symbolic of twinops::resize (the size rules are in this module's docstring)."""
    from torch.onnx import symbolic_helper as sh

    values = N.ts_parse(RESIZE_NODE, attrs)
    scales = values["scales"] = _ts_original_list(g, _TS_SCALES_INDEX, values["scales"])
    pytorch = values["pytorch"]

    # The tracer records SymInt[] as a constant (it cannot trace tensors inside an int list).
    out = sh._maybe_get_const(output_size, "is")
    if sh._is_value(out):
        raise RuntimeError("twinops ONNX export (TorchScript): output_size must be a constant list of ints; "
                           "use the dynamo exporter (dynamo=True) for symbolic output sizes")
    out = [int(v) for v in out]
    in_sizes = sh._get_tensor_sizes(input) or [None] * 4
    in_hw = list(in_sizes[2:4])
    dynamic = [v is None for v in in_hw]
    if twinops_frozen_size is not None and any(dynamic):
        raise ValueError(f"twinops ONNX export (TorchScript): {twinops_frozen_size} makes the output size depend on "
                         "the input size in Python, which the tracer records as the constant "
                         f"{tuple(out)}; with dynamic_axes on H/W the exported size would be wrong at other input "
                         "sizes. Export with static H/W, or use the dynamo exporter (dynamo=True)")

    node_scales = _node_scales(scales, out, in_hw, pytorch)
    size_scales = list(scales)
    if twinops_recompute_scale_factor is not None:
        # recompute_scale_factor=True: the op carries no scale (the kernel uses in/out), the tag does
        size_scales = [float(v) for v in twinops_recompute_scale_factor.split(",")]
    recompute = _recompute_axes(size_scales, dynamic)
    if any(recompute):
        shape = g.op("Shape", input)
        hw = g.op("Gather", shape, _ts_const(g, torch.tensor([2, 3], dtype=torch.int64)), axis_i=0)
        sizes = _emit_exact_sizes(_ts_emitter(g), hw, size_scales, recompute, out, g.opset)
    else:
        sizes = _ts_const(g, torch.tensor(out, dtype=torch.int64))

    y = N.ts_node(g, RESIZE_NODE, [input, sizes], {**values, "scales": node_scales})
    out_hw = [None if r else o for o, r in zip(out, recompute)]
    y.setType(input.type().with_sizes([in_sizes[0], in_sizes[1]] + out_hw))
    return y


def ts_dynamic_resize(g, input, size_tensor, *attrs):
    """TorchScript symbolic of twinops::dynamic_resize: the generic node, typed with size_tensor's last two dims."""
    from torch.onnx import symbolic_helper as sh

    y = N.ts_node(g, DYNAMIC_NODE, [input, size_tensor], N.ts_parse(DYNAMIC_NODE, attrs))
    in_sizes = sh._get_tensor_sizes(input) or [None] * 4
    size_sizes = sh._get_tensor_sizes(size_tensor) or [None, None]
    y.setType(input.type().with_sizes([in_sizes[0], in_sizes[1]] + list(size_sizes[-2:])))
    return y


# ---------------------------------------------------------------------------------------
# dynamo exporter (torch.onnx.export(..., dynamo=True))
# ---------------------------------------------------------------------------------------

def _refuse_float_size(value, axis: str) -> None:
    """Raises when a symbolic output length reaches the resize node through floating point.

    torch.export's symbolic sizes are translated by torchlib, which evaluates ``sym_float`` and
    its products in float32; such a length differs from eager's double arithmetic (``floor(10 *
    0.7)``). Lengths the exporter keeps as int64 arithmetic (``x.shape[2] * 2``) pass.
    """
    seen, todo = set(), [value]
    while todo:
        v = todo.pop()
        node = v.producer() if hasattr(v, "producer") else None
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        floating = node.op_type in ("Floor", "Ceil", "Round") or (
            node.op_type == "Cast" and "to" in node.attributes and node.attributes["to"].value in _FLOAT_TYPE_IDS)
        if floating:
            raise ValueError(
                f"twinops ONNX export: the output length along {axis} is computed in floating point by the exporter "
                "(float32), which differs from eager's double arithmetic for some input sizes; this is what "
                "recompute_scale_factor=True (or a size computed from x.shape with floats) gives with dynamic_shapes. "
                "Use recompute_scale_factor=False/None, integer size arithmetic, or static H/W")
        todo.extend(i for i in node.inputs if i is not None)


@functools.lru_cache(maxsize=None)
def _onnxscript():
    from onnxscript import ir
    from onnxscript import opset18 as op

    def emit(op_type, inputs, attrs):
        if op_type == "Constant":
            return op.Constant(value=ir.tensor(attrs["value"]))
        return getattr(op, op_type)(*inputs, **attrs)

    return op, emit, N.onnxscript_op(RESIZE_NODE)


def _static(v) -> bool:
    return isinstance(v, (int, np.integer))


def translate_resize(a: dict):
    """dynamo translation of twinops::resize, ``a``: the torch op's arguments by name (the size
    rules are in this module's docstring)."""
    op, emit, resize_op = _onnxscript()
    input, output_size, scales, pytorch = a["input"], a["output_size"], a["scales"], a["pytorch"]
    shape = input.shape
    in_hw = [shape[d] if shape is not None and isinstance(shape[d], int) else None for d in (2, 3)]
    out = [int(v) if _static(v) else v for v in output_size]
    node_scales = _node_scales(scales, out, in_hw, pytorch)
    # torchlib computes floor(sym_float(h) * s) in float32: rebuilt exactly where the scale is known
    recompute = _recompute_axes(scales, [not _static(v) for v in out])
    for axis, (v, r) in enumerate(zip(out, recompute)):
        if not _static(v) and not r:
            _refuse_float_size(v, "HW"[axis])
    if any(recompute):
        hw = op.Gather(op.Shape(input), op.Constant(value_ints=[2, 3]), axis=0)
        static = [v if _static(v) and not r else 0 for v, r in zip(out, recompute)]
        symbolic_kept = [not _static(v) and not r for v, r in zip(out, recompute)]
        computed = _emit_exact_sizes(emit, hw, scales, recompute, static, 18)
        if not any(symbolic_kept):
            sizes = computed
        else:  # the other axis is symbolic: keep the exporter's INT64 scalar for it
            sizes = [op.Gather(computed, op.Constant(value_int=i), axis=0) if r else v
                     for i, (v, r) in enumerate(zip(out, recompute))]
    else:
        sizes = out  # ints and INT64 scalars: the exporter concatenates them into a 1-D int64 tensor
    return resize_op(input, sizes, **N.node_attributes(RESIZE_NODE, {**a, "scales": node_scales}))


# ---------------------------------------------------------------------------------------
# export without editing the model: F.interpolate's ATen ops -> TwinopsResize (pytorch=1)
# ---------------------------------------------------------------------------------------

# The ATen ops F.interpolate lowers to for 4-D input -> (its mode, antialias). "area" lowers to
# adaptive_avg_pool2d, which nn.AdaptiveAvgPool2d (global pooling) calls too: not mapped, it stays
# standard ONNX. 3-D and 5-D input lower to other ops (upsample_*1d / *3d; twinops' resize is 4-D):
# standard ONNX Resize too.
_ATEN_UPSAMPLE = {
    "upsample_nearest2d": ("nearest", False),
    "_upsample_nearest_exact2d": ("nearest-exact", False),
    "upsample_bilinear2d": ("bilinear", False),
    "_upsample_bilinear2d_aa": ("bilinear", True),
    "upsample_bicubic2d": ("bicubic", False),
    "_upsample_bicubic2d_aa": ("bicubic", True),
}


def _aten_scales(scale_factors, scales_h=None, scales_w=None) -> List[float]:
    """The (H, W) scales the ATen op's kernel uses (0 where none): ``.vec``'s ``scale_factors``
    or the explicit overload's ``scales_h`` / ``scales_w``."""
    if scale_factors is not None:
        values = [float(v) for v in scale_factors]
        if len(values) != 2:
            raise ValueError(f"twinops ONNX export: a 2-D upsample op needs 2 scale factors, got {values}")
        return values
    return [float(v) if v is not None else 0.0 for v in (scales_h, scales_w)]


def _ts_upsample(mode: str, antialias: bool):
    """TorchScript symbolic of ``aten::<upsample op>`` (``mode`` as F.interpolate's): both
    overloads, ``(input, output_size, [align_corners,] scale_factors)`` (``.vec``, what
    F.interpolate calls) and ``(input, output_size, [align_corners,] scales_h, scales_w)``.

    Output size: the traced output's H/W where the input's H/W are static (exactly what the op
    computed); on a dynamic axis the size eager derives from a scale factor is rebuilt exactly in
    int64 from ``Shape(input)``, an integer size stays the constant or the int64 arithmetic the
    tracer recorded, and a size the tracer computed in floating point (F.interpolate's
    ``recompute_scale_factor=True``) is refused with a ValueError.
    """
    has_align = mode in ("bilinear", "bicubic")

    def symbolic(g, input, output_size, *rest):
        from torch.onnx import symbolic_helper as sh

        from .api import interpolate_attrs

        align = bool(sh._maybe_get_const(rest[0], "b")) if has_align else False
        tail = rest[1:] if has_align else rest
        index = 2 + (1 if has_align else 0)  # where the scales start among the node's inputs
        if len(tail) == 1:  # .vec: float[]? scale_factors
            factors = None if sh._is_none(tail[0]) else _ts_original_list(g, index, sh._maybe_get_const(tail[0], "fs"))
            scales = _aten_scales(factors)
        else:
            scales = _aten_scales(None, *[None if sh._is_none(v) else float(sh._maybe_get_const(v, "f")) for v in tail])
        in_sizes = sh._get_tensor_sizes(input) or [None] * 4
        if len(in_sizes) != 4:
            raise ValueError(f"twinops ONNX export: replace=('interpolate',) maps 4-D input, got rank {len(in_sizes)}")
        in_hw = list(in_sizes[2:4])
        dynamic = [v is None for v in in_hw]
        traced = _ts_traced_hw(g)
        sizes, out, recompute = None, list(traced), [False, False]
        if not any(dynamic) and None not in traced:
            pass  # static H/W: the traced output size is the op's
        elif sh._is_none(output_size):  # the scale factors define the size: floor(in * s)
            out = [math.floor(i * s) if i is not None else 0 for i, s in zip(in_hw, scales)]
            recompute = list(dynamic)
        elif sh._is_value(output_size) and output_size.node().kind() == "prim::ListConstruct":
            sizes = _ts_size_list(g, sh._unpack_list(output_size))
            out = [None, None]
        else:  # constants; as for twinops::resize, a dynamic axis with a scale follows floor(in * s)
            out = [int(v) for v in sh._maybe_get_const(output_size, "is")]
            recompute = _recompute_axes(scales, dynamic)
        node_scales = _node_scales(scales, out, in_hw, 1)
        if any(recompute):
            hw = g.op("Gather", g.op("Shape", input), _ts_const(g, torch.tensor([2, 3], dtype=torch.int64)), axis_i=0)
            sizes = _emit_exact_sizes(_ts_emitter(g), hw, scales, recompute, out, g.opset)
        elif sizes is None:
            sizes = _ts_const(g, torch.tensor(out, dtype=torch.int64))
        attrs = interpolate_attrs(mode, align, antialias, node_scales)
        y = N.ts_node(g, RESIZE_NODE, [input, sizes], attrs.as_dict())
        out_hw = [None if r or v is None else v for v, r in zip(out, recompute)]
        y.setType(input.type().with_sizes([in_sizes[0], in_sizes[1]] + out_hw))
        return y

    return symbolic


def _ts_traced_hw(g) -> List[Optional[int]]:
    """H_out, W_out of the traced op's output (None where unknown)."""
    try:
        sizes = g.original_node.output().type().sizes()
        return [int(v) if v is not None else None for v in sizes[2:4]]
    except Exception:  # noqa: BLE001 - no complete type: unknown
        return [None, None]


def _ts_size_list(g, elements) -> object:
    """A traced ``[H_out, W_out]`` list as a 1-D int64 value; refuses lengths the tracer computed
    in floating point (float32 here, double in eager: they differ for some input sizes)."""
    seen, todo = set(), list(elements)
    while todo:
        v = todo.pop()
        node = v.node()
        if id(node) in seen or node.kind() in ("onnx::Shape", "prim::Param"):
            continue
        seen.add(id(node))
        if node.kind() in ("onnx::Floor", "onnx::Ceil", "onnx::Round") or (
                node.kind() == "onnx::Cast" and node.i("to") in _FLOAT_TYPE_IDS):
            raise ValueError(
                "twinops ONNX export: the output size of an upsample op is computed in floating point (float32) by "
                "the traced graph, which differs from eager's double arithmetic for some input sizes; this is what "
                "F.interpolate(recompute_scale_factor=True) gives under tracing. Use "
                "recompute_scale_factor=False/None, integer size arithmetic, or static H/W")
        todo.extend(node.inputs())
    int64 = 7  # TensorProto.INT64
    parts = [g.op("Reshape", g.op("Cast", v, to_i=int64), _ts_const(g, torch.tensor([1], dtype=torch.int64)))
             for v in elements]
    return g.op("Concat", *parts, axis_i=0)


def _translate_upsample(mode: str, antialias: bool):
    """dynamo translation body of an upsample overload: :func:`translate_resize` with the
    attributes :func:`twinops.resize.interpolate_attrs` gives; ``output_size`` None (``.vec``
    with scale factors) means ``floor(in * s)``, rebuilt exactly on a symbolic axis."""
    def body(a: dict):
        from .api import interpolate_attrs

        scales = _aten_scales(a.get("scale_factors"), a.get("scales_h"), a.get("scales_w"))
        input = a.get("input", a.get("self"))
        shape = input.shape
        if shape is not None and len(shape) != 4:
            raise ValueError(f"twinops ONNX export: replace=('interpolate',) maps 4-D input, got rank {len(shape)}")
        out = a["output_size"]
        if out is None:
            in_hw = [shape[d] if shape is not None and isinstance(shape[d], int) else None for d in (2, 3)]
            out = [math.floor(i * s) if i is not None else None for i, s in zip(in_hw, scales)]
        attrs = interpolate_attrs(mode, bool(a.get("align_corners", False)), antialias, scales)
        return translate_resize({"input": input, "output_size": list(out), **attrs.as_dict()})

    return body


def _upsample_translations() -> dict:
    from ...onnx_replace import aten_translation

    table = {}
    for name, (mode, antialias) in _ATEN_UPSAMPLE.items():
        packet = getattr(torch.ops.aten, name)
        for overload in ("vec", "default"):
            op = getattr(packet, overload)
            table[op] = aten_translation(op, _translate_upsample(mode, antialias))
    return table


def _register_interpolate_replacement() -> None:
    from ...onnx_replace import AtenReplacement, register_replacement

    register_replacement(AtenReplacement(
        name="interpolate",
        summary="F.interpolate on 4-D input (nearest, nearest-exact, bilinear, bicubic, antialias; ATen's "
                "upsample_*2d ops) -> TwinopsResize (pytorch=1); area and 3-D/5-D input stay standard ONNX",
        symbolics={f"aten::{name}": _ts_upsample(*how) for name, how in _ATEN_UPSAMPLE.items()},
        translations=_upsample_translations))


_register_interpolate_replacement()


# ---------------------------------------------------------------------------------------
# onnx.reference kernels (independent of the twinops kernels)
# ---------------------------------------------------------------------------------------

def _aa_axis(t: torch.Tensor, axis: int, scale: float, cubic: bool) -> torch.Tensor:
    """ATen's antialias filter along one axis of equal input and output length (scale = 1/scale_factor)."""
    n = t.shape[axis]
    support = (2.0 if cubic else 1.0) * max(scale, 1.0)
    a = -0.5

    def filt(v):
        v = abs(v)
        if not cubic:
            return max(0.0, 1.0 - v)
        if v < 1:
            return ((a + 2) * v - (a + 3)) * v * v + 1
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a if v < 2 else 0.0

    weights = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        center = scale * (i + 0.5)
        lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n)
        taps = [filt((j - center + 0.5) / max(scale, 1.0)) for j in range(lo, hi)]
        weights[i, lo:hi] = torch.tensor(taps, dtype=torch.float64) / sum(taps)
    return torch.movedim(torch.movedim(t, axis, -1) @ weights.T, -1, axis)


def _aten_resize(x: np.ndarray, sizes, mode, ctm, cubic_coeff_a, antialias, scales) -> np.ndarray:
    """pytorch=1: ATen's CPU upsample kernels in float64 with both output size and scale factors.

    ATen's CPU kernels short-cut an axis whose output length equals the input length (nearest
    also 2x the input) to a copy (``dst >> 1``) even when a scale factor says otherwise; its CUDA
    kernels and twinops apply the formula. The reference follows the formula: nearest and
    bilinear get one replicated edge row on such an axis (same samples, no short cut), antialias
    filters such an axis with the same window arithmetic in float64.
    """
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
    out = [int(v) for v in sizes]
    in_hw = [t.shape[2], t.shape[3]]
    sh, sw = [float(s) if float(s) > 0 else None for s in scales]
    aten = torch.ops.aten
    align = ctm == "align_corners"

    def short_cut(axis, factors):
        s = (sh, sw)[axis]
        return s is not None and not align and any(out[axis] == f * in_hw[axis] for f in factors)

    def pad_edges(v, axes):
        for axis in axes:
            d = 2 + axis
            v = torch.cat([v, v.narrow(d, v.shape[d] - 1, 1)], d)
        return v

    if mode == "area":
        y = aten.adaptive_avg_pool2d(t, out)
    elif mode == "nearest":
        if ctm == "asymmetric":
            y = aten.upsample_nearest2d(pad_edges(t, [a for a in (0, 1) if short_cut(a, (1, 2))]), out, sh, sw)
        elif ctm == "half_pixel":
            y = aten._upsample_nearest_exact2d(t, out, sh, sw)
        else:
            raise NotImplementedError(f"TwinopsResize reference: pytorch=1 nearest with {ctm!r}")
    elif mode in ("linear", "cubic"):
        if ctm not in ("half_pixel", "align_corners"):
            raise NotImplementedError(f"TwinopsResize reference: pytorch=1 {mode} with {ctm!r}")
        want_a = -0.5 if (antialias and mode == "cubic") else -0.75
        if mode == "cubic" and not math.isclose(cubic_coeff_a, want_a):
            raise NotImplementedError(f"TwinopsResize reference: pytorch=1 cubic needs cubic_coeff_a={want_a}")
        if not antialias:
            fn = aten.upsample_bilinear2d if mode == "linear" else aten.upsample_bicubic2d
            if mode == "linear":
                t = pad_edges(t, [a for a in (0, 1) if short_cut(a, (1,))])
            y = fn(t, out, align, sh, sw)
        else:
            fn = aten._upsample_bilinear2d_aa if mode == "linear" else aten._upsample_bicubic2d_aa
            if out[1] == 1 and out[0] not in (1, in_hw[0]):
                # ATen's CPU _aa kernels return zeros when W_out == 1 while H changes (torch 2.14);
                # the filter is separable and symmetric in H/W, so run it transposed.
                y = fn(t.transpose(2, 3), [out[1], out[0]], align, sw, sh).transpose(2, 3).contiguous()
            else:
                y = fn(t, out, align, sh, sw)
            for axis in (0, 1):
                if short_cut(axis, (1,)):  # ATen left this axis as is
                    y = _aa_axis(y, 2 + axis, 1.0 / (sh, sw)[axis], mode == "cubic")
    else:
        raise NotImplementedError(f"TwinopsResize reference: unknown mode {mode!r}")
    return y.numpy()


def _onnx_resize(x: np.ndarray, sizes, mode, ctm, nearest_mode, cubic_coeff_a, exclude_outside, antialias, scales,
                 roi, extrapolation_value, per_axis: Optional[bool] = None) -> np.ndarray:
    """pytorch=0: onnx.reference's Resize arithmetic, per axis with the node's scale and output length.

    ``per_axis`` (default: when this onnx has it) uses the 1-D helper, which takes the scale and the
    output length together; otherwise the n-d helper of older onnx releases gets the scales.
    """
    from onnx.reference.ops import op_resize as R

    if per_axis is None:
        per_axis = hasattr(R, "_interpolate_1d_along_axis")

    if mode == "nearest":
        if antialias:
            raise ValueError("TwinopsResize reference: antialias is not defined for nearest")

        def coeffs(ratio, scale):
            return R._nearest_coeffs(ratio, mode=nearest_mode)
    elif mode == "cubic":
        cubic = R._cubic_coeffs_antialias if antialias else R._cubic_coeffs

        def coeffs(ratio, scale):
            return cubic(ratio, scale, A=cubic_coeff_a)
    elif mode == "linear":
        coeffs = R._linear_coeffs_antialias if antialias else R._linear_coeffs
    else:
        raise ValueError(f"TwinopsResize reference: unknown mode {mode!r}")

    out = [int(v) for v in sizes]
    tf = ctm == "tf_crop_and_resize"
    axis_roi = [(float(roi[0]), float(roi[2])), (float(roi[1]), float(roi[3]))]
    axis_scale = [float(s) if float(s) > 0 else out[i] / x.shape[2 + i] for i, s in enumerate(scales)]
    if per_axis:
        result = x.astype(np.float64)
        for i, axis in enumerate((2, 3)):
            r0, r1 = axis_roi[i] if tf else (0.0, 1.0)
            if (math.isclose(axis_scale[i], 1.0) and out[i] == result.shape[axis]
                    and math.isclose(r0, 0.0) and math.isclose(r1, 1.0)):
                continue  # onnx.reference skips identity axes
            result = R._interpolate_1d_along_axis(
                # Resize-19 does the roi arithmetic in float32, as the kernel does
                result, axis, axis_scale[i], out[i], coeffs, roi=np.asarray([r0, r1], np.float32) if tf else None,
                extrapolation_value=float(extrapolation_value), coordinate_transformation_mode=ctm,
                exclude_outside=bool(exclude_outside))
    else:  # older onnx: the n-d helper, scales per dim when given, else sizes
        full_roi = (np.asarray([0.0, 0.0, axis_roi[0][0], axis_roi[1][0], 1.0, 1.0, axis_roi[0][1], axis_roi[1][1]],
                               np.float32) if tf else None)
        given = any(float(s) > 0 for s in scales)
        result = R._interpolate_nd(
            x, coeffs, output_size=None if given else [x.shape[0], x.shape[1]] + out,
            scale_factors=[1.0, 1.0] + axis_scale if given else None, roi=full_roi,
            exclude_outside=bool(exclude_outside), coordinate_transformation_mode=ctm,
            extrapolation_value=float(extrapolation_value))
        if list(result.shape[2:]) != out:
            raise RuntimeError(f"TwinopsResize reference: output {result.shape} does not match sizes {out}")
    return result


def twinops_resize_reference(X, sizes, **a):
    """onnx.reference kernel of twinops::TwinopsResize; ``a``: the node's attributes (RESIZE_NODE's,
    at their declared defaults when absent)."""
    sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
    if len(sizes) != 2 or X.ndim != 4:
        raise ValueError(f"TwinopsResize: expects 4-D X and 2 sizes, got {X.shape} and {sizes}")
    mode, ctm, a_cubic = a["mode"], a["coordinate_transformation_mode"], float(a["cubic_coeff_a"])
    scales = [float(s) for s in a["scales"]]
    if a["pytorch"]:
        y = _aten_resize(X, sizes, mode, ctm, a_cubic, int(a["antialias"]), scales)
    else:
        y = _onnx_resize(X, sizes, mode, ctm, a["nearest_mode"], a_cubic, int(a["exclude_outside"]),
                         int(a["antialias"]), scales, [float(r) for r in a["roi"]], float(a["extrapolation_value"]))
    return (y.astype(X.dtype),)


def dynamic_trt_resize_reference(input, size_tensor, align_corners, **_):
    """onnx.reference kernel of twinops::DynamicTRTResize (bicubic A=-0.75, ATen arithmetic)."""
    out = list(np.shape(size_tensor)[-2:])
    y = _aten_resize(input, out, "cubic", "align_corners" if align_corners else "half_pixel", -0.75, 0, [0.0, 0.0])
    return (y.astype(input.dtype),)
