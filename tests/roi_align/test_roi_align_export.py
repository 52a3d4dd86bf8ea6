"""export_onnx(replace=("roi_align",)): an unedited model calling torchvision.ops.roi_align exports
with TwinopsRoiAlign in place of torchvision's RoiAlign-16 node, with both exporters and a dynamic
roi count, and the graph computes torchvision's result in onnx.reference. Needs torchvision."""
import numpy as np
import pytest
import torch

from export_helpers import export_quietly
from twinops import onnx_reference_ops
from twinops.library.roi_align.strategies import random_rois

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
torchvision = pytest.importorskip("torchvision", reason="torchvision (whose roi_align is replaced) is not installed")
from onnx.reference import ReferenceEvaluator  # noqa: E402

EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]


class Pool(torch.nn.Module):
    def __init__(self, aligned: bool, sampling_ratio: int):
        super().__init__()
        self.aligned, self.sampling_ratio = aligned, sampling_ratio

    def forward(self, x, rois):
        return torchvision.ops.roi_align(x, rois, (3, 4), 0.5, self.sampling_ratio, self.aligned)


def _inputs(k, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 10, 12, generator=g)
    rois = torch.from_numpy(random_rois(k, 2, 10, 12, 0.5, np.random.default_rng(seed))).float()
    return x, rois


def _run(proto, args):
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    return ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, args)})[0]


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("aligned,sampling_ratio", [(True, 2), (False, -1)])
def test_torchvision_roi_align_becomes_twinops_roi_align(dynamo, aligned, sampling_ratio):
    model = Pool(aligned, sampling_ratio)
    x, rois = _inputs(8, 0)
    proto = export_quietly(model, (x, rois), dynamo, {1: [0]}, replace=("roi_align",))
    nodes = [n for n in proto.graph.node if n.op_type == "TwinopsRoiAlign"]
    assert "RoiAlign" not in [n.op_type for n in proto.graph.node] and [n.domain for n in nodes] == ["twinops"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in nodes[0].attribute}
    assert (attrs["output_height"], attrs["output_width"], attrs["aligned"], attrs["sampling_ratio"]) == \
        (3, 4, int(aligned), sampling_ratio)
    for k, seed in ((8, 0), (3, 1), (20, 2)):  # the roi count is dynamic
        x, rois = _inputs(k, seed)
        np.testing.assert_allclose(_run(proto, (x, rois)), model(x, rois).numpy(), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_without_replace_torchvision_exports_its_own(dynamo):
    x, rois = _inputs(5, 4)
    proto = export_quietly(Pool(True, 2), (x, rois), dynamo, replace=())
    assert "RoiAlign" in [n.op_type for n in proto.graph.node]
    assert not [n for n in proto.graph.node if n.domain == "twinops"]
