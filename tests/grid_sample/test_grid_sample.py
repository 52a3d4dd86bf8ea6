"""twinops.grid_sample: what is special to the op (tests/test_conformance.py runs the generic contract).

Parity with the float64 reference (F.grid_sample + the NaN / Inf grid rule) on Hypothesis-drawn
shapes, modes, paddings and grids reaching outside [-1, 1]; the non-finite rules by hand; every
error message; the module; gradients with respect to input and grid against F.grid_sample; the
deterministic backward; the documented agreement and differences with onnx.reference's
GridSample; CPU against CUDA (skipped without a GPU).
"""
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

import twinops
from twinops.testing import random_input
from twinops.library.grid_sample.api import aten_double_backward_available
from twinops.library.grid_sample.reference import (TOLERANCES, grid_sample_reference, onnx_grid_sample_reference,
                                             onnx_grid_sample_run)
from twinops.library.grid_sample.strategies import MODES, PADDING_MODES, grid_sample_kwargs, grid_sample_shapes, grids

cuda = pytest.mark.cuda
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
NAN, INF = float("nan"), float("inf")
CASES = [dict(mode=m, padding_mode=p, align_corners=ac) for m in MODES for p in PADDING_MODES for ac in (False, True)]


def _id(kw):
    return "-".join(str(v) for v in kw.values())


def _close(actual, expected, dtype, what=""):
    """|a - e| <= atol + rtol * |e| with grid_sample's tolerance for ``dtype``; NaN where expected is."""
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(actual.detach().cpu().double(), expected.detach().cpu().double(), atol=atol,
                               rtol=rtol, equal_nan=True, msg=lambda m: f"{what}\n{m}")


# ---------------------------------------------------------------------------------------
# forward against the float64 reference
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@given(data=st.data())
def test_matches_the_float64_reference(device, dtype, data):
    shape, gshape = data.draw(grid_sample_shapes())
    kw = data.draw(grid_sample_kwargs(len(shape)))
    x = random_input(shape, dtype, device)
    g = data.draw(grids(gshape, dtype, bound=1.6, device=device))
    y = twinops.grid_sample(x, g, **kw)
    assert y.dtype == dtype and y.device == x.device and y.shape == (shape[0], shape[1], *gshape[1:-1])
    assert y.is_contiguous()
    _close(y, grid_sample_reference(x, g, **kw), dtype, f"{kw} {shape} {gshape}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@given(data=st.data())
def test_nonfinite_grid_follows_the_rule(device, dtype, data):
    shape, gshape = data.draw(grid_sample_shapes())
    kw = data.draw(grid_sample_kwargs(len(shape)))
    x = random_input(shape, dtype, device)
    g = data.draw(grids(gshape, dtype, special=True, device=device))
    _close(twinops.grid_sample(x, g, **kw), grid_sample_reference(x, g, **kw), dtype, f"{kw} {g}")


@pytest.mark.parametrize("mode", MODES)
def test_nonfinite_grid_by_hand(device, mode):
    """The rule written out: NaN -> NaN in every channel; +-Inf -> 0 (zeros), the clamped edge
    (border), NaN (reflection). Input (1, 2, 4, 5) = arange; y = 0 is row 1.5 (align_corners=False)."""
    x = torch.arange(40.0, device=device).reshape(1, 2, 4, 5)
    pts = [(NAN, 0.0), (0.0, NAN), (INF, 0.0), (-INF, -1.0), (0.25, INF)]
    g = torch.tensor(pts, device=device).reshape(1, 1, len(pts), 2)
    zeros, border, refl = (twinops.grid_sample(x, g, mode=mode, padding_mode=p) for p in PADDING_MODES)
    for y in (zeros, border, refl):
        assert torch.isnan(y[..., :2]).all()
    assert (zeros[..., 2:] == 0).all()
    assert torch.isnan(refl[..., 2:]).all()
    # border: x = +inf is column 4, x = -inf column 0; y = -1 is row -0.5 -> 0; y = +inf row 3
    if mode == "bilinear":
        want = [[11.5, 0.0, 17.625], [31.5, 20.0, 37.625]]  # rows 1 and 2 half and half; x = 0.25 is column 2.625
        torch.testing.assert_close(border[0, :, 0, 2:], torch.tensor(want, device=device))
    elif mode == "nearest":  # row 1.5 rounds to 2 (half to even); column 2.625 to 3
        want = [[14.0, 0.0, 18.0], [34.0, 20.0, 38.0]]
        torch.testing.assert_close(border[0, :, 0, 2:], torch.tensor(want, device=device))
    else:  # bicubic: every tap of the infinite axis clamps to the edge: a 1-D cubic along the finite one
        assert torch.isfinite(border[..., 2:]).all()
        edge = x[..., 4]  # column 4: rows interpolated at 1.5
        row = F.grid_sample(edge.unsqueeze(-1).double(), torch.tensor([[[[0.0, 0.0]]]], device=device).double(),
                            mode="bicubic", padding_mode="border", align_corners=False)
        torch.testing.assert_close(border[0, :, 0, 2].double(), row.flatten(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_infinite_grid_on_a_length_1_axis_with_align_corners(device, mode):
    """The rule holds for any length: on a length-1 axis the edge is the only element."""
    x = torch.tensor([[[[1.5, 2.5]]]], device=device)  # H = 1, W = 2
    g = torch.tensor([[[[0.5, INF], [0.5, -INF]]]], device=device)
    kw = dict(mode=mode, align_corners=True)
    assert (twinops.grid_sample(x, g, padding_mode="zeros", **kw) == 0).all()
    border = twinops.grid_sample(x, g, padding_mode="border", **kw)
    torch.testing.assert_close(border, twinops.grid_sample(x, torch.full_like(g, 0.5), padding_mode="border", **kw))
    assert torch.isnan(twinops.grid_sample(x, g, padding_mode="reflection", **kw)).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kw", CASES, ids=_id)
def test_far_grid_values_match_the_float64_reference(device, dtype, kw):
    """Finite grid values up to float's maximum, where the float coordinate loses the point
    (|g| above ~2^24 / size) or overflows to Inf (above ~FLT_MAX / size): reflection still
    reflects the exact value (a finite point, never NaN), zeros and border read outside / the
    edge, as in float64. Where even float64 cannot hold the coordinate (|g| * size / 2 above
    2^52), the point depends on the order of the reference's operations (the CUDA kernels,
    compiled with FMA contraction, differ there from ATen's float64 ones): those points are held
    to being finite where the rule says so, not to one reference's rounding."""
    mags = torch.logspace(0, 38.5, 60, dtype=torch.float64)  # 1 .. 3.2e38 (FLT_MAX ~ 3.4e38)
    vals = torch.cat([mags, -mags, torch.tensor([3.0e38, -3.0e38, 1.7e38, 2.5e37, 123456.789])]).to(dtype).double()
    size = 5  # the W the grid's x indexes
    exact = vals.abs() * size / 2 < 2.0**52
    n = len(vals)
    gx = vals.to(dtype).reshape(1, 1, n, 1)
    gy = torch.linspace(-0.9, 0.9, n, dtype=torch.float64).to(dtype).reshape(1, 1, n, 1)
    g = torch.cat([gx, gy], -1).to(device)
    x = random_input((1, 3, 4, size), dtype, device)
    y = twinops.grid_sample(x, g, **kw)
    if kw["padding_mode"] != "zeros":
        assert torch.isfinite(y).all(), kw
    want = grid_sample_reference(x, g, **kw)
    _close(y[..., exact.to(y.device)], want[..., exact.to(want.device)], dtype, str(kw))
    if dtype == torch.float32:  # the gradients take the same points (float64's exact ones; the others moved to 0)
        gm = g.detach().clone()
        gm[0, 0, ~exact.to(g.device), 0] = 0.0
        xr, gr = x.detach().requires_grad_(), gm.requires_grad_()
        go = random_input(y.shape, dtype, device, seed=5)
        gi, gg = torch.autograd.grad(twinops.grid_sample(xr, gr, **kw), (xr, gr), go)
        xd, gd = x.detach().cpu().double().requires_grad_(), gm.detach().cpu().double().requires_grad_()
        ri, rg = torch.autograd.grad(F.grid_sample(xd, gd, **kw), (xd, gd), go.cpu().double())
        _close(gi, ri, dtype, f"grad_input {kw}")
        _close(gg, rg, dtype, f"grad_grid {kw}")


def test_nan_and_inf_input_propagate_as_f_grid_sample(device):
    x = random_input((1, 2, 5, 6), torch.float64, device)
    x[0, 0, 1, 2], x[0, 1, 3, 3], x[0, 0, 4, 5] = NAN, INF, -INF
    g = (torch.rand(1, 7, 8, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * 2.6 - 1.3).to(device)
    g[0, 0, 0] = torch.tensor([-0.2, -0.6])  # exactly on element (1, 2)'s column: weight 0 for its neighbour
    for kw in CASES:
        y = twinops.grid_sample(x, g, **kw)
        want = F.grid_sample(x.cpu(), g.cpu(), **kw)
        _close(y, want, torch.float64, str(kw))
        assert torch.equal(torch.isnan(y.cpu()), torch.isnan(want)), kw


def test_align_corners_none_is_false_without_a_warning(recwarn):
    x, g = random_input((1, 2, 4, 5)), random_input((1, 3, 3, 2), seed=1)
    torch.testing.assert_close(twinops.grid_sample(x, g), twinops.grid_sample(x, g, align_corners=False), rtol=0, atol=0)
    assert not [w for w in recwarn if "align_corners" in str(w.message)]


def test_nearest_rounds_half_to_even():
    x = torch.arange(8.0).reshape(1, 1, 1, 8)
    # x_pix = ((g + 1) * 8 - 1) / 2: g = (2 p + 1) / 8 - 1 puts the point at p exactly (eighths)
    pix = torch.tensor([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5])
    g = torch.stack([(2 * pix + 1) / 8 - 1, torch.zeros_like(pix)], -1).reshape(1, 1, -1, 2)
    y = twinops.grid_sample(x, g, mode="nearest", align_corners=False)
    assert y.flatten().tolist() == [0.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0]


@pytest.mark.parametrize("kw", CASES[::3], ids=_id)
def test_any_strides_and_channels_last(device, kw):
    x = random_input((2, 3, 6, 7), device=device)
    g = random_input((2, 5, 4, 2), device=device, seed=1)
    want = twinops.grid_sample(x, g, **kw)
    xs = [x.contiguous(memory_format=torch.channels_last), x.transpose(2, 3).contiguous().transpose(2, 3),
          torch.stack([x, x], 2).flatten(1, 2)[:, ::2]]
    gs = [g.transpose(1, 2).contiguous().transpose(1, 2), torch.stack([g, g], -1).flatten(-2)[..., ::2]]
    for xi in xs:
        for gi in gs + [g]:
            y = twinops.grid_sample(xi, gi, **kw)
            assert y.is_contiguous()
            torch.testing.assert_close(y, want, rtol=0, atol=0)
    x5 = random_input((1, 2, 3, 4, 5), device=device).contiguous(memory_format=torch.channels_last_3d)
    g5 = random_input((1, 2, 3, 4, 3), device=device, seed=2)
    mode = "nearest" if kw["mode"] == "bicubic" else kw["mode"]
    torch.testing.assert_close(twinops.grid_sample(x5, g5, **{**kw, "mode": mode}),
                               twinops.grid_sample(x5.contiguous(), g5, **{**kw, "mode": mode}), rtol=0, atol=0)


@pytest.mark.parametrize("shapes", [((0, 2, 3, 4), (0, 2, 2, 2)), ((2, 0, 3, 4), (2, 2, 2, 2)),
                                    ((1, 2, 3, 4), (1, 0, 5, 2)), ((1, 2, 3, 4, 5), (1, 2, 0, 2, 3))], ids=str)
def test_empty(device, shapes):
    x = random_input(shapes[0], device=device).requires_grad_()
    g = random_input(shapes[1], device=device, seed=1).requires_grad_()
    y = twinops.grid_sample(x, g)
    assert y.shape == F.grid_sample(x.detach().cpu(), g.detach().cpu(), align_corners=False).shape
    y.sum().backward()
    assert x.grad.shape == x.shape and g.grad.shape == g.shape
    assert (x.grad == 0).all() and (g.grad == 0).all()


# ---------------------------------------------------------------------------------------
# errors: every message of the public API
# ---------------------------------------------------------------------------------------

def _x(*shape, dtype=torch.float32):
    return torch.zeros(shape, dtype=dtype)


BAD = [
    ("input-type", ([1.0], _x(1, 2, 2, 2)), {}, TypeError, "twinops.grid_sample: input must be a torch.Tensor, got list"),
    ("input-rank", (_x(2, 3, 4), _x(2, 3, 4, 2)), {}, ValueError,
     "twinops.grid_sample: input must be a 4-D or 5-D (N, C, [D,] H, W) tensor, got 3-D with shape (2, 3, 4)"),
    ("input-dtype", (_x(1, 2, 3, 4, dtype=torch.int32), _x(1, 2, 2, 2)), {}, TypeError,
     "twinops.grid_sample: input must be float32, float64, float16 or bfloat16, got torch.int32"),
    ("grid-type", (_x(1, 2, 3, 4), None), {}, TypeError, "twinops.grid_sample: grid must be a torch.Tensor, got NoneType"),
    ("grid-rank", (_x(1, 2, 3, 4), _x(1, 2, 2)), {}, ValueError,
     "twinops.grid_sample: grid must be a 4-D or 5-D (N, [D_out,] H_out, W_out, 2 or 3) tensor, got 3-D with shape "
     "(1, 2, 2)"),
    ("grid-dtype", (_x(1, 2, 3, 4), _x(1, 2, 2, 2, dtype=torch.int64)), {}, TypeError,
     "twinops.grid_sample: grid must be float32, float64, float16 or bfloat16, got torch.int64"),
    ("mode", (_x(1, 2, 3, 4), _x(1, 2, 2, 2)), dict(mode="linear"), ValueError,
     "twinops.grid_sample: mode must be one of bilinear, nearest, bicubic, got 'linear'"),
    ("padding", (_x(1, 2, 3, 4), _x(1, 2, 2, 2)), dict(padding_mode="constant"), ValueError,
     "twinops.grid_sample: padding_mode must be one of zeros, border, reflection, got 'constant'"),
    ("align_corners", (_x(1, 2, 3, 4), _x(1, 2, 2, 2)), dict(align_corners=1), TypeError,
     "twinops.grid_sample: align_corners must be a bool, got int"),
    ("align_corners-numpy-int", (_x(1, 2, 3, 4), _x(1, 2, 2, 2)), dict(align_corners=np.int64(1)), TypeError,
     "twinops.grid_sample: align_corners must be a bool, got numpy.int64"),
    ("input-sparse", (_x(1, 2, 3, 4).to_sparse(), _x(1, 2, 2, 2)), {}, TypeError,
     "twinops.grid_sample: input must be a dense (strided) tensor, got layout torch.sparse_coo (call .to_dense() "
     "first)"),
    ("grid-sparse", (_x(1, 2, 3, 4), _x(1, 2, 2, 2).to_sparse()), {}, TypeError,
     "twinops.grid_sample: grid must be a dense (strided) tensor, got layout torch.sparse_coo (call .to_dense() "
     "first)"),
    ("rank-mismatch", (_x(1, 2, 3, 4, 5), _x(1, 2, 2, 2)), {}, ValueError,
     "twinops.grid_sample: grid must be 5-D like input (N, D_out, H_out, W_out, 3), got 4-D with shape (1, 2, 2, 2)"),
    ("rank-mismatch-4d", (_x(1, 2, 3, 4), _x(1, 2, 2, 2, 3)), {}, ValueError,
     "twinops.grid_sample: grid must be 4-D like input (N, H_out, W_out, 2), got 5-D with shape (1, 2, 2, 2, 3)"),
    ("last-dim", (_x(1, 2, 3, 4), _x(1, 2, 2, 3)), {}, ValueError,
     "twinops.grid_sample: grid's last dim must be 2 (x, y) for a 4-D input, got shape (1, 2, 2, 3)"),
    ("last-dim-5d", (_x(1, 2, 3, 4, 5), _x(1, 2, 2, 2, 2)), {}, ValueError,
     "twinops.grid_sample: grid's last dim must be 3 (x, y, z) for a 5-D input, got shape (1, 2, 2, 2, 2)"),
    ("batch", (_x(2, 2, 3, 4), _x(3, 2, 2, 2)), {}, ValueError,
     "twinops.grid_sample: grid's batch size (3) must equal input's (2); shapes (3, 2, 2, 2) and (2, 2, 3, 4)"),
    ("dtypes", (_x(1, 2, 3, 4), _x(1, 2, 2, 2, dtype=torch.float64)), {}, TypeError,
     "twinops.grid_sample: grid must have input's dtype (float32), got torch.float64"),
    ("bicubic-5d", (_x(1, 2, 3, 4, 5), _x(1, 2, 2, 2, 3)), dict(mode="bicubic"), ValueError,
     "twinops.grid_sample: mode 'bicubic' needs a 4-D input (N, C, H, W), got 5-D with shape (1, 2, 3, 4, 5)"),
    ("empty-spatial", (_x(1, 2, 0, 4), _x(1, 2, 2, 2)), {}, ValueError,
     "twinops.grid_sample: input's spatial dims (H, W) must be non-empty, got shape (1, 2, 0, 4)"),
    ("empty-spatial-5d", (_x(1, 2, 3, 4, 0), _x(1, 2, 2, 2, 3)), {}, ValueError,
     "twinops.grid_sample: input's spatial dims (D, H, W) must be non-empty, got shape (1, 2, 3, 4, 0)"),
]


@pytest.mark.parametrize("args,kw,exc,msg", [pytest.param(*b[1:], id=b[0]) for b in BAD])
def test_bad_arguments(args, kw, exc, msg):
    with pytest.raises(exc, match=f"^{re.escape(msg)}$"):
        twinops.grid_sample(*args, **kw)
    module_msg = msg.replace("twinops.grid_sample:", "twinops.GridSample:")
    with pytest.raises(exc, match=f"^{re.escape(module_msg)}$"):
        twinops.GridSample(**kw)(*args)


def test_numpy_bools_are_bools():
    x, g = random_input((1, 2, 3, 4), torch.float32), random_input((1, 2, 2, 2), torch.float32, seed=1)
    for flag in (True, False):
        assert torch.equal(twinops.grid_sample(x, g, align_corners=np.bool_(flag)),
                           twinops.grid_sample(x, g, align_corners=flag))
        assert torch.equal(twinops.GridSample(align_corners=np.bool_(flag))(x, g),
                           twinops.grid_sample(x, g, align_corners=flag))


@pytest.mark.parametrize("attrs,msg", [
    (dict(align_corners=2), "twinops::TwinopsGridSample: align_corners must be 0 or 1, got 2"),
    (dict(align_corners=-1), "twinops::TwinopsGridSample: align_corners must be 0 or 1, got -1"),
    (dict(padding_mode="wrap"), "twinops::TwinopsGridSample: padding_mode must be one of zeros, border, "
                                "reflection, got 'wrap'"),
    (dict(mode="area"), "twinops::TwinopsGridSample: mode must be one of linear, nearest, cubic, bilinear, bicubic, "
                        "got 'area'"),
])
def test_onnx_reference_kernel_refuses_what_the_op_refuses(attrs, msg):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("TwinopsGridSample", ["X", "grid"], ["Y"], domain="twinops", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
                                            helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("twinops", 1)])
    sess = ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops())
    feeds = {"X": np.ones((1, 1, 2, 2), np.float32), "grid": np.zeros((1, 1, 1, 2), np.float32)}
    with pytest.raises((ValueError, TypeError), match=f"^{re.escape(msg)}$"):
        sess.run(None, feeds)
    # the torch op refuses the same value
    if "align_corners" in attrs:
        with pytest.raises(RuntimeError, match="align_corners"):
            torch.ops.twinops.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), "linear", "zeros",
                                          attrs["align_corners"])


@cuda
def test_devices_must_match():
    with pytest.raises(ValueError, match=re.escape("twinops.grid_sample: grid is on cuda:0 but input is on cpu; "
                                                   "both must be on the same device")):
        twinops.grid_sample(_x(1, 2, 3, 4), _x(1, 2, 2, 2).cuda())


@pytest.mark.parametrize("args,attrs,msg", [
    ((_x(1, 2, 3, 4), _x(1, 2, 2, 2)), ("lanczos", "zeros", 0), "mode"),
    ((_x(1, 2, 3, 4), _x(1, 2, 2, 2)), ("linear", "wrap", 0), "padding_mode"),
    ((_x(1, 2, 3, 4), _x(1, 2, 2, 2)), ("linear", "zeros", 2), "align_corners"),
    ((_x(1, 2, 3, 4, 5), _x(1, 2, 2, 2, 3)), ("cubic", "zeros", 0), "4-D"),
    ((_x(2, 2, 3, 4), _x(1, 2, 2, 2)), ("linear", "zeros", 0), "batch"),
    ((_x(1, 2, 3, 4), _x(1, 2, 2, 3)), ("linear", "zeros", 0), "grid"),
], ids=["mode", "padding", "align_corners", "cubic-5d", "batch", "grid"])
def test_the_op_checks_its_arguments_on_every_path(args, attrs, msg):
    """Direct calls of the torch op (CPU and fake/meta) refuse with a message naming the op and the argument."""
    pattern = rf"^torch\.ops\.twinops\.grid_sample: .*{re.escape(msg)}"
    with pytest.raises(RuntimeError, match=pattern):
        torch.ops.twinops.grid_sample(*args, *attrs)
    with pytest.raises(RuntimeError, match=pattern):
        torch.ops.twinops.grid_sample(*(a.to("meta") for a in args), *attrs)


def test_the_op_reads_gridsample16_mode_names():
    x, g = random_input((1, 2, 4, 5)), random_input((1, 3, 3, 2), seed=1)
    for old, new in (("bilinear", "linear"), ("bicubic", "cubic")):
        torch.testing.assert_close(torch.ops.twinops.grid_sample(x, g, old, "border", 1),
                                   torch.ops.twinops.grid_sample(x, g, new, "border", 1), rtol=0, atol=0)


def test_module():
    m = twinops.GridSample(mode="bicubic", padding_mode="reflection", align_corners=True)
    assert repr(m) == "GridSample(mode='bicubic', padding_mode='reflection', align_corners=True)"
    x, g = random_input((2, 3, 5, 6)), random_input((2, 4, 3, 2), seed=1)
    torch.testing.assert_close(m(x, g), twinops.grid_sample(x, g, "bicubic", "reflection", True), rtol=0, atol=0)
    assert isinstance(twinops.GridSample(), torch.nn.Module)


# ---------------------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------------------

def _grads(fn, x, g, go, **kw):
    x, g = x.detach().requires_grad_(), g.detach().requires_grad_()
    fn(x, g, **kw).backward(go)
    return x.grad, g.grad


@pytest.mark.parametrize("kw", CASES, ids=_id)
@pytest.mark.parametrize("rank", [4, 5])
def test_gradients_match_f_grid_sample_float64(device, kw, rank):
    if rank == 5 and kw["mode"] == "bicubic":
        pytest.skip("bicubic is 4-D only")
    gen = torch.Generator().manual_seed(rank)
    shape, gshape = ((2, 3, 5, 6), (2, 4, 7, 2)) if rank == 4 else ((2, 2, 4, 5, 3), (2, 3, 2, 4, 3))
    x = random_input(shape, torch.float64, device)
    # continuous uniform points (no exact integers: bilinear's and reflection's kinks are measure zero)
    g = ((torch.rand(gshape, generator=gen, dtype=torch.float64) * 2.8 - 1.4)).to(device)
    go = random_input((shape[0], shape[1], *gshape[1:-1]), torch.float64, device, seed=7)
    gi, gg = _grads(twinops.grid_sample, x, g, go, **kw)
    wi, wg = _grads(F.grid_sample, x.cpu(), g.cpu(), go.cpu(), **kw)
    _close(gi, wi, torch.float64, f"grad_input {kw}")
    _close(gg, wg, torch.float64, f"grad_grid {kw}")
    if kw["mode"] == "nearest":
        assert (gg == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kw", CASES[::2], ids=_id)
def test_gradients_in_low_precision(device, dtype, kw):
    shape, gshape = (1, 3, 6, 7), (1, 5, 4, 2)
    x = random_input(shape, dtype, device)
    g = random_input(gshape, dtype, device, seed=1) * 0.8
    go = random_input((1, 3, 5, 4), dtype, device, seed=2)
    gi, gg = _grads(twinops.grid_sample, x, g, go, **kw)
    wi, wg = _grads(F.grid_sample, x.double().cpu(), g.double().cpu(), go.double().cpu(), **kw)
    assert gi.dtype == gg.dtype == dtype
    # a sum of up to H_out * W_out terms each rounded once, and grad_grid ~ input differences * size
    scale = 4 * {torch.float32: 1, torch.float16: 4, torch.bfloat16: 4}[dtype]
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(gi.cpu().double(), wi, atol=scale * atol, rtol=scale * rtol)
    torch.testing.assert_close(gg.cpu().double(), wg, atol=scale * atol * 8, rtol=scale * rtol)


def test_gradient_at_a_nan_grid_point(device):
    """grad_grid is NaN at a NaN point, which contributes nothing to grad_input."""
    x = random_input((1, 2, 5, 6), torch.float64, device)
    g = (torch.rand(1, 3, 4, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 2 - 1).to(device)
    g[0, 1, 2, 0] = NAN
    go = random_input((1, 2, 3, 4), torch.float64, device, seed=3)
    for kw in CASES:
        gi, gg = _grads(twinops.grid_sample, x, g, go, **kw)
        assert torch.isnan(gg[0, 1, 2]).all() and not torch.isnan(gg[0, 1, 3]).any(), kw
        g0, go0 = g.clone(), go.clone()
        g0[0, 1, 2, 0], go0[0, :, 1, 2] = 0.0, 0.0
        wi, _ = _grads(F.grid_sample, x.cpu(), g0.cpu(), go0.cpu(), **kw)
        _close(gi, wi, torch.float64, f"grad_input {kw}")


@pytest.mark.parametrize("which", ["input", "grid"])
def test_only_the_needed_gradient_is_computed(which):
    x = random_input((1, 2, 4, 5), torch.float64).requires_grad_(which == "input")
    g = random_input((1, 3, 3, 2), torch.float64, seed=1).requires_grad_(which == "grid")
    calls = []
    with _RecordBackward(calls):
        twinops.grid_sample(x, g).sum().backward()
    (mask,) = calls
    assert mask == [which == "input", which == "grid"]


class _RecordBackward(torch.utils._python_dispatch.TorchDispatchMode):
    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.twinops.grid_sample_backward.default:
            self.calls.append(list(args[-1]))
        return func(*args, **(kwargs or {}))


needs_aten_double_backward = pytest.mark.skipif(
    not aten_double_backward_available(),
    reason=f"PyTorch {torch.__version__} has no grid sampler double backward (F.grid_sample's second derivatives)")


@needs_aten_double_backward
@pytest.mark.parametrize("kw", [dict(mode="bilinear", padding_mode="zeros"), dict(mode="bicubic", padding_mode="border"),
                                dict(mode="bilinear", padding_mode="reflection", align_corners=True)], ids=_id)
def test_gradgradcheck(kw):
    """Second derivatives (ATen's double backward, docs/ops/grid_sample.md "Gradients")."""
    x = random_input((1, 2, 4, 5), torch.float64).requires_grad_()
    g = (torch.rand(1, 3, 2, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 2.2 - 1.1)
    assert torch.autograd.gradgradcheck(lambda a, b: twinops.grid_sample(a, b, **kw), (x, g.requires_grad_()))
    x5 = random_input((1, 2, 3, 3, 4), torch.float64).requires_grad_()
    g5 = (torch.rand(1, 2, 2, 2, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 2 - 1)
    kw5 = {**kw, "mode": "bilinear"}
    assert torch.autograd.gradgradcheck(lambda a, b: twinops.grid_sample(a, b, **kw5), (x5, g5.requires_grad_()))


def test_second_derivatives_where_pytorch_has_none_say_so():
    if aten_double_backward_available():
        pytest.skip(f"PyTorch {torch.__version__} defines the grid sampler double backward")
    x = random_input((1, 2, 4, 5), torch.float64).requires_grad_()
    g = (torch.rand(1, 3, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * 2 - 1).requires_grad_()
    gx, = torch.autograd.grad(twinops.grid_sample(x, g).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"^twinops\.grid_sample: second derivatives are ATen's grid sampler"):
        torch.autograd.grad(gx.sum(), g)


@needs_aten_double_backward
def test_second_derivatives_through_grad_output_match_f_grid_sample():
    """A gradient penalty: grad_output (2 y) depends on input and grid too."""
    x = random_input((1, 2, 4, 5), torch.float64).requires_grad_()
    g = (torch.rand(1, 3, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * 2 - 1).requires_grad_()

    def second(fn):
        y = fn(x, g, mode="bicubic", padding_mode="reflection", align_corners=False)
        gx, gg = torch.autograd.grad((y ** 2).sum(), (x, g), create_graph=True)
        return torch.autograd.grad(gx.sum() + (gg ** 2).sum(), (x, g))

    for a, b in zip(second(twinops.grid_sample), second(F.grid_sample)):
        _close(a, b, torch.float64)
    y = twinops.grid_sample(x, g)
    _, gg = torch.autograd.grad((y ** 2).sum(), (x, g), create_graph=True)
    with pytest.raises(RuntimeError, match=r"^twinops\.grid_sample: derivatives beyond the second are not supported"):
        torch.autograd.grad((gg ** 2).sum(), x, create_graph=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_backward_is_deterministic(device, dtype, mode):
    """Bitwise the same run to run, and allowed under torch.use_deterministic_algorithms(True).
    Many output points sample the same input cells (a contracted grid): where atomics would race."""
    x = random_input((2, 8, 16, 16), dtype, device)
    g = (random_input((2, 32, 32, 2), dtype, device, seed=1) * 0.15)
    go = random_input((2, 8, 32, 32), dtype, device, seed=2)
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        first = _grads(twinops.grid_sample, x, g, go, mode=mode, padding_mode="border")
        for _ in range(3):
            again = _grads(twinops.grid_sample, x, g, go, mode=mode, padding_mode="border")
            assert all(torch.equal(a, b) for a, b in zip(first, again))
    finally:
        torch.use_deterministic_algorithms(was)


# ---------------------------------------------------------------------------------------
# onnx.reference's GridSample: where it agrees and where it differs (docs/ops/grid_sample.md)
# ---------------------------------------------------------------------------------------

def _node_reference(x, g, mode, padding_mode, align_corners):
    """twinops' node kernel (what onnx.reference runs for an exported TwinopsGridSample)."""
    from twinops.library.grid_sample.export import twinops_grid_sample_reference

    onnx_mode = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}[mode]
    return torch.from_numpy(twinops_grid_sample_reference(x.numpy(), g.numpy(), onnx_mode, padding_mode,
                                                          int(align_corners)))


@pytest.mark.parametrize("kw", [k for k in CASES if not (k["mode"] == "bicubic" and k["padding_mode"] == "border")],
                         ids=_id)
@given(data=st.data())
def test_agrees_with_onnx_gridsample(kw, data):
    pytest.importorskip("onnx")
    # lengths >= 2: onnx.reference's reflection divides by the border interval, 0 for a length-1
    # axis with align_corners (it raises there)
    shape, gshape = data.draw(grid_sample_shapes(4, max_in=7, max_out=4).filter(lambda s: min(s[0][2:]) >= 2))
    x = random_input(shape)
    # nearest + reflection without align_corners: no ties (onnx.reference rounds before reflecting, test below)
    tie_free = kw["mode"] == "nearest" and kw["padding_mode"] == "reflection" and not kw["align_corners"]
    g = data.draw(grids(gshape, torch.float32, bound=1.7, snap=not tie_free))
    want = onnx_grid_sample_reference(x, g, **kw)
    _close(_node_reference(x, g, **kw), want, torch.float32, f"node reference {kw}")
    _close(twinops.grid_sample(x, g, **kw), want, torch.float32, f"twinops {kw}")


def test_differs_from_onnx_gridsample_for_bicubic_border():
    """onnx.reference clamps the continuous coordinate (x = -0.7 -> 0: the edge element);
    PyTorch and twinops clamp each tap (floor -1, taps -2..1 -> 0, 0, 0, 1: a blend)."""
    pytest.importorskip("onnx")
    x = torch.tensor([[[[0.0, 10.0, 20.0, 30.0]]]])
    g = torch.tensor([[[[(2 * -0.7 + 1) / 4 - 1, 0.0]]]])  # x_pix = ((g + 1) * 4 - 1) / 2 = -0.7, y on row 0
    kw = dict(mode="bicubic", padding_mode="border", align_corners=False)
    onnx_y = onnx_grid_sample_reference(x, g, **kw)
    assert onnx_y.item() == pytest.approx(0.0, abs=1e-5)
    # Keys (A = -0.75) at t = 0.3: weights of taps (-2, -1, 0, 1) -> (0, 0, 0, 10)
    t, a = 0.3, -0.75
    w3 = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a
    for y in (twinops.grid_sample(x, g, **kw), _node_reference(x, g, **kw), F.grid_sample(x, g, **kw)):
        assert y.item() == pytest.approx(10 * w3, abs=1e-5)
    assert abs(10 * w3) > 0.1  # the two rules really differ here


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("align_corners", [False, True])
def test_nearest_reflection_at_ties_against_onnx_gridsample(align_corners):
    """onnx.reference rounds the coordinate, then reflects it; PyTorch and twinops reflect, then
    round (half to even). Reflection about -0.5 (align_corners=False) maps a tie to a tie whose
    even neighbour is not the mirror of the first's: they pick different elements. Reflection
    about 0 (align_corners=True) commutes with round-half-to-even: they agree."""
    pytest.importorskip("onnx")
    x = torch.tensor([[[[0.0, 10.0, 20.0, 30.0]]]])
    # x_pix = -1.5. False: PyTorch reflects to 0.5 and rounds to 0; onnx.reference rounds to -2
    # and reflects to 1. True: both give 2 (1.5 rounds to 2; -2 reflects to 2).
    pix = -1.5
    g = torch.tensor([[[[2 * pix / 3 - 1 if align_corners else (2 * pix + 1) / 4 - 1, 0.0]]]])
    kw = dict(mode="nearest", padding_mode="reflection", align_corners=align_corners)
    ours = twinops.grid_sample(x, g, **kw)
    assert ours.item() == (20.0 if align_corners else 0.0)
    assert ours.item() == F.grid_sample(x, g, **kw).item() == _node_reference(x, g, **kw).item()
    assert onnx_grid_sample_reference(x, g, **kw).item() == (20.0 if align_corners else 10.0)


def test_where_onnx_gridsample_raises():
    """Documented: onnx.reference raises on a NaN grid coordinate (twinops: NaN) and on an empty
    output (its kernel returns a bare array; twinops: an empty (N, C, H_out, W_out))."""
    pytest.importorskip("onnx")
    x = random_input((1, 2, 4, 5))
    g = torch.tensor([[[[NAN, 0.0]]]])
    with pytest.raises((ValueError, OverflowError)):
        onnx_grid_sample_reference(x, g)
    assert torch.isnan(_node_reference(x, g, "bilinear", "zeros", 0)).all()
    empty = torch.zeros(1, 0, 3, 2)
    assert _node_reference(x, empty, "bilinear", "zeros", 0).shape == (1, 2, 0, 3)
    with pytest.raises(TypeError, match="does not return a tuple"):
        onnx_grid_sample_run(x.numpy(), empty.numpy(), "linear", "zeros", 0)
    # reflection on a length-1 axis with align_corners: its border interval has length 0
    x1, g1 = random_input((1, 1, 1, 4)), torch.tensor([[[[0.3, 0.5]]]])
    kw = dict(padding_mode="reflection", align_corners=True)
    with pytest.raises(OverflowError):
        onnx_grid_sample_reference(x1, g1, **kw)
    _close(twinops.grid_sample(x1, g1, **kw), F.grid_sample(x1.double(), g1.double(), **kw), torch.float32)


def test_exported_node_uses_gridsample20_names():
    onnx = pytest.importorskip("onnx")
    x, g = random_input((1, 2, 4, 5)), random_input((1, 3, 3, 2), seed=1)
    for mode, name in (("bilinear", "linear"), ("nearest", "nearest"), ("bicubic", "cubic")):
        model = twinops.export_onnx(twinops.GridSample(mode, "reflection", True), (x, g), dynamo=False)
        (node,) = [n for n in model.graph.node if n.op_type == "TwinopsGridSample"]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert attrs["mode"] == name.encode() and attrs["padding_mode"] == b"reflection" and attrs["align_corners"] == 1


# ---------------------------------------------------------------------------------------
# CPU against CUDA
# ---------------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@given(data=st.data())
def test_cpu_and_cuda_agree(dtype, data):
    shape, gshape = data.draw(grid_sample_shapes(max_in=24, max_out=12))
    kw = data.draw(grid_sample_kwargs(len(shape)))
    x = random_input(shape, dtype)
    g = data.draw(grids(gshape, dtype, special=data.draw(st.booleans())))
    go = random_input((shape[0], shape[1], *gshape[1:-1]), dtype, seed=5)
    cpu = _grads(twinops.grid_sample, x, g, go, **kw)
    gpu = _grads(twinops.grid_sample, x.cuda(), g.cuda(), go.cuda(), **kw)
    _close(twinops.grid_sample(x.cuda(), g.cuda(), **kw), twinops.grid_sample(x, g, **kw), dtype, f"forward {kw}")
    atol, rtol = TOLERANCES[dtype]
    for a, b, what in zip(gpu, cpu, ("grad_input", "grad_grid")):
        torch.testing.assert_close(a.cpu().double(), b.double(), atol=16 * atol, rtol=16 * rtol, equal_nan=True,
                                   msg=lambda m: f"{what} {kw}\n{m}")
