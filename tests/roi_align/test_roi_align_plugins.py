"""roi_align's own plugin cases, through the TensorRT-free plugin host (twinops.plugin_host).

What every declared creator gets (lifecycle of a declared sample, field fuzzing, corrupted serialized
forms, enqueue parity with the API) is in tests/test_conformance.py. Here: the ``RoiAlign`` creator
of standard ONNX nodes (three inputs, so outside the op's declaration: ONNX's defaults for absent
attributes, coordinate_transformation_mode, int32 / int64 batch indices, ONNX's max mode refused),
MMDeploy's multi-level node with more strides than levels, and the shapes and fields the plugins
refuse, with their messages. CPU tests need TensorRT headers and the plugin library; enqueue tests
a GPU and twinops' CUDA kernels.
"""
import numpy as np
import pytest
import torch

from twinops import plugin_host as ph
from twinops.library.roi_align.strategies import random_rois
from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()
F32, F16, I32, I64 = torch.float32, torch.float16, torch.int32, torch.int64
N, C, H, W, K = 2, 3, 10, 12, 6


def _plugin(creator, inputs, version="1", **attrs):
    host = ph.get_host()
    info = host.find(creator, version, "")
    assert info is not None, f"{creator} v{version} is not in the plugin library"
    plugin = host.create(info, ph.node_fields(ph.attributes_node(creator, attrs, inputs), info))
    return host, info, plugin


def _onnx_specs(t=F32, index=I64, rois=(K, 4), batch=(K,)):
    return [ph.TensorSpec(t, (N, C, H, W), opt=(N, C, H, W)), ph.TensorSpec(t, rois, opt=rois),
            ph.TensorSpec(index, batch, opt=batch)]


ONNX_INPUTS = ("X", "rois", "batch_indices")


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("index", [I64, I32], ids=["int64", "int32"])
def test_onnx_roi_align_builds_with_onnx_defaults(version, index):
    """A node with no attributes: output 1 x 1 (ONNX's defaults); serialized fields complete."""
    host, info, plugin = _plugin("RoiAlign", ONNX_INPUTS, version)
    assert plugin is not None, host.take_log()
    if index == I64 and host.trt_major < 10:
        pytest.skip(f"TensorRT {host.trt_major} has no int64 tensors: batch_indices are int32 there")
    assert [f[0] for f in info.fields] == ["coordinate_transformation_mode", "mode", "output_height", "output_width",
                                           "sampling_ratio", "spatial_scale"]
    res = plugin.build(_onnx_specs(F16, index))
    assert res.outputs[0]["dims"] == (K, C, 1, 1)
    if info.interface == "v3":  # named fields, complete (an IPluginV2 packs them into one blob)
        assert {f.name for f in plugin.serialize()} == {f[0] for f in info.fields}


@needs_lib
@pytest.mark.parametrize("attrs,message", [
    (dict(mode="max"), "mode max is ONNX's"),
    (dict(coordinate_transformation_mode="align_corners"), "coordinate_transformation_mode must be half_pixel or "
                                                           "output_half_pixel"),
    (dict(output_height=0), "output_height and output_width must be in [1, 2^20]"),
    (dict(spatial_scale=-1.0), "spatial_scale must be finite and greater than 0"),
])
def test_onnx_roi_align_refuses(attrs, message):
    host, _, plugin = _plugin("RoiAlign", ONNX_INPUTS, **attrs)
    assert plugin is None and message in host.take_log()


REFUSED = [  # (creator, inputs, specs, message)
    ("RoiAlign", ONNX_INPUTS, _onnx_specs(rois=(K, 5)), "rois must be (K, 4) as (x1, y1, x2, y2)"),
    ("RoiAlign", ONNX_INPUTS, _onnx_specs(index=F32), "batch_indices must be int32"),  # or int64 (TensorRT >= 10)
    ("RoiAlign", ONNX_INPUTS, _onnx_specs(batch=(K, 1)), "batch_indices must be a 1-D (K,) tensor"),
    ("TwinopsRoiAlign", ("input", "boxes"), [ph.TensorSpec(F32, (N, C, H, W)), ph.TensorSpec(F32, (K, 4))],
     "rois must be (K, 5) as (batch index, x1, y1, x2, y2)"),
    ("TwinopsRoiAlign", ("input", "boxes"), [ph.TensorSpec(F32, (N, C, H, W)), ph.TensorSpec(F16, (K, 5))],
     "rois and the output must have input's type"),
]


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator,inputs,specs,message", REFUSED, ids=[r[3][:40] for r in REFUSED])
def test_shapes_and_types_that_cannot_run_are_refused(version, creator, inputs, specs, message):
    attrs = dict(output_height=2, output_width=3)
    if creator == "TwinopsRoiAlign":  # its node has every attribute
        attrs.update(spatial_scale=0.5, sampling_ratio=2, aligned=1, pool_mode="avg")
    host, _, plugin = _plugin(creator, inputs, version, **attrs)
    assert plugin is not None, host.take_log()
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


ML_INPUTS = ("rois", "level0", "level1", "level2")


def _ml_specs(levels=3, t=F32):
    return [ph.TensorSpec(t, (K, 5))] + [ph.TensorSpec(t, (N, C, 16 >> l, 20 >> l)) for l in range(levels)]


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
def test_mmcv_multi_level_takes_the_first_strides(version):
    """MMDeploy's plugin uses the first (inputs - 1) strides: four strides, three levels build."""
    host, _, plugin = _plugin("MMCVMultiLevelRoiAlign", ML_INPUTS, version, output_height=7, output_width=5,
                              pool_mode=1, sampling_ratio=0, featmap_strides=[4.0, 8.0, 16.0, 32.0],
                              roi_scale_factor=1.0, finest_scale=56, aligned=1)
    assert plugin is not None, host.take_log()
    assert plugin.build(_ml_specs(3)).outputs[0]["dims"] == (K, C, 7, 5)


@needs_lib
@pytest.mark.parametrize("attrs,message", [
    (dict(pool_mode=2), "field 'pool_mode' must be 0 (max) or 1 (avg), got 2"),
    (dict(featmap_strides=[4.0, -8.0]), "featmap_strides[1] must be finite and greater than 0"),
    (dict(featmap_strides=[4.0] * 9), "field 'featmap_strides' must have 1 to 8 entries, got 9"),
])
def test_mmcv_multi_level_refuses(attrs, message):
    base = dict(output_height=7, output_width=7, pool_mode=1, sampling_ratio=0, featmap_strides=[4.0, 8.0],
                roi_scale_factor=1.0, finest_scale=56, aligned=1)
    host, _, plugin = _plugin("MMCVMultiLevelRoiAlign", ML_INPUTS, **{**base, **attrs})
    assert plugin is None and message in host.take_log()


@needs_lib
def test_multi_level_with_fewer_strides_than_levels_is_refused():
    host, _, plugin = _plugin("TwinopsMultiLevelRoiAlign", ML_INPUTS, output_height=2, output_width=2,
                              featmap_strides=[4.0, 8.0], sampling_ratio=0, aligned=1, pool_mode="avg",
                              finest_scale=56.0, roi_scale_factor=1.0, level_rule="mmdet")
    assert plugin is not None, host.take_log()
    with pytest.raises(ph.HostError) as e:
        plugin.build(_ml_specs(3))
    assert "featmap_strides must have one stride per level (3), got 2" in str(e.value)


@needs_gpu
@pytest.mark.parametrize("index", [I64, I32], ids=["int64", "int32"])
@pytest.mark.parametrize("ctm,aligned", [("half_pixel", 1), ("output_half_pixel", 0)])
def test_onnx_roi_align_enqueue_equals_the_torch_op(index, ctm, aligned):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, C, H, W, generator=g).cuda()
    rois = torch.from_numpy(random_rois(K, N, H, W, 0.5, np.random.default_rng(0))).float().cuda()
    attrs = dict(coordinate_transformation_mode=ctm, output_height=3, output_width=2, sampling_ratio=0,
                 spatial_scale=0.5)
    (y,) = ph.run_plugin(("RoiAlign", attrs), [x, rois[:, 1:].contiguous(), rois[:, 0].to(index)])
    want = torch.ops.twinops.roi_align(x, rois, 3, 2, 0.5, 0, aligned, "avg")
    assert torch.equal(y, want)
