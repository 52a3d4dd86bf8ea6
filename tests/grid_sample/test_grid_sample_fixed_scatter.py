"""The fused fixed-point backward (csrc/kernels/grid_sample/grid_sample_fixed.cu, over
csrc/kernels/fixed_scatter.cuh), forced with TWINOPS_GRID_SAMPLE_SCATTER=fixed (and the sorted
gather with =sort): grad_input within the op's tolerances of the float64 reference for every mode
and padding, bitwise the same run to run, NaN and Inf where the reference puts them, adversarial
dynamic ranges within the documented bound; grad_grid bitwise the sorted path's; float64 left
on the sorted gather; the default choosing per case. CUDA only (the CPU kernels have one path)."""
import pytest
import torch
import torch.nn.functional as F

import twinops
from twinops.library.grid_sample.reference import TOLERANCES
from twinops.library.grid_sample.strategies import MODES, PADDING_MODES
from twinops.testing import random_input

pytestmark = pytest.mark.cuda

CASES = [dict(mode=m, padding_mode=p, align_corners=ac) for m in MODES for p in PADDING_MODES for ac in (False, True)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _id(kw):
    return "-".join(str(v) for v in kw.values())


def _scatter(monkeypatch, fixed):
    """Forces a design (True: fixed point, False: sorted gather, None: the default rule)."""
    if fixed is None:
        monkeypatch.delenv("TWINOPS_GRID_SAMPLE_SCATTER", raising=False)
    else:
        monkeypatch.setenv("TWINOPS_GRID_SAMPLE_SCATTER", "fixed" if fixed else "sort")


def _grad_input(x, g, go, fixed, monkeypatch, **kw):
    _scatter(monkeypatch, fixed)
    x = x.detach().requires_grad_()
    gi, = torch.autograd.grad(twinops.grid_sample(x, g, **kw), x, go)
    return gi


def _both_grads(x, g, go, fixed, monkeypatch, **kw):
    _scatter(monkeypatch, fixed)
    x, g = x.detach().requires_grad_(), g.detach().requires_grad_()
    return torch.autograd.grad(twinops.grid_sample(x, g, **kw), (x, g), go)


def _inputs(shape, gshape, dtype, seed=0, spread=1.4):
    gen = torch.Generator().manual_seed(seed)
    x = random_input(shape, dtype, "cuda", seed=seed)
    g = (torch.rand(gshape, generator=gen, dtype=torch.float64) * 2 * spread - spread).to("cuda", dtype)
    go = random_input((shape[0], shape[1], *gshape[1:-1]), dtype, "cuda", seed=seed + 1)
    return x, g, go


def _reference(x, g, go, **kw):
    x = x.detach().cpu().double().requires_grad_()
    gi, = torch.autograd.grad(F.grid_sample(x, g.cpu().double(), **kw), x, go.cpu().double())
    return gi


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", CASES, ids=_id)
@pytest.mark.parametrize("rank", [4, 5])
def test_matches_the_float64_reference_and_repeats_bitwise(monkeypatch, dtype, kw, rank):
    if rank == 5 and kw["mode"] == "bicubic":
        pytest.skip("bicubic is 4-D only")
    shape, gshape = ((2, 3, 9, 11), (2, 13, 7, 2)) if rank == 4 else ((2, 2, 5, 6, 4), (2, 3, 5, 4, 3))
    x, g, go = _inputs(shape, gshape, dtype, seed=rank)
    fixed = _grad_input(x, g, go, True, monkeypatch, **kw)
    assert fixed.dtype == dtype
    again = _grad_input(x, g, go, True, monkeypatch, **kw)
    assert torch.equal(fixed, again), "not bitwise repeatable"
    # the same tolerance as the sorted gather's low-precision test (a sum of many rounded terms)
    scale = 4 * {torch.float32: 1, torch.float16: 4, torch.bfloat16: 4}[dtype]
    atol, rtol = TOLERANCES[dtype]
    want = _reference(x, g, go, **kw)
    torch.testing.assert_close(fixed.cpu().double(), want, atol=scale * atol, rtol=scale * rtol)
    sorted_ = _grad_input(x, g, go, False, monkeypatch, **kw)
    torch.testing.assert_close(fixed.cpu().double(), sorted_.cpu().double(), atol=scale * atol, rtol=scale * rtol)


def test_many_points_on_one_element_and_launch_independence(monkeypatch):
    """A contracted grid: every point samples a few elements (where atomics collide most); the
    result repeats bitwise after other work on the device, and against the float64 reference."""
    x = random_input((4, 32, 16, 16), torch.float32, "cuda")
    g = torch.full((4, 64, 64, 2), 0.1, device="cuda") + torch.rand(4, 64, 64, 2, device="cuda") * 1e-3
    go = random_input((4, 32, 64, 64), torch.float32, "cuda", seed=3)
    first = _grad_input(x, g, go, True, monkeypatch)
    torch.randn(1 << 22, device="cuda").sum()  # other work between the runs
    assert torch.equal(first, _grad_input(x, g, go, True, monkeypatch))
    want = _reference(x, g, go)
    torch.testing.assert_close(first.cpu().double(), want, atol=1e-5 * want.abs().max().item(), rtol=1e-5)


def test_nonfinite_grad_output_lands_where_the_reference_puts_it(monkeypatch):
    x, g, go = _inputs((1, 3, 6, 7), (1, 5, 4, 2), torch.float32, seed=5, spread=0.9)
    go = go.clone()
    go[0, 0, 1, 2] = float("nan")
    go[0, 1, 2, 1] = float("inf")
    go[0, 2, 0, 0] = -float("inf")
    go[0, 2, 4, 3] = float("inf")
    for kw in CASES:
        fixed = _grad_input(x, g, go, True, monkeypatch, **kw).cpu().double()
        want = _reference(x, g, go, **kw)
        assert torch.equal(torch.isnan(fixed), torch.isnan(want)), kw
        assert torch.equal(torch.isposinf(fixed), torch.isposinf(want)), kw
        assert torch.equal(torch.isneginf(fixed), torch.isneginf(want)), kw
        finite = torch.isfinite(want)
        torch.testing.assert_close(fixed[finite], want[finite], atol=1e-4, rtol=1e-4)


def test_dynamic_range_within_the_documented_bound(monkeypatch):
    """grad_output from 1e-30 to 1e30 in one plane, and one value near float32's largest. Nearest
    mode, whose weights are exactly 1, so that the only errors are the fixed point's: one rounding
    to a multiple of 2^-frac per contribution, at most the plane's bound * 2^-62 each (bound = max
    |grad_output| * points * taps), then the rounding of the result to float32. The float64
    reference sums the same float32 values (its own error is far below those)."""
    x, g, go = _inputs((1, 2, 8, 8), (1, 12, 12, 2), torch.float32, seed=7, spread=1.0)
    gen = torch.Generator().manual_seed(8)
    exps = torch.randint(-30, 31, go.shape, generator=gen).double()
    go = (torch.sign(torch.randn(go.shape, generator=gen, dtype=torch.float64)) * 10.0 ** exps).float().cuda()
    go[0, 1, 3, 3] = 3.0e38
    kw = dict(mode="nearest")
    fixed = _grad_input(x, g, go, True, monkeypatch, **kw).cpu().double()
    want = _reference(x, g, go, **kw)
    magnitude = _reference(x, g, go.abs(), **kw)  # sum of |grad_output| per element
    points, taps = 144, 1
    for c in range(2):
        bound = go[0, c].abs().max().double().item() * points * taps
        allowed = points * taps * bound * 2.0 ** -62 + want[0, c].abs() * 2.0 ** -24 + magnitude[0, c] * 2.0 ** -50
        assert ((fixed[0, c] - want[0, c]).abs() <= allowed).all(), c
    assert torch.isfinite(fixed).all()


@pytest.mark.parametrize("kw", CASES[::3], ids=_id)
def test_float64_keeps_the_sorted_gather(monkeypatch, kw):
    x, g, go = _inputs((2, 3, 7, 8), (2, 5, 6, 2), torch.float64, seed=9)
    assert torch.equal(_grad_input(x, g, go, True, monkeypatch, **kw), _grad_input(x, g, go, False, monkeypatch, **kw))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", CASES, ids=_id)
def test_the_fused_pass_computes_grad_grid_as_the_sorted_path(monkeypatch, dtype, kw):
    """The fused pass sums grad_grid in the same order with the same arithmetic as the sorted
    path's grad_grid kernel: bitwise equal, NaN points included; grad_grid alone (no grad_input)
    takes the grad_grid kernel on both settings."""
    x, g, go = _inputs((2, 5, 7, 8), (2, 5, 6, 2), dtype, seed=9)
    g = g.clone()
    g[1, 2, 3, 0] = float("nan")
    _, fused = _both_grads(x, g, go, True, monkeypatch, **kw)
    _, sorted_ = _both_grads(x, g, go, False, monkeypatch, **kw)
    assert torch.equal(fused.isnan(), sorted_.isnan()) and fused[1, 2, 3].isnan().all()
    assert torch.equal(fused.nan_to_num(), sorted_.nan_to_num())
    alone = []
    for fixed in (True, False):
        _scatter(monkeypatch, fixed)
        gg = g.detach().requires_grad_()
        alone.append(torch.autograd.grad(twinops.grid_sample(x, gg, **kw), gg, go)[0].nan_to_num())
    assert torch.equal(alone[0], alone[1]) and torch.equal(alone[0], sorted_.nan_to_num())


@pytest.mark.parametrize("mode, channels, fixed", [("bilinear", 3, True), ("bilinear", 64, False),
                                                    ("nearest", 4, True), ("bicubic", 64, True)])
def test_the_default_chooses_per_case(monkeypatch, mode, channels, fixed):
    """Unset, the variable leaves the choice to fixed_point_wins (grid_sample_tuning.h): few
    channels, or bicubic, take the fixed point, other cases the sorted gather. The two designs
    round differently, so the default's result tells which one ran."""
    x, g, go = _inputs((2, channels, 24, 24), (2, 40, 40, 2), torch.float32, seed=11)
    chosen = _grad_input(x, g, go, fixed, monkeypatch, mode=mode)
    other = _grad_input(x, g, go, not fixed, monkeypatch, mode=mode)
    assert not torch.equal(chosen, other), "the two designs agree bitwise here: the test cannot tell them apart"
    assert torch.equal(_grad_input(x, g, go, None, monkeypatch, mode=mode), chosen)
