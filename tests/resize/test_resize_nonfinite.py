"""NaN and +-Inf in the input land where the references put them.

The fast paths compute the references' sums for finite data; the outputs that come out
non-finite are recomputed with the references' own terms (csrc/kernels/resize/resize_nonfinite.cuh),
whose per-device rules docs/ops/resize-nonfinite.md lists. Compared here: the positions of NaN,
+Inf and -Inf, and the finite values within the dtype's tolerance, against F.interpolate on the
same device (forward and backward) and against onnx.reference (forward).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import twinops
from resize_spec import onnx_configs, onnx_reference, onnx_reference_is_unstable

INF, NAN = float("inf"), float("nan")

INTERPOLATE = [
    dict(mode="nearest"), dict(mode="nearest-exact"), dict(mode="area"),
    dict(mode="bilinear", align_corners=False), dict(mode="bilinear", align_corners=True),
    dict(mode="bicubic", align_corners=False), dict(mode="bicubic", align_corners=True),
    dict(mode="bilinear", antialias=True), dict(mode="bicubic", antialias=True),
    dict(mode="bilinear", antialias=True, align_corners=True),
]


@st.composite
def sprinkled(draw, shape):
    """Finite data with NaN, +Inf and -Inf at drawn positions (at least one)."""
    n = int(np.prod(shape))
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) + 0.25
    flat = x.view(-1)
    k = draw(st.integers(1, max(1, min(4, n))))
    for _ in range(k):
        flat[draw(st.integers(0, n - 1))] = draw(st.sampled_from([NAN, INF, -INF]))
    return x


def assert_same_nonfinite(actual, expected, atol, rtol, what):
    a, e = actual.double().cpu(), expected.double().cpu()
    for name, f in (("NaN", torch.isnan), ("+Inf", lambda t: t == INF), ("-Inf", lambda t: t == -INF)):
        ma, me = f(a), f(e)
        assert torch.equal(ma, me), (f"{what}: {name} positions differ\n  twinops   {a.flatten().tolist()}\n"
                                     f"  reference {e.flatten().tolist()}")
    fin = torch.isfinite(e)
    bad = (a[fin] - e[fin]).abs() > atol + rtol * e[fin].abs()
    assert not bad.any(), f"{what}: finite values differ\n  twinops   {a.flatten().tolist()}\n  reference {e.flatten().tolist()}"


@st.composite
def interpolate_cases(draw):
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    oh = draw(st.sampled_from([h, h, 1, 2 * h, max(1, h // 2), draw(st.integers(1, 9))]))
    ow = draw(st.sampled_from([w, w, 1, 2 * w, max(1, w // 2), draw(st.integers(1, 9))]))
    kw = dict(draw(st.sampled_from(INTERPOLATE)))
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2)), h, w), dict(kw, size=(oh, ow))


def _aten_cpu_aa_bug(device, shape, kw):
    # ATen's CPU antialias kernels return zeros when W_out == 1 while H changes
    # (twinops.library.resize.reference.interpolate_reference documents it).
    oh, ow = kw["size"]
    return device == "cpu" and kw.get("antialias") and ow == 1 and oh not in (1, shape[2])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=interpolate_cases(), data=st.data())
def test_interpolate_forward_nonfinite(device, case, data):
    shape, kw = case
    assume(not _aten_cpu_aa_bug(device, shape, kw))
    x = data.draw(sprinkled(shape)).float().to(device)
    assert_same_nonfinite(twinops.interpolate(x, **kw), F.interpolate(x, **kw), 2e-5, 2e-5, f"{shape} {kw}")


def backward_reference(x, kw, gout):
    """F.interpolate's gradient. Nearest modes on CUDA take ATen's CPU backward: ATen's CUDA
    nearest backward finds each input's outputs with float arithmetic of its own and can put a
    gradient one input away from the element its forward read (nearest-exact 6 -> 1: the
    forward reads input 3, ceil(3 * float(1/6) - 0.5) = 1 sends the gradient to input 2);
    twinops' backward is the transpose of its forward, as ATen's CPU backward is."""
    if x.is_cuda and kw["mode"] in ("nearest", "nearest-exact"):
        return backward_reference(x.detach().cpu().requires_grad_(), kw, gout.cpu())
    (ref,) = torch.autograd.grad(F.interpolate(x, **kw), x, gout)
    return ref


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=interpolate_cases(), data=st.data())
def test_interpolate_backward_nonfinite(device, case, data):
    shape, kw = case
    assume(not _aten_cpu_aa_bug(device, shape, kw))
    x = (torch.randn(shape, dtype=torch.float64) + 0.25).float().to(device).requires_grad_()
    out_shape = F.interpolate(x.detach(), **kw).shape
    gout = data.draw(sprinkled(tuple(out_shape))).float().to(device)
    (ours,) = torch.autograd.grad(twinops.interpolate(x, **kw), x, gout)
    assert_same_nonfinite(ours, backward_reference(x, kw, gout), 2e-5, 2e-5, f"backward {shape} {kw}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kw", [k for k in INTERPOLATE if not k.get("antialias")], ids=str)
def test_interpolate_half_nonfinite(device, dtype, kw):
    x = torch.tensor([[1.0, INF, 3.0, 4.0, NAN, 2.0], [0.5, 1.0, -INF, 2.0, 3.0, 1.0]]).reshape(1, 1, 2, 6)
    for size in [(2, 6), (3, 4), (4, 12), (1, 3)]:
        xd = x.to(dtype).to(device)
        assert_same_nonfinite(twinops.interpolate(xd, size=size, **kw), F.interpolate(xd, size=size, **kw),
                              2e-2, 2e-2, f"{dtype} {size} {kw}")


# Small examples with a known answer, each on its own line: an Inf in area's and antialias's
# window, a NaN in bicubic's taps.
@pytest.mark.parametrize("row,size,kw,expected", [
    ([INF, 1.0], (1, 1), dict(mode="area"), [INF]),
    ([INF, 1.0], (1, 1), dict(mode="bilinear", antialias=True), [INF]),
    ([1.0, 1.0, NAN], (1, 4), dict(mode="bicubic"), [1.0, NAN, NAN, NAN]),
])
def test_small_examples_with_a_known_answer(device, row, size, kw, expected):
    x = torch.tensor(row).reshape(1, 1, 1, -1).to(device)
    y = twinops.interpolate(x, size=size, **kw).cpu().flatten()
    torch.testing.assert_close(y, torch.tensor(expected), equal_nan=True)


def test_area_on_cuda_example(device):
    x = torch.tensor([1.0, 1.0, NAN, 2.0, INF]).reshape(1, 1, 1, 5).to(device)
    y = twinops.interpolate(x, size=(1, 3), mode="area").cpu().flatten()
    torch.testing.assert_close(y, torch.tensor([1.0, NAN, INF]), equal_nan=True)


def test_resize_align_corners_example(device):
    x = torch.tensor([1.0, NAN]).reshape(1, 1, 1, 2).to(device)
    y = twinops.resize(x, sizes=[1, 1, 1, 1], mode="linear", coordinate_transformation_mode="align_corners")
    assert y.flatten().tolist() == [1.0]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cfg=onnx_configs(max_hw=6, max_out=9, modes=("linear", "cubic")), data=st.data())
def test_resize_nonfinite_matches_onnx_reference(device, cfg, data):
    shape, kw = cfg
    assume(not onnx_reference_is_unstable(shape, kw))
    x = data.draw(sprinkled(shape)).float().to(device)
    # onnx.reference (1.23) ends Resize with onnx.numpy_helper.saturate_cast, which clips
    # +-Inf to the dtype's largest finite value; twinops keeps the infinity the sum gives.
    # The float64 graph's +-1.8e308 cannot come from this data, so it is read back as +-Inf.
    ref = onnx_reference(x.double().cpu(), **kw)
    big = torch.finfo(torch.float64).max
    ref = torch.where(ref == big, INF, torch.where(ref == -big, -INF, ref))
    assert_same_nonfinite(twinops.resize(x, **kw), ref, 2e-5, 2e-5, f"{shape} {kw}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cfg=onnx_configs(max_hw=6, max_out=9, modes=("nearest",)), data=st.data())
def test_resize_nearest_nonfinite_copies(device, cfg, data):
    # onnx.reference computes nearest as a two-tap dot product with weights (0, 1), so a
    # non-finite neighbour poisons it; twinops (like ONNX Runtime) copies the element the
    # nearest rule selects. The selected element: resize an image of its own indices.
    shape, kw = cfg
    assume(kw["coordinate_transformation_mode"] != "tf_crop_and_resize")  # extrapolation: not a pick
    x = data.draw(sprinkled(shape)).float().to(device)
    index = torch.arange(x.numel(), dtype=torch.float64).reshape(shape).to(device)
    picked = twinops.resize(index, **kw).long()
    assert_same_nonfinite(twinops.resize(x, **kw), x.flatten()[picked], 0, 0, f"{shape} {kw}")


# The CUDA kernel families at shapes that route to them (csrc/kernels/resize/resize_launch.cuh's
# launch_gather): staged tiles resampling W first (upscales) and H first (downscales), the
# halving, doubling and pairs ring/row kernels, the one-tap kernel, and the per-element gather
# (channels_last). Each stores through its own code, so each must note its non-finite outputs
# for the fix-up (csrc/kernels/resize/resize_fixup.cuh).
FAMILIES = [
    ((2, 3, 64, 64), dict(scale_factor=2.0, mode="bilinear")),
    ((2, 3, 64, 64), dict(scale_factor=2.0, mode="bicubic")),
    ((2, 3, 64, 64), dict(scale_factor=0.5, mode="bilinear")),
    ((2, 3, 64, 64), dict(scale_factor=0.5, mode="bicubic")),
    ((2, 3, 64, 64), dict(scale_factor=0.5, mode="bicubic", antialias=True)),
    ((2, 3, 64, 64), dict(size=(40, 32), mode="bilinear")),
    ((2, 3, 50, 70), dict(size=(37, 101), mode="bicubic", antialias=True)),
    ((2, 3, 50, 70), dict(size=(113, 61), mode="bilinear", align_corners=True)),
    ((1, 2, 48, 40), dict(size=(30, 90), mode="area")),
    ((2, 3, 64, 64), dict(scale_factor=0.5, mode="nearest")),
    ((2, 3, 33, 47), dict(scale_factor=3.0, mode="nearest-exact")),
]


def _sprinkle(shape, seed, count):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) + 0.25
    flat = x.view(-1)
    where = torch.randint(0, flat.numel(), (count,), generator=g)
    kinds = torch.tensor([NAN, INF, -INF], dtype=torch.float64)
    flat[where] = kinds[torch.randint(0, 3, (count,), generator=g)]
    return x


@pytest.mark.cuda
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("shape,kw", FAMILIES, ids=[f"{s}-{k}" for s, k in FAMILIES])
def test_cuda_families_forward_nonfinite(shape, kw, dtype, channels_last):
    x = _sprinkle(shape, 1, 12).to(dtype).cuda()
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    tol = 2e-5 if dtype == torch.float32 else 2e-2
    assert_same_nonfinite(twinops.interpolate(x, **kw), F.interpolate(x, **kw), tol, tol, f"{shape} {kw}")


@pytest.mark.cuda
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "nhwc"])
@pytest.mark.parametrize("shape,kw", FAMILIES, ids=[f"{s}-{k}" for s, k in FAMILIES])
def test_cuda_families_backward_nonfinite(shape, kw, channels_last):
    x = (torch.randn(shape, dtype=torch.float64) + 0.25).float().cuda().requires_grad_()
    out_shape = F.interpolate(x.detach(), **kw).shape
    gout = _sprinkle(tuple(out_shape), 2, 12).float().cuda()
    if channels_last:
        gout = gout.contiguous(memory_format=torch.channels_last)
    (ours,) = torch.autograd.grad(twinops.interpolate(x, **kw), x, gout)
    assert_same_nonfinite(ours, backward_reference(x, kw, gout), 2e-5, 2e-5, f"backward {shape} {kw}")


@pytest.mark.parametrize("kw", [dict(mode="bilinear"), dict(mode="bicubic"), dict(mode="bilinear", align_corners=True)],
                         ids=str)
def test_backward_reads_with_zero_weight(device, kw):
    # 2x upscales clamp output 0's window: it reads input 1 with weight 0 (align_corners: every
    # even output reads its neighbour with weight 0), so an infinite grad_output there gives
    # the references NaN at input 1, which no nonzero weight connects to it: the backward must
    # see that zero-weight reader (the CPU's inverse rows keep it, Workspace.zero_taps; the
    # CUDA fix-up reads Workspace.zlo / zhi).
    x = torch.randn(1, 2, 16, 16, device=device, requires_grad=True)
    gout = torch.randn(1, 2, 32, 32, device=device)
    gout[0, 0, 0, 5] = INF
    gout[0, 1, 7, 0] = -INF
    (ours,) = torch.autograd.grad(twinops.interpolate(x, scale_factor=2.0, **kw), x, gout)
    (ref,) = torch.autograd.grad(F.interpolate(x, scale_factor=2.0, **kw), x, gout)
    assert_same_nonfinite(ours, ref, 2e-5, 2e-5, f"backward {kw}")


def _window_box(in_len, out_len, in_index, out_index):
    """Along one axis of length in_len -> out_len: whether input `in_index` lies within a
    generous window of output `out_index` (tensors, broadcast): within 16 input elements of
    the output's source coordinate (the widest padded table), times the downscale factor."""
    centre = (out_index.double() + 0.5) * (in_len / out_len) - 0.5
    return (centre - in_index.double()).abs() <= 16 * max(1.0, in_len / out_len)


def _near(shape_in, shape_out, points, outputs):
    """Boolean mask over the outputs (shape_out) if `outputs`, else over the inputs
    (shape_in): the positions within the window (_window_box, per axis) of any of `points`,
    (n, c, y, x) positions on the other side."""
    mask = torch.zeros(shape_out if outputs else shape_in, dtype=torch.bool)
    for n, c, y, x in points:
        ys = torch.arange(mask.shape[2])
        xs = torch.arange(mask.shape[3])
        if outputs:
            my = _window_box(shape_in[2], shape_out[2], torch.tensor(y), ys)
            mx = _window_box(shape_in[3], shape_out[3], torch.tensor(x), xs)
        else:
            my = _window_box(shape_in[2], shape_out[2], ys, torch.tensor(y))
            mx = _window_box(shape_in[3], shape_out[3], xs, torch.tensor(x))
        mask[n, c] |= my[:, None] & mx[None, :]
    return mask


@pytest.mark.cuda
@pytest.mark.parametrize("shape,kw", FAMILIES[:9], ids=[f"{s}-{k}" for s, k in FAMILIES[:9]])
def test_cuda_fixup_leaves_other_outputs_bitwise(shape, kw):
    """The fix-up (csrc/kernels/resize/resize_fixup.cuh) recomputes only near the non-finite values:
    every output outside a generous window of them is bitwise the output of the same input
    without them, forward and backward; inside, the recomputed finite outputs agree with it
    to rounding (the reference's terms, summed in another order)."""
    clean = (torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(7)) + 0.25).float().cuda()
    dirty = clean.clone()
    points = [(0, 0, 1, 2), (shape[0] - 1, shape[1] - 1, shape[2] - 1, shape[3] - 2)]
    dirty[points[0]] = NAN
    dirty[points[1]] = INF
    a, b = twinops.interpolate(dirty, **kw), twinops.interpolate(clean, **kw)
    near = _near(shape, tuple(a.shape), points, outputs=True).cuda()
    fin = torch.isfinite(a)
    assert not fin.all() and fin[~near].all()
    assert torch.equal(a[~near], b[~near])
    torch.testing.assert_close(a[fin & near], b[fin & near], atol=1e-6, rtol=1e-6)
    x = clean.clone().requires_grad_()
    out = twinops.interpolate(x, **kw)
    g_clean = torch.randn(out.shape, device="cuda")
    g_dirty = g_clean.clone()
    g_points = [(0, 0, 0, 1)]
    g_dirty[g_points[0]] = INF
    (ga,) = torch.autograd.grad(out, x, g_dirty, retain_graph=True)
    (gb,) = torch.autograd.grad(out, x, g_clean)
    near = _near(shape, tuple(out.shape), g_points, outputs=False).cuda()
    fin = torch.isfinite(ga)
    assert not fin.all() and fin[~near].all()
    assert torch.equal(ga[~near], gb[~near])
    torch.testing.assert_close(ga[fin & near], gb[fin & near], atol=1e-6, rtol=1e-6)


def _cuda_kernels(fn):
    """The names of the CUDA kernels fn() runs (torch profiler)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        result = fn()
        torch.cuda.synchronize()
    names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return result, names


# The ring kernels gather forwards only and recompute their own non-finite outputs without
# starting fixup_kernel (resize_fixup.cuh, finish_ring). Several hundred planes, so that
# each block loops over planes (for_planes) and must recompute in every plane it visited;
# float32 two taps at three blocks per SM, the 4-warp float32 8-tap block, 2-byte elements.
RINGS = [
    ("halving_kernel", (2, 300, 8, 32), dict(scale_factor=0.5, mode="bilinear"), torch.float32),
    ("halving_kernel", (2, 300, 8, 64), dict(scale_factor=0.5, mode="bicubic"), torch.float16),
    ("halving_kernel", (2, 300, 8, 32), dict(scale_factor=0.5, mode="bicubic", antialias=True), torch.float32),
    ("halving_kernel", (1, 2, 64, 64), dict(scale_factor=0.5, mode="bicubic", antialias=True), torch.bfloat16),
    ("doubling_kernel", (2, 300, 4, 16), dict(scale_factor=2.0, mode="bicubic"), torch.float16),
    ("doubling_kernel", (1, 2, 40, 64), dict(scale_factor=2.0, mode="bilinear"), torch.bfloat16),
    # 2-byte halving kernels note their stores in pairs; float16 doubling kernels note the W
    # results instead of the outputs (RingNotes, kNoteMid).
    ("halving_kernel", (2, 300, 8, 64), dict(scale_factor=0.5, mode="bilinear"), torch.bfloat16),
    ("doubling_kernel", (1, 3, 40, 64), dict(scale_factor=2.0, mode="bilinear"), torch.float16),
    ("doubling_kernel", (2, 150, 6, 32), dict(scale_factor=2.0, mode="bicubic", antialias=True), torch.float16),
]


@pytest.mark.cuda
@pytest.mark.parametrize("kernel,shape,kw,dtype", RINGS, ids=[f"{k}-{s}-{w}-{d}" for k, s, w, d in RINGS])
def test_cuda_ring_kernels_fix_their_own_outputs(kernel, shape, kw, dtype):
    x = _sprinkle(shape, 8, 40).to(dtype).cuda()
    ours, names = _cuda_kernels(lambda: twinops.interpolate(x, **kw))
    assert any(kernel in n for n in names), f"{shape} {kw} {dtype} ran {sorted(names)}, not {kernel}"
    assert not any("fixup_kernel" in n for n in names), f"{kernel} started fixup_kernel: {sorted(names)}"
    tol = 2e-5 if dtype == torch.float32 else 2e-2
    assert_same_nonfinite(ours, F.interpolate(x, **kw), tol, tol, f"{shape} {kw} {dtype}")


@pytest.mark.cuda
@pytest.mark.parametrize("kernel,kw", [("halving_kernel", dict(scales=[1, 1, 0.5, 0.5], mode="cubic")),
                                       ("halving_kernel", dict(scales=[1, 1, 0.5, 0.5], mode="linear", antialias=1)),
                                       ("doubling_kernel", dict(scales=[1, 1, 2, 2], mode="cubic"))], ids=str)
def test_cuda_ring_kernels_onnx_nonfinite(kernel, kw):
    # The resize frontend: the recomputed outputs are onnx.reference's (float64 weights).
    x = _sprinkle((1, 3, 16, 32), 9, 10).half().cuda()
    ours, names = _cuda_kernels(lambda: twinops.resize(x, **kw))
    assert any(kernel in n for n in names), f"{kw} ran {sorted(names)}, not {kernel}"
    ref = onnx_reference(x.double().cpu(), **kw)
    big = torch.finfo(torch.float64).max  # saturate_cast's +-Inf (test_resize_nonfinite_matches_onnx_reference)
    ref = torch.where(ref == big, INF, torch.where(ref == -big, -INF, ref))
    assert_same_nonfinite(ours, ref, 2e-2, 2e-2, f"{kw}")


@pytest.mark.cuda
@pytest.mark.parametrize("kw", [dict(scale_factor=0.5, mode="bicubic"), dict(size=(40, 32), mode="bilinear")],
                         ids=["ring", "tail-launch"])
def test_cuda_graph_replay_fixes_up(kw):
    """The fix-ups work inside a captured CUDA graph, the ring kernels' own recompute (0.5x:
    halving_kernel) and the other gathers' device-side launch (64x64 -> 40x32: pairs_kernel):
    each replay puts NaN and Inf where F.interpolate does for that replay's input (the flag word
    of the capture stream is allocated during capture, and the fix-up clears it every time)."""
    static_in = _sprinkle((2, 3, 64, 64), 3, 12).float().cuda()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = twinops.interpolate(static_in, **kw)
    for seed in (4, 5, 6):
        static_in.copy_(_sprinkle((2, 3, 64, 64), seed, 12).float())
        graph.replay()
        torch.cuda.synchronize()
        assert_same_nonfinite(out, F.interpolate(static_in, **kw), 2e-5, 2e-5, f"replay {seed}")
