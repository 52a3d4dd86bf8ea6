"""The decomposed deployment route: a model that implements multi-scale deformable attention with
per-level F.grid_sample (as RT-DETR's and mmcv's PyTorch code do), not edited, exported with
``replace=("grid_sample",)`` (both exporters): the graph holds TwinopsGridSample nodes, equals eager
under onnx.reference, and equals ``twinops.ms_deform_attn`` (the fused route) on the same inputs."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
from onnx.reference import ReferenceEvaluator  # noqa: E402

import twinops  # noqa: E402
from twinops.onnx_export import onnx_reference_ops  # noqa: E402

from export_helpers import export_quietly  # noqa: E402

LEVELS = ((6, 7), (3, 4), (2, 2))
M, D, P = 2, 4, 3


class DecomposedMSDA(torch.nn.Module):
    """RT-DETR's ``deformable_attention_core_func``: static level shapes, one grid_sample per level."""

    def __init__(self, levels):
        super().__init__()
        self.levels = levels

    def forward(self, value, sampling_locations, attention_weights):
        n, _, m, d = value.shape
        _, lq, _, _, p, _ = sampling_locations.shape
        values = value.split([h * w for h, w in self.levels], dim=1)
        grids = 2 * sampling_locations - 1
        samples = []
        for lvl, (h, w) in enumerate(self.levels):
            v = values[lvl].flatten(2).permute(0, 2, 1).reshape(n * m, d, h, w)
            g = grids[:, :, :, lvl].permute(0, 2, 1, 3, 4).flatten(0, 1)
            samples.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
        weights = attention_weights.permute(0, 2, 1, 3, 4).reshape(n * m, 1, lq, len(self.levels) * p)
        out = (torch.stack(samples, dim=-2).flatten(-2) * weights).sum(-1).reshape(n, m * d, lq)
        return out.permute(0, 2, 1)


def _inputs(n=2, lq=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = sum(h * w for h, w in LEVELS)
    value = torch.randn(n, s, M, D, generator=g)
    loc = torch.rand(n, lq, M, len(LEVELS), P, 2, generator=g) * 1.2 - 0.1
    weights = torch.rand(n, lq, M, len(LEVELS), P, generator=g)
    return value, loc, weights


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_decomposed_export_equals_eager_and_the_fused_op(dynamo):
    model = DecomposedMSDA(LEVELS).eval()
    args = _inputs()
    proto = export_quietly(model, args, dynamo, replace=("grid_sample",))
    nodes = [n for n in proto.graph.node if n.domain == "twinops"]
    assert [n.op_type for n in nodes] == ["TwinopsGridSample"] * len(LEVELS)
    assert not any(n.op_type == "GridSample" for n in proto.graph.node)
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    (got,) = ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, args)})
    with torch.no_grad():
        eager = model(*args)
    np.testing.assert_allclose(got, eager.numpy(), atol=1e-5, rtol=1e-5)
    sizes = torch.tensor([h * w for h, w in LEVELS])
    fused = twinops.ms_deform_attn(args[0], torch.tensor(LEVELS), torch.cumsum(sizes, 0) - sizes, args[1], args[2])
    np.testing.assert_allclose(got, fused.numpy(), atol=1e-5, rtol=1e-5)
