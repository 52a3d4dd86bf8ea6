"""Exact output sizes inside exported graphs, in int64 shape arithmetic only.

Eager computes an output length as ``floor(in * s)`` with the product rounded to double; an
exported graph must give the same integer for every input length up to 2^31 - 1, with only
what TensorRT accepts in shape computations (int64 Gather, ReduceSum and elementwise ops; no
float64 tensors). :func:`exact_size_constants` says how, :func:`exact_size_model` is the
fragment as a stand-alone model (for tests and for users' own checks); the exporters emit the
same fragment through ``_emit_exact_sizes``. Generic: it knows lengths and scales, no op.
"""
import math
from fractions import Fraction
from typing import Dict, Sequence

import numpy as np

# Exact in-graph sizes hold for every input length up to this one (see exact_size_constants).
MAX_INPUT_LENGTH = 2**31 - 1
_MAX_OUTPUT_LENGTH = 2**52


def exact_size_constants(scales: Sequence[float], axes: Sequence[bool] = (True, True)) -> Dict[str, np.ndarray]:
    """int64 constants of the graph that computes ``floor(in * s)`` as eager does, per axis.

    Eager multiplies the input length by the scale in double and floors the rounded product
    (PyTorch's ``floor(float(in) * scale_factor)``; an ONNX-style op with a FLOATS scale:
    ``int(float32_scale * in)``), so the graph must reproduce that rounding, not just the exact
    floor (``10 * 0.7`` rounds to ``7.0`` in double). With ``s = M / 2^K`` (``M`` an integer,
    the double's binary fraction), ``P = in * s`` and ``F = floor(P)``: the double nearest ``P`` is
    ``F + 1`` exactly when ``F + 1 - P <= ulp(P) / 2`` (a tie goes to ``F + 1``, whose last
    significand bit is 0 while ``P < 2^52``), i.e. when ``2^K - (in * M mod 2^K) <= T`` with
    ``T = 2^(K + c - 53)``, ``c = floor(log2 P)``. Both cases are one expression::

        out = floor((in * M + T) / 2^K)

    ``T`` (0 while ``K + c < 53``) doubles at each binade of ``P``; the binade boundaries are the
    input lengths ``ceil(2^j / s)``, known at export time, so ``T`` is a sum of weights over the
    boundaries ``in`` has passed. ``in * M`` can need 84 bits, so ``M = Mh * 2^L + Ml`` and
    ``out = floor((in * Mh + floor((in * Ml + T) / 2^L)) / 2^(K - L))``, every term below 2^58.

    Args:
        scales: one positive finite double per axis (H, W).
        axes: which axes are rebuilt; the others get zero constants (their size is added later).

    Returns:
        dict of int64 arrays: ``mh``, ``ml``, ``div_l``, ``div_kl`` of shape (2,) and
        ``thresholds`` (``ceil(2^j / s) - 1``, compared with ``>``), ``weights`` of shape (2, J)
        (J >= 0; missing entries padded with an unreachable threshold and weight 0).

    Raises:
        ValueError: a rebuilt scale is not positive and finite, or so large that
        ``MAX_INPUT_LENGTH * s`` reaches 2^52 (no tensor is that long), or so small that every
        output length would be 0.
    """
    rows = []
    for s, on in zip(scales, axes):
        if not on:
            rows.append((0, 0, 1, 1, []))
            continue
        s = float(s)
        if not 0.0 < s < math.inf:
            raise ValueError(f"twinops ONNX export: a scale rebuilt in the graph must be positive and finite, got {s!r}")
        if MAX_INPUT_LENGTH * Fraction(s) >= _MAX_OUTPUT_LENGTH:
            raise ValueError(f"twinops ONNX export: scale {s!r} is too large to rebuild the output size exactly in "
                             f"the graph (input lengths up to {MAX_INPUT_LENGTH} would give lengths >= 2^52)")
        if MAX_INPUT_LENGTH * Fraction(s) < 1:
            raise ValueError(f"twinops ONNX export: scale {s!r} gives an empty output for every input length "
                             f"up to {MAX_INPUT_LENGTH}")
        m, den = s.as_integer_ratio()
        k = den.bit_length() - 1  # den is a power of two
        split = min(k, 26)
        thresholds, weights = [], []
        top = math.floor(math.log2(MAX_INPUT_LENGTH * s)) + 1
        for j in range(53 - k, top + 1):
            first = -((-(1 << (j + k))) // m)  # ceil(2^j / s): the first length whose product reaches 2^j
            if first > MAX_INPUT_LENGTH:
                break
            thresholds.append(first - 1)
            weights.append(1 if j == 53 - k else 1 << (j - 1 + k - 53))
        rows.append((m >> split, m & ((1 << split) - 1), 1 << split, 1 << (k - split), list(zip(thresholds, weights))))
    width = max(len(r[4]) for r in rows)
    never = np.iinfo(np.int64).max
    return {
        "mh": np.array([r[0] for r in rows], np.int64),
        "ml": np.array([r[1] for r in rows], np.int64),
        "div_l": np.array([r[2] for r in rows], np.int64),
        "div_kl": np.array([r[3] for r in rows], np.int64),
        "thresholds": np.array([[t for t, _ in r[4]] + [never] * (width - len(r[4])) for r in rows],
                               np.int64).reshape(len(rows), width),
        "weights": np.array([[w for _, w in r[4]] + [0] * (width - len(r[4])) for r in rows],
                            np.int64).reshape(len(rows), width),
    }


def _emit_exact_sizes(emit, hw, scales: Sequence[float], axes: Sequence[bool], static: Sequence[int], opset: int):
    """Appends the int64 graph of :func:`exact_size_constants` to a graph under construction.

    ``emit(op_type, inputs, attrs)`` adds one node and returns its output, ``emit("Constant",
    [], {"value": array})`` a constant; ``hw`` is the int64 ``[H, W]`` value. Rebuilt axes get
    ``floor(in * s)``, the others ``static`` (their constant lengths). Only Gather, ReduceSum and
    elementwise int64 ops (Sub, Max, Mul, Add, Div): the layers TensorRT computes shape
    tensors with (IGatherLayer, IReduceLayer, IElementWiseLayer), so it can evaluate the sizes
    at build time; a comparison ``in > t`` is ``max(d, 0) / max(d, 1)`` with ``d = in - t``, not a
    bool tensor. Needs opset >= 12 (Max of int64).
    """
    if opset < 12:
        raise ValueError(f"twinops ONNX export: rebuilding a dynamic output size needs opset_version >= 12, got {opset}")
    c = exact_size_constants(scales, axes)

    def const(a):
        return emit("Constant", [], {"value": np.asarray(a, np.int64)})

    b = emit("Mul", [hw, const(c["ml"])], {}) if c["ml"].any() else None
    if c["thresholds"].shape[1]:
        column = emit("Gather", [hw, const([[0], [1]])], {"axis": 0})  # [2, 1], broadcast against [2, J]
        # max(d, 0) / max(d, 1) is [d > 0]; min(max(d, 0), 1) would be fused into a Clip by onnxscript's
        # optimizer, and Clip is not a layer TensorRT computes shape tensors with
        d = emit("Sub", [column, const(c["thresholds"])], {})
        passed = emit("Div", [emit("Max", [d, const(0)], {}), emit("Max", [d, const(1)], {})], {})
        picked = emit("Mul", [passed, const(c["weights"])], {})
        if opset >= 13:
            t = emit("ReduceSum", [picked, const([1])], {"keepdims": 0})
        else:
            t = emit("ReduceSum", [picked], {"axes": [1], "keepdims": 0})
        b = t if b is None else emit("Add", [b, t], {})
    y = emit("Mul", [hw, const(c["mh"])], {})
    if b is not None:
        if (c["div_l"] != 1).any():
            b = emit("Div", [b, const(c["div_l"])], {})
        y = emit("Add", [y, b], {})
    if (c["div_kl"] != 1).any():
        y = emit("Div", [y, const(c["div_kl"])], {})
    if any(not a and v for a, v in zip(axes, static)):
        y = emit("Add", [y, const([0 if a else int(v) for a, v in zip(axes, static)])], {})
    return y


def exact_size_model(scales: Sequence[float], axes: Sequence[bool] = (True, True), static: Sequence[int] = (0, 0),
                     opset: int = 18):
    """A stand-alone ``onnx.ModelProto``: int64 input ``hw`` (shape [2]) -> int64 output ``sizes``.

    The exporters' size fragment on its own (see :func:`exact_size_constants`), so it can be run
    by onnx.reference / onnxruntime and compared with eager's formula for any input length.
    """
    from onnx import TensorProto, helper, numpy_helper

    nodes = []

    def emit(op_type, inputs, attrs):
        out = f"v{len(nodes)}"
        if op_type == "Constant":
            nodes.append(helper.make_node("Constant", [], [out], value=numpy_helper.from_array(attrs["value"])))
        else:
            nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    y = _emit_exact_sizes(emit, "hw", scales, axes, static, opset)
    nodes.append(helper.make_node("Identity", [y], ["sizes"]))
    graph = helper.make_graph(nodes, "twinops_exact_sizes", [helper.make_tensor_value_info("hw", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("sizes", TensorProto.INT64, [2])])
    # IR 8 is the oldest that carries opset 18, so older runtimes load it too
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
