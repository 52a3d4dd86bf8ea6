"""deform_conv2d on real TensorRT engines (T3): skipped where `tensorrt` or a GPU is missing.

Four nodes reach twinops' deform_conv2d kernel in an engine, each built with a dynamic batch and
image size, run at two shapes of the profile and compared bitwise with the torch op (the same
kernel), on a geometry whose H and W kernel size, stride, padding and dilation all differ (the
case MMDeploy's own plugins read as (W, H)): twinops' TwinopsDeformConv2d (twinops.export_onnx),
MMDeploy's MMCVModulatedDeformConv2d and MMCVDeformConv2d, and ONNX's DeformConv through the
parser's plugin override.
"""
import pytest
import torch

import twinops
from twinops import trt as ttrt

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")
C_IN, C_OUT, KH, KW = 4, 6, 3, 2
STRIDE, PADDING, DILATION = (2, 1), (1, 0), (1, 2)


def _out(h, w):
    return ((h + 2 * PADDING[0] - DILATION[0] * (KH - 1) - 1) // STRIDE[0] + 1,
            (w + 2 * PADDING[1] - DILATION[1] * (KW - 1) - 1) // STRIDE[1] + 1)


def _data(n, h, w, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    ho, wo = _out(h, w)
    xs = [torch.randn(n, C_IN, h, w, generator=g), torch.randn(n, 2 * KH * KW, ho, wo, generator=g) * 2,
          torch.randn(C_OUT, C_IN, KH, KW, generator=g), torch.randn(C_OUT, generator=g),
          torch.rand(n, KH * KW, ho, wo, generator=g)]
    return [x.to("cuda", dtype) for x in xs]


def _profiles(names):
    """N 1-4, H 7-40, W 9-48 (example 2 x 12 x 16)."""
    def image(c):
        return (1, c, 7, 9), (2, c, 12, 16), (4, c, 40, 48)

    def out(c):
        return (1, c, *_out(7, 9)), (2, c, *_out(12, 16)), (4, c, *_out(40, 48))

    shapes = {"input": image(C_IN), "offset": out(2 * KH * KW), "mask": out(KH * KW),
              "weight": ((C_OUT, C_IN, KH, KW),) * 3, "bias": ((C_OUT,),) * 3}
    return {k: v for k, v in shapes.items() if k in names}


def _check(runner, dtype, order, with_mask=True, with_bias=True):
    for seed, (n, h, w) in enumerate([(2, 12, 16), (3, 31, 40)]):
        x, off, wt, b, m = _data(n, h, w, dtype, seed)
        feeds = dict(input=x, offset=off, weight=wt, bias=b, mask=m)
        (y,) = runner(**{k: feeds[k] for k in order}).values()
        torch.cuda.synchronize()
        want = twinops.deform_conv2d(x, off, wt, b if with_bias else None, STRIDE, PADDING, DILATION,
                                     m if with_mask else None)
        torch.testing.assert_close(y, want, rtol=0, atol=0, msg=f"N = {n}, H = {h}, W = {w}")


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_twinops_node_engine_equals_the_torch_op(dtype):
    names = ["input", "offset", "weight", "bias", "mask"]
    xs = _data(2, 12, 16, dtype)
    dynamic = {"input": {0: "n", 2: "h", 3: "w"}, "offset": {0: "n", 2: "ho", 3: "wo"}, "mask": {0: "n", 2: "ho", 3: "wo"}}
    model = twinops.library.deform_conv2d.DeformConv2dOp(STRIDE, PADDING, DILATION)
    proto = twinops.export_onnx(model, tuple(xs), dynamo=False, input_names=names, output_names=["y"],
                                dynamic_axes=dynamic)
    assert [n.op_type for n in proto.graph.node if n.domain == "twinops"] == ["TwinopsDeformConv2d"]
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, _profiles(names)))
    _check(runner, dtype, names)


def _drop_in_model(op_type, domain, names, dtype, **attrs):
    """A graph of one drop-in node on ``names``, as MMDeploy or an ONNX exporter writes it."""
    from onnx import TensorProto, helper

    t = {torch.float32: TensorProto.FLOAT, torch.float16: TensorProto.FLOAT16}[dtype]
    dims = {"input": ["n", C_IN, "h", "w"], "offset": ["n", 2 * KH * KW, "ho", "wo"], "mask": ["n", KH * KW, "ho", "wo"],
            "weight": [C_OUT, C_IN, KH, KW], "bias": [C_OUT]}
    inputs = [helper.make_tensor_value_info(k, t, dims[k]) for k in names]
    out = helper.make_tensor_value_info("y", t, ["n", C_OUT, "ho", "wo"])
    node = helper.make_node(op_type, names, ["y"], domain=domain, **attrs)
    opsets = [helper.make_opsetid("", 19)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(helper.make_graph([node], op_type, inputs, [out]), opset_imports=opsets)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mmdeploy_modulated_node_engine_equals_the_torch_op(dtype):
    names = ["input", "offset", "mask", "weight", "bias"]
    model = _drop_in_model("MMCVModulatedDeformConv2d", "mmdeploy", names, dtype, stride=list(STRIDE),
                           padding=list(PADDING), dilation=list(DILATION), groups=1, deform_groups=1)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(names), plugins=True))
    _check(runner, dtype, names)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mmdeploy_dcnv1_node_engine_equals_the_torch_op(dtype):
    names = ["input", "offset", "weight"]
    pads = [PADDING[0], PADDING[0], PADDING[1], PADDING[1]]  # as MMDeploy's symbolic writes them
    model = _drop_in_model("MMCVDeformConv2d", "mmdeploy", names, dtype, stride=list(STRIDE), padding=pads,
                           dilation=list(DILATION), groups=1, deform_groups=1)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(names), plugins=True))
    _check(runner, dtype, names, with_mask=False, with_bias=False)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_onnx_deformconv_through_the_plugin_override_equals_the_torch_op(dtype):
    import tensorrt as trt

    if not hasattr(getattr(trt, "OnnxParserFlag", None), "ENABLE_PLUGIN_OVERRIDE"):
        pytest.skip(f"TensorRT {trt.__version__}'s ONNX parser has no plugin override (10.15+)")
    names = ["input", "weight", "offset", "bias", "mask"]
    model = _drop_in_model("DeformConv", "", names, dtype, dilations=list(DILATION),
                           pads=[PADDING[0], PADDING[1], PADDING[0], PADDING[1]], strides=list(STRIDE))
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(names), plugin_override=True))
    _check(runner, dtype, names)
