"""The TensorRT plugins driven by the TensorRT-free plugin host (twinops.plugin_host).

Tiers: the ONNX-parser field rules run anywhere; the lifecycle tests need TensorRT headers, a
compiler and the plugin library (CPU only); the parity tests need a CUDA GPU. Each skips with the
reason from twinops.plugin_host. What every op's creators share (lifecycle of a sample, field
fuzzing, corrupted serialized forms, enqueue parity) is in tests/test_conformance.py, the host's
own rules in tests/test_plugin_host.py; this file holds resize's own cases.
"""
import math
from fractions import Fraction
import warnings

import numpy as np
import onnx
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import twinops
from twinops import plugin_host as ph
from twinops.library.resize import plugin_host as rph
from plugin_checks import copies_library_host
from plugin_checks import copies_library_host
from plugin_checks import formats as _formats
from plugin_checks import rejected as _rejected
from plugin_checks import replace_field as _replace
from resize_spec import (assert_close, interpolate_configs, interpolate_reference, onnx_configs,
                         onnx_reference, onnx_reference_is_unstable, random_input)

HOST_REASON = ph._host_reason()
CPU_REASON = ph.unavailable_reason(enqueue=False)
GPU_REASON = ph.unavailable_reason(enqueue=True) or (
    None if twinops.has_cuda_kernels() else "twinops was built without CUDA kernels (the torch op to compare with)")
needs_host = pytest.mark.skipif(HOST_REASON is not None, reason=f"plugin host: {HOST_REASON}")
needs_lib = pytest.mark.skipif(CPU_REASON is not None, reason=f"plugin host: {CPU_REASON}")
needs_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=f"plugin host enqueue: {GPU_REASON}")
FLOAT_TYPES = [torch.float32, torch.float16, torch.bfloat16]


# ---------------------------------------------------------------------------------------
# exported nodes
# ---------------------------------------------------------------------------------------

class _Call(torch.nn.Module):
    def __init__(self, fn, kw):
        super().__init__()
        self.fn, self.kw = fn, kw

    def forward(self, x):
        return self.fn(x, **self.kw)


def exported(x, fn, kw, dynamo=False):
    """(TwinopsResize node, its sizes values) from a real torch.onnx.export of fn(x, **kw)."""
    return exported_narrowed(x, fn, kw, dynamo)[:2]


def exported_narrowed(x, fn, kw, dynamo=False):
    """exported(), and whether the exporter warned that the float32 'scales' attribute narrows a scale."""
    from onnx import numpy_helper

    with warnings.catch_warnings(record=True) as caught:  # tracer / deprecation chatter of the exporters
        warnings.simplefilter("always")
        model = twinops.export_onnx(_Call(fn, kw), (x,), dynamo=dynamo)
    narrowed = any("not representable in float32" in str(w.message) for w in caught)
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    (node,) = [n for n in model.graph.node if n.op_type == "TwinopsResize"]
    return node, [int(v) for v in consts[node.input[1]]], narrowed


@pytest.fixture(scope="module")
def simple_node():
    return exported(torch.zeros(1, 2, 6, 8), twinops.resize,
                    dict(sizes=[1, 2, 7, 5], mode="cubic", coordinate_transformation_mode="half_pixel_symmetric"))


# ---------------------------------------------------------------------------------------
# anywhere: field rules, discovery
# ---------------------------------------------------------------------------------------

def _creator(fields):
    return ph.CreatorInfo(0, "TwinopsResize", "1", "", "v3", [(f, 0, 0) for f in fields], ["getCreators"])


def test_node_fields_follow_the_onnx_parser(simple_node):
    from onnx import helper

    node, _ = simple_node
    node.attribute.append(helper.make_attribute("big", 2**32 + 5))  # INT narrowed like a C cast
    node.attribute.append(helper.make_attribute("neg_ints", [-1, 2**31]))
    creator = _creator(["scales", "mode", "antialias", "cubic_coeff_a", "missing", "big", "neg_ints", "roi"])
    fields = {f.name: f for f in ph.node_fields(node, creator)}
    # declared order, absent attributes skipped, undeclared ones (pytorch, nearest_mode...) dropped
    assert [f.name for f in ph.node_fields(node, creator)] == ["scales", "mode", "antialias", "cubic_coeff_a",
                                                                "big", "neg_ints", "roi"]
    assert fields["mode"].type == ph.FIELD_TYPES["CHAR"] and fields["mode"].data == b"cubic\0"
    assert fields["mode"].length == 6  # the NUL counts
    assert fields["antialias"].type == ph.FIELD_TYPES["INT32"] and fields["antialias"].length == 1
    assert np.frombuffer(fields["big"].data, np.int32).tolist() == [5]
    assert np.frombuffer(fields["neg_ints"].data, np.int32).tolist() == [-1, -2**31]
    assert fields["cubic_coeff_a"].type == ph.FIELD_TYPES["FLOAT32"]
    assert np.frombuffer(fields["cubic_coeff_a"].data, np.float32).tolist() == [-0.75]
    assert fields["roi"].length == 4 and np.frombuffer(fields["roi"].data, np.float32).tolist() == [0, 0, 1, 1]


def test_selection_attributes(simple_node):
    from onnx import helper

    class FakeHost(ph.PluginHost):
        def __init__(self):
            self.creators = [ph.CreatorInfo(0, "TwinopsResize", "1", "", "v3", [], []),
                             ph.CreatorInfo(1, "TwinopsResize", "legacy", "", "v2", [], [])]

    host, node = FakeHost(), simple_node[0]
    assert host.select(node).index == 0  # no plugin_version: "1"
    assert host.select(node, interface="v2").version == "legacy"
    legacy = helper.make_node("TwinopsResize", ["X"], ["Y"], plugin_version="legacy")
    assert host.select(legacy).interface == "v2"
    elsewhere = helper.make_node("TwinopsResize", ["X"], ["Y"], plugin_namespace="ns")
    with pytest.raises(ph.HostError, match="namespace 'ns'"):
        host.select(elsewhere, parser=(10, 9))  # no domain retry before 10.10
    assert host.select(elsewhere).index == 0  # newer parsers retry with the node's domain, "" here


def test_unavailable_without_headers(monkeypatch, tmp_path):
    monkeypatch.setenv("TWINOPS_TRT_HEADERS", str(tmp_path))
    assert "no TensorRT headers" in ph.unavailable_reason(enqueue=False)
    assert "no TensorRT headers" in ph.unavailable_reason()
    with pytest.raises(ph.HostError, match="no TensorRT headers"):
        rph.run_resize(torch.zeros(1, 1, 2, 2), {}, (3, 3))


def test_run_resize_rejects_bad_input():
    with pytest.raises(ValueError, match="x must be a 4-D float32/float16/bfloat16 tensor"):
        rph.prepare_resize(torch.zeros(2, 2), {}, (3, 3))
    with pytest.raises(ValueError, match="sizes must be two positive ints"):
        rph.prepare_resize(torch.zeros(1, 1, 2, 2), {}, (3, 0))


def test_run_plugin_rejects_bad_arguments():
    """Checked before any library is loaded, so these run anywhere."""
    x = torch.zeros(1, 1, 2, 2)
    with pytest.raises(ValueError, match="node must be an onnx.NodeProto or \\(op_type, attrs dict\\)"):
        ph.prepare_plugin("TwinopsResize", [x])
    with pytest.raises(ValueError, match="inputs must be a sequence of tensors"):
        ph.prepare_plugin(("TwinopsResize", {}), x)
    with pytest.raises(ValueError, match="TensorRT has no tensor type for torch.float64 of 4 dims"):
        ph.prepare_plugin(("TwinopsResize", {}), [x.double()])
    with pytest.raises(ValueError, match="no tensor type for torch.float32 of 9 dims .inputs: at most 8 dims"):
        ph.prepare_plugin(("TwinopsResize", {}), [torch.zeros([1] * 9)])
    listed = ph.attributes_node("TwinopsResize", {"tensorrt_plugin_shape_input_indices": [1]}, ["X", "sizes"])
    with pytest.raises(ValueError, match=r"2 shape inputs for the node's tensorrt_plugin_shape_input_indices \[1\]"):
        ph.prepare_plugin(listed, [x], [[3, 3], [4, 4]])
    with pytest.raises(ValueError, match="shape input index 5 is not a distinct input index of a node with 2 inputs"):
        ph.prepare_plugin(listed, [x], {5: [3, 3]})
    with pytest.raises(ValueError, match=r"shape input 1 must hold 1 to 8 ints, got \[\]"):
        ph.prepare_plugin(listed, [x], {1: []})
    if ph.unavailable_reason() is not None:
        with pytest.raises(ph.HostError, match="run_plugin: "):
            ph.run_plugin(listed, [x], {1: [3, 3]})
    else:
        with pytest.raises(ValueError, match="inputs must be a sequence of CUDA tensors"):
            ph.run_plugin(listed, [x], {1: [3, 3]})


def test_shape_input_placement():
    """A sequence follows the node's listed indices (negative ones from the end), else the last inputs."""
    assert ph._shape_values([[3, 4]], [1], 2) == {1: [3, 4]}
    assert ph._shape_values([[3, 4]], [-1], 2) == {1: [3, 4]}
    assert ph._shape_values([[5], [6]], [], 3) == {1: [5], 2: [6]}
    assert ph._shape_values({-1: torch.tensor([7, 8])}, [], 2) == {1: [7, 8]}
    assert ph._shape_values(None, [1], 2) == {}


# ---------------------------------------------------------------------------------------
# headers + plugin library, CPU only: lifecycle, bad fields, deserialization fuzz
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def host():
    return ph.get_host()


def _expected_shape(shape, fn, kw):
    return tuple(fn(torch.zeros(shape), **kw).shape)


def _float_types(host):
    return FLOAT_TYPES if host.trt_major >= 10 else FLOAT_TYPES[:2]  # no bfloat16 in TensorRT 8.6


def _check_lifecycle(host, shape, dtype, fn, kw, dynamo=False):
    node, sizes = exported(torch.zeros(shape), fn, kw, dynamo=dynamo)
    want = _expected_shape(shape, fn, kw)
    x = torch.zeros(shape, dtype=dtype)
    if dtype not in _float_types(host):
        return
    if host.select(node).interface == "v2":  # TensorRT 8.6: V2 only
        return _check_v2(host, node, sizes, x, shape, want)
    rt, built, _ = rph.prepare_resize(x, node, sizes, host=host)
    out = rt.result.outputs[0]
    assert out["dims"] == want and out["opt"] == want and out["type"] == ph.DATA_TYPES[dtype]
    assert out["min"] == (1, 1, 1, 1) and out["max"] == (2 * shape[0], 2 * shape[1], 2 * sizes[0], 2 * sizes[1])
    floats = {(ph.DATA_TYPES[t], ph.LINEAR) for t in _float_types(host)}
    assert _formats(rt.result, 0) == floats  # linear f32/f16/bf16 in, nothing else
    assert _formats(rt.result, 1) == {(ph.DATA_TYPES[dtype], ph.LINEAR)}  # out follows in
    names = [f.name for f in built.serialize()]
    assert names == [f[0] for f in rt.creator.fields]  # getFieldsToSerialize: the same named fields
    _check_v2(host, node, sizes, x, shape, want)


def _check_v2(host, node, sizes, x, shape, want):
    """The V2 plugin cannot read sizes' values: it needs scales > 0 on both axes."""
    scales = [a for a in node.attribute if a.name == "scales"][0].floats
    ctm = [a for a in node.attribute if a.name == "coordinate_transformation_mode"][0].s
    if min(scales) > 0 and ctm != b"tf_crop_and_resize":
        rt2, _, extra = rph.prepare_resize(x, node, sizes, host=host, interface="v2")
        assert rt2.result.outputs[0]["dims"] == tuple(math.floor(i * s) for i, s in zip(shape, [1, 1, *scales]))
        assert _formats(rt2.result, 0) == {(ph.DATA_TYPES[t], ph.LINEAR) for t in _float_types(host)}
        assert extra.dtype == (torch.int64 if host.trt_major >= 10 else torch.int32) and extra.tolist() == sizes
    else:
        with pytest.raises(ph.HostError, match="scales > 0 on both axes|tf_crop_and_resize needs the output size"):
            rph.prepare_resize(x, node, sizes, host=host, interface="v2")


@needs_lib
@given(cfg=interpolate_configs(max_hw=9, max_out=12), dtype=st.sampled_from(FLOAT_TYPES))
def test_lifecycle_interpolate(host, cfg, dtype):
    shape, kw = cfg
    _check_lifecycle(host, shape, dtype, twinops.interpolate, kw)


@needs_lib
@given(cfg=onnx_configs(max_hw=8, max_out=12), dtype=st.sampled_from(FLOAT_TYPES))
def test_lifecycle_onnx(host, cfg, dtype):
    shape, kw = cfg
    _check_lifecycle(host, shape, dtype, twinops.resize, kw)


@needs_lib
def test_lifecycle_dynamo_export(host):
    _check_lifecycle(host, (1, 3, 5, 7), torch.float16, twinops.interpolate,
                     dict(scale_factor=(2.0, 0.5), mode="bicubic", antialias=True))


def _f32(*v):
    return dict(type=ph.FIELD_TYPES["FLOAT32"], data=np.asarray(v, np.float32).tobytes(), length=len(v))


def _str(s):
    return dict(type=ph.FIELD_TYPES["CHAR"], data=s.encode() + b"\0", length=len(s) + 1)


BAD_FIELDS = [  # (field, replacement): wrong type, wrong count, out of range
    ("mode", dict(type=ph.FIELD_TYPES["INT32"], data=np.int32(1).tobytes(), length=1)),
    ("antialias", _f32(1.0) | dict(type=ph.FIELD_TYPES["CHAR"])),
    ("scales", _f32(2.0)),
    ("roi", _f32(0, 0, 1)),
    ("mode", _str("bogus")),
    ("coordinate_transformation_mode", _str("sideways")),
    ("nearest_mode", _str("up")),
    ("scales", _f32(-1.0, 2.0)),
]


@needs_lib
@pytest.mark.parametrize("interface", ["v3", "v2"])
def test_bad_fields_rejected(host, simple_node, interface):
    node = simple_node[0]
    if interface == "v3" and host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    creator = host.select(node, interface=interface)
    good = ph.node_fields(node, creator)
    assert host.create(creator, good) is not None
    for name, repl in BAD_FIELDS:  # missing fields and corrupted serialized forms: tests/test_conformance.py
        _rejected(host, lambda: host.create(creator, _replace(good, name, **repl)), f"{name}={repl}")


@needs_lib
@pytest.mark.parametrize("interface", ["v2", "v3"])
def test_scaled_output_size_exact_at_large_dims(host, interface):
    """floor(in * scale) from the scale attribute stays exact over a large symbolic profile; on TensorRT
    8.6 the host evaluates expressions in 32 bits, where in * numerator overflows (0.7 = 11744051 / 2^24)."""
    if interface == "v3" and host.trt_major < 10:
        pytest.skip("TensorRT 8.6 has no IPluginV3")
    x = torch.zeros(1, 1, 3000, 7000)
    profile = ph._profile(x.shape)
    for scales in ([0.7, 1.1], [0.3, 2.5], [1 / 3, 0.45454545], [1e-3, 17.0]):
        node = ph.attributes_node("TRTBicubicInterpolate", {"scale_factor": scales, "align_corners": 0})
        rt, _, _ = rph.prepare_resize(x, node, None, plugin="TRTBicubicInterpolate", interface=interface, host=host)
        out = rt.result.outputs[0]
        for key in ("min", "opt", "max"):
            # the attribute is float32: the exact product with its binary fraction, floored
            want = [math.floor(Fraction(n) * Fraction(float(np.float32(s)))) for n, s in zip(profile[key][2:], scales)]
            assert list(out[key][2:]) == want, f"scales {scales}, {key}"


@needs_lib
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks enqueue's error status where no GPU exists")
def test_enqueue_without_gpu_returns_an_error_status(host):
    node, sizes = exported(torch.zeros(1, 2, 6, 8), twinops.interpolate, dict(scale_factor=2.0, mode="bilinear"))
    rt, _, _ = rph.prepare_resize(torch.zeros(1, 2, 6, 8), node, sizes, host=host)  # scales > 0: V2 (8.6) too
    # no device: the launch fails and enqueue must say so (a status, not a crash)
    assert rt.enqueue([0x1000], [0x2000], 0x3000 if rt.result.workspace else 0, 0) != 0


@pytest.fixture(scope="module")
def copies_host(tmp_path_factory):
    return copies_library_host(tmp_path_factory.mktemp("copies"))


@needs_lib
@needs_host
def test_each_host_logs_its_own_librarys_errors(host, copies_host, simple_node):
    """Two plugin libraries open in one process: a plugin's refusal is logged with the message of
    the library that made it, never with the other library's (TensorRT 8.6 libraries have no logger
    finder and report through their own twinops_trt_last_error; reading the last library opened
    instead gave test-order-dependent messages)."""
    node = simple_node[0]
    creator = host.select(node, interface="v2")
    bad_mode = _replace(ph.node_fields(node, creator), "mode", data=b"bogus\0", length=6)
    copies_node = ph.attributes_node("TwinopsTestCopies", {"copies": 0}, ["x"])
    copies_creator = copies_host.select(copies_node, interface="v2")
    for _ in range(2):  # each library's last error set in turn; the other one is read after it
        host.take_log()
        assert host.create(creator, bad_mode) is None, "mode=bogus: accepted"
        log = host.take_log()
        assert "TwinopsResize: mode must be one of" in log and "TwinopsTestCopies" not in log, log
        assert copies_host.create(copies_creator, ph.node_fields(copies_node, copies_creator)) is None
        log = copies_host.take_log()
        assert "TwinopsTestCopies: field 'copies' must be in [1, 8], got 0" in log and "TwinopsResize" not in log, log


# Serialized forms written by the library before the plugin classes became generic over an op
# core (main at 85d3e08; V2 blobs, whose fields are also the V3 getFieldsToSerialize set): engines
# built then must still load. Non-default values in every field.
GOLDEN_V2 = {
    "TwinopsResize": bytes.fromhex(
        "54574f500100000065010000acad03d96d6f646500060000000600000006000000637562696300636f6f7264696e6174"
        "655f7472616e73666f726d6174696f6e5f6d6f64650006000000150000001500000068616c665f706978656c5f73796d"
        "6d6574726963006e6561726573745f6d6f646500060000000600000006000000666c6f6f720063756269635f636f6566"
        "665f6100020000000100000008000000000000000000e0bf6578636c7564655f6f757473696465000500000001000000"
        "0400000001000000616e7469616c69617300050000000100000004000000010000007363616c65730002000000020000"
        "00100000000000000000000040000000606666e63f726f6900020000000400000020000000000000a09999b93f000000"
        "a09999c93f000000c0ccccec3f000000a09999e93f6578747261706f6c6174696f6e5f76616c75650002000000010000"
        "0008000000000000000000f83f7079746f7263680005000000010000000400000000000000"),
    "DynamicTRTResize": bytes.fromhex(
        "54574f50010000001e0000000890bff6616c69676e5f636f726e6572730005000000010000000400000001000000"),
    "TRTBicubicInterpolate": bytes.fromhex(
        "54574f50010000004700000027d881fb7363616c655f666163746f7200020000000200000010000000000000000000f8"
        "3f000000403333d33f616c69676e5f636f726e6572730005000000010000000400000001000000"),
}


def _blob_fields(blob):
    """The named fields inside a V2 blob (magic, version, length, checksum, then per field: name,
    type, count, byte count, bytes), as the V3 runtime phase receives them."""
    import struct

    fields, off = [], 16
    while off < len(blob):
        end = blob.index(b"\0", off)
        name, off = blob[off:end].decode(), end + 1
        t, n, nbytes = struct.unpack_from("<iiI", blob, off)
        off += 12
        fields.append(ph.Field(name, t, blob[off:off + nbytes], n))
        off += nbytes
    return fields


@needs_lib
@pytest.mark.parametrize("name", sorted(GOLDEN_V2))
def test_serialized_forms_of_the_previous_library_load(host, name):
    blob = GOLDEN_V2[name]
    v2 = host.find(name, "legacy")
    back = host.deserialize(v2, blob)
    assert back is not None, host.take_log()
    assert back.serialize()[0].data == blob  # the same bytes again: the format did not change
    if host.trt_major >= 10:
        v3 = host.find(name, "1")
        fields = _blob_fields(blob)
        again = host.create(v3, fields, runtime=True)
        assert again is not None, host.take_log()
        assert [f.__dict__ for f in again.serialize()] == [f.__dict__ for f in fields]


# ---------------------------------------------------------------------------------------
# GPU: enqueue parity with the torch op (bitwise) and the references (tolerance)
# ---------------------------------------------------------------------------------------

def _node_op(x, node, sizes):
    """The torch op with the exported node's attributes (float32 scales and roi, as the plugin gets them)."""
    a = {at.name: onnx.helper.get_attribute_value(at) for at in node.attribute}
    text = {k: v.decode() for k, v in a.items() if isinstance(v, bytes)}
    return torch.ops.twinops.resize(x, sizes, text["mode"], text["coordinate_transformation_mode"],
                                    text["nearest_mode"], a["cubic_coeff_a"], a["exclude_outside"], a["antialias"],
                                    list(a["scales"]), list(a["roi"]), a["extrapolation_value"], a["pytorch"])


def _parity(shape, dtype, fn, kw, reference, seed=0, interface=None):
    x = random_input(shape, dtype, "cuda", seed=seed)
    node, sizes, narrowed = exported_narrowed(torch.zeros(shape), fn, kw)
    want = _node_op(x, node, sizes)  # the same kernel with the same attributes: bitwise
    got = rph.run_resize(x, node, sizes, interface=interface)
    torch.cuda.synchronize()
    assert got.shape == want.shape and torch.equal(got, want), \
        f"plugin != torch op: max diff {(got.double() - want.double()).abs().max().item()}"
    api = fn(x, **kw)
    if not narrowed:  # a narrowed float32 scale may pick other pixels: the exporter warned about exactly that
        assert api.shape == got.shape and torch.equal(api, got), "the exported node computes another function"
    if reference is not None and not narrowed:  # as tests/resize/test_resize.py compares the torch op
        assert_close(got, reference(x), dtype, "plugin vs reference")


@needs_gpu
@given(cfg=interpolate_configs(), dtype=st.sampled_from(FLOAT_TYPES), seed=st.integers(0, 2**16))
def test_enqueue_interpolate(cfg, dtype, seed):
    shape, kw = cfg
    _parity(shape, dtype, twinops.interpolate, kw, lambda x: interpolate_reference(x, **kw), seed)


@needs_gpu
@given(cfg=onnx_configs(), dtype=st.sampled_from(FLOAT_TYPES), seed=st.integers(0, 2**16))
def test_enqueue_onnx(cfg, dtype, seed):
    shape, kw = cfg
    # the float32 reference as in tests/resize/test_resize.py; other dtypes: bitwise with the torch op only
    stable = dtype == torch.float32 and not onnx_reference_is_unstable(shape, kw)
    _parity(shape, dtype, twinops.resize, kw, (lambda x: onnx_reference(x, **kw)) if stable else None, seed)


@needs_gpu
@given(cfg=interpolate_configs(), dtype=st.sampled_from(FLOAT_TYPES))
def test_enqueue_legacy_v2(cfg, dtype):
    shape, kw = cfg
    node, _ = exported(torch.zeros(shape), twinops.interpolate, kw)
    scales = [a for a in node.attribute if a.name == "scales"][0].floats
    if min(scales) <= 0:
        return  # sizes-derived output: only V3 can read it (asserted in test_lifecycle_*)
    if [math.floor(i * s) for i, s in zip(shape[2:], scales)] != list(twinops.interpolate(torch.zeros(shape), **kw).shape[2:]):
        return  # the float32 scales attribute gives another size (the exporter warns); V2 cannot do better
    _parity(shape, dtype, twinops.interpolate, kw, None, interface="v2")


@needs_gpu
@pytest.mark.parametrize("interface", ["v3", "v2"])
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_enqueue_mmdeploy_creators(interface, dtype):
    x = random_input((2, 3, 9, 13), dtype, "cuda", seed=3)
    for ac in (0, 1):
        got = rph.run_resize(x, {"align_corners": ac}, (17, 6), plugin="DynamicTRTResize", interface=interface)
        want = twinops.dynamic_resize(x, torch.empty(1, 1, 17, 6, device="cuda"), align_corners=bool(ac))
        assert torch.equal(got, want), f"DynamicTRTResize align_corners={ac}"
        got = rph.run_resize(x, {"scale_factor": [1.5, 0.5], "align_corners": ac}, plugin="TRTBicubicInterpolate",
                            interface=interface)
        want = twinops.interpolate(x, scale_factor=(1.5, 0.5), mode="bicubic", align_corners=bool(ac))
        assert torch.equal(got, want), f"TRTBicubicInterpolate align_corners={ac}"
