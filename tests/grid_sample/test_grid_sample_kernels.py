"""twinops grid_sample kernels: torch.ops.twinops.grid_sample / grid_sample_backward called directly.

The reference is F.grid_sample (and its autograd) in float64 on the CPU. The Python API and autograd
(twinops.grid_sample) are tested in tests/grid_sample/test_grid_sample.py; this file holds what the kernels promise:
every mode x padding x align_corners, 4-D and 5-D, grids reaching outside [-1, 1], any strides,
empty tensors, the NaN / Inf rules (docs/ops/grid_sample.md), the deterministic backward (CPU for
any thread count, CUDA run to run and under torch.use_deterministic_algorithms) and half precision.
Tests taking `device` run on the CPU and, where twinops has CUDA kernels and a GPU, on CUDA.
"""
import itertools

import pytest
import torch
import torch.nn.functional as F

from grid_sample_helpers import COMBOS, MODES, PADDINGS, close, ops, reference, run_backward, run_op
from grid_sample_helpers import combo_id as _cid

cuda = pytest.mark.cuda


def shapes(dims, n=2, c=3, small=False):
    if dims == 2:
        return ((n, c, 3, 4), (n, 5, 4, 2)) if small else ((n, c, 5, 7), (n, 6, 9, 2))
    return ((n, c, 2, 3, 4), (n, 2, 3, 4, 3)) if small else ((n, c, 4, 5, 6), (n, 3, 4, 5, 3))


def make_grid(shape, dtype=torch.float64, reach=1.6, seed=0):
    """Uniform in [-reach, reach]: about a third of the points outside [-1, 1] for the default."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1).mul(reach).to(dtype)


def make_input(shape, dtype=torch.float64, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


# ---------------------------------------------------------------------------------------
# float64 parity with F.grid_sample, every combination
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_forward_matches_aten(device, combo):
    dims, mode, pad, ac = combo
    xs, gs = shapes(dims)
    x, grid = make_input(xs).to(device), make_grid(gs).to(device)
    out = run_op(x, grid, mode, pad, ac)
    assert out.shape == reference(x, grid, mode, pad, ac).shape and out.is_contiguous()
    assert out.dtype == x.dtype and out.device == x.device
    close(out, reference(x, grid, mode, pad, ac), msg=str(combo))


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_backward_matches_autograd(device, combo):
    dims, mode, pad, ac = combo
    xs, gs = shapes(dims)
    x, grid = make_input(xs).to(device), make_grid(gs).to(device)
    out, ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=make_input(reference(x, grid, mode, pad, ac).shape,
                                                                          seed=7))
    go = make_input(out.shape, seed=7).to(device)
    gi, gg = run_backward(go, x, grid, mode, pad, ac)
    assert gi.shape == x.shape and gg.shape == grid.shape
    close(gi, ref_gi, msg=f"grad_input {combo}")
    close(gg, ref_gg, atol=1e-9, rtol=1e-9, msg=f"grad_grid {combo}")


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
@pytest.mark.parametrize("size", [1, 2, 3], ids=lambda s: f"in{s}")
def test_far_grids_on_tiny_inputs(device, combo, size):
    # Every tap of every point must land on exactly the input element the forward read: grids far
    # outside (mirrored many times by reflection, clamped by border, dropped by zeros) on inputs
    # of 1 to 3 pixels per axis, where padding touches every element.
    dims, mode, pad, ac = combo
    xs = (2, 3) + (size + 1,) * (dims - 1) + (size,)
    gs = (2,) + (5,) * dims + (dims,)
    x, grid = make_input(xs).to(device), make_grid(gs, reach=6.0, seed=size).to(device)
    out, ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=make_input(reference(x, grid, mode, pad, ac).shape,
                                                                          seed=3))
    go = make_input(out.shape, seed=3).to(device)
    close(run_op(x, grid, mode, pad, ac), out, msg=f"forward {combo}")
    gi, gg = run_backward(go, x, grid, mode, pad, ac)
    close(gi, ref_gi, msg=f"grad_input {combo}")
    close(gg, ref_gg, atol=1e-8, rtol=1e-8, msg=f"grad_grid {combo}")


@pytest.mark.parametrize("combo", [c for c in COMBOS if c[0] == 2], ids=_cid)
def test_many_points_per_element(device, combo):
    # A large output sampling a small input: dozens of (point, tap) pairs per input element,
    # the gather's long-range path on CUDA.
    _, mode, pad, ac = combo
    x = make_input((2, 5, 4, 3)).to(device)
    grid = make_grid((2, 40, 50, 2), reach=1.3).to(device)
    out, ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=make_input((2, 5, 40, 50), seed=4))
    gi, gg = run_backward(make_input((2, 5, 40, 50), seed=4).to(device), x, grid, mode, pad, ac)
    close(gi, ref_gi, atol=1e-9, rtol=1e-9, msg=f"grad_input {combo}")
    close(gg, ref_gg, atol=1e-9, rtol=1e-9, msg=f"grad_grid {combo}")


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("mode", list(MODES))
def test_many_channels_few_points(device, dims, mode):
    # Few points and many channels: the CUDA forward and gather split the channels over
    # blockIdx.y (each slice recomputing the point's taps), with a partial last slice.
    if dims == 3 and mode == "bicubic":
        pytest.skip("bicubic is 4-D only")
    xs = (2, 301, 5, 6) if dims == 2 else (2, 301, 3, 4, 5)
    gs = (2, 3, 2, 2) if dims == 2 else (2, 2, 1, 3, 3)
    x, grid = make_input(xs).to(device), make_grid(gs, reach=1.3).to(device)
    go = make_input((2, 301) + gs[1:-1], seed=12)
    out, ref_gi, ref_gg = reference(x, grid, mode, "zeros", False, go=go)
    close(run_op(x, grid, mode, "zeros", False), out)
    gi, gg = run_backward(go.to(device), x, grid, mode, "zeros", False)
    close(gi, ref_gi)
    close(gg, ref_gg, atol=1e-8, rtol=1e-8)


@cuda
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("pad", PADDINGS)
def test_cpu_and_cuda_agree_at_scale(mode, pad):
    # Sizes where the index math leaves the small cases (tens of thousands of points and
    # elements, several channel slices, a smooth grid as models use): float64 on both sides.
    n, c, h, w = 3, 24, 61, 75
    theta = torch.tensor([[0.9, 0.2, 0.05], [-0.15, 1.1, -0.1]], dtype=torch.float64).expand(n, 2, 3)
    grid = F.affine_grid(theta, (n, c, 70, 90), align_corners=False)
    grid = grid + 0.03 * torch.sin(grid * 7)  # a small smooth flow
    x = make_input((n, c, h, w))
    go = make_input((n, c, 70, 90), seed=21)
    cpu = [run_op(x, grid, mode, pad, False)] + list(run_backward(go, x, grid, mode, pad, False))
    gpu = [run_op(x.cuda(), grid.cuda(), mode, pad, False)] + list(run_backward(go.cuda(), x.cuda(), grid.cuda(), mode,
                                                                              pad, False))
    for name, a, b in zip(("output", "grad_input", "grad_grid"), gpu, cpu):
        close(a, b, atol=1e-9, rtol=1e-9, msg=f"{name} {mode} {pad}")


# ---------------------------------------------------------------------------------------
# layouts and empty tensors
# ---------------------------------------------------------------------------------------

def _layouts(dims):
    """(name, f(x), f(grid), f(grad_output)) making non-contiguous views of equal values."""
    cl = torch.channels_last if dims == 2 else torch.channels_last_3d

    def flip_view(t):  # a negative-free but permuted + sliced view with the same values
        return torch.cat([t, t], dim=-1)[..., : t.shape[-1]]

    return [
        ("channels_last", lambda x: x.contiguous(memory_format=cl), lambda g: g, lambda g: g),
        ("sliced", flip_view, flip_view, flip_view),
        ("grid_transposed", lambda x: x, lambda g: g.transpose(1, 2).contiguous().transpose(1, 2), lambda g: g),
        ("channels_last_grad", lambda x: x, lambda g: g, lambda g: g.contiguous(memory_format=cl)),
        ("expanded_batch", lambda x: x[:1].expand_as(x), lambda g: g[:1].expand_as(g), lambda g: g),
    ]


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("layout", range(5), ids=["channels_last", "sliced", "grid_transposed",
                                                   "channels_last_grad", "expanded_batch"])
def test_any_strides(device, dims, mode, layout):
    if dims == 3 and mode == "bicubic":
        pytest.skip("bicubic is 4-D only")
    name, fx, fg, fo = _layouts(dims)[layout]
    xs, gs = shapes(dims)
    x, grid = make_input(xs).to(device), make_grid(gs).to(device)
    xv, gv = fx(x), fg(grid)
    assert torch.equal(xv, fx(x)) and (name not in ("channels_last", "sliced") or not xv.is_contiguous())
    out, ref_gi, ref_gg = reference(xv, gv, mode, "border", False, go=make_input(reference(x, grid, mode, "border",
                                                                                            False).shape, seed=5))
    go = fo(make_input(out.shape, seed=5).to(device))
    close(run_op(xv, gv, mode, "border", False), out, msg=name)
    gi, gg = run_backward(go, xv, gv, mode, "border", False)
    assert gi.is_contiguous() and gg.is_contiguous()
    close(gi, ref_gi, msg=name)
    close(gg, ref_gg, atol=1e-9, rtol=1e-9, msg=name)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("empty", ["N", "C", "out"])
def test_empty(device, dims, empty):
    xs, gs = [list(s) for s in shapes(dims)]
    if empty == "N":
        xs[0] = gs[0] = 0
    elif empty == "C":
        xs[1] = 0
    else:
        gs[1] = 0
    x, grid = make_input(xs).to(device), make_grid(gs).to(device)
    out = run_op(x, grid, "bilinear", "zeros", False)
    ref = reference(x, grid, "bilinear", "zeros", False)
    assert out.shape == ref.shape
    go = torch.ones_like(out)
    gi, gg = run_backward(go, x, grid, "bilinear", "zeros", False)
    assert gi.shape == x.shape and gg.shape == grid.shape
    # Nothing samples the input (no point or no channel): grad_input is all zeros, and so is
    # grad_grid without channels.
    assert torch.all(gi == 0)
    if empty == "C":
        assert torch.all(gg == 0)


def test_output_mask(device):
    x, grid = make_input((2, 3, 5, 7)).to(device), make_grid((2, 4, 6, 2)).to(device)
    go = torch.ones(2, 3, 4, 6, dtype=torch.float64, device=device)
    full = run_backward(go, x, grid, "bilinear", "zeros", False)
    for mask in [(True, False), (False, True), (False, False)]:
        gi, gg = run_backward(go, x, grid, "bilinear", "zeros", False, mask)
        for want, got, ref in zip(mask, (gi, gg), full):
            if want:
                assert torch.equal(got, ref)
            else:
                assert got.shape == (0,) and got.dtype == x.dtype and got.device == x.device


# ---------------------------------------------------------------------------------------
# NaN and Inf
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_input_nan_inf_land_where_aten_puts_them(device, combo):
    dims, mode, pad, ac = combo
    xs, gs = shapes(dims)
    x = make_input(xs)
    flat = x.view(-1)
    flat[::7] = float("nan")
    flat[3::11] = float("inf")
    flat[5::13] = -float("inf")
    # Half the points on a lattice of quarters: many land on exact pixel centres, where taps of
    # weight 0 are still read (Inf * 0 = NaN in ATen too).
    grid = make_grid(gs)
    grid.view(-1)[::2] = (grid.view(-1)[::2] * 4).round() / 4
    x, grid = x.to(device), grid.to(device)
    close(run_op(x, grid, mode, pad, ac), reference(x, grid, mode, pad, ac), msg=str(combo))


def _grid_with(dims, values):
    """A 1-batch grid whose first points get the coordinates `values` (other points random, inside)."""
    grid = make_grid((1, 3, 4, 2) if dims == 2 else (1, 2, 3, 4, 3), reach=0.9)
    flat = grid.view(-1, dims)
    for i, v in enumerate(values):
        flat[i] = torch.tensor(v, dtype=torch.float64)
    return grid


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_nan_grid_rule(device, combo):
    # docs/ops/grid_sample.md: a NaN coordinate makes the point NaN in every channel, its
    # grad_grid NaN, and it adds nothing to grad_input.
    dims, mode, pad, ac = combo
    nan = float("nan")
    vals = [[nan] + [0.1] * (dims - 1), [0.2] + [nan] * (dims - 1), [nan] * dims]
    grid = _grid_with(dims, vals)
    xs = (1, 3) + (4,) * dims
    x = make_input(xs)
    out = run_op(x.to(device), grid.to(device), mode, pad, ac).cpu()
    pts = out.flatten(2)  # (1, C, P)
    assert torch.isnan(pts[..., :3]).all() and not torch.isnan(pts[..., 3:]).any()
    go = make_input(out.shape, seed=9)
    gi, gg = run_backward(go.to(device), x.to(device), grid.to(device), mode, pad, ac)
    gg = gg.cpu().view(-1, dims)
    assert torch.isnan(gg[:3]).all() and not torch.isnan(gg[3:]).any()
    # grad_input: as if those points had a zero grad_output (F.grid_sample on a finite grid).
    safe = grid.clone()
    safe.view(-1, dims)[:3] = 0.0
    go0 = go.clone().flatten(2)
    go0[..., :3] = 0.0
    _, ref_gi, ref_gg = reference(x, safe, mode, pad, ac, go=go0.view_as(go))
    close(gi, ref_gi, msg=str(combo))
    close(gg[3:], ref_gg.view(-1, dims)[3:], atol=1e-9, rtol=1e-9, msg=str(combo))


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
@pytest.mark.parametrize("big", [float("inf"), 1e30], ids=["inf", "1e30"])
def test_infinite_and_huge_grid_rule(device, combo, big):
    # +-Inf: zeros -> outside (0), border -> the edge value, reflection -> NaN. A huge finite
    # coordinate (1e30) follows the same arithmetic as ATen's (no overflowing int conversion).
    dims, mode, pad, ac = combo
    vals = [[big] + [0.1] * (dims - 1), [-big] + [0.3] * (dims - 1), [0.25] * (dims - 1) + [big],
            [-big] * dims]
    grid = _grid_with(dims, vals)
    x = make_input((1, 3) + (4,) * dims)
    out = run_op(x.to(device), grid.to(device), mode, pad, ac).cpu().flatten(2)
    go = make_input((1, 3) + tuple(grid.shape[1:-1]), seed=2)
    gi, gg = run_backward(go.to(device), x.to(device), grid.to(device), mode, pad, ac)
    gg = gg.cpu().view(-1, dims)
    if pad == "reflection" and big == float("inf"):
        assert torch.isnan(out[..., :4]).all() and torch.isnan(gg[:4]).all()
        return
    if pad == "reflection":  # 1e30 reflects somewhere inside: any finite in-range sample
        assert torch.isfinite(out).all() and torch.isfinite(gg).all() and torch.isfinite(gi).all()
        return
    # zeros and border: the same as a coordinate far outside but moderate (1e6: integer in
    # float64, so bicubic's fraction is 0 as it is for Inf and 1e30).
    moderate = grid.clone()
    moderate[~torch.isfinite(moderate)] = moderate[~torch.isfinite(moderate)].sign() * 1e6
    moderate[moderate.abs() > 1e20] = moderate[moderate.abs() > 1e20].sign() * 1e6
    ref, ref_gi, ref_gg = reference(x, moderate, mode, pad, ac, go=go)
    close(out, ref.flatten(2), msg=str(combo))
    close(gi, ref_gi, msg=str(combo))
    close(gg, ref_gg.view(-1, dims), atol=1e-9, rtol=1e-9, msg=str(combo))
    if pad == "zeros":
        assert torch.all(out[..., :4] == 0)


def test_nearest_rounds_half_to_even(device):
    # align_corners=True on 5 pixels: grid -0.75 -> 0.5 -> 0, -0.25 -> 1.5 -> 2, 0.25 -> 2.5 -> 2, 0.75 -> 3.5 -> 4.
    x = torch.arange(5, dtype=torch.float64).view(1, 1, 1, 5).to(device)
    gx = torch.tensor([-0.75, -0.25, 0.25, 0.75], dtype=torch.float64)
    grid = torch.stack([gx, torch.zeros(4, dtype=torch.float64)], -1).view(1, 1, 4, 2).to(device)
    out = run_op(x, grid, "nearest", "zeros", True).flatten().tolist()
    assert out == [0.0, 2.0, 2.0, 4.0]
    assert out == reference(x, grid, "nearest", "zeros", True).flatten().tolist()


# ---------------------------------------------------------------------------------------
# determinism
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", list(MODES))
def test_cpu_backward_bitwise_for_any_thread_count(mode):
    x = make_input((2, 6, 9, 11), torch.float32)
    grid = make_grid((2, 40, 30, 2), torch.float32, reach=1.2)  # many points per element: order matters
    go = make_input((2, 6, 40, 30), torch.float32, seed=11)
    before = torch.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3, 4):
            torch.set_num_threads(threads)
            results.append(run_backward(go, x, grid, mode, "zeros", False))
    finally:
        torch.set_num_threads(before)
    for gi, gg in results[1:]:
        assert torch.equal(gi, results[0][0]) and torch.equal(gg, results[0][1])


@cuda
@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False], ids=_cid)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_cuda_backward_bitwise_run_to_run(combo, dtype):
    dims, mode, pad, _ = combo
    xs = (2, 8, 17, 19) if dims == 2 else (2, 8, 7, 9, 11)
    gs = (2, 33, 29, 2) if dims == 2 else (2, 9, 13, 11, 3)
    x = make_input(xs, dtype).cuda()
    grid = make_grid(gs, dtype, reach=1.3).cuda()
    go = make_input((xs[0], xs[1]) + gs[1:-1], dtype, seed=13).cuda()
    first = run_backward(go, x, grid, mode, pad, False)
    prev = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        for _ in range(3):
            again = run_backward(go, x, grid, mode, pad, False)
            assert torch.equal(again[0], first[0]) and torch.equal(again[1], first[1])
    finally:
        torch.use_deterministic_algorithms(prev)


@cuda
@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_cpu_and_cuda_agree_float32(combo):
    dims, mode, pad, ac = combo
    xs, gs = shapes(dims, n=3, c=5)
    x, grid = make_input(xs, torch.float32), make_grid(gs, torch.float32, reach=2.5)
    go = make_input((3, 5) + gs[1:-1], torch.float32, seed=6)
    cpu = [run_op(x, grid, mode, pad, ac)] + list(run_backward(go, x, grid, mode, pad, ac))
    gpu = [run_op(x.cuda(), grid.cuda(), mode, pad, ac)] + list(run_backward(go.cuda(), x.cuda(), grid.cuda(), mode,
                                                                            pad, ac))
    for name, a, b in zip(("output", "grad_input", "grad_grid"), gpu, cpu):
        close(a, b, atol=1e-4, rtol=1e-4, msg=f"{name} {combo}")


# ---------------------------------------------------------------------------------------
# half precision: no worse than F.grid_sample's own error (plus a margin)
# ---------------------------------------------------------------------------------------

def _err(a, ref):
    return (a.detach().double().cpu() - ref).abs().nan_to_num(0.0).max().item()


@cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False and c[2] != "reflection"], ids=_cid)
def test_half_error_no_worse_than_aten(dtype, combo):
    dims, mode, pad, ac = combo
    xs = (2, 16, 24, 20) if dims == 2 else (2, 8, 10, 12, 9)
    gs = (2, 30, 26, 2) if dims == 2 else (2, 8, 9, 10, 3)
    x = make_input(xs, dtype).cuda()
    grid = make_grid(gs, dtype, reach=1.1).cuda()
    go = make_input((xs[0], xs[1]) + gs[1:-1], dtype, seed=8).cuda()
    ref, ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=go)  # float64 of the same half values
    xr, gr = x.clone().requires_grad_(), grid.clone().requires_grad_()
    aten = F.grid_sample(xr, gr, mode=mode, padding_mode=pad, align_corners=ac)
    aten_gi, aten_gg = torch.autograd.grad(aten, (xr, gr), go)
    ours = run_op(x, grid, mode, pad, ac)
    gi, gg = run_backward(go, x, grid, mode, pad, ac)
    eps = torch.finfo(dtype).eps
    for name, a, r, base in (("output", ours, ref, aten), ("grad_input", gi, ref_gi, aten_gi),
                             ("grad_grid", gg, ref_gg, aten_gg)):
        margin = 2 * eps * max(r.abs().max().item(), 1.0)
        assert _err(a, r) <= _err(base, r) + margin, f"{name}: twinops {_err(a, r)} vs ATen {_err(base, r)}"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("mode", list(MODES))
def test_low_precision_error_like_aten_on_device(device, dtype, mode):
    # Opmath is float and the output rounds once; the coordinate's own rounding dominates, as in
    # ATen's kernels on the same device.
    x = make_input((2, 4, 9, 11)).to(dtype).to(device)
    grid = make_grid((2, 7, 8, 2), reach=1.2).to(dtype).to(device)
    go = make_input((2, 4, 7, 8), seed=3).to(dtype).to(device)
    ref, ref_gi, ref_gg = reference(x, grid, mode, "border", False, go=go)
    xr, gr = x.clone().requires_grad_(), grid.clone().requires_grad_()
    aten = F.grid_sample(xr, gr, mode=mode, padding_mode="border", align_corners=False)
    aten_gi, aten_gg = torch.autograd.grad(aten, (xr, gr), go)
    gi, gg = run_backward(go, x, grid, mode, "border", False)
    eps = torch.finfo(dtype).eps
    for name, a, r, base in (("output", run_op(x, grid, mode, "border", False), ref, aten),
                             ("grad_input", gi, ref_gi, aten_gi), ("grad_grid", gg, ref_gg, aten_gg)):
        margin = 2 * eps * max(r.abs().max().item(), 1.0)
        assert _err(a, r) <= _err(base, r) + margin, f"{name}: twinops {_err(a, r)} vs ATen {_err(base, r)}"


# ---------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------

BAD = [
    (lambda: (torch.zeros(2, 3, 4), torch.zeros(2, 4, 4, 2)), {}, "input must be a 4-D (N, C, H, W) or 5-D"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4)), {}, "grid must be a 4-D tensor (N, H_out, W_out, 2)"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4, 3)), {}, "grid must have 2 coordinates in its last"),
    (lambda: (torch.zeros(2, 3, 4, 4, 4), torch.zeros(2, 4, 4, 4, 2)), {}, "grid must have 3 coordinates"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(3, 4, 4, 2)), {}, "grid and input must have the same batch size"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4, 2)), {"mode": "area"},
     "mode must be one of linear, nearest, cubic, bilinear, bicubic, got 'area'"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4, 2)), {"padding_mode": "wrap"},
     "padding_mode must be one of zeros, border, reflection, got 'wrap'"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4, 2)), {"align_corners": 2}, "align_corners must be 0 or 1"),
    (lambda: (torch.zeros(2, 3, 4, 4, 4), torch.zeros(2, 4, 4, 4, 3)), {"mode": "cubic"},
     "mode cubic (bicubic) supports only 4-D input"),
    (lambda: (torch.zeros(2, 3, 4, 4, dtype=torch.int32), torch.zeros(2, 4, 4, 2)), {},
     "input must be float32, float64, float16 or bfloat16"),
    (lambda: (torch.zeros(2, 3, 4, 4), torch.zeros(2, 4, 4, 2, dtype=torch.float64)), {},
     "grid must have input's dtype (Float)"),
    (lambda: (torch.zeros(2, 3, 0, 4), torch.zeros(2, 4, 4, 2)), {}, "input's spatial sizes must be in [1, 2^31 - 1]"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_input_messages(case):
    make, kw, msg = BAD[case]
    x, grid = make()
    attrs = {**dict(mode="linear", padding_mode="zeros", align_corners=0), **kw}
    with pytest.raises(RuntimeError) as e:
        ops.grid_sample(x, grid, attrs["mode"], attrs["padding_mode"], attrs["align_corners"])
    assert str(e.value).startswith("torch.ops.twinops.grid_sample: ") and msg in str(e.value), str(e.value)
    # The fake kernels' check op raises the same.
    with pytest.raises(RuntimeError) as e2:
        ops._grid_sample_check("grid_sample", list(x.shape), x.dtype, x.device, list(grid.shape), grid.dtype,
                               grid.device, [], x.dtype, x.device, attrs["mode"], attrs["padding_mode"],
                               attrs["align_corners"])
    assert str(e2.value).split("\n")[0] == str(e.value).split("\n")[0]


def test_bad_backward_messages():
    x, grid = torch.zeros(2, 3, 4, 4), torch.zeros(2, 5, 6, 2)
    with pytest.raises(RuntimeError, match=r"grid_sample_backward: grad_output must have shape \(2, 3, 5, 6\)"):
        ops.grid_sample_backward(torch.zeros(2, 3, 5, 5), x, grid, "linear", "zeros", 0, [True, True])
    with pytest.raises(RuntimeError, match="grad_output must have input's dtype"):
        ops.grid_sample_backward(torch.zeros(2, 3, 5, 6, dtype=torch.float64), x, grid, "linear", "zeros", 0,
                                 [True, True])
    ops._grid_sample_check("grid_sample_backward", [2, 3, 4, 4], torch.float32, torch.device("cpu"), [2, 5, 6, 2],
                           torch.float32, torch.device("cpu"), [2, 3, 5, 6], torch.float32, torch.device("cpu"),
                           "bilinear", "zeros", 0)
    with pytest.raises(RuntimeError, match="op must be 'grid_sample' or 'grid_sample_backward'"):
        ops._grid_sample_check("nope", [2, 3, 4, 4], torch.float32, torch.device("cpu"), [2, 5, 6, 2],
                               torch.float32, torch.device("cpu"), [], torch.float32, torch.device("cpu"),
                               "bilinear", "zeros", 0)


@cuda
def test_device_mismatch():
    with pytest.raises(RuntimeError, match=r"grid must be on input's device \(cuda:0\), got cpu"):
        ops.grid_sample(torch.zeros(1, 1, 2, 2, device="cuda"), torch.zeros(1, 2, 2, 2), "linear", "zeros", 0)


def test_synonyms_and_every_mode_name():
    x, grid = make_input((1, 2, 5, 5)), make_grid((1, 3, 3, 2))
    assert torch.equal(ops.grid_sample(x, grid, "bilinear", "zeros", 0), ops.grid_sample(x, grid, "linear", "zeros", 0))
    assert torch.equal(ops.grid_sample(x, grid, "bicubic", "zeros", 0), ops.grid_sample(x, grid, "cubic", "zeros", 0))


def test_combos_cover_every_case():
    assert len(COMBOS) == 30 and len(set(itertools.product(MODES, PADDINGS))) == 9
