"""NaN and +-Inf in the input land where the references put them (issue 21 section 1).

The fast paths compute the references' sums for finite data; the outputs that come out
non-finite are recomputed with the references' own terms (csrc/kernels/resize_nonfinite.cuh),
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
# The CUDA kernels do not recompute their non-finite outputs yet: an out-of-line call at every
# store sized the tuned kernels' stacks up and took ptxas from 56 s to 26 minutes for resize.cu
# (docs/ops/resize-nonfinite.md). Until they do, their runs of these tests are expected to fail.
CUDA_PENDING = "issue 21 section 1 on CUDA: the kernels do not recompute non-finite outputs yet"


def _cuda_pending(request, device):
    request.applymarker(pytest.mark.xfail(device == "cuda", reason=CUDA_PENDING, strict=False))

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
    # (twinops.testing.resize_ref.interpolate_reference documents it).
    oh, ow = kw["size"]
    return device == "cpu" and kw.get("antialias") and ow == 1 and oh not in (1, shape[2])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=interpolate_cases(), data=st.data())
def test_interpolate_forward_nonfinite(request, device, case, data):
    _cuda_pending(request, device)
    shape, kw = case
    assume(not _aten_cpu_aa_bug(device, shape, kw))
    x = data.draw(sprinkled(shape)).float().to(device)
    assert_same_nonfinite(twinops.interpolate(x, **kw), F.interpolate(x, **kw), 2e-5, 2e-5, f"{shape} {kw}")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=interpolate_cases(), data=st.data())
def test_interpolate_backward_nonfinite(request, device, case, data):
    _cuda_pending(request, device)
    shape, kw = case
    assume(not _aten_cpu_aa_bug(device, shape, kw))
    x = (torch.randn(shape, dtype=torch.float64) + 0.25).float().to(device).requires_grad_()
    out_shape = F.interpolate(x.detach(), **kw).shape
    gout = data.draw(sprinkled(tuple(out_shape))).float().to(device)
    (ours,) = torch.autograd.grad(twinops.interpolate(x, **kw), x, gout)
    (ref,) = torch.autograd.grad(F.interpolate(x, **kw), x, gout)
    assert_same_nonfinite(ours, ref, 2e-5, 2e-5, f"backward {shape} {kw}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kw", [k for k in INTERPOLATE if not k.get("antialias")], ids=str)
def test_interpolate_half_nonfinite(request, device, dtype, kw):
    _cuda_pending(request, device)
    x = torch.tensor([[1.0, INF, 3.0, 4.0, NAN, 2.0], [0.5, 1.0, -INF, 2.0, 3.0, 1.0]]).reshape(1, 1, 2, 6)
    for size in [(2, 6), (3, 4), (4, 12), (1, 3)]:
        xd = x.to(dtype).to(device)
        assert_same_nonfinite(twinops.interpolate(xd, size=size, **kw), F.interpolate(xd, size=size, **kw),
                              2e-2, 2e-2, f"{dtype} {size} {kw}")


# The issue's examples, each on its own line.
@pytest.mark.parametrize("row,size,kw,expected", [
    ([INF, 1.0], (1, 1), dict(mode="area"), [INF]),
    ([INF, 1.0], (1, 1), dict(mode="bilinear", antialias=True), [INF]),
    ([1.0, 1.0, NAN], (1, 4), dict(mode="bicubic"), [1.0, NAN, NAN, NAN]),
])
def test_issue_examples(request, device, row, size, kw, expected):
    _cuda_pending(request, device)
    x = torch.tensor(row).reshape(1, 1, 1, -1).to(device)
    y = twinops.interpolate(x, size=size, **kw).cpu().flatten()
    torch.testing.assert_close(y, torch.tensor(expected), equal_nan=True)


def test_area_on_cuda_example(request, device):
    _cuda_pending(request, device)
    x = torch.tensor([1.0, 1.0, NAN, 2.0, INF]).reshape(1, 1, 1, 5).to(device)
    y = twinops.interpolate(x, size=(1, 3), mode="area").cpu().flatten()
    torch.testing.assert_close(y, torch.tensor([1.0, NAN, INF]), equal_nan=True)


def test_resize_align_corners_example(request, device):
    _cuda_pending(request, device)
    x = torch.tensor([1.0, NAN]).reshape(1, 1, 1, 2).to(device)
    y = twinops.resize(x, sizes=[1, 1, 1, 1], mode="linear", coordinate_transformation_mode="align_corners")
    assert y.flatten().tolist() == [1.0]


@settings(max_examples=300, deadline=None)
@given(cfg=onnx_configs(max_hw=6, max_out=9, modes=("linear", "cubic")), data=st.data())
def test_resize_nonfinite_matches_onnx_reference(cfg, data):
    shape, kw = cfg
    assume(not onnx_reference_is_unstable(shape, kw))
    x = data.draw(sprinkled(shape)).float()
    # onnx.reference (1.23) ends Resize with onnx.numpy_helper.saturate_cast, which clips
    # +-Inf to the dtype's largest finite value; twinops keeps the infinity the sum gives.
    # The float64 graph's +-1.8e308 cannot come from this data, so it is read back as +-Inf.
    ref = onnx_reference(x.double(), **kw)
    big = torch.finfo(torch.float64).max
    ref = torch.where(ref == big, INF, torch.where(ref == -big, -INF, ref))
    assert_same_nonfinite(twinops.resize(x, **kw), ref, 2e-5, 2e-5, f"{shape} {kw}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cfg=onnx_configs(max_hw=6, max_out=9, modes=("nearest",)), data=st.data())
def test_resize_nearest_nonfinite_copies(request, device, cfg, data):
    _cuda_pending(request, device)
    # onnx.reference computes nearest as a two-tap dot product with weights (0, 1), so a
    # non-finite neighbour poisons it; twinops (like ONNX Runtime) copies the element the
    # nearest rule selects. The selected element: resize an image of its own indices.
    shape, kw = cfg
    assume(kw["coordinate_transformation_mode"] != "tf_crop_and_resize")  # extrapolation: not a pick
    x = data.draw(sprinkled(shape)).float().to(device)
    index = torch.arange(x.numel(), dtype=torch.float64).reshape(shape).to(device)
    picked = twinops.resize(index, **kw).long()
    assert_same_nonfinite(twinops.resize(x, **kw), x.flatten()[picked], 0, 0, f"{shape} {kw}")
