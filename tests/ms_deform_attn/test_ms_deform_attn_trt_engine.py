"""ms_deform_attn on real TensorRT engines (T3): skipped where `tensorrt` or a GPU is missing.

Three nodes reach twinops' ms_deform_attn kernel in an engine, each built with a dynamic batch
and query count, run at two shapes of the profile and compared bitwise with the torch op (the
same kernel): twinops' own TwinopsMSDeformAttn (twinops.export_onnx), MMDeploy's
MMCVMultiScaleDeformableAttention (with its im2col_step attribute) and TensorRT's
MultiscaleDeformableAttnPlugin_TRT layout, selected with plugin_namespace="twinops" and int32
level tables.
"""
import pytest
import torch

import twinops
from twinops import trt as ttrt

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")
LEVELS = ((12, 14), (6, 7), (3, 4))
S, M, D, P = sum(h * w for h, w in LEVELS), 4, 8, 3
NAMES = ["value", "spatial_shapes", "level_start_index", "sampling_locations", "attention_weights"]


def _data(n, lq, dtype, index_dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    sizes = torch.tensor([h * w for h, w in LEVELS])
    value = torch.randn(n, S, M, D, generator=g)
    loc = torch.rand(n, lq, M, len(LEVELS), P, 2, generator=g) * 1.2 - 0.1
    weights = torch.rand(n, lq, M, len(LEVELS), P, generator=g)
    return [value.to("cuda", dtype), torch.tensor(LEVELS).to("cuda", index_dtype),
            (torch.cumsum(sizes, 0) - sizes).to("cuda", index_dtype), loc.to("cuda", dtype),
            weights.to("cuda", dtype)]


def _profiles():
    """N from 1 to 4, Lq from 1 to 64 (example 2 and 20)."""
    def one(example, lo, hi):
        return tuple(lo), tuple(example), tuple(hi)
    levels = len(LEVELS)
    return {"value": one((2, S, M, D), (1, S, M, D), (4, S, M, D)),
            "spatial_shapes": one((levels, 2), (levels, 2), (levels, 2)),
            "level_start_index": one((levels,), (levels,), (levels,)),
            "sampling_locations": one((2, 20, M, levels, P, 2), (1, 1, M, levels, P, 2), (4, 64, M, levels, P, 2)),
            "attention_weights": one((2, 20, M, levels, P), (1, 1, M, levels, P), (4, 64, M, levels, P))}


def _check(runner, dtype, index_dtype, layout):
    for seed, (n, lq) in enumerate([(2, 20), (4, 57)]):
        xs = _data(n, lq, dtype, index_dtype, seed)
        (y,) = runner(**dict(zip(NAMES, xs))).values()
        torch.cuda.synchronize()
        want = twinops.ms_deform_attn(*xs)
        assert y.dtype == dtype and y.shape == ((n, lq, M * D) if layout == 3 else (n, lq, M, D))
        torch.testing.assert_close(y.reshape(want.shape), want, rtol=0, atol=0, msg=f"N = {n}, Lq = {lq}")


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_twinops_node_engine_equals_the_torch_op(dtype):
    xs = _data(2, 20, dtype)
    dynamic = {"value": {0: "n"}, "sampling_locations": {0: "n", 1: "lq"}, "attention_weights": {0: "n", 1: "lq"}}
    proto = twinops.export_onnx(twinops.MSDeformAttn(), tuple(xs), dynamo=False, input_names=NAMES,
                                output_names=["y"], dynamic_axes=dynamic)
    assert [n.op_type for n in proto.graph.node if n.domain == "twinops"] == ["TwinopsMSDeformAttn"]
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, _profiles()))
    _check(runner, dtype, torch.int64, 3)


def _drop_in_model(op_type, domain, dtype, index_dtype, layout, **attrs):
    """A graph of one drop-in node on the five inputs, as MMDeploy or a TensorRT recipe writes it."""
    from onnx import TensorProto, helper

    t = {torch.float32: TensorProto.FLOAT, torch.float16: TensorProto.FLOAT16}[dtype]
    i = {torch.int64: TensorProto.INT64, torch.int32: TensorProto.INT32}[index_dtype]
    levels = len(LEVELS)
    inputs = [helper.make_tensor_value_info("value", t, ["n", S, M, D]),
              helper.make_tensor_value_info("spatial_shapes", i, [levels, 2]),
              helper.make_tensor_value_info("level_start_index", i, [levels]),
              helper.make_tensor_value_info("sampling_locations", t, ["n", "lq", M, levels, P, 2]),
              helper.make_tensor_value_info("attention_weights", t, ["n", "lq", M, levels, P])]
    out = helper.make_tensor_value_info("y", t, ["n", "lq", M * D] if layout == 3 else ["n", "lq", M, D])
    node = helper.make_node(op_type, NAMES, ["y"], domain=domain, **attrs)
    graph = helper.make_graph([node], op_type, inputs, [out])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32], ids=["int64", "int32"])
def test_mmdeploy_node_engine_equals_the_torch_op(dtype, index_dtype):
    model = _drop_in_model("MMCVMultiScaleDeformableAttention", "mmdeploy", dtype, index_dtype, 3, im2col_step=64)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(), plugins=True))
    _check(runner, dtype, index_dtype, 3)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_tensorrt_layout_node_selected_by_namespace_equals_the_torch_op(dtype):
    model = _drop_in_model("MultiscaleDeformableAttnPlugin_TRT", "", dtype, torch.int32, 4,
                           plugin_namespace="twinops")
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(), plugins=True))
    _check(runner, dtype, torch.int32, 4)
