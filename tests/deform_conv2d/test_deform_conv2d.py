"""twinops.deform_conv2d: what is special to the op (tests/test_conformance.py runs the generic contract).

Parity with torchvision.ops.deform_conv2d in float64 on Hypothesis-drawn geometries (kernels 1-5,
non-square; stride, padding and dilation up to 3, each axis its own; groups and offset_groups;
offsets far outside the image; with and without mask and bias), forward and every gradient; the
composite reference (the node's onnx.reference kernel) against torchvision; the non-finite rules;
every error message; the module; the deterministic backward; CPU against CUDA (skipped without a
GPU).
"""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import twinops
from twinops.library.deform_conv2d import DeformConv2dOp, deform_conv2d_op
from twinops.library.deform_conv2d.reference import TOLERANCES, deform_conv2d_composite, torchvision_ops
from twinops.library.deform_conv2d.strategies import geometry

TVO = torchvision_ops()
needs_torchvision = pytest.mark.skipif(TVO is None, reason="torchvision with CPU kernels for this torch is not installed")
NAN, INF = float("nan"), float("inf")


def make(shapes, kwargs, dtype=torch.float64, device="cpu", seed=0, spread=2.5):
    """Inputs for shapes (input, offset, weight, bias?, mask?): normal data, offsets uniform in
    +-spread with a few integral ones, masks in [-0.5, 1.5)."""
    g = torch.Generator().manual_seed(seed)
    xs = []
    for i, s in enumerate(shapes):
        if s is None:
            xs.append(None)
            continue
        if i == 1:
            t = (torch.rand(s, generator=g, dtype=torch.float64) * 2 - 1) * spread
            if t.numel() >= 3:
                t.view(-1)[:3] = torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64)
        elif i == 4:
            t = torch.rand(s, generator=g, dtype=torch.float64) * 2 - 0.5
        else:
            t = torch.randn(s, generator=g, dtype=torch.float64) + 0.25
        xs.append(t.to(device, dtype))
    return xs


def torchvision(xs, kwargs):
    x, off, w, b, m = [t.detach().cpu().double() if t is not None else None for t in xs]
    return TVO.deform_conv2d(x, off, w, b, mask=m, **{k: tuple(v) for k, v in kwargs.items()})


def _close(actual, expected, dtype, what=""):
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(actual.detach().cpu().double(), expected.detach().cpu().double(), atol=atol, rtol=rtol,
                               equal_nan=True, msg=lambda msg: f"{what}\n{msg}")


# ---------------------------------------------------------------------------------------
# forward and gradients against torchvision in float64
# ---------------------------------------------------------------------------------------

@needs_torchvision
@settings(deadline=None, max_examples=60)
@given(case=geometry(max_kernel=5, max_side=8), spread=st.sampled_from([0.5, 2.5, 12.0]))
def test_forward_matches_torchvision_float64(case, spread):
    shapes, kwargs = case
    if shapes[0][0] == 0:
        return  # torchvision refuses an empty batch (the edge cases cover N = 0)
    xs = make(shapes, kwargs, spread=spread)
    torch.testing.assert_close(deform_conv2d_op(*xs, **kwargs), torchvision(xs, kwargs), atol=1e-12, rtol=1e-12)


@needs_torchvision
@settings(deadline=None, max_examples=40)
@given(case=geometry(max_kernel=4, max_side=7))
def test_gradients_match_torchvision_float64(case):
    shapes, kwargs = case
    if shapes[0][0] == 0:
        return
    xs = make(shapes, kwargs)
    ours = [t.clone().requires_grad_() if t is not None else None for t in xs]
    theirs = [t.clone().requires_grad_() if t is not None else None for t in xs]
    y = deform_conv2d_op(*ours, **kwargs)
    gy = torch.randn(y.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y.backward(gy)
    TVO.deform_conv2d(theirs[0], theirs[1], theirs[2], theirs[3], mask=theirs[4],
                      **{k: tuple(v) for k, v in kwargs.items()}).backward(gy)
    for name, a, b in zip(("input", "offset", "weight", "bias", "mask"), ours, theirs):
        if a is not None:
            torch.testing.assert_close(a.grad, b.grad, atol=1e-10, rtol=1e-9, msg=lambda m: f"grad {name}\n{m}")


@needs_torchvision
@settings(deadline=None, max_examples=30)
@given(case=geometry(max_kernel=5, max_side=8))
def test_composite_reference_matches_torchvision(case):
    """The node's onnx.reference kernel (the composite) computes torchvision's result."""
    shapes, kwargs = case
    if shapes[0][0] == 0:
        return
    xs = make(shapes, kwargs, spread=6.0)
    torch.testing.assert_close(deform_conv2d_composite(*xs, **kwargs), torchvision(xs, kwargs), atol=1e-12,
                               rtol=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@settings(deadline=None, max_examples=25)
@given(case=geometry(max_kernel=3, max_side=8))
def test_lower_precision_within_tolerance(device, dtype, case):
    shapes, kwargs = case
    xs = make(shapes, kwargs, dtype=dtype, device=device)
    want = deform_conv2d_composite(*[t.double().cpu() if t is not None else None for t in xs], **kwargs)
    _close(deform_conv2d_op(*xs, **kwargs), want, dtype, f"{shapes} {kwargs}")


def test_public_signature_is_torchvisions():
    """twinops.deform_conv2d(input, offset, weight, bias, stride, padding, dilation, mask) and the
    op form agree; ints mean (H, W) pairs."""
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, _ = _shapes(2, 4, 6, 7, 3, (3, 3), stride=(2, 2), padding=(1, 1), dilation=(1, 1))
    x, off, w, b, m = make(shapes, {})
    a = twinops.deform_conv2d(x, off, w, b, 2, 1, 1, m)
    torch.testing.assert_close(a, deform_conv2d_op(x, off, w, b, m, stride=[2, 2], padding=[1, 1]))
    torch.testing.assert_close(a, DeformConv2dOp(stride=(2, 2), padding=1)(x, off, w, b, m))


def test_module_holds_weight_and_bias():
    torch.manual_seed(0)
    mod = twinops.DeformConv2d(4, 6, (3, 2), stride=(1, 2), padding=(1, 0), dilation=(2, 1), groups=2).double()
    assert mod.weight.shape == (6, 2, 3, 2) and mod.bias.shape == (6,)
    x = torch.randn(2, 4, 7, 9, dtype=torch.float64)
    off = torch.randn(2, 2 * 3 * 2, 5, 4, dtype=torch.float64)
    mask = torch.rand(2, 3 * 2, 5, 4, dtype=torch.float64)
    y = mod(x, off, mask)
    torch.testing.assert_close(y, deform_conv2d_composite(x, off, mod.weight, mod.bias, mask, (1, 2), (1, 0), (2, 1)))
    y.sum().backward()
    assert mod.weight.grad is not None and mod.bias.grad is not None
    assert twinops.DeformConv2d(2, 2, 1, bias=False).bias is None
    with pytest.raises(ValueError, match=r"^twinops\.DeformConv2d: in_channels \(3\) must be a multiple of groups \(2\)$"):
        twinops.DeformConv2d(3, 2, 3, groups=2)


# ---------------------------------------------------------------------------------------
# non-finite values
# ---------------------------------------------------------------------------------------

def _on(device, xs):
    """float64 inputs on ``device`` and the tolerance to hold them to: float64 on the CPU, float32
    on CUDA (its kernels take no float64)."""
    dtype = torch.float64 if device == "cpu" else torch.float32
    return [t.to(device, dtype) for t in xs], ((1e-12, 1e-12) if dtype == torch.float64 else TOLERANCES[dtype])


@needs_torchvision
def test_non_finite_offsets_and_inputs_land_where_torchvision_puts_them(device):
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(1, 2, 5, 6, 3, (3, 3), padding=(1, 1))
    xs = make(shapes, kwargs)
    xs[1][0, 3, 2, 2] = INF  # a sample infinitely far: outside, 0
    xs[1][0, 4, 3, 3] = -INF
    xs[0][0, 1, 4, 5] = INF  # an infinite input pixel: NaN or Inf where its corners are read
    xs[4][0, 2, 0, 0] = NAN  # a NaN mask value
    xs, (atol, rtol) = _on(device, xs)
    want = torchvision(xs, kwargs)
    got = deform_conv2d_op(*xs, **kwargs)
    assert want.isnan().any() and want.isinf().any()
    torch.testing.assert_close(got.cpu().double(), want, atol=atol, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_cuda_half_infinite_weight_lands_where_the_reference_puts_it(dtype):
    """On tensor cores a column enters as hi + lo; a column exact in the type (integral offsets,
    small integer data) has a zero remainder, which must not turn an infinite weight's product
    into inf * 0 = NaN: Inf where the column is nonzero, NaN only where it is 0, as the reference."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(1, 2, 5, 6, 3, (3, 3), padding=(1, 1))
    g = torch.Generator().manual_seed(0)
    x, off, w, b, m = [torch.randint(-3, 4, s, generator=g).to(torch.float64) for s in shapes]
    w[1, 0, 1, 1] = INF  # channel 0's centre tap
    m = m.abs()  # masks 0..3: some columns are 0 (NaN there), most are not
    want = deform_conv2d_composite(x, off, w, b, m, **kwargs)
    got = deform_conv2d_op(*[t.to("cuda", dtype) for t in (x, off, w, b, m)], **kwargs).cpu().double()
    assert want.isinf().any() and want.isnan().any()
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.isinf(), want.isinf())
    finite = want.isfinite()
    torch.testing.assert_close(got[finite], want[finite], atol=TOLERANCES[dtype][0], rtol=TOLERANCES[dtype][1])


def test_a_nan_offset_makes_its_outputs_nan(device):
    """torchvision's CPU kernel turns floor(NaN) into an index (undefined; it can crash the
    process), so the rule is the composite's: the sample is NaN, every output summing it NaN."""
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(1, 2, 5, 6, 3, (3, 3), padding=(1, 1))
    xs = make(shapes, kwargs)
    xs[1][0, 0, 1, 1] = NAN  # tap 0's dy at output (1, 1)
    xs[1][0, 9, 2, 4] = NAN  # tap 4's dx at output (2, 4)
    xs, (atol, rtol) = _on(device, xs)
    got = deform_conv2d_op(*xs, **kwargs).cpu().double()
    want = deform_conv2d_composite(*[t.cpu().double() for t in xs], **kwargs)
    nan = torch.zeros_like(want, dtype=torch.bool)
    nan[0, :, 1, 1] = nan[0, :, 2, 4] = True
    assert torch.equal(got.isnan(), nan) and torch.equal(want.isnan(), nan)
    torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

def _base():
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(2, 4, 6, 7, 6, (3, 3), groups=2, offset_groups=2, padding=(1, 1))
    return make(shapes, kwargs, dtype=torch.float32), kwargs


@pytest.mark.parametrize("change,message", [
    (lambda xs, kw: xs.__setitem__(1, xs[1][:, :35]),
     "offset's channels (35) must be a positive multiple of 2 * kh * kw (18): (dy, dx) per kernel tap and offset "
     "group; shape (2, 35, 6, 7)"),
    (lambda xs, kw: xs.__setitem__(1, xs[1][:, :, :5]),
     "offset's H (5) must equal the output's (6, from input (2, 4, 6, 7), weight (6, 2, 3, 3), stride, padding and "
     "dilation)"),
    (lambda xs, kw: xs.__setitem__(2, torch.randn(6, 3, 3, 3)),
     "input's channels (4) must be a multiple of weight's dim 1 (C_in / groups = 3); shapes (2, 4, 6, 7) and "
     "(6, 3, 3, 3)"),
    (lambda xs, kw: xs.__setitem__(0, xs[0][:, :0]), "input's channels (dim 1) must be at least 1, got shape (2, 0, 6, 7)"),
    (lambda xs, kw: xs.__setitem__(2, xs[2][:5]), "weight's C_out (5) must be a multiple of groups (2 = C_in / weight's dim 1)"),
    (lambda xs, kw: xs.__setitem__(3, xs[3][:5]), "bias must have shape (C_out,) = (6,), got (5,)"),
    (lambda xs, kw: xs.__setitem__(4, xs[4][:, :9]), "mask's channels (9) must be offset_groups * kh * kw (18)"),
    (lambda xs, kw: xs.__setitem__(4, xs[4][:1]), "mask's N (1) must equal input's (2)"),
    (lambda xs, kw: kw.__setitem__("stride", [0, 1]), "stride's H value must be at least 1, got 0"),
    (lambda xs, kw: kw.__setitem__("dilation", [1, -2]), "dilation's W value must be at least 1, got -2"),
    (lambda xs, kw: kw.__setitem__("padding", [-1, 1]), "padding's H value must be at least 0, got -1"),
])
def test_bad_shapes_and_geometry_raise_naming_the_argument(change, message):
    xs, kw = _base()
    change(xs, kw)
    with pytest.raises(RuntimeError) as e:
        deform_conv2d_op(*xs, **kw)
    assert str(e.value).split("\n")[0] == f"twinops.library.deform_conv2d.deform_conv2d_op: {message}"


def test_kernel_that_does_not_fit():
    x = torch.randn(1, 1, 2, 8)
    with pytest.raises(RuntimeError, match=r"the kernel does not fit: input's H \(2\) plus padding \(0\) is below "
                                           r"dilation \* \(kernel - 1\) \+ 1 \(3\)"):
        twinops.deform_conv2d(x, torch.zeros(1, 18, 1, 6), torch.randn(1, 1, 3, 3))


@pytest.mark.parametrize("kw,error,message", [
    (dict(stride=(1, 2, 3)), ValueError, "stride must be an int or an (H, W) pair, got 3 values (1, 2, 3)"),
    (dict(padding=1.5), TypeError, "padding must be an int or an (H, W) pair of ints, got float"),
    (dict(dilation=(1, "2")), TypeError, "dilation must hold ints, got str in (1, '2')"),
])
def test_bad_pairs_raise(kw, error, message):
    xs, _ = _base()
    with pytest.raises(error) as e:
        twinops.deform_conv2d(xs[0], xs[1], xs[2], xs[3], mask=xs[4], **kw)
    assert str(e.value) == f"twinops.deform_conv2d: {message}"


def test_dtype_and_device_mismatch():
    xs, kw = _base()
    with pytest.raises(TypeError, match=r"^twinops\.deform_conv2d: weight must have input's dtype \(float32\), got torch.float64$"):
        twinops.deform_conv2d(xs[0], xs[1], xs[2].double(), xs[3], mask=xs[4], padding=1)


# ---------------------------------------------------------------------------------------
# determinism and CUDA
# ---------------------------------------------------------------------------------------

def test_backward_is_bitwise_deterministic(device):
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(2, 8, 9, 11, 6, (3, 3), offset_groups=2, padding=(1, 1))
    xs = make(shapes, kwargs, dtype=torch.float32, device=device, spread=1.0)
    runs = []
    for _ in range(3):
        leaves = [t.clone().requires_grad_() for t in xs]
        deform_conv2d_op(*leaves, **kwargs).square().sum().backward()
        runs.append([t.grad for t in leaves])
    for r in runs[1:]:
        for a, b in zip(runs[0], r):
            assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@settings(deadline=None, max_examples=20)
@given(case=geometry(max_kernel=3, max_side=9))
def test_cuda_matches_cpu(dtype, case):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    shapes, kwargs = case
    # the CPU computes on the same values (rounded to dtype), so only the kernels' own roundings differ
    xs = [t.to(dtype).float() if t is not None else None for t in make(shapes, kwargs, dtype=torch.float32)]
    cpu = [t.clone().requires_grad_() if t is not None else None for t in xs]
    gpu = [t.to("cuda", dtype).requires_grad_() if t is not None else None for t in xs]
    y_cpu, y_gpu = deform_conv2d_op(*cpu, **kwargs), deform_conv2d_op(*gpu, **kwargs)
    _close(y_gpu, y_cpu, dtype, "forward")
    gy = torch.randn(y_cpu.shape, generator=torch.Generator().manual_seed(3))
    y_cpu.backward(gy)
    y_gpu.backward(gy.to("cuda", dtype))
    scale = 4.0 if dtype != torch.float32 else 1.0  # the gradients sum more terms than the forward
    for name, a, b in zip(("input", "offset", "weight", "bias", "mask"), gpu, cpu):
        if a is not None:
            atol, rtol = TOLERANCES[dtype]
            torch.testing.assert_close(a.grad.cpu().float(), b.grad, atol=atol * scale * 10, rtol=rtol * scale,
                                       msg=lambda m: f"grad {name} {shapes} {kwargs}\n{m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_cuda_images_in_several_column_chunks_equal_each_image_alone(dtype):
    """The CUDA forward samples the columns of as many images as fit 256 MiB at a time (37.7 MB each
    here: two chunks for 9 images), the backward the columns and their gradient likewise: every
    image's output, grad_input and grad_offset equal those of the image run alone, bit for bit, and
    grad_weight is the sum of the images' own (within float32 rounding: other partial sums)."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(9, 64, 128, 128, 8, (3, 3), padding=(1, 1))
    xs = [t.to("cuda", dtype) if t is not None else None
          for t in make(shapes, kwargs, dtype=torch.float32, spread=1.5)]
    x, offset, weight, bias, mask = xs
    leaves = [x.clone().requires_grad_(), offset.clone().requires_grad_(), weight.clone().requires_grad_()]
    y = deform_conv2d_op(leaves[0], leaves[1], leaves[2], bias, mask, **kwargs)
    gy = torch.randn(y.shape, device="cuda", generator=torch.Generator("cuda").manual_seed(1)).to(dtype)
    gx, goff, gw = torch.autograd.grad(y, leaves, gy)
    gw_sum = torch.zeros(weight.shape, device="cuda", dtype=torch.float64)
    for i in range(9):  # 7 images per chunk: 6, 7 and 8 lie either side of the boundary
        one = [x[i:i + 1].clone().requires_grad_(), offset[i:i + 1].clone().requires_grad_(),
               weight.clone().requires_grad_()]
        yi = deform_conv2d_op(one[0], one[1], one[2], bias, mask[i:i + 1] if mask is not None else None, **kwargs)
        assert torch.equal(yi, y[i:i + 1]), f"image {i}: forward"
        gxi, goffi, gwi = torch.autograd.grad(yi, one, gy[i:i + 1])
        assert torch.equal(gxi, gx[i:i + 1]) and torch.equal(goffi, goff[i:i + 1]), f"image {i}: gradients"
        gw_sum += gwi.double()
    # each image's grad_weight is rounded to dtype before the sum: errors scale with the largest
    # value, while a wrong chunk or slice index would be off by whole images' contributions
    rtol = TOLERANCES[dtype][1]
    torch.testing.assert_close(gw.double(), gw_sum, atol=rtol * gw_sum.abs().max().item(), rtol=rtol)


def test_runs_under_deterministic_algorithms(device):
    xs, kw = _base()
    leaves = [t.to(device).requires_grad_() for t in xs]
    torch.use_deterministic_algorithms(True)
    try:
        deform_conv2d_op(*leaves, **kw).sum().backward()
    finally:
        torch.use_deterministic_algorithms(False)
    assert all(t.grad is not None and t.grad.isfinite().all() for t in leaves)


def test_second_derivative_raises():
    xs, kw = _base()
    leaves = [t.double().requires_grad_() for t in xs]
    y = deform_conv2d_op(*leaves, **kw).square().sum()
    (g,) = torch.autograd.grad(y, leaves[0], create_graph=True)
    with pytest.raises(RuntimeError, match="twinops.deform_conv2d: second derivatives are not supported"):
        g.sum().backward()


def _same_bits(monkeypatch, gemm, inputs, kwargs, gy):
    """The CUDA forward and every gradient (grad_output gy) with TWINOPS_DEFORM_CONV2D_GEMM=gemm and
    with it unset (the default GEMMs) equal bit for bit (NaN where NaN); the default's output."""
    out = []
    for value in (gemm, None):
        if value is None:
            monkeypatch.delenv("TWINOPS_DEFORM_CONV2D_GEMM", raising=False)
        else:
            monkeypatch.setenv("TWINOPS_DEFORM_CONV2D_GEMM", value)
        leaves = [t.cuda().requires_grad_() if t is not None else None for t in inputs]
        y = deform_conv2d_op(*leaves, **kwargs)
        y.backward(gy)
        out.append([y.detach()] + [t.grad for t in leaves if t is not None])
    for a, b in zip(*out):
        assert torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0))
    return out[1][0]


@pytest.mark.parametrize("c_out,groups,c_group", [(48, 1, 5), (200, 1, 8), (192, 2, 5)])
def test_cuda_float32_gemms_give_the_same_bits(monkeypatch, c_out, groups, c_group):
    """The float32 GEMMs (forward, columns' gradient, grad_weight) in register tiles (the default)
    and gemm_simt's (TWINOPS_DEFORM_CONV2D_GEMM=simple) sum each output in the same order: the same
    output and gradients, bit for bit. Tiles of 64 rows (48 outputs a group; the columns' gradient's
    45 rows) and of 128 (200 outputs, and 96 a group: two groups; 72 rows of columns); reductions
    of c_group * 3 * 3 = 45 and 72 (neither a multiple of the reduction step, 16);
    2 * 9 * 11 = 198 columns (not a multiple of 64); then with an infinite and a NaN input."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(2, c_group * groups, 9, 11, c_out, (3, 3), groups=groups, padding=(1, 1))
    xs = make(shapes, kwargs, dtype=torch.float32, spread=1.5)
    gy = torch.randn(2, c_out, 9, 11, generator=torch.Generator().manual_seed(2)).cuda()

    def both(inputs):
        return _same_bits(monkeypatch, "simple", inputs, kwargs, gy)

    y = both(xs)
    want = deform_conv2d_composite(*[t.double() if t is not None else None for t in xs], **kwargs)
    _close(y, want, torch.float32, "tiled GEMM")
    xs[0][0, 0, 4, 5], xs[0][1, 2, 0, 0] = INF, NAN
    y = both(xs)
    assert y.isnan().any() and y.isfinite().any()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("c_out,groups,c_group,hw", [(48, 1, 8, (8, 12)), (200, 1, 8, (8, 12)),
                                                      (192, 2, 16, (8, 12)), (64, 1, 5, (8, 8)),
                                                      (48, 1, 8, (9, 12)), (200, 1, 8, (80, 80))])
def test_cuda_mma_gemms_give_the_tensor_core_bits(monkeypatch, dtype, c_out, groups, c_group, hw):
    """The half types' GEMMs on mma.sync (the default: the forward, the columns' gradient and
    grad_weight, the sampled columns stored as hi and lo planes) sum each output as the wmma
    tensor-core path (TWINOPS_DEFORM_CONV2D_GEMM=tiled) does (k16 steps ascending from the same
    first index, hi before lo, the same m16n8k16 products): the same output and gradients, bit for
    bit, then with an infinite and a NaN input. Reductions of 72 and 144 (16-byte rows; 72 not a
    multiple of the step, 32), 2 * 96 = 192 columns (not a multiple of the tile, 128), 48 outputs
    (a 64-row tile, part empty), 200 (64-row tiles: 128-row ones would leave multiprocessors
    idle), 200 over 2 * 80 * 80 columns (128-row tiles; grad_weight in two slices) and two groups
    of 96. A reduction of 45 is not a multiple of 8, so that case keeps the wmma path
    throughout; 9 * 12 = 108 positions are not either, so that case's backward keeps it (a chunk
    of grad_output would span two images) while its forward (216 columns) takes mma."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    if torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("the mma path needs sm_80 or later (it falls back before)")
    from twinops.library.deform_conv2d.declaration import _shapes

    shapes, kwargs = _shapes(2, c_group * groups, *hw, c_out, (3, 3), groups=groups, padding=(1, 1))
    xs = make(shapes, kwargs, dtype=dtype, spread=1.5)
    gy = torch.randn(2, c_out, *hw, generator=torch.Generator().manual_seed(2)).to("cuda", dtype)

    def both(inputs):
        return _same_bits(monkeypatch, "tiled", inputs, kwargs, gy)

    y = both(xs)
    want = deform_conv2d_composite(*[t.double() if t is not None else None for t in xs], **kwargs)
    _close(y, want, dtype, "mma GEMM")
    xs[0][0, 0, 4, 5], xs[0][1, 2, 0, 0] = INF, NAN
    y = both(xs)
    assert y.isnan().any() and y.isfinite().any()
