"""Bad input to resize at the edges gets a clear error naming the function called and the
argument; nothing is silently accepted. CPU tests run anywhere; the plugin tests need the
plugin library (see tests/resize/test_resize_plugins.py for the tiers)."""

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import helper

import twinops

X = torch.rand(1, 2, 4, 5, generator=torch.Generator().manual_seed(0))
OP_ATTRS = dict(mode="linear", coord="half_pixel", nearest="floor", cubic_a=-0.75, exclude=0, antialias=0,
                scales=[0.0, 0.0], roi=[0.0, 0.0, 1.0, 1.0], extrapolation=0.0, pytorch=1)


def _attrs(**kw):
    a = {**OP_ATTRS, **kw}
    return (a["mode"], a["coord"], a["nearest"], a["cubic_a"], a["exclude"], a["antialias"], a["scales"], a["roi"],
            a["extrapolation"], a["pytorch"])


def _message(fn, *args, **kw):
    with pytest.raises(Exception) as e:
        fn(*args, **kw)
    return type(e.value), str(e.value)


# ---------------------------------------------------------------------------------------
# tf_crop_and_resize without roi: the whole image
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_tf_crop_and_resize_without_roi_takes_the_whole_image(mode):
    kw = dict(sizes=[1, 2, 7, 3], mode=mode, coordinate_transformation_mode="tf_crop_and_resize",
              extrapolation_value=-9.0)
    got = twinops.resize(X, **kw)
    full = twinops.resize(X, roi=[0, 0, 0, 0, 1, 1, 1, 1], **kw)
    assert got.shape == (1, 2, 7, 3)
    torch.testing.assert_close(got, full, rtol=0, atol=0)
    assert (got != -9.0).all()  # a whole-image crop never extrapolates


def test_tf_crop_and_resize_without_roi_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"], mode="linear",
                            coordinate_transformation_mode="tf_crop_and_resize")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, X.shape)],
                              [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
                              [helper.make_tensor("sizes", onnx.TensorProto.INT64, [4], [1, 2, 7, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = sess.run(None, {"X": X.numpy()})
    got = twinops.resize(X, sizes=[1, 2, 7, 3], mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------
# size: 0-d integer tensors accepted, lengths beyond the kernels' range named
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [(torch.tensor(6), torch.tensor(7)), torch.tensor(6),
                                  (torch.tensor(3, dtype=torch.int32), 9)])
def test_size_accepts_0d_integer_tensors_as_f_interpolate(size):
    want = F.interpolate(X, size=size, mode="bilinear")
    got = twinops.interpolate(X, size=size, mode="bilinear")
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(twinops.Interpolate(size=size, mode="bilinear")(X), want)


@pytest.mark.parametrize("bad,desc", [(torch.tensor(6.0), "a 0-D torch.float32 tensor"),
                                      (torch.tensor([6]), "a 1-D torch.int64 tensor"),
                                      (torch.tensor(True), "a 0-D torch.bool tensor")])
def test_size_rejects_other_tensors(bad, desc):
    assert _message(twinops.interpolate, X, size=(bad, 4)) == (
        TypeError, f"twinops.interpolate: size must contain ints or 0-d integer tensors, got {desc}")


def test_resize_sizes_tensor_elements():
    got = twinops.resize(X, sizes=[1, 2, torch.tensor(6), torch.tensor(7)])
    torch.testing.assert_close(got, twinops.resize(X, sizes=[1, 2, 6, 7]), rtol=0, atol=0)
    # 6.5 would have been truncated to 6 silently
    assert _message(twinops.resize, X, sizes=[1, 2, torch.tensor(6.5), 7]) == (
        TypeError, "twinops.resize: sizes must contain ints or 0-d integer tensors, got a 0-D torch.float32 tensor")


@pytest.mark.parametrize("h", [2**31, 2**40, 2**63, 2**70])
def test_size_beyond_the_kernels_range_names_size(h):
    assert _message(twinops.interpolate, X, size=(h, 3)) == (
        ValueError, f"twinops.interpolate: size must give output H and W of at most 2^31 - 1, got ({h}, 3)")
    assert _message(twinops.Interpolate(size=(3, h)), X) == (
        ValueError, f"twinops.Interpolate: size must give output H and W of at most 2^31 - 1, got (3, {h})")
    assert _message(twinops.resize, X, sizes=[1, 2, h, 3]) == (
        ValueError, f"twinops.resize: sizes must give output H and W of at most 2^31 - 1, got input (1, 2, 4, 5) "
                    f"resized to ({h}, 3)")
    assert _message(twinops.Resize(sizes=[h, 3], axes=[2, 3]), X) == (
        ValueError, f"twinops.Resize: sizes must give output H and W of at most 2^31 - 1, got input (1, 2, 4, 5) "
                    f"resized to ({h}, 3)")


def test_scale_factor_beyond_the_kernels_range():
    assert _message(twinops.interpolate, X, scale_factor=1e9) == (
        ValueError, "twinops.interpolate: scale_factor must give output H and W of at most 2^31 - 1, got input size "
                    "(4, 5) times 1000000000.0 = (4000000000, 5000000000)")
    assert _message(twinops.resize, X, scales=[1, 1, 1e9, 1]) == (
        ValueError, "twinops.resize: scales must give output H and W of at most 2^31 - 1, got input (1, 2, 4, 5) "
                    "resized to (4000000000, 5)")


def test_dynamic_resize_size_tensor_beyond_the_kernels_range():
    big = torch.empty(1, 1, 1, 1).expand(1, 1, 2**31, 3)  # stride 0: no memory
    assert _message(twinops.dynamic_resize, X, big) == (
        ValueError, "twinops.dynamic_resize: size_tensor must give output H and W of at most 2^31 - 1, got last two "
                    "dims (2147483648, 3)")
    assert _message(twinops.DynamicResize(), X, big)[1].startswith("twinops.DynamicResize: size_tensor must give")


def test_empty_input_hw_is_an_error_naming_the_function():
    e = torch.rand(1, 1, 0, 4)
    assert _message(twinops.interpolate, e, size=3) == (
        ValueError, "twinops.interpolate: input H and W must be in [1, 2^31 - 1], got shape (1, 1, 0, 4)")
    assert _message(twinops.resize, e, sizes=[1, 1, 3, 3])[1].startswith("twinops.resize: input H and W must be")
    assert _message(twinops.Resize(sizes=[1, 1, 3, 3]), e)[1].startswith("twinops.Resize: input H and W must be")
    assert _message(twinops.dynamic_resize, e, torch.empty(3, 3))[1].startswith(
        "twinops.dynamic_resize: input H and W must be")
    # the op itself names itself
    assert _message(torch.ops.twinops.dynamic_resize, e, torch.empty(3, 3), 0) == (
        RuntimeError, "torch.ops.twinops.dynamic_resize: input spatial size must be positive, got (0, 4)")


def test_kernel_messages_reaching_the_python_api_name_the_function():
    # Only the C++ check knows this rule (the ONNX antialias window); the message that reaches
    # twinops.resize / twinops.Resize names them, not the op.
    x = torch.zeros(1, 1, 1, 2**24)
    msg = "antialias with exclude_outside=0 needs scales >= 2^-22 (the filter window would exceed 2^24 taps)"
    kw = dict(scales=[1, 1, 1, 2.0**-24], mode="linear", antialias=1)
    assert _message(twinops.resize, x, **kw) == (RuntimeError, f"twinops.resize: {msg}")
    assert _message(twinops.Resize(**kw), x) == (RuntimeError, f"twinops.Resize: {msg}")
    assert _message(torch.ops.twinops.resize, x, [1, 1], *_attrs(antialias=1, pytorch=0, scales=[1.0, 2.0**-24])) == (
        RuntimeError, f"torch.ops.twinops.resize: {msg}")


# ---------------------------------------------------------------------------------------
# the raw op: negative scales with pytorch=1; fake (meta) kernels check as the real ones
# ---------------------------------------------------------------------------------------

NEG = "scales must be >= 0 with pytorch=1 (0: not given, the kernel uses input/output)"


@pytest.mark.parametrize("scales", [[-2.0, 2.0], [2.0, -0.5], [-1e-30, 0.0]])
def test_pytorch_arithmetic_rejects_negative_scales(scales):
    assert _message(torch.ops.twinops.resize, X, [8, 10], *_attrs(scales=scales)) == (
        RuntimeError, f"torch.ops.twinops.resize: {NEG}")
    assert _message(torch.ops.twinops.resize_backward, X, [1, 2, 2, 3], *_attrs(scales=scales)) == (
        RuntimeError, f"torch.ops.twinops.resize_backward: {NEG}")
    # 0 still means "not given"
    torch.testing.assert_close(torch.ops.twinops.resize(X, [8, 10], *_attrs(scales=[0.0, 0.0])),
                               F.interpolate(X, size=(8, 10), mode="bilinear"))


BAD_OP_ARGS = [  # (output size, attribute overrides, message after the op name)
    ([8, 10], dict(mode="bogus"), "mode must be one of nearest, linear, cubic, area, got 'bogus'"),
    ([8, 10], dict(coord="sideways", pytorch=0), "coordinate_transformation_mode must be one of half_pixel, "
     "pytorch_half_pixel, align_corners, asymmetric, half_pixel_symmetric, tf_crop_and_resize, got 'sideways'"),
    ([8, 10], dict(nearest="up"),
     "nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil, got 'up'"),
    ([8, 10], dict(antialias=2), "antialias must be 0 or 1, got 2"),
    ([8, 10], dict(antialias=2**32 + 1), "antialias must be 0 or 1, got 4294967297"),
    ([8, 10], dict(exclude=-1), "exclude_outside must be 0 or 1, got -1"),
    ([8, 10], dict(pytorch=3), "pytorch must be 0 or 1, got 3"),
    ([8, 10], dict(scales=[-2.0, 2.0]), NEG),
    ([8, 10], dict(scales=[-2.0, 2.0], pytorch=0), "scales must be positive"),
    ([8, 10], dict(scales=[float("nan"), 2.0]), "scales / roi for the height axis must be finite"),
    ([8, 10], dict(cubic_a=float("inf")), "cubic_coeff_a must be finite"),
    ([8, 10], dict(coord="tf_crop_and_resize"), "pytorch arithmetic supports only half_pixel, align_corners and "
     "asymmetric coordinates"),
    ([8, 10], dict(mode="nearest", antialias=1), "antialias is only defined for linear and cubic modes"),
    ([8, 10], dict(scales=[1.0]), "scales must have 2 entries (H, W), got 1"),
    ([8, 10], dict(roi=[0.0, 1.0]), "roi must have 4 entries (h_start, w_start, h_end, w_end), got 2"),
    ([0, 10], dict(), "output_size must be positive, got (0, 10)"),
    ([2**31, 10], dict(), "output height must be in [1, 2^31 - 1]"),
    ([8, 2**31], dict(), "output width must be in [1, 2^31 - 1]"),
]


@pytest.mark.parametrize("size,over,msg", BAD_OP_ARGS)
def test_fake_kernel_rejects_what_the_cpu_kernel_rejects(size, over, msg):
    want = (RuntimeError, f"torch.ops.twinops.resize: {msg}")
    assert _message(torch.ops.twinops.resize, X, size, *_attrs(**over)) == want
    assert _message(torch.ops.twinops.resize, X.to("meta"), size, *_attrs(**over)) == want
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        fx = mode.from_tensor(X)
        assert _message(torch.ops.twinops.resize, fx, size, *_attrs(**over)) == want
    # backward: the same attributes, the output size as grad_output's H and W
    g = torch.zeros(1, 2, *[max(1, min(s, 3)) for s in size]) if max(size) < 2**31 else None
    if g is not None and min(size) > 0:
        wantb = (RuntimeError, f"torch.ops.twinops.resize_backward: {msg}")
        assert _message(torch.ops.twinops.resize_backward, g, [1, 2, 4, 5], *_attrs(**over)) == wantb
        assert _message(torch.ops.twinops.resize_backward, g.to("meta"), [1, 2, 4, 5], *_attrs(**over)) == wantb


def test_fake_kernel_rejects_bad_tensors_as_the_cpu_kernel():
    for t, msg in [(torch.zeros(2, 4, 5), "input must be a 4-D (N, C, H, W) tensor, got 3-D"),
                   (torch.zeros(1, 1, 4, 5, dtype=torch.int32), "input must be float32, float64, float16 or "
                                                                 "bfloat16, got Int"),
                   (torch.zeros(1, 1, 0, 5), "input spatial size must be positive, got (0, 5)")]:
        want = (RuntimeError, f"torch.ops.twinops.resize: {msg}")
        assert _message(torch.ops.twinops.resize, t, [3, 3], *_attrs()) == want
        assert _message(torch.ops.twinops.resize, t.to("meta"), [3, 3], *_attrs()) == want
    g = torch.zeros(1, 3, 3, 3)
    want = (RuntimeError, "torch.ops.twinops.resize_backward: grad_output (1, 3, 3, 3) does not match input_size "
                          "(1, 2, 4, 5) in N and C")
    assert _message(torch.ops.twinops.resize_backward, g, [1, 2, 4, 5], *_attrs()) == want
    assert _message(torch.ops.twinops.resize_backward, g.to("meta"), [1, 2, 4, 5], *_attrs()) == want


def test_fake_kernel_still_traces_symbolic_shapes():
    f = torch.compile(lambda x: twinops.interpolate(x, scale_factor=2.0, mode="bicubic"), fullgraph=True,
                      dynamic=True)
    for shape in ((1, 2, 4, 5), (2, 1, 7, 3)):
        x = torch.rand(shape)
        torch.testing.assert_close(f(x), F.interpolate(x, scale_factor=2.0, mode="bicubic"))


# ---------------------------------------------------------------------------------------
# plugins at build time (plugin host, CPU only; skips without the plugin library)
# ---------------------------------------------------------------------------------------

def _plugin_host():
    from twinops import plugin_host as ph

    reason = ph.unavailable_reason(enqueue=False)
    if reason is not None:
        pytest.skip(f"plugin host: {reason}")
    return ph, ph.get_host()


def _twinops_node(ph, **attrs):
    a = dict(mode="linear", coordinate_transformation_mode="half_pixel", nearest_mode="floor", cubic_coeff_a=-0.75,
             exclude_outside=0, antialias=0, scales=[0.0, 0.0], roi=[0.0, 0.0, 1.0, 1.0], extrapolation_value=0.0,
             pytorch=0, tensorrt_plugin_shape_input_indices=[1])
    a.update(attrs)
    return ph.attributes_node("TwinopsResize", a)


def _build(ph, host, node, inputs, shape_inputs=(), interface=None):
    creator = host.select(node, interface=interface)
    built = host.create(creator, ph.node_fields(node, creator))
    assert built is not None, host.take_log()
    return built.build(inputs, shape_inputs)


@pytest.mark.parametrize("profile", ["symbolic", "constant"])
def test_plugin_refuses_absurd_shape_input_values_at_build_time(profile):
    ph, host = _plugin_host()
    if host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3 shape inputs")
    h = 2**40
    x = ph.TensorSpec(torch.float32, (1, 2, 6, 8), min=(1, 1, 1, 1), max=(2, 4, 12, 16))
    if profile == "symbolic":
        # valid values at opt, absurd ones at the profile's max: configurePlugin refuses the profile
        sizes = ph.TensorSpec(torch.int64, (7, 5), min=(1, 1), max=(h, 10))
        want = f"the output H length reaches {h} in the profile; the supported lengths are [1, 2^31 - 1]"
    else:
        sizes = ph.TensorSpec(torch.int64, (h, 5))
        want = f"the shape input sizes holds H_out = {h}; the supported output lengths are [0, 2^31 - 1]"
    with pytest.raises(ph.HostError) as e:
        _build(ph, host, _twinops_node(ph), [x], [sizes], interface="v3")
    assert want in str(e.value), str(e.value)
    assert "workspace" not in str(e.value).lower()


@pytest.mark.parametrize("interface", ["v2", "v3"])
@pytest.mark.parametrize("scale", [1e-30, 3e38, 2.0**-32, 2.0**32])
def test_plugin_scales_outside_the_supported_range(interface, scale):
    ph, host = _plugin_host()
    if interface == "v3" and host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    node = ph.attributes_node("TRTBicubicInterpolate", {"scale_factor": [scale, 1.0], "align_corners": 0}, ["X"])
    x = ph.TensorSpec(torch.float32, (1, 2, 6, 8), min=(1, 1, 1, 1), max=(2, 4, 12, 16))
    with pytest.raises(ph.HostError) as e:
        _build(ph, host, node, [x], interface=interface)
    shown = f"{float(np.float32(scale)):.9g}"  # the float32 field, as the plugin prints it (%.9g)
    want = f"the H scale {shown} is outside the supported range [2^-31, 2^31] (output lengths are at most 2^31 - 1)"
    assert want in str(e.value), str(e.value)


@pytest.mark.parametrize("interface", ["v2", "v3"])
def test_plugin_negative_input_dimension_is_reported_as_such(interface):
    ph, host = _plugin_host()
    if interface == "v3" and host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    node = ph.attributes_node("TRTBicubicInterpolate", {"scale_factor": [2.0, 2.0], "align_corners": 0}, ["X"])
    x = ph.TensorSpec(torch.float32, (1, 2, -3, 8))  # min == max: a build-time constant
    with pytest.raises(ph.HostError) as e:
        _build(ph, host, node, [x], interface=interface)
    assert "the H input length -3 is negative" in str(e.value), str(e.value)
    assert "overflows" not in str(e.value)
