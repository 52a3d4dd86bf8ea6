"""The EfficientNMS_TRT drop-in (namespace "twinops") through the TensorRT-free plugin host: its
fields and their defaults, what it refuses (CPU, with TensorRT headers), and enqueue against its
rules, twinops.library.nms.reference.efficient_nms_reference (GPU): inclusive thresholds, its
IoU, the background class, score activation, center-size boxes, anchors, the 5,000-candidate cut,
ties. Registration and selection by plugin_namespace are tests/test_conformance.py's."""
import pytest
import torch

from twinops import plugin_host as ph
from twinops.library.nms.reference import efficient_nms_reference
from twinops.plugin_host import TensorSpec

from plugin_checks import host_marks

needs_lib, needs_gpu = host_marks()

NAME = "EfficientNMS_TRT"
F32, F16 = torch.float32, torch.float16


def _node(**attrs):
    return ph.attributes_node(NAME, {**attrs, "plugin_namespace": "twinops"})


def _spec(dtype, dims):
    return TensorSpec(dtype, dims, min=dims, opt=dims, max=dims)


@needs_lib
def test_absent_fields_take_efficient_nms_defaults():
    """TensorRT's parser passes only a node's attributes: absent ones are EfficientNMS_TRT's
    defaults (max_output_boxes 100 here shows in the output shapes)."""
    host = ph.get_host()
    info = host.select(_node(score_threshold=0.4))
    assert info.namespace == "twinops"
    plugin = host.create(info, ph.node_fields(_node(score_threshold=0.4), info))
    assert plugin is not None, host.take_log()
    res = plugin.build([_spec(F32, (2, 50, 4)), _spec(F32, (2, 50, 3))])
    assert [o["dims"] for o in res.outputs] == [(2, 1), (2, 100, 4), (2, 100), (2, 100)]
    types = [o["type"] for o in res.outputs]
    assert types == [ph.DATA_TYPES[torch.int32], ph.DATA_TYPES[F32], ph.DATA_TYPES[F32], ph.DATA_TYPES[torch.int32]]


@needs_lib
@pytest.mark.parametrize("field,value,message", [
    ("score_threshold", -0.1, "must be finite and at least 0"), ("iou_threshold", 2.0, "must be in [0, 1]"),
    ("max_output_boxes", 0, "must be at least 1"), ("background_class", -2, "must be -1 (none) or a class"),
    ("score_activation", 2, "must be 0 or 1"), ("box_coding", 2, "must be 0 (corners) or 1 (center-size)")])
def test_fields_out_of_range_are_refused(field, value, message):
    host = ph.get_host()
    node = _node(**{field: value})
    info = host.select(node)
    host.take_log()
    assert host.create(info, ph.node_fields(node, info)) is None
    assert f"EfficientNMS_TRT: field '{field}' {message}" in host.take_log()


@needs_lib
@pytest.mark.parametrize("specs,message", [
    ([_spec(F32, (2, 9, 4)), _spec(F32, (2, 9, 3)), _spec(F32, (2, 9, 5))], "anchors must be 3-D (1 or B, N, 4)"),
    ([_spec(F32, (2, 9, 4)), _spec(F32, (2, 9, 3)), _spec(F16, (2, 9, 4))], "anchors must have the boxes' type"),
    ([_spec(F32, (2, 9, 4))], "expects 2 or 3 inputs (boxes, scores, anchors)")])
def test_inputs_that_cannot_run_are_refused(specs, message):
    host = ph.get_host()
    info = host.select(_node())
    plugin = host.create(info, ph.node_fields(_node(), info))
    with pytest.raises(ph.HostError) as e:
        plugin.build(specs)
    assert message in str(e.value)


def _inputs(b, n, c, seed, per_class=False, levels=8):
    g = torch.Generator().manual_seed(seed)
    shape = (b, n, c) if per_class else (b, n)
    xy = torch.randint(0, 5, (*shape, 2), generator=g).float() * 15 + torch.rand(*shape, 2, generator=g) * 5
    boxes = torch.cat([xy, xy + torch.rand(*shape, 2, generator=g) * 20 + 1], -1)
    flip = torch.rand(*shape, generator=g) < 0.2  # some corners given in the other order
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = torch.randint(0, levels + 1, (b, n, c), generator=g).float() / levels  # ties, at the threshold
    return boxes, scores


def _check(attrs, boxes, scores, anchors=None, dtype=F32, exact=True):
    f = dict(score_threshold=0.5, iou_threshold=0.5, max_output_boxes=20, background_class=-1, score_activation=0,
             class_agnostic=0, box_coding=0)
    f.update(attrs)
    xs = [t.to("cuda", dtype) for t in (boxes, scores, anchors) if t is not None]
    flags = ("score_activation", "class_agnostic")
    want = efficient_nms_reference(*(x.float().cpu() for x in xs[:2]), xs[2].float().cpu() if len(xs) == 3 else None,
                                   **{k: bool(v) if k in flags else v for k, v in f.items()})
    host = ph.get_host()
    for interface in (("v3", "v2") if host.trt_major >= 10 else ("v2",)):
        got = ph.run_plugin(_node(**f), xs, interface=interface)
        assert len(got) == 4
        assert torch.equal(got[0].cpu(), want[0]) and torch.equal(got[3].cpu(), want[3]), (interface, f)
        tol = dict(rtol=0, atol=0) if exact else dict(rtol=1e-6, atol=1e-5)
        torch.testing.assert_close(got[1].float().cpu(), want[1], **tol)
        torch.testing.assert_close(got[2].float().cpu(), want[2], **tol)


@needs_gpu
@pytest.mark.parametrize("attrs", [dict(), dict(class_agnostic=1), dict(background_class=1),
                                   dict(score_threshold=0.0, iou_threshold=0.3, max_output_boxes=100),
                                   dict(score_threshold=0.375, iou_threshold=0.0, max_output_boxes=3)])
@pytest.mark.parametrize("per_class", [False, True])
def test_enqueue_follows_the_rules(attrs, per_class):
    boxes, scores = _inputs(3, 90, 3, seed=len(attrs) + per_class, per_class=per_class)
    _check(attrs, boxes, scores)


@needs_gpu
def test_score_activation_and_the_candidate_cut():
    boxes, scores = _inputs(1, 3000, 3, seed=5, levels=1000)  # 9,000 candidates at threshold 0: 5,000 taken
    _check(dict(score_threshold=0.0, max_output_boxes=300), boxes, scores)
    logits = (scores - 0.5) * 8
    _check(dict(score_threshold=0.6, score_activation=1, max_output_boxes=50), boxes, logits, exact=False)


@needs_gpu
def test_center_size_boxes_and_anchors():
    g = torch.Generator().manual_seed(3)
    centre = torch.randint(0, 4, (2, 80, 2), generator=g).float() * 10 + torch.rand(2, 80, 2, generator=g)
    size = torch.rand(2, 80, 2, generator=g) * 12 + 2
    scores = torch.randint(0, 9, (2, 80, 2), generator=g).float() / 8
    _check(dict(box_coding=1), torch.cat([centre, size], -1), scores)
    offsets = torch.rand(2, 80, 4, generator=g) - 0.5
    corner_anchors = torch.cat([centre, centre + size], -1)[:1]
    _check(dict(), offsets, scores, anchors=corner_anchors)  # one set of anchors for the batch
    size_anchors = torch.cat([centre, size], -1)
    _check(dict(box_coding=1), offsets * 0.2, scores, anchors=size_anchors, exact=False)  # exp in the decode
