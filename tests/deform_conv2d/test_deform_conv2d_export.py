"""deform_conv2d's ONNX faces beyond the generic contract: an unedited model calling
torchvision.ops.deform_conv2d (or holding a torchvision DeformConv2d) exports with
TwinopsDeformConv2d through export_onnx(replace=("deform_conv2d",)) with both exporters, and the
graph computes torchvision's result in onnx.reference; a mask without a bias exports (a zero
bias); the node's reference kernel runs at H = 1 or W = 1, where onnx.reference's own DeformConv
divides by zero."""
import numpy as np
import pytest
import torch

import twinops
from export_helpers import export_quietly
from twinops import onnx_reference_ops
from twinops.library.deform_conv2d.reference import deform_conv2d_composite, torchvision_ops

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
from onnx.reference import ReferenceEvaluator  # noqa: E402

EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]
TVO = torchvision_ops()


def _run(proto, args):
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    return ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, args)})[0]


def _inputs(n=1, c=4, h=7, w=9, seed=0, og=2, k=(3, 3), out=(7, 5)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, h, w, generator=g)
    off = torch.randn(n, 2 * og * k[0] * k[1], *out, generator=g) * 1.5
    mask = torch.rand(n, og * k[0] * k[1], *out, generator=g)
    return x, off, mask


class TorchvisionDcn(torch.nn.Module):
    """An unedited model: torchvision's DeformConv2d (weight and bias held), a mask."""

    def __init__(self):
        super().__init__()
        import torchvision

        torch.manual_seed(0)
        self.conv = torchvision.ops.DeformConv2d(4, 6, (3, 3), stride=(1, 2), padding=(1, 2), dilation=(1, 1))

    def forward(self, x, offset, mask):
        return self.conv(x, offset, mask)


@pytest.mark.skipif(TVO is None, reason="torchvision with CPU kernels for this torch is not installed")
@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_torchvision_deform_conv2d_becomes_twinops_node(dynamo):
    model = TorchvisionDcn().eval()
    x, off, mask = _inputs(out=(7, 6))
    proto = export_quietly(model, (x, off, mask), dynamo, replace=("deform_conv2d",))
    nodes = [n for n in proto.graph.node if n.op_type == "TwinopsDeformConv2d"]
    assert [n.domain for n in nodes] == ["twinops"] and len(nodes[0].input) == 5
    attrs = {a.name: list(a.ints) for a in nodes[0].attribute if a.name in ("stride", "padding", "dilation")}
    assert attrs == {"stride": [1, 2], "padding": [1, 2], "dilation": [1, 1]}
    with torch.no_grad():
        want = model(x, off, mask)
    np.testing.assert_allclose(_run(proto, (x, off, mask)), want.numpy(), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_mask_without_bias_exports_a_zero_bias(dynamo):
    class M(torch.nn.Module):
        def forward(self, x, off, w, mask):
            return twinops.deform_conv2d(x, off, w, None, padding=1, mask=mask)

    x, off, mask = _inputs(og=1, out=(7, 9))
    w = torch.randn(5, 4, 3, 3, generator=torch.Generator().manual_seed(1))
    proto = export_quietly(M(), (x, off, w, mask), dynamo)
    node = next(n for n in proto.graph.node if n.op_type == "TwinopsDeformConv2d")
    assert len(node.input) == 5 and all(node.input)
    want = deform_conv2d_composite(x.double(), off.double(), w.double(), None, mask.double(), padding=(1, 1))
    np.testing.assert_allclose(_run(proto, (x, off, w, mask)), want.numpy(), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("h,w", [(1, 6), (5, 1), (1, 1)])
def test_reference_kernel_runs_where_onnx_deformconv_divides_by_zero(h, w):
    from twinops.library.deform_conv2d.export import twinops_deform_conv2d_reference

    x, off, mask = _inputs(c=2, h=h, w=w, og=1, k=(1, 1), out=(h, w))
    weight = torch.randn(3, 2, 1, 1, generator=torch.Generator().manual_seed(2))
    got = twinops_deform_conv2d_reference(x.numpy(), off.numpy(), weight.numpy(), None, mask.numpy())
    want = deform_conv2d_composite(x.double(), off.double(), weight.double(), None, mask.double())
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want.numpy(), atol=1e-6, rtol=1e-6)
    if TVO is not None:
        tv = TVO.deform_conv2d(x.double(), off.double(), weight.double(), mask=mask.double())
        np.testing.assert_allclose(got, tv.numpy(), atol=1e-6, rtol=1e-6)
    # onnx.reference's DeformConv maps coordinates through grid_sample's [-1, 1] by dividing by
    # H - 1 and W - 1: at a length of 1 it does not give torchvision's result
    from onnx import helper

    node = helper.make_node("DeformConv", ["X", "W", "offset", "B", "mask"], ["Y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None)
                                            for n in ("X", "W", "offset", "B", "mask")],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    feeds = dict(X=x.numpy(), W=weight.numpy(), offset=off.numpy(), B=np.zeros(3, np.float32), mask=mask.numpy())
    with np.errstate(all="ignore"):
        try:
            theirs = ReferenceEvaluator(model).run(None, feeds)[0]
        except (ZeroDivisionError, FloatingPointError, ValueError):
            return
    assert not np.allclose(theirs, got, atol=1e-4, equal_nan=False)
