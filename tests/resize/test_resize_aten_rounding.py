"""twinops.interpolate rounds as ATen does.

ATen computes the source coordinate ``scale * (d + 0.5) - 0.5`` and the cubic polynomials with
fused multiply-adds (nvcc contracts them; ATen's CPU kernels are built so that they do too), and
the bilinear / bicubic weights from ``lambda = src - floor(src)``. twinops' tables use the same
roundings (``fma_rn`` and ``aten_tap_weight`` in csrc/kernels/resize/resize.cuh), so its float32 outputs
stay within 1e-5 abs + 1e-5 rel of ATen's on the same device; a coordinate rounded twice moved
outputs by up to 2.5e-4 on data in [-9, 9].
"""
import pytest
import torch
import torch.nn.functional as F

import twinops
from resize_spec import ALL_INTERPOLATE

ATOL = RTOL = 1e-5

MODES = ALL_INTERPOLATE
# The case found first, listed first: (2, 3, 345, 456) -> (270, 270) moved row 200 by 1.5e-5.
RESAMPLINGS = [
    ((2, 3, 345, 456), dict(size=(270, 270))),
    ((1, 2, 37, 53), dict(size=(80, 61))),
    ((1, 2, 45, 61), dict(scale_factor=0.7)),
    ((1, 2, 45, 61), dict(scale_factor=3.0)),
    ((1, 2, 45, 61), dict(scale_factor=(1.3, 0.45))),
    ((1, 1, 40, 30), dict(size=(13, 77))),
]


# ATen's CUDA antialias kernel weighs in float32 ((j + (xmin - center) + 0.5f) * invscale, its
# window bounds in float too); its CPU kernel mixes in float64. twinops' CUDA tables follow the
# CUDA arithmetic (Params::cuda, pytorch_aa_window), its CPU tables the CPU's; with the CPU
# arithmetic on CUDA, outputs were up to 2e-4 from ATen's CUDA kernel at (2, 3, 345, 456) ->
# (270, 270).


def _ids(d):
    return ",".join(f"{k}={v}" for k, v in d.items())


def _assert_near_aten(actual, expected, what):
    bad = (actual - expected).abs() > ATOL + RTOL * expected.abs()
    assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.numel()} outputs differ from ATen's by more than "
                           f"1e-5 + 1e-5 |x| (max {float((actual - expected).abs().max()):.3g})")


@pytest.mark.parametrize("kw", MODES, ids=_ids)
@pytest.mark.parametrize("shape,size", RESAMPLINGS, ids=lambda v: _ids(v) if isinstance(v, dict) else "x".join(map(str, v)))
def test_float32_within_1e5_of_aten_on_random_data(device, kw, shape, size):
    g = torch.Generator().manual_seed(21)
    x = (torch.rand(shape, generator=g, dtype=torch.float64) * 20 - 10).float().to(device)
    _assert_near_aten(twinops.interpolate(x, **kw, **size), F.interpolate(x, **kw, **size), f"{kw} {size}")


def _opinfo_samples(device):
    """PyTorch's own sample inputs for interpolate / upsample (4-D ones), as (x, kwargs)."""
    pytest.importorskip("expecttest", reason="torch's OpInfo database needs expecttest (pip install expecttest)")
    from torch.testing._internal.common_methods_invocations import op_db

    names = {"nn.functional.interpolate", "nn.functional.upsample_bilinear", "nn.functional.upsample_nearest",
             "_upsample_bilinear2d_aa"}
    for op in op_db:
        if op.name not in names:
            continue
        for s in op.sample_inputs(device, torch.float32):
            if s.input.dim() != 4:
                continue
            kw = dict(s.kwargs)
            if op.name == "nn.functional.interpolate":
                kw["size"] = s.args[0] if s.args else kw.get("size")
            elif op.name == "nn.functional.upsample_bilinear":
                kw.update(mode="bilinear", align_corners=True)
            elif op.name == "nn.functional.upsample_nearest":
                kw.update(mode="nearest")
            else:  # _upsample_bilinear2d_aa(input, output_size, align_corners, scale_factors)
                kw = dict(size=kw["output_size"], scale_factor=kw.get("scale_factors"),
                          align_corners=kw["align_corners"], mode="bilinear", antialias=True)
            if kw.get("size") is not None:
                kw["scale_factor"] = None
            yield op.name, s.input, kw


def test_float32_within_1e5_of_aten_on_pytorch_sample_inputs(device):
    n = 0
    for name, x, kw in _opinfo_samples(device):
        _assert_near_aten(twinops.interpolate(x, **kw), F.interpolate(x, **kw), f"{name} {tuple(x.shape)} {kw}")
        n += 1
    assert n >= 50, f"only {n} 4-D samples found in torch's OpInfo database"


def _ulp(v, dtype):
    """One unit in the last place of each |v| rounded to `dtype`, in float64."""
    a = v.to(dtype).abs().float()
    up = torch.nextafter(a.to(dtype), torch.tensor(float("inf"), dtype=dtype, device=a.device))
    return (up.float() - a).double()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kw", MODES, ids=_ids)
def test_half_error_no_larger_than_atens_plus_one_ulp(device, dtype, kw):
    g = torch.Generator().manual_seed(2)
    x = (torch.rand((2, 3, 37, 53), generator=g, dtype=torch.float64) * 20 - 10).to(dtype).to(device)
    size = dict(size=(80, 29))
    try:
        aten = F.interpolate(x, **kw, **size)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"ATen has no {dtype} kernel for {kw} on {device}: {e}")
    ref = F.interpolate(x.double(), **kw, **size)
    ours = twinops.interpolate(x, **kw, **size)
    err_ours = (ours.double() - ref).abs()
    err_aten = (aten.double() - ref).abs()
    worse = err_ours > err_aten + _ulp(ref, dtype)
    assert not worse.any(), (f"{int(worse.sum())} outputs further from float64 than ATen's {dtype} plus one ulp "
                             f"(max excess {float((err_ours - err_aten).max()):.3g})")


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["half_pixel", "align_corners"])
@pytest.mark.parametrize("width,kw", [(456, dict(size=(1, 270))), (61, dict(scale_factor=(1.0, 0.45))),
                                      (61, dict(scale_factor=(1.0, 3.0))), (1920, dict(size=(1, 960)))],
                         ids=["456-270", "61-x0.45", "61-x3", "1920-960"])
def test_cuda_antialias_weights_are_atens(mode, align_corners, width, kw):
    # One-hot rows through the W pass (H is unchanged, and a length-1 axis' antialias weight is
    # exactly 1), so every output is one weight as ATen's CUDA kernel computes it: float32 with
    # nvcc's fused multiply-adds (_compute_weights_span, _compute_weights). twinops' CUDA tables
    # compute the same bits (Params::cuda, pytorch_aa_window); its CPU tables follow ATen's CPU.
    eye = torch.eye(width, device="cuda").reshape(width, 1, 1, width)
    args = dict(mode=mode, align_corners=align_corners, antialias=True, **kw)
    ours, ref = twinops.interpolate(eye, **args), F.interpolate(eye, **args)
    assert torch.equal(ours, ref), f"{int((ours != ref).sum())} weights differ, max {float((ours - ref).abs().max()):.3g}"
