"""twinops.ms_deform_attn: what is special to the op (tests/test_conformance.py runs the generic contract).

Parity with the float64 reference (per-level F.grid_sample) on Hypothesis-drawn pyramids (levels
of 1x1, 1 x w and h x 1, L 1-5, P 1-8, M 1-8, D 1-64), locations outside [0, 1] and exactly on 0
and 1; the non-finite rules; gradients against the differentiable composite; int32 and int64
level tables; every error message; the deterministic backward; CPU against CUDA (skipped without a
GPU).
"""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import twinops
from twinops.library.ms_deform_attn.api import heads_layout
from twinops.library.ms_deform_attn.reference import (TOLERANCES, ms_deform_attn_reference,
                                                      ms_deform_attn_reference_grad)
from twinops.library.ms_deform_attn.strategies import level_shape, level_sizes, pyramids

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
NAN, INF = float("nan"), float("inf")


def make(shapes, n=2, m=2, d=5, lq=4, p=3, dtype=torch.float32, device="cpu", index_dtype=torch.int64, seed=0,
         spread=(-0.1, 1.1)):
    """Inputs for the level shapes ``shapes``: value, the level table, locations uniform in
    ``spread`` with a few exactly on 0 and 1, weights in [0, 1); float64 data cast to dtype."""
    g = torch.Generator().manual_seed(seed)
    sizes = torch.tensor([h * w for h, w in shapes])
    s = int(sizes.sum())
    value = torch.randn(n, s, m, d, generator=g, dtype=torch.float64) + 0.25
    loc = torch.rand(n, lq, m, len(shapes), p, 2, generator=g, dtype=torch.float64)
    loc = loc * (spread[1] - spread[0]) + spread[0]
    if loc.numel() >= 4:
        loc.view(-1)[:4] = torch.tensor([0.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    weights = torch.rand(n, lq, m, len(shapes), p, generator=g, dtype=torch.float64)
    spatial = torch.tensor(shapes, dtype=index_dtype).reshape(-1, 2)
    starts = (torch.cumsum(sizes, 0) - sizes).to(index_dtype)
    return [value.to(device, dtype), spatial.to(device), starts.to(device), loc.to(device, dtype),
            weights.to(device, dtype)]


def _close(actual, expected, dtype, what=""):
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(actual.detach().cpu().double(), expected.detach().cpu().double(), atol=atol,
                               rtol=rtol, equal_nan=True, msg=lambda msg: f"{what}\n{msg}")


# ---------------------------------------------------------------------------------------
# forward and gradients against the float64 reference
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@settings(deadline=None, max_examples=40)
@given(shapes=pyramids(), m=st.integers(1, 8), d=st.integers(1, 64), p=st.integers(1, 8), n=st.integers(0, 2),
       lq=st.integers(0, 7), wide=st.booleans())
def test_matches_the_float64_reference(device, dtype, shapes, m, d, p, n, lq, wide):
    if device == "cuda" and dtype == torch.float64:
        return  # float64 runs on the CPU only (its own test below)
    xs = make(shapes, n=n, m=m, d=d, lq=lq, p=p, dtype=dtype, device=device,
              index_dtype=torch.int64 if wide else torch.int32, spread=(-0.3, 1.3))
    y = twinops.ms_deform_attn(*xs)
    assert y.shape == (n, lq, m * d) and y.dtype == dtype and y.device.type == device and y.is_contiguous()
    _close(y, ms_deform_attn_reference(*xs), dtype, f"{shapes} m={m} d={d} p={p}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@settings(deadline=None, max_examples=25)
@given(shapes=pyramids(max_levels=4, max_side=7), m=st.integers(1, 3), d=st.integers(1, 9), p=st.integers(1, 4))
def test_gradients_match_the_composite(device, dtype, shapes, m, d, p):
    if device == "cuda" and dtype == torch.float64:
        return
    xs = make(shapes, m=m, d=d, p=p, dtype=dtype, device=device)
    leaves = [xs[i].detach().clone().requires_grad_() for i in (0, 3, 4)]
    y = twinops.ms_deform_attn(leaves[0], xs[1], xs[2], leaves[1], leaves[2])
    go = torch.randn(y.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    got = torch.autograd.grad(y, leaves, go.to(y))
    ref = [xs[i].detach().cpu().double().requires_grad_() for i in (0, 3, 4)]
    yr = ms_deform_attn_reference_grad(ref[0], xs[1].cpu(), xs[2].cpu(), ref[1], ref[2])
    want = torch.autograd.grad(yr, ref, go)
    scale = {torch.float32: 1e-4, torch.float64: 1e-10}[dtype]
    for name, a, e in zip(("grad_value", "grad_loc", "grad_weight"), got, want):
        # grad_loc carries d pixel / d location = the level's length: scale the tolerance by it
        bound = scale * (1 + e.abs()) * (max(max(s) for s in shapes) if name == "grad_loc" else 1)
        assert ((a.detach().cpu().double() - e).abs() <= bound).all(), f"{name} {shapes}"


def test_float64_gradcheck_with_int32_tables():
    xs = make([(3, 4), (1, 5), (1, 1)], n=1, m=2, d=3, lq=2, p=2, dtype=torch.float64, index_dtype=torch.int32)

    def f(v, loc, a):
        return twinops.ms_deform_attn(v, xs[1], xs[2], loc, a)

    assert torch.autograd.gradcheck(f, tuple(xs[i].clone().requires_grad_() for i in (0, 3, 4)))


def test_int32_and_int64_tables_give_the_same_bits(device):
    xs = make([(5, 6), (2, 3)], device=device)
    y64 = twinops.ms_deform_attn(*xs)
    y32 = twinops.ms_deform_attn(xs[0], xs[1].int(), xs[2].int(), xs[3], xs[4])
    assert torch.equal(y64, y32)


def test_backward_is_bitwise_repeatable(device):
    xs = make([(9, 11), (5, 6), (3, 3), (1, 2)], n=2, m=4, d=16, lq=50, p=4, device=device)
    outs = []
    for _ in range(3):
        leaves = [xs[i].detach().clone().requires_grad_() for i in (0, 3, 4)]
        y = twinops.ms_deform_attn(leaves[0], xs[1], xs[2], leaves[1], leaves[2])
        outs.append(torch.autograd.grad(y, leaves, torch.ones_like(y)))
    for other in outs[1:]:
        for a, b in zip(outs[0], other):
            assert torch.equal(a, b)


def test_runs_under_deterministic_algorithms(device):
    xs = make([(4, 4)], device=device)
    leaves = [xs[i].detach().clone().requires_grad_() for i in (0, 3, 4)]
    prev = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        y = twinops.ms_deform_attn(leaves[0], xs[1], xs[2], leaves[1], leaves[2])
        y.sum().backward()
    finally:
        torch.use_deterministic_algorithms(prev)
    assert all(t.grad is not None for t in leaves)


@pytest.mark.cuda
def test_cpu_and_cuda_agree():
    xs = make([(13, 17), (7, 9), (4, 5), (2, 3)], n=2, m=4, d=32, lq=30, p=4)
    leaves = [[xs[i].detach().clone().to(dev).requires_grad_() for i in (0, 3, 4)] for dev in ("cpu", "cuda")]
    ys, grads = [], []
    for dev, lv in zip(("cpu", "cuda"), leaves):
        y = twinops.ms_deform_attn(lv[0], xs[1].to(dev), xs[2].to(dev), lv[1], lv[2])
        ys.append(y)
        grads.append(torch.autograd.grad(y, lv, torch.ones_like(y)))
    _close(ys[1], ys[0], torch.float32)
    for a, b in zip(grads[1], grads[0]):
        torch.testing.assert_close(a.cpu(), b, atol=1e-4, rtol=1e-4)


# ---------------------------------------------------------------------------------------
# non-finite values
# ---------------------------------------------------------------------------------------

def test_non_finite_values_land_where_the_reference_puts_them(device):
    xs = make([(4, 5), (2, 2)], n=1, m=2, d=3, lq=5, p=2, device=device)
    xs[3][0, 0, 0, 0, 0] = torch.tensor([NAN, 0.5])  # a NaN location: that query and head's output NaN
    xs[3][0, 1, 0, 1, 1] = torch.tensor([INF, 0.5])  # an infinite one: outside, contributes 0
    xs[3][0, 2, 1, 0, 0] = torch.tensor([-INF, INF])
    xs[0][0, 3, 1, 2] = INF  # read with weights: Inf or NaN where the reference has them
    xs[4][0, 4, 0, 1, 1] = NAN
    y = twinops.ms_deform_attn(*xs)
    want = ms_deform_attn_reference(*xs)
    _close(y, want, torch.float32)
    assert torch.isnan(y[0, 0, :3]).all() and torch.isfinite(y[0, 1, :3]).all()


def test_a_nan_location_gives_nan_location_and_weight_gradients_and_no_value_gradient(device):
    xs = make([(4, 5)], n=1, m=1, d=2, lq=2, p=1, device=device)
    xs[3][0, 0, 0, 0, 0] = torch.tensor([NAN, 0.5])
    leaves = [xs[i].detach().clone().requires_grad_() for i in (0, 3, 4)]
    y = twinops.ms_deform_attn(leaves[0], xs[1], xs[2], leaves[1], leaves[2])
    gv, gl, gw = torch.autograd.grad(y, leaves, torch.ones_like(y))
    assert torch.isnan(gl[0, 0]).all() and torch.isnan(gw[0, 0]).all()
    assert torch.isfinite(gl[0, 1]).all() and torch.isfinite(gw[0, 1]).all() and torch.isfinite(gv).all()
    # the value gradient is the second query's alone
    only = [xs[i].detach().clone().requires_grad_() for i in (0, 3, 4)]
    y1 = twinops.ms_deform_attn(only[0], xs[1], xs[2], only[1][:, 1:], only[2][:, 1:])
    (gv1,) = torch.autograd.grad(y1, [only[0]], torch.ones_like(y1))
    torch.testing.assert_close(gv, gv1)


@pytest.mark.cuda
def test_an_inconsistent_table_on_cuda_gives_nan_not_a_crash():
    xs = make([(4, 4), (2, 2)], n=1, m=2, d=4, lq=3, p=2, device="cuda")
    for shapes, starts in (([[4, 4], [2, 2]], [0, 19]), ([[4, 4], [9, 9]], [0, 16]), ([[4, -4], [2, 2]], [0, 16])):
        y = twinops.ms_deform_attn(xs[0], torch.tensor(shapes, device="cuda"), torch.tensor(starts, device="cuda"),
                                   xs[3], xs[4])
        assert torch.isnan(y).all()


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

BAD = [
    (lambda xs: [xs[0][0]] + xs[1:], ValueError, r"value must be a 4-D \(N, S, M, D\) tensor"),
    (lambda xs: [xs[0].int()] + xs[1:], TypeError, r"value must be float32, float64, float16 or bfloat16"),
    (lambda xs: xs[:1] + [xs[1].float()] + xs[2:], TypeError, r"spatial_shapes must be int64 or int32"),
    (lambda xs: xs[:1] + [xs[1][:, :1]] + xs[2:], ValueError, r"spatial_shapes must be \(L, 2\)"),
    (lambda xs: xs[:3] + [xs[3][..., :1]] + xs[4:], ValueError, r"sampling_locations' last dim must be 2"),
    (lambda xs: xs[:3] + [xs[3][:1]] + xs[4:], ValueError, r"sampling_locations's N \(1\) must equal value's \(2\)"),
    (lambda xs: xs[:4] + [xs[4][:, :, :1]], ValueError, r"attention_weights's M \(1\) must equal value's \(2\)"),
    (lambda xs: xs[:4] + [xs[4][..., :1]], ValueError, r"attention_weights's P \(1\) must equal sampling_locations's"),
    (lambda xs: xs[:2] + [xs[2][:1]] + xs[3:], ValueError, r"level_start_index's L \(1\) must equal"),
    (lambda xs: xs[:3] + [xs[3].double()] + xs[4:], TypeError, r"sampling_locations must have value's dtype"),
    (lambda xs: xs[:1] + [xs[1] * 2] + xs[2:], RuntimeError,
     r"must equal the sum of the levels' h \* w|holds more rows"),
    (lambda xs: xs[:2] + [xs[2] + 1] + xs[3:], RuntimeError, r"level_start_index\[0\] must be 0"),
    (lambda xs: xs[:1] + [torch.tensor([[0, 5], [1, 1]])] + xs[2:], RuntimeError,
     r"spatial_shapes\[0\] must be at least 1x1"),
]


@pytest.mark.parametrize("bad,kind,message", BAD, ids=range(len(BAD)))
def test_bad_input_is_refused_with_a_message_naming_the_argument(bad, kind, message):
    xs = make([(3, 4), (2, 2)])
    with pytest.raises(kind, match=r"^twinops\.ms_deform_attn: " + message):
        twinops.ms_deform_attn(*bad(xs))


@pytest.mark.cuda
def test_cuda_refuses_float64_and_mixed_devices():
    xs = make([(3, 4)], device="cuda")
    with pytest.raises(RuntimeError, match="float64 runs on the CPU only"):
        twinops.ms_deform_attn(xs[0].double(), xs[1], xs[2], xs[3].double(), xs[4].double())
    with pytest.raises(ValueError, match="spatial_shapes is on cpu but value is on cuda"):
        twinops.ms_deform_attn(xs[0], xs[1].cpu(), xs[2], xs[3], xs[4])


# ---------------------------------------------------------------------------------------
# the module, the TensorRT layout, the factories
# ---------------------------------------------------------------------------------------

def test_module_and_heads_layout():
    xs = make([(3, 4), (2, 2)], m=3, d=4)
    y = twinops.MSDeformAttn()(*xs)
    assert torch.equal(y, twinops.ms_deform_attn(*xs))
    assert torch.equal(heads_layout(*xs), y.view(2, 4, 3, 4))
    assert list(twinops.MSDeformAttn().parameters()) == []


@given(s=st.integers(1, 500), levels=st.integers(1, 6))
def test_level_sizes_split_s_into_levels_of_at_least_one_row(s, levels):
    if s < levels:
        with pytest.raises(ValueError, match="need S >="):
            level_sizes(s, levels)
        return
    sizes = level_sizes(s, levels)
    assert len(sizes) == levels and sum(sizes) == s and min(sizes) >= 1
    for size in sizes:
        h, w = level_shape(size)
        assert h * w == size and 1 <= h <= w


@pytest.mark.cuda
@pytest.mark.parametrize("d", [1, 8, 32, 40, 64, 136, 256])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_cuda_forward_layouts_give_the_same_bits(monkeypatch, d, dtype):
    """One thread per element, one warp per head, the 16-byte vectors (where D and value's rows
    allow: 2 to 32 lanes per head, and two passes over the channels at D = 256 in float32) and
    the default (here the head layout: too few heads to fill the device with vector blocks) sum
    alike; more than 32 samples per head (L * P = 36) take several table fills; D = 1 and an
    odd-strided value take the head layout when the vectors are asked for."""
    xs = make([(9, 11), (5, 6), (3, 3), (1, 2)], n=2, m=3, d=d, lq=20, p=9, dtype=dtype, device="cuda")
    xs[3][0, 0, 0, 0, 0] = torch.tensor([NAN, 0.5])
    odd = torch.empty(2, xs[0].shape[1], 3, d + 1, dtype=dtype, device="cuda")[..., 1:]
    odd.copy_(xs[0])  # channels start one element past a 16-byte boundary
    got = {}
    for layout in ("elements", "heads", "vectors", None):
        if layout is None:
            monkeypatch.delenv("TWINOPS_MS_DEFORM_ATTN_FORWARD", raising=False)
        else:
            monkeypatch.setenv("TWINOPS_MS_DEFORM_ATTN_FORWARD", layout)
        got[layout] = twinops.ms_deform_attn(*xs)
        got[layout, "odd"] = twinops.ms_deform_attn(odd, *xs[1:])
    for key, out in got.items():
        assert torch.equal(got["elements"].nan_to_num(7.0), out.nan_to_num(7.0)), key
    assert torch.isnan(got[None][0, 0, :d]).all()
    _close(got[None], ms_deform_attn_reference(*xs), dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_cuda_forward_default_over_many_heads_gives_the_head_layouts_bits(monkeypatch, dtype):
    """36,000 query heads (N 2, Lq 2,250, M 8) at D = 32: enough vector blocks (1,125 or 563)
    to fill any current GPU twice over, so the default takes the vector layout there; its output
    is the head layout's, bit for bit, and close to the float64 reference."""
    xs = make([(13, 17), (7, 9), (4, 5)], n=2, m=8, d=32, lq=2250, p=4, dtype=dtype, device="cuda")
    monkeypatch.setenv("TWINOPS_MS_DEFORM_ATTN_FORWARD", "heads")
    heads = twinops.ms_deform_attn(*xs)
    monkeypatch.delenv("TWINOPS_MS_DEFORM_ATTN_FORWARD")
    got = twinops.ms_deform_attn(*xs)
    assert torch.equal(heads, got)
    _close(got, ms_deform_attn_reference(*xs), dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("d", [1, 32, 40, 136])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_cuda_backward_layouts_give_the_same_bits(monkeypatch, d, dtype):
    """Samples computed by every lane (TWINOPS_MS_DEFORM_ATTN_BACKWARD=lanes) and taken from the
    warp's shared table (=table, the default) give the same three gradients, bitwise, for any
    value strides; L * P = 36 takes several table fills; D = 40 and 136 leave some lanes without
    channels in the last round of 32."""
    xs = make([(9, 11), (5, 6), (3, 3), (1, 2)], n=2, m=3, d=d, lq=20, p=9, dtype=dtype, device="cuda")
    xs[3][0, 0, 0, 0, 0] = torch.tensor([NAN, 0.5])
    odd = torch.empty(2, xs[0].shape[1], 3, d + 1, dtype=dtype, device="cuda")[..., 1:]
    odd.copy_(xs[0])  # channels start one element past a 16-byte boundary
    go = torch.randn(2, 20, 3 * d, generator=torch.Generator().manual_seed(1)).to(device="cuda", dtype=dtype)
    got = {}
    for layout in ("lanes", "table", None):
        if layout is None:
            monkeypatch.delenv("TWINOPS_MS_DEFORM_ATTN_BACKWARD", raising=False)
        else:
            monkeypatch.setenv("TWINOPS_MS_DEFORM_ATTN_BACKWARD", layout)
        got[layout] = torch.ops.twinops.ms_deform_attn_backward(go, *xs, [True, True, True])
        got[layout, "odd"] = torch.ops.twinops.ms_deform_attn_backward(go, odd, *xs[1:], [True, True, True])
    for key, grads in got.items():
        for a, b in zip(got["lanes"], grads):
            assert torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)), key
    assert torch.isnan(got[None][2][0, 0, 0, 0, 0])  # the NaN location's weight gradient
