"""twinops.trt: real TensorRT engines (T3) and the parts that run without TensorRT.

Engine tests export random models (shapes and attributes from resize_spec), build engines with
min/opt/max profiles, run them at several shapes in the profile and compare with the torch op (same
kernel) and the reference. They skip where `tensorrt` or a GPU is missing.
"""
import sys
import types

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import twinops
from twinops import trt as ttrt
from resize_spec import (assert_close, interpolate_configs, interpolate_reference, onnx_configs, onnx_reference,
                         onnx_reference_is_unstable, random_input)

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")
# An engine build takes seconds: a fifth of the profile's examples per engine test.
ENGINE_EXAMPLES = max(3, settings().max_examples // 5)


# ---------------------------------------------------------------------------------------
# without TensorRT: error messages, profile rules
# ---------------------------------------------------------------------------------------

def test_import_twinops_does_not_import_tensorrt():
    import subprocess

    code = "import sys, twinops, twinops.trt; assert 'tensorrt' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("call", [lambda: ttrt.load_plugins("/nonexistent.so"), lambda: ttrt.build_engine(b""),
                                  lambda: ttrt.TRTRunner(b""), lambda: ttrt.export_and_build(torch.nn.Identity(), (torch.ones(1),))])
def test_missing_tensorrt_is_a_clear_import_error(monkeypatch, call):
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # import tensorrt -> ImportError, TensorRT installed or not
    with pytest.raises(ImportError, match=r"twinops.trt needs the TensorRT Python package `tensorrt` \(version 10 or 11\)"):
        call()
    assert "needs the TensorRT Python package" in ttrt.unavailable_reason()


def test_old_tensorrt_is_refused(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", types.SimpleNamespace(__version__="8.6.1"))
    with pytest.raises(ImportError, match=r"needs TensorRT >= 10 \(tensor-address API\); found tensorrt 8.6.1"):
        ttrt.build_engine(b"")


def test_plugin_library_missing_says_how_to_build(monkeypatch, tmp_path):
    monkeypatch.setattr(ttrt, "_PACKAGE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as info:
        ttrt.plugin_library()
    msg = str(info.value)
    assert str(tmp_path / "libtwinops_trt.so") in msg and "built without TensorRT headers" in msg
    assert "TENSORRT_ROOT=" in msg and "TENSORRT_INCLUDE_DIR=" in msg
    (tmp_path / "libtwinops_trt.so").write_bytes(b"")
    assert ttrt.plugin_library() == str(tmp_path / "libtwinops_trt.so")


def test_derive_profiles_rule():
    got = ttrt.derive_profiles({"x": (2, 3, 17, 8), "s": (1, 5)}, {"x": {2: (None, None), 3: (4, 64)}})
    assert got == {"x": ((2, 3, 8, 4), (2, 3, 17, 8), (2, 3, 34, 64)), "s": ((1, 5), (1, 5), (1, 5))}
    assert ttrt.derive_profiles({"x": (1, 1)}, {"x": {-1: (None, None)}}, max_scale=3) == {"x": ((1, 1), (1, 1), (1, 3))}
    with pytest.raises(ValueError, match=r"input 'x' dim 1: example length 8 is outside the bounds \[9, 20\]"):
        ttrt.derive_profiles({"x": (1, 8)}, {"x": {1: (9, 20)}})
    with pytest.raises(ValueError, match=r"input 'x' of shape \(1, 8\) has no dim 2"):
        ttrt.derive_profiles({"x": (1, 8)}, {"x": {2: (None, None)}})
    with pytest.raises(ValueError, match=r"max_scale: expected an int >= 1, got 0"):
        ttrt.derive_profiles({}, {}, max_scale=0)


def test_dim_specs_and_bounds_from_torch_export_dims():
    from torch.export import Dim

    class Two(torch.nn.Module):
        def forward(self, a, b):
            return a

    h = Dim("h", min=3, max=40)
    specs = ttrt._dim_specs(Two(), 2, {"b": {2: h}, "a": None})
    assert specs == [{}, {2: h}]
    assert ttrt._dim_specs(Two(), 2, ([None, Dim.DYNAMIC], None)) == [{1: Dim.DYNAMIC}, {}]
    assert [ttrt._bound(h.min, True), ttrt._bound(h.max, False)] == [3, 40]
    assert [ttrt._bound(Dim("w").min, True), ttrt._bound(Dim("w").max, False), ttrt._bound(Dim.AUTO, False)] == [None] * 3
    with pytest.raises(ValueError, match=r"dynamic_shapes: 1 entries for 2 example inputs"):
        ttrt._dim_specs(Two(), 2, [None])


@pytest.mark.parametrize("shapes, message", [
    ({}, r"input 'x' has dynamic shape \(1, 3, -1, -1\); give shapes\['x'\] = \(min, opt, max\)"),
    ({"y": None}, r"no network input named \['y'\]"),
    ({"x": ((1, 3, 4, 4), (1, 3, 8, 8))}, r"shapes\['x'\]: expected a \(min, opt, max\) triple"),
    ({"x": ((1, 3, 4), (1, 3, 8, 8), (1, 3, 9, 9))}, r"min shape \(1, 3, 4\) has rank 3"),
    ({"x": ((1, 2, 4, 4), (1, 3, 8, 8), (1, 3, 9, 9))}, r"min shape \(1, 2, 4, 4\) differs from the static dims"),
    ({"x": ((1, 3, 9, 4), (1, 3, 8, 8), (1, 3, 9, 9))}, r"expected 0 <= min <= opt <= max per dim"),
])
def test_profile_validation(shapes, message):
    with pytest.raises(ValueError, match=message):
        ttrt._check_profiles({"x": (1, 3, -1, -1), "s": (2,)}, shapes)


def test_profile_validation_accepts_good_profiles():
    good = {"x": [[1, 3, 4, 4], [1, 3, 8, 8], [1, 3, 9, 16]]}
    assert ttrt._check_profiles({"x": (1, 3, -1, -1), "s": (2,)}, good) == {
        "x": ((1, 3, 4, 4), (1, 3, 8, 8), (1, 3, 9, 16))}


def _fake_tensorrt(version, parse_errors):
    """The slice of the tensorrt module build_engine touches before a parse failure."""
    class ILogger:
        INTERNAL_ERROR, ERROR, WARNING, INFO, VERBOSE = range(5)

        def __init__(self):
            pass

    class ParserError:
        def __init__(self, node, desc):
            self.node, self.desc = (lambda: node), (lambda: desc)
            self.node_name, self.node_operator = (lambda: f"n{node}"), (lambda: "NoSuchOp")
            self.code, self.file, self.line, self.func = (lambda: 8), (lambda: "f.cpp"), (lambda: 7), (lambda: "fn")

    class OnnxParser:
        def __init__(self, network, logger):
            self.num_errors = len(parse_errors)

        def parse(self, data):
            return not parse_errors

        def get_error(self, i):
            return ParserError(i, parse_errors[i])

    class Builder:
        def __init__(self, logger):
            pass

        def create_network(self, flags):
            return object()

    flags = {"FP16": 0, "TF32": 1} if version.startswith("10") else {"TF32": 1}
    return types.SimpleNamespace(__version__=version, ILogger=ILogger, OnnxParser=OnnxParser, Builder=Builder,
                                 BuilderFlag=types.SimpleNamespace(**flags),
                                 NetworkDefinitionCreationFlag=types.SimpleNamespace(STRONGLY_TYPED=1))


def test_parser_errors_are_surfaced_verbatim(monkeypatch):
    import onnx

    errors = ["No importer registered for op: NoSuchOp. Attempting to import as plugin.", "Plugin not found"]
    monkeypatch.setitem(sys.modules, "tensorrt", _fake_tensorrt("10.16.0", errors))
    monkeypatch.setattr(ttrt, "_LOGGER", None)
    model = onnx.helper.make_model(onnx.helper.make_graph([], "g", [], []))
    with pytest.raises(ttrt.TRTBuildError) as info:
        ttrt.build_engine(model, plugins=False)
    msg = str(info.value)
    assert "ONNX parser rejected the model (2 errors)" in msg
    for i, e in enumerate(errors):
        assert f"[{i}] node {i} name='n{i}' operator='NoSuchOp': {e} (code 8, f.cpp:7 fn)" in msg


def test_fp16_flag_only_where_it_exists(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", _fake_tensorrt("11.1.0", []))
    monkeypatch.setattr(ttrt, "_LOGGER", None)
    with pytest.raises(ValueError, match=r"fp16=True: TensorRT 11.1.0 networks are strongly typed and have no FP16"):
        ttrt.build_engine(b"", fp16=True, plugins=False)
    with pytest.raises(ValueError, match=r"strongly_typed=False: TensorRT 11.1.0 networks are always strongly typed"):
        ttrt.build_engine(b"", strongly_typed=False, plugins=False)
    monkeypatch.setitem(sys.modules, "tensorrt", _fake_tensorrt("10.16.0", []))
    with pytest.raises(ValueError, match=r"fp16=True needs strongly_typed=False"):
        ttrt.build_engine(b"", fp16=True, strongly_typed=True, plugins=False)



def test_plugin_override_sets_the_parser_flag_where_it_exists(monkeypatch):
    monkeypatch.setattr(ttrt, "_LOGGER", None)
    fake = _fake_tensorrt("10.14.0", ["stop after parsing"])
    monkeypatch.setitem(sys.modules, "tensorrt", fake)
    with pytest.raises(ValueError, match=r"plugin_override=True: TensorRT 10.14.0's ONNX parser has no "
                                         r"OnnxParserFlag.ENABLE_PLUGIN_OVERRIDE \(added in 10.15\)"):
        ttrt.build_engine(b"", plugins=False, plugin_override=True)
    set_flags = []
    fake.OnnxParserFlag = types.SimpleNamespace(ENABLE_PLUGIN_OVERRIDE="override")
    fake.OnnxParser.set_flag = lambda self, flag: set_flags.append(flag)
    for override in (False, True):
        with pytest.raises(ttrt.TRTBuildError, match="stop after parsing"):
            ttrt.build_engine(b"", plugins=False, plugin_override=override)
        assert set_flags == (["override"] if override else [])


# ---------------------------------------------------------------------------------------
# real engines (TensorRT >= 10 and a CUDA GPU)
# ---------------------------------------------------------------------------------------

def _float32_exact(kw):
    """Scale factors rounded to float32, so the FLOATS attribute carries exactly what the torch op got."""
    kw = dict(kw)
    if "scale_factor" in kw:
        kw["scale_factor"] = tuple(float(np.float32(s)) for s in kw["scale_factor"])
    return kw


def _out_hw(shape, kw):
    if "size" in kw:
        return tuple(kw["size"])
    return tuple(int(np.floor(n * s)) for n, s in zip(shape[2:], kw["scale_factor"]))


class ConvResizeConv(torch.nn.Module):
    def __init__(self, channels, resize):
        super().__init__()
        self.pre, self.resize = torch.nn.Conv2d(channels, channels, 3, padding=1), resize
        self.post = torch.nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return self.post(self.resize(self.pre(x)))


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@settings(max_examples=ENGINE_EXAMPLES)
@given(cfg=interpolate_configs(), grow=st.tuples(st.integers(0, 5), st.integers(0, 5)))
def test_interpolate_engine_matches_torch_op_and_reference(dtype, cfg, grow):
    from torch.export import Dim

    shape, kw = cfg
    kw = _float32_exact(kw)
    assume(min(_out_hw(shape, kw)) >= 1)
    model = twinops.Interpolate(**kw)
    x = random_input(shape, dtype, "cuda")
    proto = twinops.export_onnx(model, (x,), dynamic_shapes=({2: Dim.AUTO, 3: Dim.AUTO},))
    (value,) = proto.graph.input
    dynamic = [not d.HasField("dim_value") for d in value.type.tensor_type.shape.dim]
    # min = opt = the example shape (a scale factor < 1 never yields an empty output); max grows
    # every dim the exporter kept dynamic (it specialises length-1 dims).
    big = tuple(n + (grow[i - 2] if dynamic[i] and i >= 2 else 0) for i, n in enumerate(shape))
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, {value.name: (shape, shape, big)}))
    name = value.name
    assert runner.input_names == [name] and runner.profile(name) == (shape, shape, big)
    for seed, s in enumerate([shape, runner.profile(name)[2]]):
        x = random_input(s, dtype, "cuda", seed)
        (y,) = runner(x).values()
        torch.cuda.synchronize()
        exact = kw["mode"] in ("nearest", "nearest-exact")
        if exact:
            torch.testing.assert_close(y, model(x), rtol=0, atol=0)
            torch.testing.assert_close(y, interpolate_reference(x, **kw), rtol=0, atol=0)
        else:
            assert_close(y, model(x), dtype, f"engine vs torch op {kw} {s}")
            assert_close(y, interpolate_reference(x, **kw), dtype, f"engine vs F.interpolate {kw} {s}")
        assert y.dtype == dtype and y.device == x.device


@needs_trt
@settings(max_examples=ENGINE_EXAMPLES)
@given(cfg=onnx_configs())
def test_resize_engine_matches_torch_op_and_onnx_reference(cfg):
    shape, kw = cfg
    assume(not onnx_reference_is_unstable(shape, kw))
    model = twinops.Resize(**kw)
    x = random_input(shape, torch.float32, "cuda")
    expected = onnx_reference(x.cpu(), **kw)
    assume(expected.numel() > 0)
    runner = ttrt.export_and_build(model, (x,))
    (y,) = runner(x).values()
    torch.cuda.synchronize()
    assert_close(y, model(x), torch.float32, f"engine vs torch op {kw}")
    assert_close(y, expected, torch.float32, f"engine vs onnx.reference {kw}")


@needs_trt
@pytest.mark.parametrize("kw", [dict(scale_factor=2.0, mode="bicubic", align_corners=False),
                                dict(scale_factor=0.5, mode="bilinear", antialias=True),
                                dict(size=(13, 7), mode="bicubic", antialias=True)], ids=str)
def test_conv_resize_conv_engine_over_its_profile(kw):
    """End to end with the derived profile (min = d // 2, opt = d, max = 2 d); TF32 off on both sides."""
    from torch.export import Dim

    torch.manual_seed(0)
    model = ConvResizeConv(3, twinops.Interpolate(**kw)).cuda().eval()
    x = random_input((2, 3, 16, 12), torch.float32, "cuda")
    runner = ttrt.export_and_build(model, (x,), ({2: Dim.DYNAMIC, 3: Dim.DYNAMIC},), tf32=False)
    (name,) = runner.input_names
    assert runner.profile(name) == ((2, 3, 8, 6), (2, 3, 16, 12), (2, 3, 32, 24))
    with torch.no_grad(), torch.backends.cudnn.flags(allow_tf32=False):
        for seed, s in enumerate(runner.profile(name)):
            x = random_input(s, torch.float32, "cuda", seed)
            (y,) = runner(x).values()
            torch.cuda.synchronize()
            assert_close(y, model(x), torch.float32, f"engine vs torch model {kw} {s}")
            ref = model.post(interpolate_reference(model.pre(x).double(), **kw).float())
            assert_close(y, ref, torch.float32, f"engine vs F.interpolate model {kw} {s}")


@needs_trt
def test_parser_error_from_real_tensorrt():
    from onnx import TensorProto, helper

    node = helper.make_node("NoSuchTwinopsOp", ["x"], ["y"], domain="twinops")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("twinops", 1)])
    with pytest.raises(ttrt.TRTBuildError, match=r"(?s)ONNX parser rejected the model.*NoSuchTwinopsOp"):
        ttrt.build_engine(model, plugins=False)


@needs_trt
def test_runner_input_errors():
    from torch.export import Dim

    x = random_input((1, 2, 6, 5), torch.float32, "cuda")
    runner = ttrt.export_and_build(twinops.Interpolate(scale_factor=2.0, mode="bilinear"), (x,),
                                   ({2: Dim.DYNAMIC, 3: Dim.DYNAMIC},))
    (name,) = runner.input_names
    assert runner.dtypes[name] == torch.float32
    with pytest.raises(ValueError, match=rf"inputs are \['{name}'\]; missing \['{name}'\], unexpected \[\]"):
        runner()
    with pytest.raises(ValueError, match=r"unexpected \['bogus'\]"):
        runner(x, bogus=x)
    with pytest.raises(TypeError, match=rf"input '{name}' has dtype torch.float16; the engine expects torch.float32"):
        runner(x.half())
    with pytest.raises(ValueError, match=rf"input '{name}' is on cpu; the engine expects it on cuda:"):
        runner(x.cpu())
    with pytest.raises(ValueError, match=rf"input '{name}' has shape \(1, 2, 6\); the engine expects rank 4"):
        runner(x[0])
    with pytest.raises(ValueError, match=rf"input '{name}' has shape \(1, 2, 13, 5\), outside the engine's profile"):
        runner(random_input((1, 2, 13, 5), torch.float32, "cuda"))
    # non-contiguous input: copied contiguous, same result
    xt = random_input((1, 2, 5, 6), torch.float32, "cuda").transpose(2, 3)
    (y,) = runner(xt).values()
    torch.testing.assert_close(y, twinops.interpolate(xt.contiguous(), scale_factor=2.0, mode="bilinear"))
