"""twinops resize: parity, gradients, torch.library contracts, layouts and errors.

Tiers (docs/toolkit.md, "Tests"): T0 runs everywhere (CPU); T1 adds the CUDA path when a GPU and
the CUDA kernels are present (tests marked `cuda` skip otherwise).
"""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import twinops
from resize_spec import (ALL_INTERPOLATE, DTYPES, TOLERANCES, assert_close, interpolate_configs, interpolate_reference,
                         onnx_configs, onnx_reference, onnx_reference_is_unstable, random_input)
from twinops.library.resize.api import _interpolate_plan

cuda = pytest.mark.cuda

SIZES = [dict(size=(13, 5)), dict(scale_factor=2.0), dict(scale_factor=(0.5, 1.7)),
         dict(scale_factor=0.3, recompute_scale_factor=True), dict(size=(1, 1))]


def _ids(d):
    return ",".join(f"{k}={v}" for k, v in d.items())


# ---------------------------------------------------------------------------------------
# parity with F.interpolate
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@given(cfg=interpolate_configs())
def test_interpolate_matches_pytorch(device, dtype, cfg):
    shape, kw = cfg
    x = random_input(shape, dtype, device)
    actual = twinops.interpolate(x, **kw)
    if kw["mode"] in ("nearest", "nearest-exact"):
        # Index selection is exact: same values as ATen, bit for bit, every dtype.
        torch.testing.assert_close(actual, interpolate_reference(x, **kw), rtol=0, atol=0)
    else:
        assert_close(actual, interpolate_reference(x, **kw), dtype, f"{kw}")
    assert actual.dtype == dtype and actual.device == x.device


@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
@pytest.mark.parametrize("sz", SIZES, ids=_ids)
def test_interpolate_every_mode_float64(device, kw, sz):
    x = random_input((2, 3, 7, 9), torch.float64, device)
    actual = twinops.interpolate(x, **kw, **sz)
    assert_close(actual, interpolate_reference(x, **kw, **sz), torch.float64, f"{kw} {sz}")


def test_nearest_follows_the_formula_where_aten_cpu_short_cuts():
    # floor(10 * 1.05) == 10: ATen's CPU kernel copies, the formula (ATen CUDA, twinops) resamples.
    x = torch.arange(10.0).reshape(1, 1, 1, 10)
    y = twinops.interpolate(x, scale_factor=(1.0, 1.05))
    assert y.flatten().tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@given(cfg=interpolate_configs(max_hw=24, max_out=40))
def test_cpu_and_cuda_agree(dtype, cfg):
    shape, kw = cfg
    x = random_input(shape, dtype)
    cpu = twinops.interpolate(x, **kw)
    gpu = twinops.interpolate(x.cuda(), **kw).cpu()
    if kw["mode"] in ("nearest", "nearest-exact"):
        torch.testing.assert_close(gpu, cpu, rtol=0, atol=0)
    else:
        # Same tables and loops; only FMA contraction and the final rounding differ.
        assert_close(gpu, cpu.double(), dtype, f"CPU vs CUDA {kw}")


# ---------------------------------------------------------------------------------------
# parity with ONNX Resize-19 (onnx.reference)
# ---------------------------------------------------------------------------------------

@settings(max_examples=60)
@given(cfg=onnx_configs())
def test_resize_matches_onnx_reference(device, cfg):
    pytest.importorskip("onnx")
    shape, kw = cfg
    assume(not onnx_reference_is_unstable(shape, kw))
    x = random_input(shape, torch.float32, device)
    actual = twinops.resize(x, **kw)
    assert_close(actual, onnx_reference(x, **kw), torch.float32, f"{kw}")


@pytest.mark.parametrize("coord", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                   "half_pixel_symmetric", "tf_crop_and_resize"])
@pytest.mark.parametrize("mode,extra", [
    ("nearest", dict(nearest_mode="round_prefer_floor")),
    ("nearest", dict(nearest_mode="round_prefer_ceil")),
    ("nearest", dict(nearest_mode="floor")),
    ("nearest", dict(nearest_mode="ceil")),
    ("linear", {}), ("linear", dict(antialias=1)), ("linear", dict(exclude_outside=1)),
    ("cubic", {}), ("cubic", dict(antialias=1)), ("cubic", dict(exclude_outside=1, cubic_coeff_a=-0.5)),
    ("cubic", dict(antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)),
], ids=lambda v: v if isinstance(v, str) else _ids(v))
@pytest.mark.parametrize("how", [dict(scales=[1.0, 1.0, 0.6, 2.4]), dict(sizes=[2, 3, 17, 4]),
                                 dict(sizes=[9, 5], axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
                                 dict(scales=[0.45, 1.5], axes=[-2, -1])], ids=_ids)
def test_resize_every_attribute(coord, mode, extra, how):
    pytest.importorskip("onnx")
    x = random_input((2, 3, 8, 11), torch.float32)
    kw = dict(mode=mode, coordinate_transformation_mode=coord, **extra, **how)
    if coord == "tf_crop_and_resize":
        kw["roi"] = [0.1, -0.2, 0.8, 1.1] if "axes" in how else [0, 0, 0.1, -0.2, 1, 1, 0.8, 1.1]
        kw["extrapolation_value"] = -3.5
    assert not onnx_reference_is_unstable(x.shape, kw)
    assert_close(twinops.resize(x, **kw), onnx_reference(x, **kw), torch.float32, f"{kw}")


def test_tf_crop_and_resize_extrapolates():
    x = random_input((1, 1, 4, 4), torch.float32)
    y = twinops.resize(x, roi=[0, 0, -0.5, -0.5, 1, 1, 1.5, 1.5], sizes=[1, 1, 5, 5], mode="linear",
                       coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.25)
    assert (y[..., 0, :] == 7.25).all() and (y[..., :, -1] == 7.25).all()
    assert (y[..., 1:-1, 1:-1] != 7.25).all()


# ---------------------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
@pytest.mark.parametrize("sz", [dict(size=(5, 7)), dict(scale_factor=(0.6, 1.5))], ids=_ids)
def test_gradcheck(device, kw, sz):
    x = random_input((1, 2, 4, 5), torch.float64, device).requires_grad_()
    fn = lambda t: twinops.interpolate(t, **kw, **sz)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
def test_backward_matches_pytorch(device, dtype, kw):
    x = random_input((2, 3, 9, 6), dtype, device).requires_grad_()
    g = random_input((2, 3, 14, 4), dtype, device, seed=1)
    (ours,) = torch.autograd.grad(twinops.interpolate(x, size=(14, 4), **kw), x, g)
    xr = x.detach().double().requires_grad_()
    (ref,) = torch.autograd.grad(F.interpolate(xr, size=(14, 4), **kw), xr, g.double())
    # Each input gradient sums up to a few dozen products: allow a few roundings more.
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(ours.double(), ref, atol=4 * atol, rtol=4 * rtol)


@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
def test_backward_is_deterministic(device, kw):
    x = random_input((2, 4, 33, 17), torch.float32, device).requires_grad_()
    g = random_input((2, 4, 70, 9), torch.float32, device, seed=3)
    with DeterministicAlgorithms():
        grads = [torch.autograd.grad(twinops.interpolate(x, size=(70, 9), **kw), x, g)[0] for _ in range(3)]
    for other in grads[1:]:
        assert torch.equal(grads[0], other)


class DeterministicAlgorithms:
    def __enter__(self):
        self.prev = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)

    def __exit__(self, *exc):
        torch.use_deterministic_algorithms(self.prev)


@cuda
def test_bicubic_backward_runs_where_aten_refuses():
    x = random_input((1, 2, 8, 8), torch.float32, "cuda").requires_grad_()
    with DeterministicAlgorithms():
        with pytest.raises(RuntimeError, match="deterministic"):
            F.interpolate(x, scale_factor=2, mode="bicubic").sum().backward()
        twinops.interpolate(x, scale_factor=2, mode="bicubic").sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


# ---------------------------------------------------------------------------------------
# torch.library contracts: opcheck, torch.compile
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
def test_opcheck(device, kw):
    x = random_input((2, 3, 6, 5), torch.float32, device).requires_grad_()
    out, attrs = _interpolate_plan(x, None, (1.5, 0.7), kw["mode"], kw.get("align_corners"), None,
                                   kw.get("antialias", False))
    torch.library.opcheck(torch.ops.twinops.resize.default, (x, list(out), *attrs.op_args()))
    g = random_input((2, 3, *out), torch.float32, device, seed=2)
    torch.library.opcheck(torch.ops.twinops.resize_backward.default, (g, list(x.shape), *attrs.op_args()))


def test_opcheck_onnx_attributes(device):
    x = random_input((1, 2, 6, 5), torch.float32, device).requires_grad_()
    from twinops.library.resize.api import _resize_plan

    out, attrs = _resize_plan(x, [0, 0, 0.1, 0.2, 1, 1, 0.9, 1.1], [1, 1, 1.5, 0.7], None, 1, None,
                              "tf_crop_and_resize", -0.5, 1, 2.0, "stretch", "cubic", "round_prefer_floor")
    torch.library.opcheck(torch.ops.twinops.resize.default, (x, list(out), *attrs.op_args()))


# dynamic_resize's opcheck (forward and backward ops): tests/test_conformance.py


class _Net(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.up = twinops.Interpolate(**kw)

    def forward(self, x):
        return self.up(self.conv(x)).relu()


@pytest.mark.parametrize("kw", [dict(scale_factor=2.0, mode="bicubic"), dict(size=(5, 9), mode="nearest"),
                                dict(scale_factor=0.5, mode="bilinear", antialias=True)], ids=_ids)
def test_torch_compile_fullgraph(device, kw):
    torch._dynamo.reset()
    net = _Net(**kw).to(device)
    x = random_input((2, 3, 8, 10), torch.float32, device)
    compiled = torch.compile(net, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), net(x))
    compiled(x).sum().backward()


def test_torch_compile_inductor_dynamic(device):
    torch._dynamo.reset()
    net = _Net(scale_factor=1.5, mode="bilinear").to(device)
    compiled = torch.compile(net, fullgraph=True, dynamic=True)
    for hw in ((8, 10), (12, 7)):
        x = random_input((2, 3, *hw), torch.float32, device)
        torch.testing.assert_close(compiled(x), net(x))


def test_torch_compile_dynamic_backward(device):
    # The C++ autograd kernel saves the input's symbolic sizes for the backward op: the
    # compiled gradient must match eager's for every size of one dynamic graph.
    torch._dynamo.reset()
    net = _Net(scale_factor=1.5, mode="bicubic").to(device)
    compiled = torch.compile(net, fullgraph=True, dynamic=True, backend="aot_eager")
    for hw in ((8, 10), (12, 7)):
        x = random_input((2, 3, *hw), torch.float32, device).requires_grad_()
        (want,) = torch.autograd.grad(net(x).square().sum(), x)
        (got,) = torch.autograd.grad(compiled(x).square().sum(), x)
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("how", [dict(scales=[1.5, 0.7], axes=[2, 3]), dict(sizes=[9, 4], axes=[2, 3])], ids=_ids)
def test_torch_compile_onnx_resize_dynamic(device, how):
    # Automatic dynamic shapes: the second size recompiles with symbolic H and W.
    torch._dynamo.reset()
    mod = twinops.Resize(mode="cubic", **how).to(device)
    compiled = torch.compile(mod, fullgraph=True, backend="aot_eager")
    for hw in ((8, 10), (12, 7), (5, 13)):
        x = random_input((2, 3, *hw), torch.float32, device)
        torch.testing.assert_close(compiled(x), mod(x))


# ---------------------------------------------------------------------------------------
# layouts, empty tensors, modules, dynamic_resize
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
def test_channels_last_and_non_contiguous(device, kw):
    base = random_input((2, 5, 10, 12), torch.float32, device)
    ref = F.interpolate(base.double(), size=(7, 15), **kw)
    cl = base.contiguous(memory_format=torch.channels_last)
    out = twinops.interpolate(cl, size=(7, 15), **kw)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert_close(out, ref, torch.float32, "channels_last")
    strided = random_input((2, 10, 20, 13), torch.float32, device)[:, ::2, ::2, 1:]
    assert not strided.is_contiguous()
    assert_close(twinops.interpolate(strided, size=(7, 15), **kw),
                 F.interpolate(strided.double(), size=(7, 15), **kw), torch.float32, "strided")
    transposed = base.transpose(2, 3)
    assert_close(twinops.interpolate(transposed, size=(7, 15), **kw),
                 F.interpolate(transposed.double(), size=(7, 15), **kw), torch.float32, "transposed")


def test_channels_last_backward(device):
    x = random_input((2, 5, 10, 12), torch.float32, device).contiguous(memory_format=torch.channels_last)
    x.requires_grad_()
    g = random_input((2, 5, 19, 6), torch.float32, device, seed=4).contiguous(memory_format=torch.channels_last)
    (ours,) = torch.autograd.grad(twinops.interpolate(x, size=(19, 6), mode="bicubic"), x, g)
    xr = x.detach().double().requires_grad_()
    (ref,) = torch.autograd.grad(F.interpolate(xr, size=(19, 6), mode="bicubic"), xr, g.double())
    assert_close(ours, ref, torch.float32, "channels_last backward")


@pytest.mark.parametrize("kw", ALL_INTERPOLATE, ids=_ids)
def test_empty_batch(device, kw):
    x = torch.empty(0, 3, 6, 7, device=device, requires_grad=True)
    y = twinops.interpolate(x, size=(4, 9), **kw)
    assert y.shape == (0, 3, 4, 9)
    y.sum().backward()
    assert x.grad.shape == x.shape
    assert twinops.interpolate(torch.empty(2, 0, 6, 7, device=device), scale_factor=2, **kw).shape == (2, 0, 12, 14)


def test_modules(device):
    x = random_input((1, 3, 6, 8), torch.float32, device)
    torch.testing.assert_close(twinops.Interpolate(scale_factor=2, mode="bilinear")(x),
                               twinops.interpolate(x, scale_factor=2, mode="bilinear"))
    torch.testing.assert_close(twinops.Resize(scales=[1, 1, 2, 2], mode="cubic")(x),
                               twinops.resize(x, scales=[1, 1, 2, 2], mode="cubic"))
    size = torch.empty(1, 9, 11, device=device)
    torch.testing.assert_close(twinops.DynamicResize(align_corners=True)(x, size),
                               twinops.dynamic_resize(x, size, align_corners=True))


@pytest.mark.parametrize("align_corners", [False, True])
def test_dynamic_resize(device, align_corners):
    x = random_input((2, 3, 7, 5), torch.float32, device).requires_grad_()
    size_tensor = torch.empty(4, 12, 9, device=device)
    y = twinops.dynamic_resize(x, size_tensor, align_corners)
    ref = F.interpolate(x.detach().double(), size=(12, 9), mode="bicubic", align_corners=align_corners)
    assert_close(y, ref, torch.float32, "dynamic_resize")
    y.sum().backward()
    xr = x.detach().double().requires_grad_()
    F.interpolate(xr, size=(12, 9), mode="bicubic", align_corners=align_corners).sum().backward()
    assert_close(x.grad, xr.grad, torch.float32, "dynamic_resize backward")


@pytest.mark.slow
@cuda
def test_more_than_2_31_elements():
    # 2 * 32768 * 32769 = 2^31 + 65536 input elements: the 64-bit index path.
    x = torch.empty(1, 2, 32768, 32769, dtype=torch.float16, device="cuda")
    x.normal_(generator=torch.Generator("cuda").manual_seed(0))
    assert x.numel() > 2**31
    # (No antialias case: ATen's CUDA antialias kernel cannot take this shape to compare against.)
    for kw in (dict(scale_factor=0.5, mode="bilinear"), dict(size=(257, 129), mode="bicubic")):
        ours = twinops.interpolate(x, **kw)
        ref = F.interpolate(x, **kw)
        # fp16 ATen and ours both round once from float accumulation.
        torch.testing.assert_close(ours, ref, atol=2e-3, rtol=2e-3)
    g = torch.ones(1, 2, 16384, 16384, dtype=torch.float16, device="cuda")
    (gi,) = torch.autograd.grad(twinops.interpolate(x.requires_grad_(), scale_factor=0.5, mode="nearest"), x, g)
    # nearest 0.5x: each even (row, col) receives exactly one 1, everything else 0.
    assert gi[0, 1, -2, -3].item() == 1.0 and gi[0, 1, -1, -3].item() == 0.0
    assert gi.float().sum().item() == 2 * 16384 * 16384


@pytest.mark.slow
@cuda
def test_32_bit_index_path_up_to_2_31_elements():
    # 2 * 32768 * 32767 = 2^31 - 131072 output elements, channels_last: the per-element gather
    # with 32-bit indices, whose grid-stride step once overflowed past the last elements.
    x = torch.empty(1, 2, 16384, 16384, dtype=torch.float16, device="cuda")
    x.normal_(generator=torch.Generator("cuda").manual_seed(1))
    x = x.contiguous(memory_format=torch.channels_last)
    kw = dict(size=(32768, 32767), mode="bilinear")
    ours = twinops.interpolate(x, **kw)
    assert 2**31 - 2**28 < ours.numel() < 2**31 - 1
    ref = F.interpolate(x, **kw)
    torch.testing.assert_close(ours, ref, atol=2e-3, rtol=2e-3)


# ---------------------------------------------------------------------------------------
# bad input: clear errors naming the argument
# ---------------------------------------------------------------------------------------

X = torch.ones(1, 2, 4, 4)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: twinops.interpolate(torch.ones(2, 4, 4), size=3), ValueError,
     "input must be a 4-D (N, C, H, W) tensor, got 3-D"),
    (lambda: twinops.interpolate(X, size=0), ValueError, "size must be positive"),
    (lambda: twinops.interpolate(X, size=(3, -1)), ValueError, "size must be positive"),
    (lambda: twinops.interpolate(X, size=3, scale_factor=2), ValueError, "exactly one of size and scale_factor"),
    (lambda: twinops.interpolate(X), ValueError, "exactly one of size and scale_factor must be given, got neither"),
    (lambda: twinops.interpolate(X, size=3, mode="trilinear"), ValueError, "mode must be one of"),
    (lambda: twinops.interpolate(X, size=3, mode="nearest", align_corners=True), ValueError,
     "align_corners can only be set with mode 'bilinear' or 'bicubic'"),
    (lambda: twinops.interpolate(X, size=3, mode="nearest", antialias=True), ValueError,
     "antialias=True needs mode 'bilinear' or 'bicubic'"),
    (lambda: twinops.interpolate(X, size=3, mode="area", antialias=True), ValueError, "antialias=True needs mode"),
    (lambda: twinops.interpolate(X, scale_factor=-2.0), ValueError, "scale_factor must be positive and finite"),
    (lambda: twinops.interpolate(X, scale_factor=float("nan")), ValueError, "scale_factor must be positive"),
    (lambda: twinops.interpolate(X, scale_factor=0.1), ValueError, "gives an empty output size"),
    (lambda: twinops.interpolate(X, size=(1, 2, 3)), ValueError, "size must be a number or a pair"),
    (lambda: twinops.interpolate(X, size=2.5), TypeError, "size must contain ints"),
    (lambda: twinops.interpolate(X, size=3, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size"),
    (lambda: twinops.interpolate(X.int(), size=3), TypeError,
     "input must be float32, float64, float16 or bfloat16, got torch.int32"),
    (lambda: twinops.interpolate("x", size=3), TypeError, "input must be a torch.Tensor"),
    (lambda: twinops.resize(X), ValueError, "exactly one of scales and sizes must be given, got neither"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], sizes=[1, 2, 3, 3]), ValueError, "got both"),
    (lambda: twinops.resize(X, scales=[1, 1, 2]), ValueError, "scales must have one entry per axis (4), got 3"),
    (lambda: twinops.resize(X, scales=[1, 1, 0, 2]), ValueError, "scales must be positive and finite"),
    (lambda: twinops.resize(X, sizes=[1, 2, 0, 2]), ValueError, "sizes must be positive"),
    (lambda: twinops.resize(X, scales=[2, 1, 2, 2]), ValueError, "only H and W (axes 2, 3) can be resized"),
    (lambda: twinops.resize(X, scales=[2, 2], mode="bilinear"), ValueError,
     "mode must be one of nearest, linear, cubic, got 'bilinear'"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], coordinate_transformation_mode="center"), ValueError,
     "coordinate_transformation_mode must be one of"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], nearest_mode="round"), ValueError, "nearest_mode must be one of"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], antialias=1), ValueError,
     "antialias=1 is not defined for mode 'nearest'"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], mode="linear", antialias=2), ValueError,
     "antialias must be 0 or 1"),
    (lambda: twinops.resize(X, scales=[2, 2], axes=[2, 5]), ValueError, "axes must be in [-4, 3]"),
    (lambda: twinops.resize(X, scales=[2, 2], axes=[2, -2]), ValueError, "axes must not repeat"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], keep_aspect_ratio_policy="fit"), ValueError,
     "keep_aspect_ratio_policy must be one of"),
    (lambda: twinops.resize(X, scales=[1, 1, 2, 2], keep_aspect_ratio_policy="not_larger"), ValueError,
     "keep_aspect_ratio_policy applies only with sizes"),
    (lambda: twinops.resize(X, roi=[0, 1], scales=[1, 1, 2, 2], coordinate_transformation_mode="tf_crop_and_resize"),
     ValueError, "roi must have 2 * len(axes) = 8 entries"),
    (lambda: twinops.resize(X, scales=torch.ones(2, 2)), ValueError, "scales must be 1-D"),
    (lambda: twinops.dynamic_resize(X, torch.ones(5)), ValueError,
     "size_tensor must have at least 2 dims (its last two are the output H, W), got shape (5,)"),
    (lambda: twinops.dynamic_resize(X, torch.ones(0, 3)), ValueError, "output size) must be positive"),
    (lambda: twinops.dynamic_resize(X, [3, 3]), TypeError, "size_tensor must be a torch.Tensor"),
    (lambda: twinops.dynamic_resize(X, torch.ones(3, 3), align_corners=1), TypeError,
     "align_corners must be a bool"),
])
def test_bad_input_errors(call, exc, msg):
    with pytest.raises(exc) as info:
        call()
    assert msg in str(info.value)


@pytest.mark.parametrize("args,msg", [
    (dict(mode="bilinear"), "mode must be one of nearest, linear, cubic, area"),
    (dict(coord="centre"), "coordinate_transformation_mode must be one of"),
    (dict(nearest="round"), "nearest_mode must be one of"),
    (dict(antialias=1), "antialias is only defined for linear and cubic modes"),
    (dict(size=[0, 3]), r"output_size must be positive, got \(0, 3\)"),
    (dict(scales=[1.0]), "scales must have 2 entries"),
    (dict(pytorch=1, coord="tf_crop_and_resize"), "pytorch arithmetic supports only"),
    (dict(mode="linear", antialias=1, scales=[1e-9, 0.5]), "antialias with exclude_outside=0 needs scales"),
])
def test_raw_op_errors(device, args, msg):
    """The op itself validates too (callers may bypass the Python API)."""
    a = dict(mode="nearest", coord="half_pixel", nearest="floor", antialias=0, size=[3, 3], scales=[0.0, 0.0],
             pytorch=0)
    a.update(args)
    x = torch.ones(1, 1, 4, 4, device=device)
    with pytest.raises(RuntimeError, match=msg):
        torch.ops.twinops.resize(x, a["size"], a["mode"], a["coord"], a["nearest"], -0.75, 0, a["antialias"],
                                 a["scales"], [0.0, 0.0, 1.0, 1.0], 0.0, a["pytorch"])


def test_raw_op_rejects_integer_input(device):
    x = torch.ones(1, 1, 4, 4, dtype=torch.int32, device=device)
    with pytest.raises(RuntimeError, match="input must be float32, float64, float16 or bfloat16, got Int"):
        torch.ops.twinops.resize(x, [3, 3], "nearest", "asymmetric", "floor", -0.75, 0, 0, [0.0, 0.0],
                                 [0.0, 0.0, 1.0, 1.0], 0.0, 1)


@cuda
def test_dynamic_resize_mismatched_devices():
    with pytest.raises(ValueError, match="size_tensor is on cpu but input is on cuda:0"):
        twinops.dynamic_resize(X.cuda(), torch.ones(3, 3))


@settings(max_examples=200)
@given(
    size=st.lists(st.integers(-3, 40), min_size=2, max_size=2),
    mode=st.sampled_from(["nearest", "linear", "cubic", "area", "bicubic", ""]),
    coord=st.sampled_from(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                           "half_pixel_symmetric", "tf_crop_and_resize", "x"]),
    nearest=st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "round"]),
    cubic_a=st.sampled_from([-0.75, 0.0, float("nan"), 1e30]),
    flags=st.lists(st.integers(-1, 2), min_size=3, max_size=3),
    scales=st.lists(st.sampled_from([0.0, -1.0, 0.5, 2.0, 1e-9, 1e9, float("inf"), float("nan")]),
                    min_size=2, max_size=2),
    roi=st.lists(st.sampled_from([0.0, 1.0, -5.0, 7.0, float("nan")]), min_size=4, max_size=4),
    extrapolation=st.sampled_from([0.0, float("nan"), float("inf")]),
)
def test_raw_op_never_crashes(device, size, mode, coord, nearest, cubic_a, flags, scales, roi, extrapolation):
    """Any attribute combination either raises a RuntimeError or returns a tensor of the asked
    shape; never a crash or a hang (forward and backward)."""
    x = random_input((1, 2, 5, 7), torch.float32, device)
    args = (mode, coord, nearest, cubic_a, flags[0], flags[1], scales, roi, extrapolation, flags[2])
    try:
        y = torch.ops.twinops.resize(x, size, *args)
    except RuntimeError as e:
        assert str(e).startswith("torch.ops.twinops.resize: "), str(e)
        return
    assert y.shape == (1, 2, *size)
    g = torch.ops.twinops.resize_backward(torch.ones_like(y), list(x.shape), *args)
    assert g.shape == x.shape
