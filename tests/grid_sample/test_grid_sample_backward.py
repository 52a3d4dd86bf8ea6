"""grid_sample's deterministic backward: grad_input's point <-> input element relation.

On CUDA, grad_input sorts every (point, tap) pair by the input element its padded tap reads and each
element sums its run of pairs (csrc/kernels/grid_sample/grid_sample.cu); grad_grid sums each point's taps over
the channels. A wrong relation drops or double-counts taps at the borders, far outside, on exact pixel
boundaries or where many points share one element, so these tests put points exactly there: lattice
grids of integer and half-integer pixel coordinates, grids far outside [-1, 1], degenerate grids
(every point in one cell: long runs, and around as many taps per element as the gather keeps in
registers), NaN points among them, tiny and odd sizes, several batches, non-contiguous tensors. The
reference is F.grid_sample's autograd in float64 on the CPU; the CUDA kernels run in float64 too
(tight tolerances) and in float32 / half types (tolerances of their precision). Tests taking `device`
run on the CPU as well (the CPU loops, a check of the tests themselves) and on CUDA where there is a
GPU.
"""
import pytest
import torch
import torch.nn.functional as F

from grid_sample_helpers import COMBOS, close, reference, run_backward
from grid_sample_helpers import combo_id as _cid

cuda = pytest.mark.cuda

# Points stacked on one location: around 4, 8 and 16 points per element, each count and one
# more (the CUDA gather keeps up to kGatherCache = 8 pairs of an element in registers and streams
# longer runs from memory; the other counts stay as generic coverage of short and long runs).
GATHER_CACHE = (4, 8, 16)


def _rand(shape, seed, lo=-1.0, hi=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo


def _randn(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


def to_grid(u, sizes, ac):
    """Pixel coordinates u (..., dims; x first) of an input of spatial `sizes` (D, H, W or H, W) ->
    grid values, so that the kernels' unnormalised coordinates are u (up to rounding)."""
    out = torch.empty_like(u)
    for a in range(u.shape[-1]):
        s = sizes[len(sizes) - 1 - a]  # x -> W, y -> H, z -> D
        if ac:
            out[..., a] = u[..., a] * 2 / (s - 1) - 1 if s > 1 else 0.0
        else:
            out[..., a] = (2 * u[..., a] + 1) / s - 1
    return out


# Nearest rounds half-integers to even; whether the coordinate arrives exactly on the half
# depends on the arithmetic (CUDA contracts (g + 1) * size - 1 into a fused multiply-add, the
# CPU reference does not), so nearest's lattice points sit a quarter pixel off the ties.
NEAREST_SHIFT = 0.25


def lattice_grid(n, out, sizes, ac, seed, reach=3.0, shift=0.0):
    """Points at integer and half-integer pixel coordinates from -reach - 0.5 to size + reach - 0.5:
    on cell boundaries, pixel centres, the borders and the clamped / mirrored region beyond
    (moved by `shift`, which keeps float32 nearest off its rounding ties)."""
    dims = len(sizes)
    g = torch.Generator().manual_seed(seed)
    u = torch.empty((n,) + tuple(out) + (dims,), dtype=torch.float64)
    for a in range(dims):
        s = sizes[dims - 1 - a]
        steps = int(2 * (s + 2 * reach)) + 1
        u[..., a] = torch.randint(0, steps, u.shape[:-1], generator=g).double() / 2 - reach - 0.5 + shift
    return to_grid(u, sizes, ac)


def check(device, x, grid, go, mode, pad, ac, dtype=torch.float64, msg=""):
    ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=go)[1:]
    gi, gg = run_backward(go.to(device, dtype), x.to(device, dtype), grid.to(device, dtype), mode, pad, ac)
    assert gi.shape == x.shape and gg.shape == grid.shape
    if dtype == torch.float64:
        tol = dict(atol=1e-10, rtol=1e-10)
    else:  # float32: the coordinate's rounding dominates; scale by the gradients' size
        scale = max(ref_gi.abs().max().item(), 1.0)
        tol = dict(atol=1e-4 * scale, rtol=1e-4)
    close(gi, ref_gi, msg=f"grad_input {msg}", **tol)
    return gi, gg, ref_gg


# ---------------------------------------------------------------------------------------
# the relation, every combination
# ---------------------------------------------------------------------------------------

SIZES = {2: [(1, 1), (1, 2), (2, 1), (3, 5), (7, 4), (6, 9)],
         3: [(1, 1, 1), (1, 2, 3), (3, 1, 2), (4, 5, 3)]}


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_lattice_points_on_every_cell_boundary(device, combo):
    # Every point on an integer or half-integer pixel coordinate (floor boundaries, pixel
    # centres, the borders, -1 and size, the clamped and mirrored region up to 3 pixels out).
    dims, mode, pad, ac = combo
    for i, sizes in enumerate(SIZES[dims]):
        out = (5, 6) if dims == 2 else (3, 4, 5)
        x = _randn((2, 3) + sizes, seed=i)
        grid = lattice_grid(2, out, sizes, ac, seed=10 + i, shift=NEAREST_SHIFT if mode == "nearest" else 0.0)
        go = _randn((2, 3) + out, seed=20 + i)
        gi, gg, ref_gg = check(device, x, grid, go, mode, pad, ac, msg=f"{combo} {sizes}")
        close(gg, ref_gg, atol=1e-8, rtol=1e-8, msg=f"grad_grid {combo} {sizes}")


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
@pytest.mark.parametrize("reach", [1.05, 4.0, 60.0], ids=lambda r: f"reach{r}")
def test_random_grids_reaching_far_outside(device, combo, reach):
    dims, mode, pad, ac = combo
    sizes = (5, 7) if dims == 2 else (3, 5, 4)
    out = (11, 13) if dims == 2 else (5, 6, 7)
    x = _randn((3, 4) + sizes, seed=1)
    grid = _rand((3,) + out + (dims,), seed=2, lo=-reach, hi=reach)
    go = _randn((3, 4) + out, seed=3)
    check(device, x, grid, go, mode, pad, ac, msg=f"{combo} reach {reach}")


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_points_just_inside_and_outside_the_edges(device, combo):
    # Pixel coordinates within 1e-6 of -1, -0.5, 0, size - 1, size - 0.5, size (and for bicubic
    # also -2, -3, size + 1, size + 2): where a point's first in-range tap changes.
    dims, mode, pad, ac = combo
    sizes = (4, 6) if dims == 2 else (3, 4, 5)
    n, out = 2, (8, 9) if dims == 2 else (4, 5, 6)
    g = torch.Generator().manual_seed(5)
    u = torch.empty((n,) + out + (dims,), dtype=torch.float64)
    for a in range(dims):
        s = sizes[dims - 1 - a]
        anchors = torch.tensor([-3.0, -2.0, -1.0, -0.5, 0.0, s - 1.0, s - 0.5, s, s + 1.0, s + 2.0])
        pick = anchors[torch.randint(0, len(anchors), u.shape[:-1], generator=g)]
        # (not exactly on nearest's rounding ties -0.5 and size - 0.5: see NEAREST_SHIFT)
        jitters = [-1e-6, 1e-6] if mode == "nearest" else [-1e-6, 0.0, 1e-6]
        jitter = torch.tensor(jitters)[torch.randint(0, len(jitters), u.shape[:-1], generator=g)]
        u[..., a] = pick + jitter
    grid = to_grid(u, sizes, ac)
    x = _randn((n, 3) + sizes, seed=6)
    go = _randn((n, 3) + out, seed=7)
    check(device, x, grid, go, mode, pad, ac, msg=str(combo))


# ---------------------------------------------------------------------------------------
# many points on one element: the gather's register cache and its long path
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
@pytest.mark.parametrize("hits", sorted({1, 26} | {k + d for k in GATHER_CACHE for d in (0, 1)}))
def test_exactly_k_points_on_one_cell(device, combo, hits):
    # `hits` points at one location (inside, near a corner), every other point far outside:
    # with zeros padding those read nothing, with border / reflection they pile up on the
    # edges too (more long lists).
    dims, mode, pad, ac = combo
    sizes = (5, 6) if dims == 2 else (3, 4, 5)
    out = (4, 10) if dims == 2 else (2, 4, 5)
    x = _randn((2, 5) + sizes, seed=8)
    grid = torch.full((2,) + out + (dims,), 30.0, dtype=torch.float64)
    flat = grid.view(2, -1, dims)
    flat[:, 1::2] = -30.0
    here = to_grid(torch.tensor([1.3, 0.6, 1.7][:dims], dtype=torch.float64), sizes, ac)
    flat[:, :hits] = here
    go = _randn((2, 5) + out, seed=9)
    check(device, x, grid, go, mode, pad, ac, msg=f"{combo} hits {hits}")


@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_constant_grid_with_nan_points(device, combo):
    # Degenerate: all points in one cell (long runs for its 2^dims .. 16 elements), every
    # fifth point NaN (no pair of it reaches an element, it contributes nothing), an odd
    # channel count.
    dims, mode, pad, ac = combo
    sizes = (4, 5) if dims == 2 else (3, 4, 4)
    out = (20, 23) if dims == 2 else (6, 7, 8)
    grid = torch.full((2,) + out + (dims,), 0.13, dtype=torch.float64)
    grid.view(2, -1, dims)[:, ::5, 0] = float("nan")
    x = _randn((2, 7) + sizes, seed=10)
    go = _randn((2, 7) + out, seed=11)
    safe = grid.clone()
    nan_pts = torch.isnan(safe).any(-1)
    safe[nan_pts] = 0.0
    go0 = go.clone()
    go0.masked_fill_(nan_pts.unsqueeze(1), 0.0)  # the rule: a NaN point contributes nothing
    ref_gi, _ = reference(x, safe, mode, pad, ac, go=go0)[1:]
    gi, gg = run_backward(go.to(device), x.to(device), grid.to(device), mode, pad, ac)
    close(gi, ref_gi, atol=1e-9, rtol=1e-9, msg=str(combo))
    assert torch.isnan(gg.cpu()[nan_pts]).all() and not torch.isnan(gg.cpu()[~nan_pts]).any()


@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False], ids=_cid)
def test_many_channels_sliced(device, combo):
    # More channels than one thread takes on a small input (the CUDA gather splits them into
    # slices along blockIdx.y), with short and long runs.
    dims, mode, pad, ac = combo
    sizes = (3, 4) if dims == 2 else (2, 3, 3)
    out = (9, 8) if dims == 2 else (3, 4, 5)
    x = _randn((2, 70) + sizes, seed=12)
    grid = _rand((2,) + out + (dims,), seed=13, lo=-1.4, hi=1.4)
    go = _randn((2, 70) + out, seed=14)
    check(device, x, grid, go, mode, pad, ac, msg=str(combo))


# ---------------------------------------------------------------------------------------
# layouts, masks, batches
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is True], ids=_cid)
def test_non_contiguous_tensors(device, combo):
    dims, mode, pad, ac = combo
    cl = torch.channels_last if dims == 2 else torch.channels_last_3d
    sizes = (6, 7) if dims == 2 else (3, 4, 5)
    out = (5, 8) if dims == 2 else (3, 4, 6)
    x = _randn((2, 3) + sizes, seed=15)
    grid = _rand((2,) + out + (dims,), seed=16, lo=-1.3, hi=1.3)
    go = _randn((2, 3) + out, seed=17)
    ref_gi, ref_gg = reference(x, grid, mode, pad, ac, go=go)[1:]
    xv = x.to(device).contiguous(memory_format=cl)
    gv = torch.cat([grid, grid], -1).to(device)[..., :dims]  # strided coordinates
    gov = go.to(device).transpose(-1, -2).contiguous().transpose(-1, -2)
    assert not xv.is_contiguous() and not gv.is_contiguous() and not gov.is_contiguous()
    gi, gg = run_backward(gov, xv, gv, mode, pad, ac)
    close(gi, ref_gi, atol=1e-10, rtol=1e-10, msg=str(combo))
    close(gg, ref_gg, atol=1e-9, rtol=1e-9, msg=str(combo))


@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False], ids=_cid)
def test_masks_give_the_same_bits(device, combo):
    # grad_grid alone, grad_input alone and both (separate kernels on CUDA, one loop on the CPU)
    # must agree bitwise.
    dims, mode, pad, ac = combo
    sizes = (5, 6) if dims == 2 else (3, 4, 5)
    out = (7, 6) if dims == 2 else (3, 4, 5)
    x = _randn((3, 4) + sizes, seed=18).float().to(device)
    grid = _rand((3,) + out + (dims,), seed=19, lo=-1.5, hi=1.5).float().to(device)
    go = _randn((3, 4) + out, seed=20).float().to(device)
    gi, gg = run_backward(go, x, grid, mode, pad, ac)
    gi_only, empty = run_backward(go, x, grid, mode, pad, ac, (True, False))
    empty2, gg_only = run_backward(go, x, grid, mode, pad, ac, (False, True))
    assert torch.equal(gi, gi_only) and torch.equal(gg, gg_only)
    assert empty.shape == (0,) and empty2.shape == (0,)


@pytest.mark.parametrize("dims", [2, 3])
def test_batches_keep_their_own_points(device, dims):
    # Each batch samples a different corner: a key that lost its batch would move gradient
    # between batches.
    sizes = (6, 6) if dims == 2 else (4, 4, 4)
    out = (4, 5) if dims == 2 else (2, 3, 4)
    grid = torch.empty((4,) + out + (dims,), dtype=torch.float64)
    for b in range(4):
        grid[b] = _rand(out + (dims,), seed=30 + b, lo=-0.95, hi=-0.3) * (1 if b % 2 else -1)
    x = _randn((4, 3) + sizes, seed=21)
    go = _randn((4, 3) + out, seed=22)
    for mode in ("bilinear", "nearest") + (("bicubic",) if dims == 2 else ()):
        check(device, x, grid, go, mode, "zeros", False, msg=f"{dims}d {mode}")


# ---------------------------------------------------------------------------------------
# CUDA: float32 / half types, determinism
# ---------------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("combo", COMBOS, ids=_cid)
def test_cuda_float32_lattice_and_far(combo):
    dims, mode, pad, ac = combo
    sizes = (9, 11) if dims == 2 else (4, 6, 5)
    out = (17, 19) if dims == 2 else (5, 7, 6)
    x = _randn((2, 6) + sizes, seed=23).float().double()
    # float32 coordinates: nearest's rounding at an exact half may go either way (not this
    # test's business), bilinear and bicubic are continuous there.
    grid = lattice_grid(2, out, sizes, ac, seed=24, shift=NEAREST_SHIFT if mode == "nearest" else 0.0)
    grid = grid.float().double()
    go = _randn((2, 6) + out, seed=25).float().double()
    check("cuda", x, grid, go, mode, pad, ac, dtype=torch.float32, msg=str(combo))


@cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False], ids=_cid)
def test_cuda_half_grad_input_accumulates_in_float(dtype, combo):
    # Many points per element (downsampling 4x): a half accumulator would lose about
    # log2(points) bits; float accumulation stays within a few half ulps of float64.
    dims, mode, pad, ac = combo
    sizes = (6, 7) if dims == 2 else (3, 4, 4)
    out = (24, 28) if dims == 2 else (6, 8, 8)
    x = _randn((2, 3) + sizes, seed=26).to(dtype)
    grid = _rand((2,) + out + (dims,), seed=27, lo=-1.1, hi=1.1).to(dtype)
    go = _rand((2, 3) + out, seed=28, lo=0.0, hi=1.0).to(dtype)  # one sign: sums grow, rounding shows
    ref_gi, _ = reference(x, grid, mode, pad, ac, go=go)[1:]  # float64 of the same half values
    gi, _ = run_backward(go.cuda(), x.cuda(), grid.cuda(), mode, pad, ac)
    eps = torch.finfo(dtype).eps
    err = (gi.double().cpu() - ref_gi).abs()
    # One rounding of the result plus the float coordinates' error (weights of up to a few ulps
    # of float, times the sum).
    bound = 2 * eps * ref_gi.abs() + 1e-4 * ref_gi.abs().max()
    assert (err <= bound).all(), f"max err {err.max().item()} vs bound at worst {bound.min().item()}"


@cuda
@pytest.mark.parametrize("combo", [c for c in COMBOS if c[3] is False], ids=_cid)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_cuda_bitwise_run_to_run_with_collisions(combo, dtype):
    # Smooth, random and degenerate parts in one grid: long runs, short ones, elements no tap reads.
    dims, mode, pad, ac = combo
    sizes = (13, 17) if dims == 2 else (5, 7, 6)
    out = (40, 33) if dims == 2 else (9, 10, 11)
    grid = _rand((2,) + out + (dims,), seed=29, lo=-1.2, hi=1.2)
    flat = grid.view(2, -1, dims)
    flat[:, ::3] = 0.2
    flat[:, 1::7] = float("nan")
    x = _randn((2, 9) + sizes, seed=30).to(dtype).cuda()
    grid = grid.to(dtype).cuda()
    go = _randn((2, 9) + out, seed=31).to(dtype).cuda()
    first = run_backward(go, x, grid, mode, pad, False)
    prev = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        for _ in range(5):
            again = run_backward(go, x, grid, mode, pad, False)
            assert torch.equal(again[0], first[0]) and torch.equal(again[1].nan_to_num(7.0),
                                                                  first[1].nan_to_num(7.0))
    finally:
        torch.use_deterministic_algorithms(prev)


@cuda
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_cuda_large_smooth_grid_matches_cpu(mode):
    # A benchmark-like smooth grid (affine + small flow) at a moderate size, several batches:
    # the case the speed targets are measured on, against the CPU loops in float32 (not
    # nearest: CPU and CUDA float coordinates may round a point to different pixels), and both
    # against float64.
    n, c, h, w = 3, 5, 67, 83
    ho, wo = 71, 79
    theta = torch.tensor([[0.9, 0.1, 0.05], [-0.08, 1.05, -0.02]], dtype=torch.float64).expand(n, 2, 3)
    grid = F.affine_grid(theta, (n, c, ho, wo), align_corners=False)
    yy, xx = torch.meshgrid(torch.linspace(0, 6.28, ho, dtype=torch.float64),
                            torch.linspace(0, 6.28, wo, dtype=torch.float64), indexing="ij")
    grid = grid + 0.02 * torch.stack([torch.sin(yy), torch.cos(xx)], -1)
    x = _randn((n, c, h, w), seed=32).float()
    grid = grid.float()
    go = _randn((n, c, ho, wo), seed=33).float()
    # grad_grid = d out / d grid = (size / 2) * sum over channels of go * (sum over taps of
    # input * d weight / d u), u the pixel coordinate. In float32, u = ((g + 1) * size - 1) / 2
    # carries about one ulp of its size, eps * max(h, w), and the two implementations round it
    # differently (nvcc contracts it into a fused multiply-add, the CPU does not); that moves
    # the taps' derivative weights by about as much times their own derivative (bilinear's is
    # 1, the cubic kernel's up to 4.5), amplified by size / 2 and summed over c channels of
    # |input * go| = O(1) (randn; 8 and 16 cover the largest products and the taps' sum).
    # Measured: CUDA vs CPU 1.3e-3 (bilinear) / 3.7e-3 (bicubic) on the H200, CPU vs float64
    # 1.6e-3 / 4.9e-3 beyond rtol; real errors (a tap lost, moved or counted twice) are
    # O(size / 2 * |input * go|), thousands of times more.
    eps = torch.finfo(torch.float32).eps
    gg_atol = (max(h, w) / 2) * c * (eps * max(h, w)) * (16 if mode == "bicubic" else 8)  # 0.016 / 0.033
    for pad in ("zeros", "border", "reflection"):
        cpu = run_backward(go, x, grid, mode, pad, False)
        gpu = run_backward(go.cuda(), x.cuda(), grid.cuda(), mode, pad, False)
        ref_gi, ref_gg = reference(x, grid, mode, pad, False, go=go)[1:]
        close(gpu[0], cpu[0], atol=1e-4, rtol=1e-4, msg=f"grad_input {mode} {pad}")
        close(gpu[1], cpu[1], atol=gg_atol, rtol=1e-4, msg=f"grad_grid cuda vs cpu {mode} {pad}")
        # Each float32 result against the float64 one of the same inputs, by the same bound
        # (its own coordinate rounding against exact arithmetic).
        for name, got in (("cuda", gpu), ("cpu", cpu)):
            close(got[0], ref_gi, atol=1e-4, rtol=1e-4, msg=f"grad_input {name} vs float64 {mode} {pad}")
            close(got[1], ref_gg, atol=gg_atol, rtol=1e-4, msg=f"grad_grid {name} vs float64 {mode} {pad}")
