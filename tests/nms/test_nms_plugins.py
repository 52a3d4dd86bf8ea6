"""The nms plugins (TwinopsNMS, TwinopsBatchedNMS: IPluginV3, TensorRT >= 10;
TwinopsBatchedNMSPadded: every version and interface) through the TensorRT-free plugin host: what
the build phase refuses, with the plugin's message (CPU, with TensorRT headers), and enqueue
against the torch op at box counts around the kernels' 64-box words, with int64 and int32
classes, ties and NaN (GPU). The generic lifecycle, field fuzzing and serialized forms are
tests/test_conformance.py's.
"""
import pytest
import torch

import twinops
from twinops import plugin_host as ph
from twinops.plugin_host import TensorSpec

from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()


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


PADDED = "TwinopsBatchedNMSPadded"
PADDED_FIELDS = dict(score_threshold=0.25, iou_threshold=0.5, max_output_boxes=20, pre_nms_top_k=-1,
                     class_agnostic=0)


def _padded(host, interface=None, **fields):
    info = host.select(ph.attributes_node(PADDED, {**PADDED_FIELDS, **fields}), None, interface)
    return info, host.create(info, ph.node_fields(ph.attributes_node(PADDED, {**PADDED_FIELDS, **fields}), info))


PADDED_REFUSED = [  # (input specs, message)
    ([_spec(F32, (2, 9, 5)), _spec(F32, (2, 9, 3))], "boxes' last dim must be 4"),
    ([_spec(F32, (2, 9, 4)), _spec(F32, (2, 8, 3))], "boxes and scores must have one N, got 9 and 8"),
    ([_spec(F32, (2, 9, 3, 4)), _spec(F32, (2, 9, 2))], "boxes and scores must have one C, got 3 and 2"),
    ([_spec(F32, (2, 9, 4)), _spec(F16, (2, 9, 3))], "scores must have the boxes' type"),
    ([_spec(F32, (9, 4)), _spec(F32, (9, 3))], "boxes must be 3-D (B, N, 4) or 4-D (B, N, C, 4), got 2-D"),
    ([_spec(F32, (2, 9, 4)), _spec(F32, (2, 9))], "scores must be 3-D (B, N, C), got 2-D"),
    ([_spec(F32, (1, 9, 4)), _spec(F32, (1, 9, 3))][:1], "expects 2 inputs (boxes, scores)"),
    # 1 x 100,000 x 4 scores and no pre_nms_top_k: more candidates per image than the device pass holds
    ([_spec(F32, (1, 10, 4), hi=(1, 100_000, 4)), _spec(F32, (1, 10, 4), hi=(1, 100_000, 4))],
     "more than 360,448 candidates per image (min(N * C, pre_nms_top_k)); bound the candidates with pre_nms_top_k"),
]


@needs_lib
@pytest.mark.parametrize("specs,message", PADDED_REFUSED, ids=[r[1][:40] for r in PADDED_REFUSED])
def test_padded_inputs_that_cannot_run_are_refused(specs, message):
    host = ph.get_host()
    info, plugin = _padded(host)
    assert plugin is not None, host.take_log()
    if info.interface == "v2" and "bound the candidates" in message:
        pytest.skip("IPluginV2DynamicExt::configurePlugin has no status (the message is logged; enqueue refuses)")
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


@needs_lib
@pytest.mark.parametrize("field,value,message", [
    ("score_threshold", float("nan"), "must be finite"), ("iou_threshold", 1.5, "must be in [0, 1]"),
    ("max_output_boxes", 0, "must be at least 1, got 0"), ("pre_nms_top_k", 0, "must be -1 (every candidate)"),
    ("class_agnostic", 2, "must be 0 or 1, got 2")])
def test_padded_fields_out_of_range_are_refused(field, value, message):
    host = ph.get_host()
    host.take_log()
    _, plugin = _padded(host, **{field: value})
    assert plugin is None
    assert f"field '{field}' {message}" in host.take_log()


@needs_lib
def test_padded_shapes_types_and_workspace():
    """Fixed output shapes (B from the scores, K = max_output_boxes); detection_indices int64
    (int32 on TensorRT 8.6); a profile bounded by pre_nms_top_k builds where the whole N * C
    would not; the workspace covers the largest B's masks."""
    host = ph.get_host()
    _, plugin = _padded(host, pre_nms_top_k=1000, max_output_boxes=100)
    res = plugin.build([_spec(F16, (2, 8400, 4), (1, 8400, 4), (8, 8400, 4)),
                        _spec(F16, (2, 8400, 80), (1, 8400, 80), (8, 8400, 80))])
    dims = [o["dims"] for o in res.outputs]
    assert dims == [(2, 1), (2, 100, 4), (2, 100), (2, 100), (2, 100)]
    assert [o["max"][0] for o in res.outputs] == [8] * 5
    types = [o["type"] for o in res.outputs]
    index = ph.DATA_TYPES[ph.engine_dtype(I64, host.trt_major)]
    assert types == [ph.DATA_TYPES[I32], ph.DATA_TYPES[F16], ph.DATA_TYPES[F16], ph.DATA_TYPES[I32], index]
    assert res.workspace >= 8 * 1024 * 1024 // 8  # 8 images' masks of 1,024 candidate slots


def _padded_inputs(b, n, c, dtype, seed, per_class=False):
    g = torch.Generator().manual_seed(seed)
    shape = (b, n, c) if per_class else (b, n)
    xy = torch.randint(0, 5, (*shape, 2), generator=g).float() * 20 + torch.rand(*shape, 2, generator=g) * 6
    boxes = torch.cat([xy, xy + torch.rand(*shape, 2, generator=g) * 25 + 1], -1)
    scores = torch.randint(0, 9, (b, n, c), generator=g).float() / 8  # ties, some at the threshold
    if scores.numel() > 5:
        scores.view(-1)[5] = float("nan")  # never a candidate
    return boxes.to("cuda", dtype), scores.to("cuda", dtype)


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("b,n,c,per_class", [(1, 0, 3, False), (1, 1, 1, False), (2, 70, 3, False),
                                             (3, 200, 5, True), (1, 1000, 2, False)])
def test_padded_enqueue_equals_the_torch_op(b, n, c, per_class, dtype):
    host = ph.get_host()
    if dtype == torch.bfloat16 and host.trt_major < 9:
        pytest.skip("TensorRT 8.6 has no bfloat16")
    boxes, scores = _padded_inputs(b, n, c, dtype, seed=b * 100 + n, per_class=per_class)
    index = ph.engine_dtype(I64, host.trt_major)
    for fields in (dict(), dict(class_agnostic=1, max_output_boxes=3), dict(pre_nms_top_k=70, max_output_boxes=64),
                   dict(score_threshold=-1.0, iou_threshold=0.0, max_output_boxes=1)):
        f = {**PADDED_FIELDS, **fields}
        want = twinops.batched_nms_padded(boxes, scores, f["score_threshold"], f["iou_threshold"],
                                          f["max_output_boxes"], pre_nms_top_k=f["pre_nms_top_k"],
                                          class_agnostic=bool(f["class_agnostic"]))
        for interface in (("v3", "v2") if host.trt_major >= 10 else ("v2",)):
            got = ph.run_plugin((PADDED, f), [boxes, scores], interface=interface)
            assert got[4].dtype == index
            for g, w in zip(got, want):  # poisoned outputs: every element written
                torch.testing.assert_close(g.to(w.dtype), w, rtol=0, atol=0, equal_nan=True, msg=str(fields))
