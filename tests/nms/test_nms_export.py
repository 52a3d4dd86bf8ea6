"""export_onnx(replace=("nms",)): an unedited model calling torchvision.ops.nms (or batched_nms,
which calls it) exports with TwinopsNMS in place of torchvision's NonMaxSuppression subgraph, with
both exporters and a dynamic box count, and the graph computes torchvision's result in
onnx.reference. Needs torchvision."""
import numpy as np
import pytest
import torch

from export_helpers import export_quietly
from twinops import onnx_reference_ops

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
torchvision = pytest.importorskip("torchvision", reason="torchvision (whose nms is replaced) is not installed")
from onnx.reference import ReferenceEvaluator  # noqa: E402

EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]


class Nms(torch.nn.Module):
    def forward(self, boxes, scores):
        return torchvision.ops.nms(boxes, scores, 0.45)


class BatchedNms(torch.nn.Module):
    def forward(self, boxes, scores, idxs):
        return torchvision.ops.batched_nms(boxes, scores, idxs, 0.45)


def _inputs(k, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=g) * 100
    boxes = torch.cat([xy, xy + 5 + torch.rand(k, 2, generator=g) * 30], 1)
    scores = (torch.randperm(k, generator=g).float() + 1) / k  # distinct: torchvision's order is defined
    return boxes, scores, torch.randint(0, 4, (k,), generator=g)


def _run(proto, args):
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    return ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, args)})[0]


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_torchvision_nms_becomes_twinops_nms(dynamo):
    boxes, scores, _ = _inputs(60, 0)
    proto = export_quietly(Nms(), (boxes, scores), dynamo, {0: [0], 1: [0]}, replace=("nms",))
    ops = [n.op_type for n in proto.graph.node]
    assert "NonMaxSuppression" not in ops and [n.domain for n in proto.graph.node if n.op_type == "TwinopsNMS"] == ["twinops"]
    for k, seed in ((60, 0), (200, 1), (7, 2)):  # the exported size and others: the box count is dynamic
        boxes, scores, _ = _inputs(k, seed)
        want = torchvision.ops.nms(boxes, scores, 0.45)
        assert want.numel() > 0
        np.testing.assert_array_equal(_run(proto, (boxes, scores)), want.numpy())


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_torchvision_batched_nms_exports_through_twinops_nms(dynamo):
    boxes, scores, idxs = _inputs(80, 3)
    proto = export_quietly(BatchedNms(), (boxes, scores, idxs), dynamo, replace=("nms",))
    assert "TwinopsNMS" in [n.op_type for n in proto.graph.node]
    assert "NonMaxSuppression" not in [n.op_type for n in proto.graph.node]
    np.testing.assert_array_equal(_run(proto, (boxes, scores, idxs)),
                                  torchvision.ops.batched_nms(boxes, scores, idxs, 0.45).numpy())


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_without_replace_torchvision_exports_its_own(dynamo):
    boxes, scores, _ = _inputs(30, 4)
    proto = export_quietly(Nms(), (boxes, scores), dynamo, replace=())
    assert "NonMaxSuppression" in [n.op_type for n in proto.graph.node]
    assert not [n for n in proto.graph.node if n.domain == "twinops"]
