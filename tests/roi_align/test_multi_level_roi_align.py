"""twinops.multi_level_roi_align: what is special to the op (tests/test_conformance.py runs the generic
contract on five-level samples).

The op against the float64 reference on Hypothesis-drawn pyramids (1-4 levels, both level rules,
roi_scale_factor, both pool modes, every dtype); the reference's level rules against independent
implementations (mmdet's map_roi_levels formula over per-level torchvision.ops.roi_align, and
torchvision's MultiScaleRoIAlign); gradients per level; error messages; export of fewer than five
levels (a node of fewer inputs).
"""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import twinops
from twinops.library.roi_align.multi_level import multi_level_roi_align_nodes
from twinops.library.roi_align.reference import TOLERANCES, multi_level_roi_align_reference
from twinops.library.roi_align.strategies import multi_level_roi_align_cases, random_rois

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def pyramid(n, c, h, w, levels, k, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    feats = [(torch.randn(n, c, max(h >> l, 1), max(w >> l, 1), generator=g, dtype=torch.float64) + 0.25).to(dtype)
             for l in range(levels)]
    rois = torch.from_numpy(random_rois(k, n, h, w, 0.25, np.random.default_rng(seed))).to(dtype)
    return feats, rois


@settings(max_examples=60, deadline=None)
@given(multi_level_roi_align_cases(), st.sampled_from(DTYPES), st.integers(0, 2**31 - 1))
def test_matches_reference(case, dtype, seed):
    shapes, kw = case
    g = torch.Generator().manual_seed(seed)
    feats = [(torch.randn(s, generator=g, dtype=torch.float64) + 0.25).to(dtype) for s in shapes[1:] if s is not None]
    n, _, h, w = shapes[1]
    rois = torch.from_numpy(random_rois(shapes[0][0], n, h, w, 0.25, np.random.default_rng(seed))).to(dtype)
    got = twinops.multi_level_roi_align(feats, rois, **kw)
    want = multi_level_roi_align_reference(rois, *feats, **kw)
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(got.double(), want, atol=atol, rtol=rtol, equal_nan=True)


def test_mmdet_rule_is_a_per_level_torchvision_loop():
    """mmdet's SingleRoIExtractor: levels by floor(log2(sqrt(area) / finest_scale + 1e-6)) clamped,
    then each level's torchvision.ops.roi_align (aligned=True, sampling_ratio=0) on its rois."""
    torchvision = pytest.importorskip("torchvision")
    feats, rois = pyramid(2, 3, 64, 80, 4, 40, seed=1)
    strides = (4.0, 8.0, 16.0, 32.0)
    got = twinops.multi_level_roi_align(feats, rois, 7, strides, finest_scale=16.0)
    scale = torch.sqrt((rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2]))
    lvls = torch.floor(torch.log2(scale / 16.0 + 1e-6)).clamp(0, 3).long()
    assert len(set(lvls.tolist())) >= 3, "the rois must spread over the levels"
    want = torch.zeros_like(got)
    for l in range(4):
        idx = (lvls == l).nonzero().flatten()
        want[idx] = torchvision.ops.roi_align(feats[l], rois[idx], 7, 1 / strides[l], 0, True)
    torch.testing.assert_close(got, want, atol=1e-12, rtol=1e-12)


def test_torchvision_rule_is_multiscale_roi_align():
    torchvision = pytest.importorskip("torchvision")
    g = torch.Generator().manual_seed(3)
    sizes = (128, 64, 32, 16)  # strides 4..32 of a 512 x 512 image
    feats = [torch.randn(1, 2, s, s, generator=g, dtype=torch.float64) for s in sizes]
    xy = torch.rand(30, 2, generator=g, dtype=torch.float64) * 300
    wh = torch.exp(torch.rand(30, 2, generator=g, dtype=torch.float64) * math.log(400)) + 4
    boxes = torch.cat([xy, xy + wh], 1)
    pool = torchvision.ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)
    want = pool({str(i): f for i, f in enumerate(feats)}, [boxes], [(512, 512)])
    got = twinops.multi_level_roi_align(feats, [boxes], 7, (4, 8, 16, 32), sampling_ratio=2, aligned=False,
                                        level_rule="torchvision")
    torch.testing.assert_close(got, want, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_gradients_per_level(levels, mode):
    feats, rois = pyramid(2, 2, 24, 20, levels, 12, seed=levels)
    feats = [f.requires_grad_(True) for f in feats]
    kw = dict(output_size=(2, 3), featmap_strides=tuple(4.0 * 2**l for l in range(levels)), sampling_ratio=2,
              pool_mode=mode, finest_scale=8.0)
    g = torch.randn(12, 2, 2, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    got = torch.autograd.grad(twinops.multi_level_roi_align(feats, rois, **kw), feats, g)
    ref = torch.autograd.grad(multi_level_roi_align_reference(rois, *feats, **kw), feats, g, allow_unused=True)
    for a, b, f in zip(got, ref, feats):
        torch.testing.assert_close(a, torch.zeros_like(f) if b is None else b, atol=1e-10, rtol=1e-10)
    assert torch.autograd.gradcheck(lambda *fs: twinops.multi_level_roi_align(list(fs), rois, **kw), tuple(feats))


@pytest.mark.parametrize("call,exc,msg", [
    (lambda f, r: twinops.multi_level_roi_align(f, r, 2, (4.0, 8.0)), ValueError,
     "featmap_strides must have one stride per level (3), got 2"),
    (lambda f, r: twinops.multi_level_roi_align(f, r, 2, (4.0, 0.0, 16.0)), ValueError,
     "featmap_strides must be finite and greater than 0"),
    (lambda f, r: twinops.multi_level_roi_align([], r, 2, ()), TypeError, "features must be a non-empty list"),
    (lambda f, r: twinops.multi_level_roi_align(f * 2, r, 2, (4.0,) * 6), ValueError, "at most 5 feature levels"),
    (lambda f, r: twinops.multi_level_roi_align(f, r, 2, (4.0, 8.0, 16.0), finest_scale=0.0), ValueError,
     "finest_scale must be greater than 0"),
    (lambda f, r: twinops.multi_level_roi_align([f[0], f[1][:, :1], f[2]], r, 2, (4.0, 8.0, 16.0)), RuntimeError,
     "level1 must have level0's C (3)"),
    (lambda f, r: twinops.multi_level_roi_align([f[0], f[1].float(), f[2]], r, 2, (4.0, 8.0, 16.0)), RuntimeError,
     "level1 must have level0's dtype"),
    (lambda f, r: twinops.multi_level_roi_align(f, r, 2, (4.0, 8.0, 16.0), level_rule="x"), ValueError,
     "level_rule must be mmdet or torchvision"),
])
def test_bad_input_messages(call, exc, msg):
    feats, rois = pyramid(2, 3, 16, 16, 3, 4)
    with pytest.raises(exc, match="^twinops.multi_level_roi_align: " + __import__("re").escape(msg)):
        call(feats, rois)


def test_torch_op_refuses_a_level_after_an_absent_one():
    feats, rois = pyramid(1, 2, 16, 16, 3, 4)
    with pytest.raises(RuntimeError, match="level2 is given after an absent level"):
        torch.ops.twinops.multi_level_roi_align(rois, feats[0], None, feats[2], None, None, 2, 2, [4.0, 8.0, 16.0], 0,
                                                1, "avg", 56.0, 1.0, "mmdet")


@pytest.mark.parametrize("dynamo", [True, False], ids=["dynamo", "torchscript"])
def test_export_with_three_levels(dynamo):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    from onnx.reference import ReferenceEvaluator

    from export_helpers import export_quietly

    class Head(torch.nn.Module):
        def forward(self, rois, l0, l1, l2):
            return multi_level_roi_align_nodes(rois, l0, l1, l2, output_size=(3, 2), featmap_strides=(4.0, 8.0, 16.0),
                                               sampling_ratio=2, finest_scale=8.0)

    feats, rois = pyramid(2, 3, 16, 20, 3, 9, seed=5, dtype=torch.float32)
    proto = export_quietly(Head(), (rois, *feats), dynamo, {0: [0]})
    nodes = [n for n in proto.graph.node if n.op_type == "TwinopsMultiLevelRoiAlign"]
    assert len(nodes) == 1 and len(nodes[0].input) == 4
    ev = ReferenceEvaluator(proto, new_ops=twinops.onnx_reference_ops())
    for k, seed in ((9, 5), (4, 6)):
        feats, rois = pyramid(2, 3, 16, 20, 3, k, seed=seed, dtype=torch.float32)
        (got,) = ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, (rois, *feats))})
        np.testing.assert_allclose(got, Head()(rois, *feats).numpy(), atol=5e-5, rtol=5e-5)
