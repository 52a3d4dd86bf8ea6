"""roi_align on real TensorRT engines (T3): skipped where `tensorrt` or a GPU is missing.

Each node that reaches twinops' roi_align kernel is built with a dynamic roi count (and batch), run
at two shapes of the profile and compared bitwise with the torch op (the same kernel): twinops'
TwinopsRoiAlign and TwinopsMultiLevelRoiAlign (twinops.export_onnx, replace=("roi_align",) for an
unmodified torchvision model too), MMDeploy's MMCVRoiAlign and MMCVMultiLevelRoiAlign, and a
standard ONNX RoiAlign node through the parser's plugin override.
"""
import numpy as np
import pytest
import torch

import twinops
from twinops import trt as ttrt
from twinops.library.roi_align.strategies import random_rois

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")
C, H, W = 8, 24, 30
STRIDES = (4.0, 8.0, 16.0)


def _data(n, k, dtype, seed=0, levels=1):
    g = torch.Generator().manual_seed(seed)
    feats = [torch.randn(n, C, H >> l, W >> l, generator=g).to("cuda", dtype) for l in range(levels)]
    rois = torch.from_numpy(random_rois(k, n, H, W, 0.25, np.random.default_rng(seed))).to("cuda", dtype)
    return feats, rois


def _one_level_profiles(in_name="input", rois_name="rois"):
    return {in_name: ((1, C, H, W), (2, C, H, W), (2, C, H, W)), rois_name: ((1, 5), (10, 5), (64, 5))}


def _check(run, want_fn, dtype, levels=1):
    for seed, (n, k) in enumerate([(2, 10), (2, 57)]):
        feats, rois = _data(n, k, dtype, seed, levels)
        y = run(feats, rois)
        torch.cuda.synchronize()
        torch.testing.assert_close(y, want_fn(feats, rois), rtol=0, atol=0, equal_nan=True, msg=f"K = {k}")


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_twinops_node_engine_equals_the_torch_op(dtype, mode):
    feats, rois = _data(2, 10, dtype)
    module = twinops.RoIAlign((3, 4), 0.25, 2, True, mode)
    proto = twinops.export_onnx(module, (feats[0], rois), dynamo=False, input_names=["input", "rois"],
                                output_names=["y"], dynamic_axes={"rois": {0: "k"}})
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, _one_level_profiles()))
    _check(lambda f, r: runner(input=f[0], rois=r)["y"], lambda f, r: module(f[0], r), dtype)


@needs_trt
def test_unmodified_torchvision_model_engine_equals_the_torch_op():
    torchvision = pytest.importorskip("torchvision")

    class Head(torch.nn.Module):
        def forward(self, x, rois):
            return torchvision.ops.roi_align(x, rois, 7, 0.25, 0, True)

    feats, rois = _data(2, 10, torch.float32)
    proto = twinops.export_onnx(Head(), (feats[0], rois), dynamo=False, input_names=["input", "rois"],
                                output_names=["y"], dynamic_axes={"rois": {0: "k"}}, replace=("roi_align",))
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, _one_level_profiles()))
    _check(lambda f, r: runner(input=f[0], rois=r)["y"], lambda f, r: twinops.roi_align(f[0], r, 7, 0.25, 0, True),
           torch.float32)


def _single_node_model(op_type, domain, inputs, dtype, out_hw, **attrs):
    from onnx import TensorProto, helper

    t = {torch.float32: TensorProto.FLOAT, torch.float16: TensorProto.FLOAT16}[dtype]
    vis = [helper.make_tensor_value_info(name, TensorProto.INT64 if name == "batch_indices" else t, shape)
           for name, shape in inputs]
    out = helper.make_tensor_value_info("y", t, ["k", C, *out_hw])
    node = helper.make_node(op_type, [name for name, _ in inputs], ["y"], domain=domain, **attrs)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(helper.make_graph([node], op_type, vis, [out]), opset_imports=opsets)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mmcv_roi_align_engine_equals_the_torch_op(dtype):
    model = _single_node_model("MMCVRoiAlign", "mmcv", [("input", ["n", C, H, W]), ("rois", ["k", 5])], dtype, (3, 4),
                               output_height=3, output_width=4, spatial_scale=0.25, sampling_ratio=2, mode="max",
                               aligned=1)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _one_level_profiles(), plugins=True))
    _check(lambda f, r: runner(input=f[0], rois=r)["y"],
           lambda f, r: twinops.roi_align(f[0], r, (3, 4), 0.25, 2, True, "max"), dtype)


@needs_trt
def test_onnx_roi_align_through_the_plugin_override_equals_the_torch_op():
    import tensorrt as trt

    if not hasattr(getattr(trt, "OnnxParserFlag", None), "ENABLE_PLUGIN_OVERRIDE"):
        pytest.skip(f"TensorRT {trt.__version__}'s ONNX parser has no plugin override (10.15+)")
    model = _single_node_model("RoiAlign", "", [("X", ["n", C, H, W]), ("rois", ["k", 4]), ("batch_indices", ["k"])],
                               torch.float32, (7, 7), output_height=7, output_width=7, spatial_scale=0.25)
    profiles = {"X": ((1, C, H, W), (2, C, H, W), (2, C, H, W)), "rois": ((1, 4), (10, 4), (64, 4)),
                "batch_indices": ((1,), (10,), (64,))}
    runner = ttrt.TRTRunner(ttrt.build_engine(model, profiles, plugin_override=True))
    # ONNX's defaults: sampling_ratio 0 (adaptive), half_pixel (aligned), avg
    _check(lambda f, r: runner(X=f[0], rois=r[:, 1:].contiguous(), batch_indices=r[:, 0].long())["y"],
           lambda f, r: twinops.roi_align(f[0], r, 7, 0.25, 0, True), torch.float32)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mmcv_multi_level_engine_equals_the_torch_op(dtype):
    levels = [(f"level{l}", ["n", C, H >> l, W >> l]) for l in range(3)]
    model = _single_node_model("MMCVMultiLevelRoiAlign", "mmdeploy", [("rois", ["k", 5])] + levels, dtype, (7, 7),
                               output_height=7, output_width=7, pool_mode=1, sampling_ratio=0,
                               featmap_strides=list(STRIDES), roi_scale_factor=1.0, finest_scale=8, aligned=1)
    profiles = {"rois": ((1, 5), (10, 5), (64, 5))}
    profiles.update({f"level{l}": ((1, C, H >> l, W >> l), (2, C, H >> l, W >> l), (2, C, H >> l, W >> l))
                     for l in range(3)})
    runner = ttrt.TRTRunner(ttrt.build_engine(model, profiles, plugins=True))
    _check(lambda f, r: runner(rois=r, **{f"level{l}": f[l] for l in range(3)})["y"],
           lambda f, r: twinops.multi_level_roi_align(f, r, 7, STRIDES, finest_scale=8.0), dtype, levels=3)
