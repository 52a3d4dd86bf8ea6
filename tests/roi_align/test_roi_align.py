"""twinops.roi_align: what is special to the op (tests/test_conformance.py runs the generic contract).

The float64 reference against torchvision.ops.roi_align; the op against the reference on
Hypothesis-drawn rois (inside, partly outside, tiny, huge, on borders, zero-size, inverted), output
sizes 1-14, sampling_ratio -1..4, scales, both pool modes, every dtype; the boxes' list form; the
rules where torchvision is undefined (batch index out of range, non-finite coordinates, empty
grids); gradients against the reference's autograd; the deterministic backward; non-contiguous
inputs; every error message; CPU against CUDA (skipped without a GPU).
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import twinops
from twinops.library.roi_align.reference import TOLERANCES, roi_align_reference
from twinops.library.roi_align.strategies import random_rois, roi_align_kwargs

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
NAN, INF = float("nan"), float("inf")
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def make(n, c, h, w, k, scale=1.0, seed=0, dtype=torch.float64, kinds=None):
    """(input, rois): normal data around 0.25 and random_rois of the given kinds (all by default)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, h, w, generator=g, dtype=torch.float64) + 0.25
    rng = np.random.default_rng(seed)
    rois = torch.from_numpy(random_rois(k, n, h, w, scale, rng, **({"kinds": kinds} if kinds else {})))
    return x.to(dtype), rois.to(dtype)


def close(got, want, dtype):
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(got.double(), want.double(), atol=atol, rtol=rtol, equal_nan=True)


@st.composite
def cases(draw, max_in=12, max_k=6):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w, k = draw(st.integers(1, max_in)), draw(st.integers(1, max_in)), draw(st.integers(0, max_k))
    return (n, c, h, w, k), draw(roi_align_kwargs()), draw(st.integers(0, 2**31 - 1))


# --------------------------------------------------------------------------------------- the reference

@settings(max_examples=60, deadline=None)
@given(cases())
def test_reference_is_torchvision(case):
    """The float64 reference is torchvision.ops.roi_align wherever torchvision is defined (avg)."""
    torchvision = pytest.importorskip("torchvision")
    (n, c, h, w, k), kw, seed = case
    x, rois = make(n, c, h, w, k, kw["spatial_scale"], seed)
    kw = {**kw, "pool_mode": "avg"}
    want = torchvision.ops.roi_align(x, rois, kw["output_size"], kw["spatial_scale"], kw["sampling_ratio"],
                                     kw["aligned"])
    torch.testing.assert_close(roi_align_reference(x, rois, **kw), want, atol=1e-12, rtol=1e-12)


# --------------------------------------------------------------------------------------- forward

@settings(max_examples=80, deadline=None)
@given(cases(), st.sampled_from(DTYPES))
def test_forward_matches_reference(case, dtype):
    (n, c, h, w, k), kw, seed = case
    x, rois = make(n, c, h, w, k, kw["spatial_scale"], seed, dtype)
    got = twinops.roi_align(x, rois, **kw)
    assert got.dtype == dtype and got.shape == roi_align_reference(x, rois, **kw).shape
    close(got, roi_align_reference(x, rois, **kw), dtype)


def test_list_of_boxes_is_the_k5_form():
    x, rois = make(2, 3, 9, 11, 7, 0.5, 3)
    boxes = [rois[rois[:, 0] == i, 1:] for i in range(2)]
    ordered = torch.cat([rois[rois[:, 0] == i] for i in range(2)])
    kw = dict(output_size=(3, 2), spatial_scale=0.5, sampling_ratio=2, aligned=True)
    torch.testing.assert_close(twinops.roi_align(x, boxes, **kw), twinops.roi_align(x, ordered, **kw), rtol=0, atol=0)
    assert twinops.RoIAlign((3, 2), 0.5, 2, True)(x, boxes).shape == (7, 3, 3, 2)


def test_documented_results_where_torchvision_is_undefined():
    x, _ = make(2, 2, 6, 7, 0)
    rois = torch.tensor([[2.0, 1, 1, 4, 4],     # batch index N: out of range
                         [-1.0, 1, 1, 4, 4],    # -1: out of range
                         [-0.5, 1, 1, 4, 4],    # truncates to 0 (torchvision's int cast)
                         [1.7, 1, 1, 4, 4],     # truncates to 1
                         [0.0, NAN, 1, 4, 4],   # NaN coordinate
                         [0.0, 1, 1, INF, 4],   # infinite coordinate
                         [NAN, 1, 1, 4, 4],     # NaN batch index
                         [0.0, 4, 4, 1, 1],     # inverted, aligned, adaptive: empty grid -> 0
                         [1.0, 2, 2, 2, 2]],    # zero-size, aligned, adaptive: empty grid -> 0
                        dtype=torch.float64)
    for mode in ("avg", "max"):
        out = twinops.roi_align(x, rois, 2, aligned=True, pool_mode=mode)
        for i in (0, 1, 4, 5, 6):
            assert out[i].isnan().all(), (mode, i)
        torch.testing.assert_close(out[2], twinops.roi_align(x, rois.new_tensor([[0.0, 1, 1, 4, 4]]), 2, aligned=True,
                                                             pool_mode=mode)[0])
        torch.testing.assert_close(out[3], twinops.roi_align(x, rois.new_tensor([[1.0, 1, 1, 4, 4]]), 2, aligned=True,
                                                             pool_mode=mode)[0])
        assert (out[7] == 0).all() and (out[8] == 0).all()
        close(out, roi_align_reference(x, rois, 2, aligned=True, pool_mode=mode), torch.float64)


def test_huge_rois_are_bounded_and_match_the_reference():
    """A roi 10^6 times the map with adaptive sampling: only the samples near the map are visited."""
    x, _ = make(1, 2, 5, 6, 0)
    rois = torch.tensor([[0.0, -3e6, -2e6, 4e6, 5e6], [0.0, -1e5, 2, 1e5, 3]], dtype=torch.float64)
    for mode in ("avg", "max"):
        got = twinops.roi_align(x, rois, (3, 4), sampling_ratio=-1, pool_mode=mode)
        close(got, roi_align_reference(x, rois, (3, 4), sampling_ratio=-1, pool_mode=mode), torch.float64)


def test_non_finite_features_land_where_the_reference_puts_them():
    x, rois = make(1, 2, 8, 8, 6, seed=5, kinds=("inside",))
    x[0, 0, 3, 3] = NAN
    x[0, 1, 4, 5] = INF
    for mode in ("avg", "max"):
        for aligned in (False, True):
            got = twinops.roi_align(x, rois, 3, sampling_ratio=2, aligned=aligned, pool_mode=mode)
            want = roi_align_reference(x, rois, 3, sampling_ratio=2, aligned=aligned, pool_mode=mode)
            assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
            close(got, want, torch.float64)


def test_empty_and_non_contiguous():
    x, rois = make(2, 4, 9, 10, 5, seed=7)
    assert twinops.roi_align(x, rois[:0], 3).shape == (0, 4, 3, 3)
    assert twinops.roi_align(x[:, :0], rois, 3).shape == (5, 0, 3, 3)
    xt = x.transpose(2, 3).contiguous().transpose(2, 3)  # channels-last-like strides
    assert not xt.is_contiguous()
    r2 = torch.stack([rois[:, i] for i in range(5)], 0).t()  # (K, 5) with strides (1, K)
    assert not r2.is_contiguous()
    kw = dict(output_size=(2, 3), sampling_ratio=2, aligned=True, pool_mode="max")
    torch.testing.assert_close(twinops.roi_align(xt, r2, **kw), twinops.roi_align(x, rois, **kw), rtol=0, atol=0)


# --------------------------------------------------------------------------------------- gradients

@settings(max_examples=40, deadline=None)
@given(cases(max_in=9, max_k=4))
def test_gradient_matches_reference_autograd(case):
    (n, c, h, w, k), kw, seed = case
    x, rois = make(n, c, h, w, k, kw["spatial_scale"], seed)
    x.requires_grad_(True)
    g = torch.randn(k, c, *twinops.library.roi_align.api.output_hw(kw["output_size"], "t"), dtype=torch.float64,
                    generator=torch.Generator().manual_seed(seed))
    (got,) = torch.autograd.grad(twinops.roi_align(x, rois, **kw), x, g)
    ref = roi_align_reference(x, rois, **kw)
    want = torch.autograd.grad(ref, x, g, allow_unused=True)[0] if ref.requires_grad else None
    want = torch.zeros_like(x) if want is None else want  # every roi pools nothing
    torch.testing.assert_close(got, want, atol=1e-10, rtol=1e-10)


def test_gradcheck_both_modes():
    x, rois = make(2, 2, 5, 6, 4, 0.5, 11, kinds=("inside", "partly_outside"))
    x.requires_grad_(True)
    for mode in ("avg", "max"):
        assert torch.autograd.gradcheck(lambda t: twinops.roi_align(t, rois, (2, 3), 0.5, 2, True, mode), (x,))


def test_rois_get_no_gradient():
    x, rois = make(1, 2, 5, 6, 3)
    rois.requires_grad_(True)
    out = twinops.roi_align(x, rois, 2)
    assert not out.requires_grad  # torchvision's rule: no gradient for the rois


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_backward_is_deterministic_across_thread_counts(dtype):
    x, rois = make(2, 3, 20, 24, 40, 0.5, 13, dtype)
    x.requires_grad_(True)
    g = torch.randn(40, 3, 7, 7, generator=torch.Generator().manual_seed(1)).to(dtype)
    threads = torch.get_num_threads()
    grads = []
    try:
        for t in (1, 2, threads):
            torch.set_num_threads(t)
            grads.append(torch.autograd.grad(twinops.roi_align(x, rois, 7, 0.5, 2, True), x, g)[0])
    finally:
        torch.set_num_threads(threads)
    assert all(torch.equal(grads[0], gr) for gr in grads[1:])


# --------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("call,exc,msg", [
    (lambda x, r: twinops.roi_align(x[0], r, 2), ValueError, "input must be a 4-D (N, C, H, W) tensor"),
    (lambda x, r: twinops.roi_align(x, r[:, :4], 2), ValueError, "boxes must be (K, 5)"),
    (lambda x, r: twinops.roi_align(x, r.float(), 2), TypeError, "boxes must have input's dtype (float64)"),
    (lambda x, r: twinops.roi_align(x, r, 0), ValueError, "output_size must be at least 1"),
    (lambda x, r: twinops.roi_align(x, r, (2, 2, 2)), TypeError, "output_size must be an int or a pair"),
    (lambda x, r: twinops.roi_align(x, r, 2, spatial_scale=0.0), ValueError, "spatial_scale must be greater than 0"),
    (lambda x, r: twinops.roi_align(x, r, 2, spatial_scale=NAN), ValueError, "spatial_scale must be finite"),
    (lambda x, r: twinops.roi_align(x, r, 2, pool_mode="sum"), ValueError, "pool_mode must be avg or max"),
    (lambda x, r: twinops.roi_align(x, r, 2, aligned=1), TypeError, "aligned must be a bool"),
    (lambda x, r: twinops.roi_align(x, [r[:, 1:], r[:, :3]], 2), ValueError, "boxes[1] must be (L_1, 4)"),
    (lambda x, r: twinops.roi_align(x, [], 2), ValueError, "boxes is an empty list"),
    (lambda x, r: twinops.roi_align(x.int(), r, 2), TypeError, "input must be float32"),
    (lambda x, r: twinops.roi_align(x, "r", 2), TypeError, "boxes must be a torch.Tensor, got str"),
])
def test_bad_input_messages(call, exc, msg):
    x, rois = make(2, 3, 5, 6, 4)
    with pytest.raises(exc, match="^twinops.roi_align: " + pytest.importorskip("re").escape(msg)):
        call(x, rois)


def test_torch_op_checks_what_the_api_checks():
    x, rois = make(2, 3, 5, 6, 4)
    with pytest.raises(RuntimeError, match=r"torch.ops.twinops.roi_align: output_height and output_width must be in"):
        torch.ops.twinops.roi_align(x, rois, 0, 2, 1.0, 0, 0, "avg")
    with pytest.raises(RuntimeError, match=r"aligned must be 0 or 1, got 2"):
        torch.ops.twinops.roi_align(x, rois, 2, 2, 1.0, 0, 2, "avg")
    with pytest.raises(RuntimeError, match=r"grad_output must have shape \(4, 3, 2, 2\)"):
        torch.ops.twinops.roi_align_backward(torch.zeros(4, 3, 2, 1, dtype=torch.float64), x, rois, 2, 2, 1.0, 0, 0,
                                             "avg")
    with pytest.raises(RuntimeError, match="input's H and W must be in"):
        torch.ops.twinops.roi_align(x[:, :, :0], rois, 2, 2, 1.0, 0, 0, "avg")


# --------------------------------------------------------------------------------------- onnx.reference

@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_onnx_roi_align_agrees_in_avg_mode(aligned, sampling_ratio):
    """ONNX RoiAlign-16 (half_pixel == aligned, output_half_pixel == not aligned) in avg mode is
    torchvision's roi_align; its max mode differs (max of the weighted taps), docs/ops/roi_align.md."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    x, rois = make(2, 3, 8, 9, 6, 0.5, 17, kinds=("inside", "partly_outside", "tiny"))
    node = helper.make_node("RoiAlign", ["X", "rois", "batch_indices"], ["Y"], output_height=3, output_width=2,
                            spatial_scale=0.5, sampling_ratio=sampling_ratio,
                            coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in
                                            (("X", onnx.TensorProto.DOUBLE), ("rois", onnx.TensorProto.DOUBLE),
                                             ("batch_indices", onnx.TensorProto.INT64))],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    (got,) = ReferenceEvaluator(model).run(None, {"X": x.numpy(), "rois": rois[:, 1:].numpy().copy(),
                                                  "batch_indices": rois[:, 0].long().numpy()})
    want = twinops.roi_align(x, rois, (3, 2), 0.5, sampling_ratio if sampling_ratio else -1, aligned)
    np.testing.assert_allclose(got, want.numpy(), atol=1e-12, rtol=1e-12)


# --------------------------------------------------------------------------------------- CUDA

@CUDA
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_cuda_matches_cpu_and_is_deterministic(dtype, mode):
    x, rois = make(2, 5, 23, 31, 50, 0.25, 19, torch.float32)
    kw = dict(output_size=(7, 5), spatial_scale=0.25, sampling_ratio=-1, aligned=True, pool_mode=mode)
    xc, rc = x.to(dtype), rois.to(dtype)
    cpu = twinops.roi_align(xc, rc, **kw)
    xg = xc.cuda().requires_grad_(True)
    out = torch.full((1,), NAN, device="cuda")  # poison the allocator's next block
    del out
    gpu = twinops.roi_align(xg, rc.cuda(), **kw)
    close(gpu.cpu(), cpu, dtype)
    g = torch.randn(gpu.shape, generator=torch.Generator().manual_seed(2)).to(dtype)
    grads = [torch.autograd.grad(twinops.roi_align(xg, rc.cuda(), **kw), xg, g.cuda())[0] for _ in range(3)]
    assert all(torch.equal(grads[0], gr) for gr in grads[1:])
    cpu_grad = torch.autograd.grad(twinops.roi_align(xc.requires_grad_(True), rc, **kw), xc, g)[0]
    close(grads[0].cpu(), cpu_grad, dtype)


@CUDA
@pytest.mark.parametrize("output_size", [(7, 7), (70, 3)])
def test_cuda_avg_tables_and_their_fallback_equal_the_cpu_loops_bitwise(output_size):
    """Avg mode on CUDA sums each bin from per-roi tap tables in the CPU loops' order and roundings,
    falling back per roi to the per-element path where the tables do not fit (a roi spanning a wide
    map adaptively, more than 64 bins per axis): float32 results equal the CPU's bit for bit, over
    several channel chunks per roi."""
    x, rois = make(2, 70, 40, 600, 12, 1.0, 5, torch.float32)
    wide = torch.tensor([[1, 0.0, 0.0, 599.0, 39.0], [0, -30.0, 2.0, 640.0, 20.0]])
    rois = torch.cat([rois, wide])
    kw = dict(output_size=output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=True)
    cpu = twinops.roi_align(x, rois, **kw)
    xg = x.cuda().requires_grad_(True)
    gpu = twinops.roi_align(xg, rois.cuda(), **kw)
    close(gpu.cpu(), cpu, torch.float32)
    assert torch.equal(gpu.cpu().isnan(), cpu.isnan())
    same = (gpu.cpu() == cpu) | cpu.isnan()
    assert same.all(), f"{(~same).sum().item()} of {same.numel()} outputs differ from the CPU loops"
    g = torch.randn(gpu.shape, generator=torch.Generator().manual_seed(4))
    grad = torch.autograd.grad(gpu, xg, g.cuda())[0]
    cpu_grad = torch.autograd.grad(twinops.roi_align(x.requires_grad_(True), rois, **kw), x, g)[0]
    close(grad.cpu(), cpu_grad, torch.float32)
