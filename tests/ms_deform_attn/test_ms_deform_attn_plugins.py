"""ms_deform_attn's own plugin cases, through the TensorRT-free plugin host (twinops.plugin_host).

What every creator gets (lifecycle of a declared sample, field fuzzing, corrupted serialized forms,
enqueue parity with the API) is in tests/test_conformance.py. Here: the output layout of each
creator, MMDeploy's node with its im2col_step attribute (ignored), int32 level tables, and the
types and shapes the plugins refuse, with their messages. CPU tests need TensorRT headers and the
plugin library; enqueue tests a GPU and twinops' CUDA kernels.
"""
import dataclasses

import pytest
import torch

from twinops import plugin_host as ph
from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()
F32, F16, I32, I64 = torch.float32, torch.float16, torch.int32, torch.int64
N, S, M, D, LQ, L, P = 2, 61, 4, 8, 9, 3, 2
INPUTS = ("value", "spatial_shapes", "level_start_index", "sampling_locations", "attention_weights")
LAYOUT = {"TwinopsMSDeformAttn": (N, LQ, M * D), "MMCVMultiScaleDeformableAttention": (N, LQ, M * D),
          "MultiscaleDeformableAttnPlugin_TRT": (N, LQ, M, D)}


def _specs(t=F32, index=I64, value=(N, S, M, D), loc=(N, LQ, M, L, P, 2), weights=(N, LQ, M, L, P),
           shapes=(L, 2), starts=(L,)):
    return [ph.TensorSpec(t, value, opt=value), ph.TensorSpec(index, shapes, opt=shapes),
            ph.TensorSpec(index, starts, opt=starts), ph.TensorSpec(t, loc, opt=loc),
            ph.TensorSpec(t, weights, opt=weights)]


def _index():
    """The widest level-table type of the library's TensorRT: int64 from TensorRT 9 on, int32 before."""
    return ph.engine_dtype(I64, ph.get_host().trt_major)


def _plugin(creator, version="1", **attrs):
    host = ph.get_host()
    info = host.find(creator, version, "twinops" if creator == "MultiscaleDeformableAttnPlugin_TRT" else "")
    assert info is not None, f"{creator} v{version} is not in the plugin library"
    plugin = host.create(info, ph.node_fields(ph.attributes_node(creator, attrs, INPUTS), info))
    assert plugin is not None, host.take_log()
    return info, plugin


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("creator", list(LAYOUT))
@pytest.mark.parametrize("index", [I64, I32], ids=["int64", "int32"])
def test_output_layout_of_each_creator(creator, version, index):
    if _index() != I64 and index == I64:
        pytest.skip("TensorRT 8 has no int64 tensors (its parser narrows them to int32)")
    _, plugin = _plugin(creator, version)
    res = plugin.build(_specs(F16, index))
    assert res.outputs[0]["dims"] == LAYOUT[creator]


@needs_lib
def test_mmdeploy_node_with_im2col_step_builds():
    """MMDeploy writes an im2col_step attribute (a batching knob of mmcv's CUDA code): read as
    nothing, the node builds and computes as twinops' node."""
    _, plugin = _plugin("MMCVMultiScaleDeformableAttention", im2col_step=64)
    assert plugin.build(_specs(index=_index()))


REFUSED = [  # (specs, message)
    (_specs(value=(N, S, M)), "value must be a 4-D (N, S, M, D) tensor, got 3-D"),
    (_specs(loc=(N, LQ, M, L, P, 3)), "sampling_locations' last dim must be 2 (x, y)"),
    (_specs(loc=(N + 1, LQ, M, L, P, 2)), "sampling_locations's N (3) must equal value's (2)"),
    (_specs(weights=(N, LQ, M, L, P + 1)), "attention_weights's P (3) must equal sampling_locations's (2)"),
    (_specs(starts=(L + 1,)), "level_start_index must have one entry per level (L = 3)"),
    (_specs(index=F32), "level_start_index must be int32"),  # "or int64" from TensorRT 9 on
    ([*_specs()[:3], ph.TensorSpec(F16, (N, LQ, M, L, P, 2)), _specs()[4]],
     "sampling_locations, attention_weights and the output must have value's type"),
]


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("specs,message", REFUSED, ids=[r[1][:40] for r in REFUSED])
def test_shapes_and_types_that_cannot_run_are_refused(version, specs, message):
    specs = [dataclasses.replace(s, dtype=_index()) if s.dtype == I64 else s for s in specs]
    _, plugin = _plugin("TwinopsMSDeformAttn", version)
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


@needs_gpu
@pytest.mark.parametrize("creator", list(LAYOUT))
def test_an_inconsistent_table_enqueues_nan_without_reading_outside_value(creator):
    """The table is data: a level past S gives NaN (the sanitizer cases check no read goes outside)."""
    g = torch.Generator().manual_seed(0)
    value = torch.randn(1, 20, 2, 4, generator=g).cuda()
    loc = torch.rand(1, 3, 2, 2, 2, 2, generator=g).cuda()
    weights = torch.rand(1, 3, 2, 2, 2, generator=g).cuda()
    shapes = torch.tensor([[4, 4], [2, 2]], dtype=torch.int32).cuda()
    starts = torch.tensor([0, 19], dtype=torch.int32).cuda()
    attrs = {"plugin_namespace": "twinops"} if creator == "MultiscaleDeformableAttnPlugin_TRT" else {}
    (y,) = ph.run_plugin((creator, attrs), [value, shapes, starts, loc, weights])
    assert torch.isnan(y).all()
