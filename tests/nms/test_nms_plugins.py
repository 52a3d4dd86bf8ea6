"""The nms plugins (TwinopsNMS, TwinopsBatchedNMS; IPluginV3, TensorRT >= 10) through the
TensorRT-free plugin host: what the build phase refuses, with the plugin's message (CPU, with
TensorRT headers), and enqueue against the torch op at box counts around the kernels' 64-box
words, with int64 and int32 classes, ties and NaN (GPU). The generic lifecycle, field fuzzing and
serialized forms are tests/test_conformance.py's.
"""
import pytest
import torch

import twinops
from twinops import plugin_host as ph
from twinops.plugin_host import TensorSpec

CPU_REASON = ph.unavailable_reason(enqueue=False)
GPU_REASON = ph.unavailable_reason(enqueue=True) or (
    None if twinops.has_cuda_kernels() else "twinops was built without CUDA kernels (the torch op to compare with)")
needs_lib = pytest.mark.skipif(CPU_REASON is not None, reason=f"plugin host: {CPU_REASON}")
needs_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=f"plugin host enqueue: {GPU_REASON}")


def _creator(name):
    host = ph.get_host()
    if host.trt_major < 10:
        pytest.skip("the nms plugins need TensorRT >= 10 (a size tensor: IPluginV3 only)")
    info = host.find(name, "1")
    assert info is not None, f"{name} is not in the plugin library"
    return host, info


def _spec(dtype, dims, lo=None, hi=None):
    return TensorSpec(dtype, dims, min=lo or dims, opt=dims, max=hi or dims)


F32, F16, I64, I32 = torch.float32, torch.float16, torch.int64, torch.int32
REFUSED = [  # (creator, iou_threshold, input specs, message)
    ("TwinopsNMS", 0.5, [_spec(F32, (7, 5)), _spec(F32, (7,))], "boxes must be (K, 4), got a last dim of 5"),
    ("TwinopsNMS", 0.5, [_spec(F32, (7, 4)), _spec(F32, (6,))], "scores must have one entry per box (7), got 6"),
    ("TwinopsNMS", 0.5, [_spec(F32, (7, 4)), _spec(F16, (7,))], "scores must have the boxes' type"),
    ("TwinopsNMS", 0.5, [_spec(I32, (7, 4)), _spec(I32, (7,))], "boxes must be float32"),
    ("TwinopsNMS", 0.5, [_spec(F32, (7, 4, 1)), _spec(F32, (7,))], "boxes must be 2-D (K, 4), got 3-D"),
    ("TwinopsNMS", 0.5, [_spec(F32, (7, 4), (1, 5), (9, 6)), _spec(F32, (7,), (1,), (9,))],
     "the profile's range excludes a last dim of 4"),
    ("TwinopsBatchedNMS", 0.5, [_spec(F32, (7, 4)), _spec(F32, (7,)), _spec(F32, (7,))],
     "idxs must be int64 or int32"),
    ("TwinopsBatchedNMS", 0.5, [_spec(F32, (7, 4)), _spec(F32, (7,)), _spec(I64, (7, 1))],
     "idxs must be 1-D (K), got 2-D"),
    ("TwinopsBatchedNMS", 0.5, [_spec(F32, (7, 4)), _spec(F32, (7,))], "expects 3 inputs (boxes, scores, idxs)"),
]


@needs_lib
@pytest.mark.parametrize("name,iou,specs,message", REFUSED, ids=[r[3][:40] for r in REFUSED])
def test_inputs_that_cannot_run_are_refused(name, iou, specs, message):
    host, info = _creator(name)
    plugin = host.create(info, ph.node_fields(ph.attributes_node(name, {"iou_threshold": iou}), info))
    assert plugin is not None, host.take_log()
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


@needs_lib
@pytest.mark.parametrize("iou", [-0.1, 1.5, float("nan"), float("inf")])
@pytest.mark.parametrize("name", ["TwinopsNMS", "TwinopsBatchedNMS"])
def test_thresholds_outside_0_1_are_refused(name, iou):
    host, info = _creator(name)
    host.take_log()
    assert host.create(info, ph.node_fields(ph.attributes_node(name, {"iou_threshold": iou}), info)) is None
    want = "must be finite" if iou != iou or abs(iou) == float("inf") else "must be in [0, 1]"
    assert f"field 'iou_threshold' {want}" in host.take_log()


@needs_lib
@pytest.mark.parametrize("name", ["TwinopsNMS", "TwinopsBatchedNMS"])
def test_keep_is_bounded_by_the_box_count(name):
    """keep (M) int64 with M the size tensor, output 1 (0-D int64): 0 <= M <= K at every profile
    point, the builder's opt ceil(K / 2); the workspace covers the profile's largest K."""
    host, info = _creator(name)
    plugin = host.create(info, ph.node_fields(ph.attributes_node(name, {"iou_threshold": 0.5}), info))
    k = [_spec(F32, (50, 4), (1, 4), (200, 4)), _spec(F32, (50,), (1,), (200,))]
    res = plugin.build(k + ([_spec(I32, (50,), (1,), (200,))] if name == "TwinopsBatchedNMS" else []))
    keep, count = res.outputs
    assert keep["size_tensor"] == {0: 1} and res.size_tensors == [1]
    assert (keep["min"], keep["opt"], keep["max"], keep["dims"]) == ((0,), (25,), (200,), (50,))
    assert count["dims"] == () and keep["type"] == count["type"] == ph.DATA_TYPES[I64]
    assert res.workspace >= 200 * 200 // 8  # the suppression mask of the largest K


def _inputs(k, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=g) * 80
    boxes = torch.cat([xy, xy + torch.rand(k, 2, generator=g) * 30 + 0.5], 1)
    scores = (torch.rand(k, generator=g) * 6).round()  # ties: the lower index first
    if k > 3:
        scores[3] = float("nan")  # ranks first
        boxes[2, 0] = float("nan")  # neither suppresses nor is suppressed
    idxs = torch.randint(-2, 3, (k,), generator=g)  # negative classes too
    return boxes.to("cuda", dtype), scores.to("cuda", dtype), idxs.cuda()


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("k", [0, 1, 63, 64, 65, 1000])
def test_enqueue_equals_the_torch_op(k, dtype):
    if ph.get_host().trt_major < 10:
        pytest.skip("the nms plugins need TensorRT >= 10")
    boxes, scores, idxs = _inputs(k, dtype, k)
    for iou in (0.0, 0.5, 1.0):
        keep, count = ph.run_plugin(("TwinopsNMS", {"iou_threshold": iou}), [boxes, scores])
        assert torch.equal(keep, twinops.nms(boxes, scores, iou)) and int(count) == keep.numel()
        want = twinops.batched_nms(boxes, scores, idxs, iou)
        for classes in (idxs, idxs.int()):
            keep, count = ph.run_plugin(("TwinopsBatchedNMS", {"iou_threshold": iou}), [boxes, scores, classes])
            assert torch.equal(keep, want), (iou, classes.dtype)
