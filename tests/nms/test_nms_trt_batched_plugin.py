"""The TRTBatchedNMS drop-in (MMDeploy's node) through the TensorRT-free plugin host: its fields,
defaults and refusals (CPU, with TensorRT headers), and enqueue against its rules,
twinops.library.nms.reference.trt_batched_nms_reference (GPU): per-class top-k, the background
class, shared and per-class boxes, the merge order across classes, clip_boxes, the index, the
padding. Registration in namespaces "" and "mmdeploy" is tests/test_conformance.py's."""
import pytest
import torch

from twinops import plugin_host as ph
from twinops.library.nms.reference import trt_batched_nms_reference
from twinops.plugin_host import TensorSpec

from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()

NAME = "TRTBatchedNMS"
F32 = torch.float32
FIELDS = dict(background_label_id=-1, num_classes=3, topk=20, keep_topk=10, score_threshold=0.3, iou_threshold=0.5,
              is_normalized=1, clip_boxes=1, return_index=0)


def _spec(dims, dtype=F32):
    return TensorSpec(dtype, dims, min=dims, opt=dims, max=dims)


def _plugin(**fields):
    host = ph.get_host()
    node = ph.attributes_node(NAME, fields)
    info = host.select(node)
    return host, host.create(info, ph.node_fields(node, info))


@needs_lib
@pytest.mark.parametrize("return_index", [0, 1])
def test_outputs_shapes_and_types(return_index):
    host, plugin = _plugin(**{**FIELDS, "return_index": return_index})
    res = plugin.build([_spec((2, 50, 1, 4)), _spec((2, 50, 3))])
    assert [o["dims"] for o in res.outputs] == [(2, 10, 5), (2, 10)] + [(2, 10)] * return_index
    i32 = ph.DATA_TYPES[torch.int32]
    assert [o["type"] for o in res.outputs] == [ph.DATA_TYPES[F32], i32] + [i32] * return_index


@needs_lib
def test_absent_fields_take_mmdeploy_defaults():
    """clip_boxes and return_index absent: 1 and 0 (two outputs); num_classes absent: the scores'
    count; keep_topk absent: the plugin is made, but builds nothing, saying why."""
    fields = {k: v for k, v in FIELDS.items() if k not in ("clip_boxes", "return_index", "num_classes")}
    host, plugin = _plugin(**fields)
    assert plugin is not None, host.take_log()
    assert len(plugin.build([_spec((2, 50, 3, 4)), _spec((2, 50, 3))]).outputs) == 2
    host, plugin = _plugin(**{k: v for k, v in FIELDS.items() if k != "keep_topk"})
    with pytest.raises(ph.HostError, match="field 'keep_topk' must be at least 1, got 0"):
        plugin.build([_spec((2, 50, 1, 4)), _spec((2, 50, 3))])


@needs_lib
@pytest.mark.parametrize("field,value,message", [
    ("iou_threshold", 1.5, "must be in [0, 1]"), ("clip_boxes", 2, "must be 0 or 1"),
    ("return_index", 2, "must be 0 or 1"), ("num_classes", -1, "must be at least 1 (0: the scores' class count)")])
def test_fields_out_of_range_are_refused(field, value, message):
    host = ph.get_host()
    host.take_log()
    _, plugin = _plugin(**{**FIELDS, field: value})
    assert plugin is None
    assert f"TRTBatchedNMS: field '{field}' {message}" in host.take_log()


@needs_lib
@pytest.mark.parametrize("specs,message", [
    ([_spec((2, 50, 4)), _spec((2, 50, 3))], "boxes must be 4-D (N, P, C or 1, 4), got 3-D"),
    ([_spec((2, 50, 1, 4)), _spec((2, 50, 4))], "scores must have num_classes (3) classes, got 4"),
    ([_spec((2, 50, 1, 4)), _spec((2, 50, 3), torch.float16)], "scores must have the boxes' type")])
def test_inputs_that_cannot_run_are_refused(specs, message):
    _, plugin = _plugin(**FIELDS)
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


def _inputs(b, p, c, seed, per_class):
    g = torch.Generator().manual_seed(seed)
    k = c if per_class else 1
    xy = torch.rand(b, p, k, 2, generator=g) * 0.8
    boxes = torch.cat([xy, xy + torch.rand(b, p, k, 2, generator=g) * 0.4], -1)  # some past 1: clipped
    scores = torch.randint(0, 9, (b, p, c), generator=g).float() / 8  # ties within and across classes
    return boxes, scores


@needs_gpu
@pytest.mark.parametrize("fields", [dict(), dict(background_label_id=0), dict(topk=5, keep_topk=40),
                                    dict(topk=-1, keep_topk=200, clip_boxes=0, score_threshold=0.0),
                                    dict(iou_threshold=0.0, keep_topk=1)])
@pytest.mark.parametrize("per_class", [False, True])
def test_enqueue_follows_the_rules(fields, per_class):
    f = {**FIELDS, "return_index": 1, **fields}
    boxes, scores = _inputs(3, 70, 3, seed=len(fields) + per_class, per_class=per_class)
    want = trt_batched_nms_reference(boxes, scores, f["background_label_id"], f["num_classes"], f["topk"],
                                     f["keep_topk"], f["score_threshold"], f["iou_threshold"],
                                     clip_boxes=bool(f["clip_boxes"]), return_index=True)
    host = ph.get_host()
    for interface in (("v3", "v2") if host.trt_major >= 10 else ("v2",)):
        got = ph.run_plugin(ph.attributes_node(NAME, f), [boxes.cuda(), scores.cuda()], interface=interface)
        for name, g, w in zip(("dets", "labels", "index"), got, want):
            assert torch.equal(g.cpu(), w), (interface, f, name)
