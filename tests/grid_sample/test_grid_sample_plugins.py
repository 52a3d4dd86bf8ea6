"""grid_sample's own plugin cases, through the TensorRT-free plugin host (twinops.plugin_host).

What every creator gets (lifecycle of a declared sample, field fuzzing, corrupted serialized forms,
enqueue parity with the API) is in tests/test_conformance.py. Here: MMDeploy's integer codes
(grid_sampler), the ONNX standard node's creator (GridSample: its fields, absent attributes,
GridSample-16's mode names, nodes torch.onnx writes), the synonyms of TwinopsGridSample, the shapes
and profiles the plugins refuse, 5-D shapes through the host's shape inference, and V2 "legacy"
blobs. CPU tests need TensorRT headers and the plugin library; enqueue tests a GPU and twinops'
CUDA kernels (the torch op is the reference: the same kernel, so bitwise).
"""
import io
import struct
import warnings

import pytest
import torch

import twinops
from twinops import plugin_host as ph
from plugin_checks import formats as _formats
from plugin_checks import rejected as _rejected

CPU_REASON = ph.unavailable_reason(enqueue=False)
GPU_REASON = ph.unavailable_reason(enqueue=True) or (
    None if twinops.has_cuda_kernels() else "twinops was built without CUDA kernels (the torch op to compare with)")
needs_lib = pytest.mark.skipif(CPU_REASON is not None, reason=f"plugin host: {CPU_REASON}")
needs_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=f"plugin host enqueue: {GPU_REASON}")
FLOAT_TYPES = [torch.float32, torch.float16, torch.bfloat16]
CREATORS = ("TwinopsGridSample", "grid_sampler", "GridSample")
MMDEPLOY_MODES = ("linear", "nearest", "cubic")  # interpolation_mode 0, 1, 2 (PyTorch's enum order)
MMDEPLOY_PADDINGS = ("zeros", "border", "reflection")
INPUTS = ("X", "grid")


def _host():
    return ph.get_host()


def _data(shape, grid_shape, dtype=torch.float32, device="cpu", seed=0):
    """X and a grid reaching a little outside [-1, 1]."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g).to(dtype)
    grid = (torch.rand(grid_shape, generator=g) * 2.4 - 1.2).to(dtype)
    return x.to(device), grid.to(device)


def _node(op_type, attrs):
    return ph.attributes_node(op_type, attrs, INPUTS)


def _fields(creator, attrs, version="1"):
    info = _host().find(creator, version)
    assert info is not None, f"{creator} v{version} is not in the plugin library"
    return info, ph.node_fields(_node(creator, attrs), info)


def _field_values(fields):
    """{name: str or int} of serialized V3 fields (kCHAR strings, kINT32 ints)."""
    out = {}
    for f in fields:
        if f.type == ph.FIELD_TYPES["CHAR"]:
            out[f.name] = f.data.split(b"\0")[0].decode()
        else:
            assert f.type == ph.FIELD_TYPES["INT32"] and f.length == 1, f
            out[f.name] = struct.unpack("<i", f.data)[0]
    return out


# The V2 blob format of csrc/trt/plugin_base.h ("TWOP", version, payload length, FNV-1a of the
# payload, then per field: name NUL, type, length, byte count, bytes): to read blobs back and to
# write well-formed ones that lack a field.
def _fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def _unpack_blob(blob):
    assert blob[:4] == b"TWOP"
    version, size, checksum = struct.unpack("<III", blob[4:16])
    payload = blob[16:]
    assert version == 1 and size == len(payload) and checksum == _fnv1a(payload)
    fields, off = [], 0
    while off < len(payload):
        end = payload.index(b"\0", off)
        name = payload[off:end].decode()
        ftype, length, nbytes = struct.unpack("<iiI", payload[end + 1:end + 13])
        off = end + 13 + nbytes
        fields.append(ph.Field(name, ftype, payload[end + 13:off], length))
    return fields


def _pack_blob(fields):
    payload = b"".join(f.name.encode() + b"\0" + struct.pack("<iiI", f.type, f.length, len(f.data)) + f.data
                       for f in fields)
    return b"TWOP" + struct.pack("<III", 1, len(payload), _fnv1a(payload)) + payload


def _torch_op(x, grid, mode, padding_mode, align_corners):
    return torch.ops.twinops.grid_sample(x, grid, mode, padding_mode, int(align_corners))


# ---------------------------------------------------------------------------------------
# creators and fields
# ---------------------------------------------------------------------------------------

@needs_lib
def test_every_creator_and_version_is_in_the_library_with_its_fields():
    C, I = ph.FIELD_TYPES["CHAR"], ph.FIELD_TYPES["INT32"]
    onnx_fields = [("mode", C, 0), ("padding_mode", C, 0), ("align_corners", I, 1)]
    want = {"TwinopsGridSample": onnx_fields, "GridSample": onnx_fields,
            "grid_sampler": [("interpolation_mode", I, 1), ("padding_mode", I, 1), ("align_corners", I, 1)]}
    host = _host()
    for name in CREATORS:
        for version in ("1", "legacy"):
            info = host.find(name, version)
            assert info is not None and info.fields == want[name], (name, version, info)
            assert info.interface == ("v2" if version == "legacy" or host.trt_major < 10 else "v3")


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [0, 1])
def test_mmdeploy_codes_build_and_serialize_as_given(version, mode, padding, align):
    attrs = dict(interpolation_mode=mode, padding_mode=padding, align_corners=align)
    x, grid = _data((2, 3, 5, 4), (2, 6, 7, 2))
    rt, built, _ = ph.prepare_plugin(_node("grid_sampler", attrs), [x, grid], version=version, host=_host())
    assert rt.result.outputs[0]["dims"] == (2, 3, 6, 7)
    ser = built.serialize()
    got = _field_values(_unpack_blob(ser[0].data) if built.creator.interface == "v2" else ser)
    assert got == attrs


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("field,value,expected", [
    ("interpolation_mode", 3, "must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got 3"),
    ("interpolation_mode", -1, "must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got -1"),
    ("padding_mode", 3, "must be 0 (zeros), 1 (border) or 2 (reflection), got 3"),
    ("align_corners", 2, "must be 0 or 1, got 2"),
])
def test_mmdeploy_codes_outside_the_enums_are_refused(version, field, value, expected):
    attrs = {**dict(interpolation_mode=0, padding_mode=0, align_corners=0), field: value}
    host = _host()
    info, fields = _fields("grid_sampler", attrs, version)
    _rejected(host, lambda: host.create(info, fields), f"{field}={value}")
    host.create(info, fields)
    assert f"grid_sampler: field '{field}' {expected}" in host.take_log()


@needs_lib
@pytest.mark.parametrize("creator", ["TwinopsGridSample", "GridSample"])
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("mode", ["linear", "bilinear", "nearest", "cubic", "bicubic"])
def test_onnx_mode_names_and_gridsample16_synonyms(creator, version, mode):
    x, grid = _data((1, 2, 4, 4), (1, 3, 5, 2))
    attrs = dict(mode=mode, padding_mode="border", align_corners=1)
    rt, built, _ = ph.prepare_plugin(_node(creator, attrs), [x, grid], version=version, host=_host())
    assert rt.result.outputs[0]["dims"] == (1, 2, 3, 5)
    ser = built.serialize()
    assert _field_values(_unpack_blob(ser[0].data) if built.creator.interface == "v2" else ser) == attrs


@needs_lib
@pytest.mark.parametrize("creator", ["TwinopsGridSample", "GridSample"])
@pytest.mark.parametrize("attrs", [dict(mode="Bilinear"), dict(mode="area"), dict(padding_mode="wrap"),
                                   dict(align_corners=2)], ids=str)
def test_bad_onnx_attributes_are_refused_naming_them(creator, attrs):
    host = _host()
    full = dict(dict(mode="linear", padding_mode="zeros", align_corners=0), **attrs)
    info, fields = _fields(creator, full)
    _rejected(host, lambda: host.create(info, fields), str(attrs))
    host.create(info, fields)
    log = host.take_log()
    assert f"{creator}: " in log and next(iter(attrs)) in log, log


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("given", [{}, dict(mode="nearest"), dict(padding_mode="reflection", align_corners=1)],
                         ids=str)
def test_gridsample_attributes_the_node_lacks_take_the_onnx_defaults(version, given):
    """ONNX: an absent attribute means its default; TensorRT's parser passes only the node's own."""
    host = _host()
    info, fields = _fields("GridSample", given, version)
    assert [f.name for f in fields] == [k for k in ("mode", "padding_mode", "align_corners") if k in given]
    built = host.create(info, fields)
    assert built is not None, host.take_log()
    ser = built.serialize()
    got = _field_values(_unpack_blob(ser[0].data) if info.interface == "v2" else ser)
    assert got == dict(dict(mode="linear", padding_mode="zeros", align_corners=0), **given)
    # twinops' own node and MMDeploy's keep every field required
    for name, attrs in (("TwinopsGridSample", dict(padding_mode="zeros", align_corners=0)),
                        ("grid_sampler", dict(padding_mode=0, align_corners=0))):
        other, partial = _fields(name, attrs, version)
        _rejected(host, lambda: host.create(other, partial), f"{name} without its first field")


@needs_lib
def test_gridsample_runtime_phase_needs_every_field():
    """The serialized form is the plugin's own and always complete: a missing field there is
    corruption, refused, though the build phase (a node's attributes) defaults it."""
    host = _host()
    info, fields = _fields("GridSample", dict(mode="nearest", padding_mode="border", align_corners=1), "legacy")
    blob = host.create(info, fields).serialize()[0].data
    whole = _unpack_blob(blob)
    assert host.deserialize(info, _pack_blob(whole)) is not None  # the packer writes what the library reads
    for i, f in enumerate(whole):
        _rejected(host, lambda: host.deserialize(info, _pack_blob(whole[:i] + whole[i + 1:])), f"blob without {f.name}")
    if host.trt_major >= 10:
        info = host.find("GridSample", "1")
        ser = host.create(info, ph.node_fields(_node("GridSample", {}), info)).serialize()
        assert [f.name for f in ser] == ["mode", "padding_mode", "align_corners"]
        for i, f in enumerate(ser):
            _rejected(host, lambda: host.create(info, ser[:i] + ser[i + 1:], runtime=True), f"runtime without {f.name}")


@needs_lib
@pytest.mark.parametrize("creator", CREATORS)
def test_legacy_blobs_round_trip(creator):
    host = _host()
    attrs = (dict(interpolation_mode=1, padding_mode=2, align_corners=1) if creator == "grid_sampler"
             else dict(mode="bicubic", padding_mode="reflection", align_corners=1))
    info, fields = _fields(creator, attrs, "legacy")
    x, grid = _data((2, 3, 6, 5), (2, 4, 3, 2))
    rt, built, _ = ph.prepare_plugin(_node(creator, attrs), [x, grid], version="legacy", host=host)
    (blob,) = built.serialize()
    assert _field_values(_unpack_blob(blob.data)) == attrs
    back = host.deserialize(info, blob.data)
    assert back is not None and back.serialize()[0].data == blob.data
    assert rt.serialize()[0].data == blob.data


# ---------------------------------------------------------------------------------------
# shapes and profiles
# ---------------------------------------------------------------------------------------

@needs_lib
@pytest.mark.parametrize("creator", CREATORS)
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("shape,grid_shape", [((2, 3, 5, 4), (2, 6, 7, 2)), ((2, 3, 4, 5, 6), (2, 7, 8, 9, 3)),
                                              ((1, 1, 1, 1, 1), (1, 1, 1, 1, 3))], ids=str)
def test_output_shape_types_and_formats(creator, dtype, shape, grid_shape):
    """Y = (N, C, [D_out,] H_out, W_out) over the whole min/opt/max profile (every dim dynamic),
    in X's type; X takes any float type, grid and Y X's type, linear only."""
    host = _host()
    if dtype == torch.bfloat16 and host.trt_major < 9:
        pytest.skip("TensorRT 8.6 has no bfloat16")
    attrs = dict(interpolation_mode=0, padding_mode=1, align_corners=0) if creator == "grid_sampler" else {
        "mode": "nearest", "padding_mode": "border", "align_corners": 0}
    x, grid = _data(shape, grid_shape, dtype)
    rt, _, _ = ph.prepare_plugin(_node(creator, attrs), [x, grid], host=host)
    (o,) = rt.result.outputs
    rank = len(shape)
    for key, f in (("dims", lambda d: d), ("opt", lambda d: d), ("min", lambda d: 1), ("max", lambda d: 2 * d)):
        want = tuple(f(d) for d in shape[:2]) + tuple(f(d) for d in grid_shape[1:rank - 1])
        assert o[key] == want, (key, o)
    assert o["type"] == ph.DATA_TYPES[dtype]
    floats = {(ph.DATA_TYPES[t], ph.LINEAR) for t in FLOAT_TYPES if t != torch.bfloat16 or host.trt_major >= 9}
    assert _formats(rt.result, 0) == floats
    for pos in (1, 2):
        assert _formats(rt.result, pos) == {(ph.DATA_TYPES[dtype], ph.LINEAR)}, pos
    assert rt.result.workspace == 0


def _spec(dtype, dims, lo=None, hi=None, opt=None):
    return ph.TensorSpec(dtype, dims, min=lo, opt=opt or dims, max=hi)


F32, F16 = torch.float32, torch.float16
REFUSED = [  # (attrs, X spec, grid spec, message)
    ({}, _spec(F32, (1, 2, 3)), _spec(F32, (1, 4, 2)), "X must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got 3-D"),
    ({}, _spec(F32, (1, 2, 3, 4)), _spec(F32, (1, 4, 5, 6, 3)), "grid must have X's rank"),
    ({}, _spec(F32, (1, 2, 3, 4)), _spec(F32, (1, 4, 5, 3)), "grid's last dim must be 2 for a 4-D X"),
    ({}, _spec(F32, (1, 2, 3, 4, 5)), _spec(F32, (1, 4, 5, 6, 2)), "grid's last dim must be 3 for a 5-D X"),
    ({}, _spec(F32, (2, 2, 3, 4)), _spec(F32, (3, 4, 5, 2)), "X and grid must have the same batch size N, got 2 and 3"),
    (dict(mode="cubic"), _spec(F32, (1, 2, 3, 4, 5)), _spec(F32, (1, 4, 5, 6, 3)),
     "mode cubic (bicubic) supports 4-D X only, got a 5-D X"),
    (dict(mode="bicubic"), _spec(F32, (1, 2, 3, 4, 5)), _spec(F32, (1, 4, 5, 6, 3)), "mode cubic (bicubic)"),
    ({}, _spec(F32, (1, 2, 3, 4)), _spec(F16, (1, 4, 5, 2)), "grid must have X's type"),
    # profiles in which no shape runs (configurePlugin sees only the profile; the host's concrete
    # shapes, outside it here, pass the shape checks so that configurePlugin is reached)
    ({}, _spec(F32, (1, 2, 3, 4)), _spec(F32, (1, 4, 5, 2), (1, 4, 5, 3), (1, 4, 5, 4), (1, 4, 5, 3)),
     "grid's last dim must be 2 for a 4-D X (X (N, C, H, W) and grid (N, H_out, W_out, 2)); "
     "the profile gives it [3, 4]"),
    ({}, _spec(F32, (2, 2, 3, 4), (1, 2, 3, 4), (2, 2, 3, 4)), _spec(F32, (2, 4, 5, 2), (3, 4, 5, 2), (4, 4, 5, 2),
                                                                    (3, 4, 5, 2)),
     "X and grid must have the same batch size N; the profile gives X's N [1, 2] and grid's [3, 4]"),
]


@needs_lib
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("attrs,x,grid,message", REFUSED, ids=[r[3][:40] for r in REFUSED])
def test_shapes_and_profiles_that_cannot_run_are_refused(version, attrs, x, grid, message):
    host = _host()
    info, fields = _fields("TwinopsGridSample", dict(dict(mode="linear", padding_mode="zeros", align_corners=0),
                                                     **attrs), version)
    plugin = host.create(info, fields)
    assert plugin is not None, host.take_log()
    if info.interface == "v2" and "profile gives" in message:
        pytest.skip("IPluginV2DynamicExt::configurePlugin has no status (the message is logged; enqueue refuses)")
    with pytest.raises(ph.HostError) as e:
        plugin.build([x, grid])
    assert message in str(e.value)


@needs_lib
def test_a_profile_holding_the_runnable_lengths_builds():
    """Dynamic grid last dim and batch ranges that include a runnable shape: built (onShapeChange
    and enqueue check the concrete shapes)."""
    host = _host()
    info, fields = _fields("TwinopsGridSample", dict(mode="linear", padding_mode="zeros", align_corners=0))
    plugin = host.create(info, fields)
    res = plugin.build([_spec(F32, (2, 2, 3, 4), (1, 2, 3, 4), (3, 2, 3, 4)),
                        _spec(F32, (2, 4, 5, 2), (2, 4, 5, 1), (4, 4, 5, 3))])
    assert res.outputs[0]["dims"] == (2, 2, 4, 5)


# ---------------------------------------------------------------------------------------
# nodes torch.onnx writes for F.grid_sample (standard GridSample)
# ---------------------------------------------------------------------------------------

class _GridSample(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(x, grid, **self.kw)


def _exported_gridsample(x, grid, opset, **kw):
    import onnx

    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_GridSample(**kw), (x, grid), f, opset_version=opset, dynamo=False)
    (node,) = [n for n in onnx.load_from_string(f.getvalue()).graph.node if n.op_type == "GridSample"]
    return node


EXPORTED = [  # (opset, X shape, grid shape, F.grid_sample kwargs, torch op mode)
    (16, (2, 3, 6, 5), (2, 4, 7, 2), dict(mode="bicubic", padding_mode="border", align_corners=True), "cubic"),
    (16, (2, 3, 6, 5), (2, 4, 7, 2), dict(mode="bilinear", padding_mode="reflection", align_corners=False), "linear"),
    (20, (2, 3, 6, 5), (2, 4, 7, 2), dict(mode="nearest", padding_mode="zeros", align_corners=False), "nearest"),
    (20, (2, 3, 4, 6, 5), (2, 3, 4, 7, 3), dict(mode="bilinear", padding_mode="border", align_corners=True), "linear"),
]


@needs_lib
@pytest.mark.parametrize("opset,shape,grid_shape,kw,mode", EXPORTED, ids=[f"opset{e[0]}-{e[3]}" for e in EXPORTED])
def test_gridsample_nodes_from_torch_onnx_build(opset, shape, grid_shape, kw, mode):
    x, grid = _data(shape, grid_shape)
    node = _exported_gridsample(x, grid, opset, **kw)
    rt, _, _ = ph.prepare_plugin(node, [x, grid], host=_host())
    assert rt.creator.name == "GridSample"
    assert rt.result.outputs[0]["dims"] == tuple(shape[:2]) + tuple(grid_shape[1:-1])


@needs_gpu
@pytest.mark.parametrize("opset,shape,grid_shape,kw,mode", EXPORTED, ids=[f"opset{e[0]}-{e[3]}" for e in EXPORTED])
def test_gridsample_nodes_from_torch_onnx_enqueue_the_torch_op(opset, shape, grid_shape, kw, mode):
    x, grid = _data(shape, grid_shape, device="cuda")
    node = _exported_gridsample(x.cpu(), grid.cpu(), opset, **kw)
    for interface in ("v3", "v2"):
        (y,) = ph.run_plugin(node, [x, grid], interface=interface)
        torch.cuda.synchronize()
        want = _torch_op(x, grid, mode, kw["padding_mode"], kw["align_corners"])
        torch.testing.assert_close(y, want, rtol=0, atol=0, equal_nan=True)


# ---------------------------------------------------------------------------------------
# enqueue on a GPU: bitwise the torch op
# ---------------------------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("version", ["1", "legacy"])
@pytest.mark.parametrize("shape,grid_shape", [((2, 3, 9, 7), (2, 5, 6, 2)), ((2, 3, 4, 6, 5), (2, 3, 5, 4, 3))],
                         ids=["4d", "5d"])
def test_mmdeploy_codes_enqueue_the_mapped_mode(dtype, version, shape, grid_shape):
    x, grid = _data(shape, grid_shape, dtype, "cuda", seed=1)
    for mode in range(3 if len(shape) == 4 else 2):
        for padding in range(3):
            for align in (0, 1):
                attrs = dict(interpolation_mode=mode, padding_mode=padding, align_corners=align)
                (y,) = ph.run_plugin(_node("grid_sampler", attrs), [x, grid], version=version)
                torch.cuda.synchronize()
                want = _torch_op(x, grid, MMDEPLOY_MODES[mode], MMDEPLOY_PADDINGS[padding], align)
                torch.testing.assert_close(y, want, rtol=0, atol=0, equal_nan=True, msg=str(attrs))


@needs_gpu
@pytest.mark.parametrize("dtype", FLOAT_TYPES)
@pytest.mark.parametrize("creator", ["TwinopsGridSample", "GridSample"])
def test_synonyms_enqueue_the_same_kernel(dtype, creator):
    x, grid = _data((2, 4, 8, 9), (2, 6, 5, 2), dtype, "cuda", seed=2)
    grid[0, 0, 0, 0] = float("nan")  # the documented NaN rule holds in the plugins too
    for name, mode in (("bilinear", "linear"), ("bicubic", "cubic")):
        attrs = dict(mode=name, padding_mode="reflection", align_corners=0)
        (y,) = ph.run_plugin(_node(creator, attrs), [x, grid])
        torch.cuda.synchronize()
        torch.testing.assert_close(y, _torch_op(x, grid, mode, "reflection", 0), rtol=0, atol=0, equal_nan=True)
        assert torch.isnan(y[0, :, 0, 0]).all()


@needs_gpu
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_far_finite_grid_values_enqueue_the_torch_op(padding):
    """Grid values up to float's maximum (the float coordinate overflows above ~FLT_MAX / W):
    the plugin takes the same points as the torch op, and reflection gives no NaN."""
    x, grid = _data((1, 3, 4, 5), (1, 2, 8, 2), torch.float32, "cuda", seed=3)
    far = torch.tensor([3.0e38, -3.0e38, 1.7e38, 2.5e37, -1e20, 123456.789, 4.6e15, -33.3], device="cuda")
    grid[0, 0, :, 0] = far
    grid[0, 1, :, 1] = far
    for mode in ("linear", "nearest", "cubic"):
        attrs = dict(mode=mode, padding_mode=padding, align_corners=0)
        (y,) = ph.run_plugin(_node("TwinopsGridSample", attrs), [x, grid])
        torch.cuda.synchronize()
        want = _torch_op(x, grid, mode, padding, 0)
        torch.testing.assert_close(y, want, rtol=0, atol=0, equal_nan=True, msg=str(attrs))
        if padding != "zeros":
            assert torch.isfinite(y).all(), attrs
