"""twinops resize on CUDA: each specialised kernel path (the staged tiles of the NCHW gather, the
one-tap nearest kernel, replicate / pick for powers of two, the large-image tiles, the halving,
doubling, pairs and row kernels) launches where it should (kernel names from torch.profiler),
equals the per-element gather or the CPU op, and is not launched where it cannot run.
Marked `cuda`: skipped without a GPU and the CUDA kernels.
"""
import math

import pytest
import torch
import torch.nn.functional as F

import twinops
from resize_spec import DTYPES, TOLERANCES, assert_close, random_input

cuda = pytest.mark.cuda


def _ids(d):
    return ",".join(f"{k}={v}" for k, v in d.items())


# The NCHW CUDA gather stages each tile's input window in shared memory and pipelines over
# planes: many planes per block, several tiles per plane, partial tiles, 16-byte and
# per-element copies (odd widths, misaligned views), 16-byte copies of rows that end inside
# a copy unit (padded views of odd widths), wide windows (strong downscaling) and the
# backward's inverse tables.
TILED_CASES = [
    ((3, 300, 9, 14), dict(scale_factor=2.0, mode="bicubic")),
    ((2, 3, 64, 256), dict(scale_factor=2.0, mode="bilinear")),
    ((2, 3, 64, 256), dict(scale_factor=0.5, mode="bicubic")),
    ((2, 3, 64, 256), dict(scale_factor=0.5, mode="bicubic", antialias=True)),
    ((1, 2, 70, 301), dict(size=(150, 613), mode="bicubic", align_corners=True)),
    ((1, 2, 90, 500), dict(scale_factor=0.13, mode="bilinear", antialias=True)),
    ((2, 2, 40, 133), dict(size=(37, 263), mode="nearest")),
    # Nearest downscaling: the one-tap kernel (no window), every other row / irregular gaps.
    ((2, 3, 64, 256), dict(scale_factor=0.5, mode="nearest")),
    ((1, 4, 97, 130), dict(scale_factor=0.3, mode="nearest-exact")),
    ((2, 2, 40, 133), dict(scale_factor=(1.0, 0.25), mode="area")),
]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["dense", "offset", "padded"])
@pytest.mark.parametrize("shape,kw", TILED_CASES, ids=[f"{s}-{_ids(k)}" for s, k in TILED_CASES])
def test_tiled_gather_matches_reference(dtype, layout, shape, kw):
    n, c, h, w = shape
    if layout == "offset":  # rows start 3 elements past an aligned address
        x = random_input((n, c, h, w + 3), dtype, "cuda")[..., 3:]
    elif layout == "padded":  # aligned rows, 16-element pitch, width not a multiple of 16
        x = random_input((n, c, h, (w + 31) // 16 * 16), dtype, "cuda")[..., :w]
    else:
        x = random_input((n, c, h, w), dtype, "cuda")
    x.requires_grad_()
    out = twinops.interpolate(x, **kw)
    # The reference computes in twinops' (and ATen's) opmath: float32 coordinates and
    # weights for every dtype but float64. At these widths a float32 coordinate is off by up
    # to ~1e-5 from the exact one (|x| ~ 300 at 2**-24 relative), which moves a float32
    # output by more than float32's tolerance against a float64-coordinate reference; ATen's
    # own float32 kernel is off by as much. The reference's float32 sums round far inside
    # the tolerance.
    opmath = torch.float64 if dtype == torch.float64 else torch.float32
    xr = x.detach().to(opmath).requires_grad_()
    ref = F.interpolate(xr, **kw)
    if kw["mode"] == "nearest":
        torch.testing.assert_close(out, ref.to(dtype), rtol=0, atol=0)
    else:
        assert_close(out, ref.double(), dtype, f"forward {kw}")
    g = random_input(tuple(out.shape), dtype, "cuda", seed=5)
    (ours,) = torch.autograd.grad(out, x, g)
    # The backward's reference runs on the CPU: ATen's CUDA nearest backward maps grad_input
    # to grad_output with its own rounding, which for non-integer scales is not the adjoint
    # of its forward (the nearest-exact 0.3x case fails it); the CPU
    # backward is, and uses the same opmath coordinates.
    xc = x.detach().cpu().to(opmath).requires_grad_()
    (want,) = torch.autograd.grad(F.interpolate(xc, **kw), xc, g.cpu().to(opmath))
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(ours.double().cpu(), want.double(), atol=4 * atol, rtol=4 * rtol)


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", [
    dict(scales=[1, 1, 0.5, 0.5]),
    dict(scales=[1, 1, 0.3, 0.45], nearest_mode="floor"),
    # Extrapolated rows and columns at both ends of the crop.
    dict(sizes=[2, 3, 40, 70], coordinate_transformation_mode="tf_crop_and_resize",
         roi=[0, 0, -0.3, 0.1, 1, 1, 1.2, 0.9], extrapolation_value=-3.0),
], ids=_ids)
def test_nearest_downscale_one_tap_kernel_equals_cpu(dtype, kw):
    # Nearest downscaling runs the one-tap kernel (each output reads its input element
    # directly); the CUDA output must equal the CPU op's bit for bit (both only copy input
    # values, or the extrapolation value).
    x = random_input((2, 3, 96, 200), dtype, "cuda")
    # ONNX's coordinates: the table kernel builds the entries the one-tap kernel reads.
    names = _cuda_kernel_names(lambda: twinops.resize(x, mode="nearest", **kw))
    assert any("one_tap_kernel<false" in n for n in names) and any("build_tables" in n for n in names), names
    out = twinops.resize(x, mode="nearest", **kw)
    torch.testing.assert_close(out.cpu(), twinops.resize(x.cpu(), mode="nearest", **kw), rtol=0, atol=0)
    if "extrapolation_value" in kw:
        assert (out == -3.0).any() and (out != -3.0).any()


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", [
    dict(scale_factor=0.5, mode="nearest"),
    dict(scale_factor=0.3, mode="nearest-exact"),
    # in / out ratios inexact in float32 (size given; a scale_factor kept or recomputed).
    dict(size=(41, 77), mode="nearest"),
    dict(size=(41, 77), mode="nearest-exact"),
    dict(scale_factor=(0.7, 0.45), mode="nearest"),
    dict(scale_factor=(0.7, 0.45), mode="nearest-exact", recompute_scale_factor=True),
], ids=_ids)
def test_interpolate_nearest_downscale_computes_own_entries(dtype, kw):
    # F.interpolate's nearest downscales: the one-tap kernel computes its entries itself
    # (pytorch_nearest_index, axis_entry's arithmetic), with no table kernel before it. Its
    # output must equal the CPU op's and ATen's CUDA kernel's bit for bit (all three only copy
    # input elements, chosen by the same float32 arithmetic).
    x = random_input((2, 3, 97, 203), dtype, "cuda")
    _check_nearest(x, kw, launched=("one_tap_kernel<true",), not_launched=("build_tables",))


def _check_nearest(x, kw, launched=(), not_launched=()):
    """twinops.interpolate(x, **kw) launches each kernel of `launched` and none of
    `not_launched` (torch.profiler names), and its output equals the CPU op's and ATen's CUDA
    kernel's bit for bit (nearest only copies input elements, chosen by the same float32
    arithmetic). Returns the output."""
    names = _cuda_kernel_names(lambda: twinops.interpolate(x, **kw))
    for kernel in launched:
        assert any(kernel in n for n in names), (kernel, names)
    for kernel in not_launched:
        assert not any(kernel in n for n in names), (kernel, names)
    out = twinops.interpolate(x, **kw)
    torch.testing.assert_close(out.cpu(), twinops.interpolate(x.cpu(), **kw), rtol=0, atol=0)
    torch.testing.assert_close(out, F.interpolate(x, **kw), rtol=0, atol=0)
    return out


# F.interpolate's nearest by powers of two: out = s in on both axes (s = 1 keeps an axis).
REPLICATE_CALLS = [
    dict(scale_factor=2.0, mode="nearest"),
    dict(scale_factor=2.0, mode="nearest-exact"),
    dict(size=(4 * 49, 2 * 104), mode="nearest"),  # a size: the step is in / out
    dict(scale_factor=(8.0, 1.0), mode="nearest-exact"),
    dict(scale_factor=(1.0, 4.0), mode="nearest"),
    dict(scale_factor=(2.0, 8.0), mode="nearest", recompute_scale_factor=True),
    dict(scale_factor=1.0, mode="nearest"),  # a copy
]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", REPLICATE_CALLS, ids=_ids)
def test_interpolate_nearest_power_of_two_upscale_replicates(dtype, kw):
    # replicate_kernel: each input element written to its s x s outputs, no tables. Its
    # output must equal the CPU op's and ATen's CUDA kernel's bit for bit.
    x = random_input((2, 3, 49, 104), dtype, "cuda")
    _check_nearest(x, kw, launched=("replicate_kernel",), not_launched=("build_tables",))


@cuda
@pytest.mark.parametrize("kw, shape, cols", [
    (dict(scale_factor=3.0, mode="nearest"), (2, 3, 49, 104), slice(None)),  # not a power of two
    (dict(scale_factor=(2.0, 0.5), mode="nearest"), (2, 3, 49, 104), slice(None)),  # up and down
    (dict(scale_factor=2.0, mode="nearest"), (2, 3, 49, 105), slice(1, None)),  # misaligned rows
    (dict(scale_factor=2.0, mode="nearest"), (2, 3, 49, 103), slice(None)),  # width not whole loads
    # out = 2 in, but the float32 step 1 / 2.0000001 is below 1 / 2: output 2 k reads input k - 1.
    (dict(scale_factor=2.0000001, mode="nearest"), (2, 3, 49, 104), slice(None)),
], ids=["3x", "up-and-down", "misaligned", "odd-width", "inexact-step"])
def test_nearest_upscale_outside_replicate_kernel(kw, shape, cols):
    x = random_input(shape, torch.float16, "cuda")[..., cols]
    out = _check_nearest(x, kw, not_launched=("replicate_kernel",))
    if kw["scale_factor"] == 2.0000001:
        assert out.shape[-2:] == (98, 208)
        assert not torch.equal(out, x.repeat_interleave(2, -2).repeat_interleave(2, -1))


# Nearest downscales by powers of two: in = s out on both axes (s = 1 keeps an axis).
PICK_CALLS = [
    dict(scale_factor=0.5, mode="nearest"),  # picks input 2 d
    dict(scale_factor=0.5, mode="nearest-exact"),  # picks input 2 d + 1
    dict(scale_factor=(0.25, 0.125), mode="nearest-exact"),
    dict(size=(48, 26), mode="nearest"),  # (96, 208) / (2, 8)
    dict(scale_factor=(1.0, 0.5), mode="nearest"),
    dict(scale_factor=1.0, mode="nearest-exact"),
]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kw", PICK_CALLS, ids=_ids)
def test_interpolate_nearest_power_of_two_downscale_backward_picks(dtype, kw):
    # The backward of those downscales: pick_kernel writes each grad_input element once (its
    # grad_output element, or 0), no tables, where a lane's 16 bytes of grad_input pick whole
    # grad_output elements (W factor <= 16 / element size); else the inverse-table gather.
    # Both must equal the CPU op's backward and ATen's bit for bit.
    x = random_input((2, 3, 96, 208), dtype, "cuda").requires_grad_()
    y = twinops.interpolate(x, **kw)
    g = random_input(y.shape, dtype, "cuda", seed=1)
    names = _cuda_kernel_names(lambda: torch.autograd.grad(twinops.interpolate(x, **kw), x, g))
    routed = 208 // y.shape[-1] <= 16 // x.element_size()
    assert any("pick_kernel" in n for n in names) == routed, names
    assert any("inverse_tables" in n for n in names) != routed, names
    (gx,) = torch.autograd.grad(y, x, g)
    xc = x.detach().cpu().requires_grad_()
    (gc,) = torch.autograd.grad(twinops.interpolate(xc, **kw), xc, g.cpu())
    torch.testing.assert_close(gx.cpu(), gc, rtol=0, atol=0)
    xa = x.detach().clone().requires_grad_()
    (ga,) = torch.autograd.grad(F.interpolate(xa, **kw), xa, g)
    torch.testing.assert_close(gx, ga, rtol=0, atol=0)


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_replicate_and_pick_keep_the_gathers_arithmetic(dtype):
    # -0, infinities and NaN: replicate_kernel (forward, 2x) and pick_kernel (backward, 0.5x)
    # compute 0 + v as the per-element gather (channels_last input) does: -0 becomes +0.
    special = torch.tensor([-0.0, math.inf, -math.inf, math.nan, 1.5, -0.0, 0.0, -2.0])
    x = random_input((1, 2, 8, 32), dtype, "cuda")
    x[0, 1, 3, 8:16] = special.to(dtype)
    up = twinops.interpolate(x, scale_factor=2.0, mode="nearest")
    g = random_input((1, 2, 4, 16), dtype, "cuda", seed=1)
    g[0, 0, 1, :8] = special.to(dtype)
    xg = x.detach().requires_grad_()
    (down,) = torch.autograd.grad(twinops.interpolate(xg, scale_factor=0.5, mode="nearest"), xg, g)
    xl = x.contiguous(memory_format=torch.channels_last).requires_grad_()
    up_l = twinops.interpolate(xl, scale_factor=2.0, mode="nearest")
    (down_l,) = torch.autograd.grad(twinops.interpolate(xl, scale_factor=0.5, mode="nearest"), xl, g)
    for fast, per_element in ((up, up_l), (down, down_l)):
        torch.testing.assert_close(fast, per_element.contiguous(), rtol=0, atol=0, equal_nan=True)
        assert torch.equal(fast.signbit(), per_element.signbit())
    assert up[0, 1, 6, 16:18].signbit().logical_not().all() and up[0, 1, 6, 18].isinf()
    assert down[0, 0, 2, 0] == 0 and not down[0, 0, 2, 0].signbit() and down[0, 0, 2, 6].isnan()


def _cuda_kernel_names(fn):
    """Names of the CUDA kernels `fn` launches (torch.profiler); skips without CUPTI."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not names:
        pytest.skip("torch.profiler recorded no CUDA kernels (no CUPTI)")
    return names


def _check_row_kernel(kernel, dtype, call, shape=(2, 3, 96, 200)):
    """`call` on a CUDA input of `shape` launches `kernel`, equals the per-element gather
    (which channels_last input takes) bit for bit, and the CPU op computed in the dtype's
    opmath (float32 coordinates and weights, float64 for float64; its parity with
    F.interpolate and onnx.reference is tested above) within the dtype's tolerance. A float64
    reference would differ from every float32-coordinate kernel by more than float32's
    tolerance where coordinates are inexact in float32 (align_corners: in / out ratios such
    as 95 / 47), as ATen's float32 kernels do."""
    kw = dict(call)
    op = getattr(twinops, kw.pop("fn"))
    x = random_input(shape, dtype, "cuda")
    names = _cuda_kernel_names(lambda: op(x, **kw))
    assert any(kernel in n for n in names), names
    out = op(x, **kw)
    per_element = op(x.contiguous(memory_format=torch.channels_last), **kw)
    torch.testing.assert_close(out, per_element.contiguous(), rtol=0, atol=0)
    opmath = torch.float64 if dtype == torch.float64 else torch.float32
    assert_close(out.cpu(), op(x.cpu().to(opmath), **kw).double(), dtype, f"{kernel} {call}")


def _check_not_routed(call, shape=(1, 2, 96, 200), dtype=torch.float32, kernels=("pairs_kernel", "halving_kernel")):
    """`call` on a CUDA input launches none of `kernels`, and agrees with the CPU op in the
    dtype's opmath (see _check_row_kernel) within the dtype's tolerance."""
    kw = dict(call)
    op = getattr(twinops, kw.pop("fn"))
    x = random_input(shape, dtype, "cuda")
    names = _cuda_kernel_names(lambda: op(x, **kw))
    assert not any(k in n for n in names for k in kernels), (dtype, shape, names)
    opmath = torch.float64 if dtype == torch.float64 else torch.float32
    assert_close(op(x, **kw).cpu(), op(x.cpu().to(opmath), **kw).double(), dtype, f"{call} {dtype} {shape}")


# Large images with few planes: one plane's upscaling tiles fill the device, and the staged
# tiles take the larger tiles of two blocks per SM (large_upscaling_tiles; so on the H200 for
# these shapes): forwards that upscale, and the backward of a downscale (its gather upscales).
LARGE_IMAGE_CASES = [
    ((1, 3, 540, 960), dict(scale_factor=2.0, mode="bicubic")),
    ((1, 2, 541, 963), dict(scale_factor=2.0, mode="bicubic", antialias=True)),  # partial tiles, odd width
    ((1, 2, 720, 1280), dict(scale_factor=1.5, mode="bilinear")),
    ((1, 2, 1080, 1920), dict(scale_factor=0.5, mode="bicubic")),
]


@cuda
@pytest.mark.parametrize("shape,kw", LARGE_IMAGE_CASES, ids=[f"{s}-{_ids(k)}" for s, k in LARGE_IMAGE_CASES])
def test_staged_tiles_large_images(shape, kw):
    x = random_input(shape, torch.float32, "cuda").requires_grad_()
    out = twinops.interpolate(x, **kw)
    g = random_input(out.shape, torch.float32, "cuda")
    names = _cuda_kernel_names(lambda: torch.autograd.grad(twinops.interpolate(x, **kw), x, g))
    assert any("staged_gather_kernel" in n for n in names), names
    (grad,) = torch.autograd.grad(out, x, g)
    # The CPU op in float32 (the kernels' opmath; see _check_row_kernel).
    xc = x.detach().cpu().requires_grad_()
    want = twinops.interpolate(xc, **kw)
    (want_grad,) = torch.autograd.grad(want, xc, g.cpu())
    assert_close(out.detach().cpu(), want.detach().double(), torch.float32, f"forward {shape} {kw}")
    atol, rtol = TOLERANCES[torch.float32]
    torch.testing.assert_close(grad.cpu().double(), want_grad.double(), atol=4 * atol, rtol=4 * rtol)


HALVING_CALLS = [
    dict(fn="interpolate", scale_factor=0.5, mode="bilinear"),  # 2 taps
    dict(fn="interpolate", scale_factor=0.5, mode="bicubic"),  # 4
    dict(fn="interpolate", scale_factor=0.5, mode="bilinear", antialias=True),  # 4
    dict(fn="interpolate", scale_factor=0.5, mode="bicubic", antialias=True),  # 7, padded to 8
    # ONNX centres an integral coordinate's window on x - 1: output d reads 2 d - 1 and 2 d.
    dict(fn="resize", scales=[1, 1, 0.5, 0.5], mode="linear", coordinate_transformation_mode="asymmetric"),
    dict(fn="resize", scales=[1, 1, 0.5, 0.5], mode="cubic"),
    dict(fn="resize", scales=[1, 1, 0.5, 0.5], mode="linear", antialias=1),
    dict(fn="resize", scales=[1, 1, 0.5, 0.5], mode="cubic", antialias=1),  # 8 taps
    # align_corners drifts by less than one input per output at exact halving sizes (its
    # last output lands on an input): still inside the centred windows.
    dict(fn="interpolate", scale_factor=0.5, mode="bicubic", align_corners=True),
]


def _eight_taps(call):
    return call.get("antialias") and call["mode"] in ("bicubic", "cubic")


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("call", HALVING_CALLS, ids=_ids)
def test_halving_kernel(dtype, call):
    # Forwards that halve both axes with windows centred on the input pairs run
    # halving_kernel (16-byte loads, each input row resampled along W once, no staged window).
    if dtype == torch.float64 and _eight_taps(call):
        pytest.skip("float64 with 8 taps takes the staged tiles: test_halving_kernel_not_for_float64_with_8_taps")
    _check_row_kernel("halving_kernel", dtype, call)


@cuda
@pytest.mark.parametrize("call", [c for c in HALVING_CALLS if _eight_taps(c)], ids=_ids)
def test_halving_kernel_not_for_float64_with_8_taps(call):
    # A 16-byte load holds 2 float64 columns: fewer than the 3 halo columns each side of 8
    # taps. The staged tiles resample instead, and agree with the float64 CPU op.
    _check_not_routed(call, (1, 2, 48, 100), torch.float64)


@cuda
@pytest.mark.parametrize("shape", [(1, 2, 2, 16), (1, 2, 4, 16), (2, 1, 6, 48), (1, 1, 14, 32)], ids=str)
@pytest.mark.parametrize("call", HALVING_CALLS[1::2], ids=_ids)  # 4 and 8 taps
def test_halving_kernel_small_planes(shape, call):
    # Windows clamped at both edges of every axis, one or a few output rows per warp.
    _check_row_kernel("halving_kernel", torch.float32, call, shape)


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("call", HALVING_CALLS[1::2], ids=_ids)  # 4 and 8 taps
def test_halving_kernel_many_planes(dtype, call):
    # More planes than resident blocks: every block loops over planes, its warps fetching
    # rows ahead past their last row (float32 with 8 taps: blocks of 4 warps, 2 rows ahead;
    # see HalvingBlock).
    _check_row_kernel("halving_kernel", dtype, call, (2, 600, 32, 64))


DOUBLING_CALLS = [
    dict(fn="interpolate", scale_factor=2.0, mode="bilinear"),  # 2 taps, 3 columns around the input
    dict(fn="interpolate", scale_factor=2.0, mode="bicubic"),  # 4 taps, 5 columns
    dict(fn="interpolate", scale_factor=2.0, mode="bicubic", antialias=True),
    dict(fn="resize", scales=[1, 1, 2, 2], mode="linear", coordinate_transformation_mode="asymmetric"),
    dict(fn="resize", scales=[1, 1, 2, 2], mode="cubic"),
    dict(fn="resize", scales=[1, 1, 2, 2], mode="cubic", coordinate_transformation_mode="asymmetric"),
    dict(fn="interpolate", scale_factor=2.0, mode="bicubic", align_corners=True),  # drifts inside the windows
]


@cuda
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("call", DOUBLING_CALLS, ids=_ids)
def test_doubling_kernel(dtype, call):
    # Forwards that double both axes with 2-byte elements run doubling_kernel: a lane's 4
    # input columns and their 8 outputs, each input row resampled along W once.
    _check_row_kernel("doubling_kernel", dtype, call, (2, 3, 48, 100))


@cuda
@pytest.mark.parametrize("shape", [(1, 2, 1, 4), (1, 2, 2, 8), (2, 1, 5, 12), (1, 1, 7, 132)], ids=str)
@pytest.mark.parametrize("call", DOUBLING_CALLS[1::2], ids=_ids)
def test_doubling_kernel_small_planes(shape, call):
    # Windows clamped at both edges of every axis; a lane whose neighbours are past the edge.
    _check_row_kernel("doubling_kernel", torch.float16, call, shape)


@cuda
@pytest.mark.parametrize("call", [
    # A crop's windows move off the inputs they would double.
    dict(fn="resize", roi=[0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], sizes=[1, 2, 96, 200], mode="cubic",
         coordinate_transformation_mode="tf_crop_and_resize"),
    dict(fn="interpolate", size=(96, 101), mode="bilinear"),  # W is not doubled
], ids=_ids)
def test_doubling_kernel_only_for_doubling(call):
    _check_not_routed(call, (1, 2, 48, 100), torch.float16, ("doubling_kernel",))


@cuda
def test_doubling_kernel_only_for_2_byte_elements_and_widths_of_4():
    # float32 and float64 keep the staged tiles (as fast or faster for float32 on the H200);
    # a width that is not a multiple of a lane's 4 input columns too.
    for shape, dtype in (((1, 2, 48, 102), torch.float16), ((1, 2, 48, 100), torch.float32),
                         ((1, 2, 48, 100), torch.float64)):
        _check_not_routed(dict(fn="interpolate", scale_factor=2.0, mode="bicubic"), shape, dtype, ("doubling_kernel",))


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("call", [
    dict(fn="interpolate", size=(24, 100), mode="bilinear"),  # H 0.25x: any two-tap H table
    dict(fn="interpolate", size=(40, 100), mode="bilinear"),
    dict(fn="resize", scales=[1, 1, 0.3, 0.5], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
], ids=_ids)
def test_pairs_kernel(dtype, call):
    # W halved on the input pairs with H downscaled but not halved runs pairs_kernel.
    _check_row_kernel("pairs_kernel", dtype, call)


@cuda
@pytest.mark.parametrize("call", [
    # A crop's windows move off the pairs they would halve.
    dict(fn="resize", roi=[0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], sizes=[1, 2, 48, 100], mode="cubic",
         coordinate_transformation_mode="tf_crop_and_resize"),
    dict(fn="resize", roi=[0, 0, 0.1, 0.1, 1, 1, 0.9, 0.9], sizes=[1, 2, 48, 100], mode="linear",
         coordinate_transformation_mode="tf_crop_and_resize"),
    dict(fn="interpolate", size=(48, 101), mode="bilinear"),  # W is not halved
    dict(fn="interpolate", size=(38, 100), mode="bicubic"),  # W halved, H not, four taps
], ids=_ids)
def test_row_kernels_only_for_halving(call):
    _check_not_routed(call)


@cuda
def test_row_kernels_not_for_unaligned_rows():
    # A view whose rows are not 16-byte aligned, or an odd output width, takes the staged
    # path, with the same result.
    v = random_input((1, 2, 96, 201), torch.float32, "cuda")[..., 1:]
    for mode in ("bilinear", "bicubic"):
        names = _cuda_kernel_names(lambda: twinops.interpolate(v, scale_factor=0.5, mode=mode))
        assert not any("pairs_kernel" in n or "halving_kernel" in n for n in names), names
        assert_close(twinops.interpolate(v, scale_factor=0.5, mode=mode),
                     F.interpolate(v.double(), scale_factor=0.5, mode=mode), torch.float32, f"unaligned view {mode}")
    _check_not_routed(dict(fn="interpolate", scale_factor=0.5, mode="bicubic"), (1, 2, 96, 202))


@cuda
def test_tiled_gather_shared_memory_sizes_in_any_order():
    # One kernel, launched with more than the default 48 KiB of shared memory, then less,
    # then more again: the kernel's raised limit must never be lowered under a cached size.
    # (Bilinear: two taps at both scales, one kernel; nearest downscaling and bilinear 0.5x
    # have no tiles.)
    x = random_input((1, 2, 256, 512), torch.float32, "cuda")
    for scale in (0.25, 0.4, 0.25, 0.4):
        out = twinops.interpolate(x, scale_factor=scale, mode="bilinear")
        ref = F.interpolate(x, scale_factor=scale, mode="bilinear")  # float32 opmath, as in the tiled test
        assert_close(out, ref.double(), torch.float32, f"bilinear {scale}x")
