"""ONNX export of twinops resize ops: both exporters, node contract, onnx.reference parity, dynamic shapes."""
import io
import math
import warnings

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
from onnx.reference import ReferenceEvaluator  # noqa: E402

import twinops  # noqa: E402
from twinops.onnx_export import (  # noqa: E402
    export_onnx,
    onnx_reference_ops,
    onnx_translation_table,
    register_torchscript_symbolics,
)

from export_helpers import export_quietly as _export  # noqa: E402

AT = onnx.AttributeProto
RESIZE_ATTRS = {
    "mode": AT.STRING,
    "coordinate_transformation_mode": AT.STRING,
    "nearest_mode": AT.STRING,
    "cubic_coeff_a": AT.FLOAT,
    "exclude_outside": AT.INT,
    "antialias": AT.INT,
    "scales": AT.FLOATS,
    "roi": AT.FLOATS,
    "extrapolation_value": AT.FLOAT,
    "pytorch": AT.INT,
    "tensorrt_plugin_shape_input_indices": AT.INTS,
    "plugin_version": AT.STRING,
    "plugin_namespace": AT.STRING,
}
DYNAMIC_ATTRS = {"align_corners": AT.INT, "plugin_version": AT.STRING, "plugin_namespace": AT.STRING}
EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]
TOL = dict(atol=1e-4, rtol=1e-4)


class Net(torch.nn.Module):
    """Conv2d -> resize -> Conv2d, so the twinops node sits between ordinary ONNX ops."""

    def __init__(self, resize):
        super().__init__()
        torch.manual_seed(0)
        self.pre = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.resize = resize
        self.post = torch.nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.post(self.resize(self.pre(x)))


class SizedNet(Net):
    def forward(self, x, size_tensor):
        return self.post(self.resize(self.pre(x), size_tensor))


def _input(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * 2 + 0.5  # non-zero


def _run(proto, args):
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    feeds = {i.name: a.numpy() for i, a in zip(proto.graph.input, args)}
    return ev.run(None, feeds)[0]


def _twinops_nodes(proto):
    return [n for n in proto.graph.node if n.domain == "twinops"]


def _check_node(proto, op_type, attr_types):
    onnx.checker.check_model(proto, full_check=True)
    assert {o.domain: o.version for o in proto.opset_import}.get("twinops") == 1
    nodes = _twinops_nodes(proto)
    assert [n.op_type for n in nodes] == [op_type]
    node = nodes[0]
    assert {a.name: a.type for a in node.attribute} == attr_types
    return node, {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _compare(model, proto, args):
    got = _run(proto, args)
    with torch.no_grad():
        want = model(*args).numpy()
    assert got.dtype == want.dtype == np.float32
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL)


# ---------------------------------------------------------------------------------------
# F.interpolate (pytorch=1)
# ---------------------------------------------------------------------------------------

INTERPOLATE_CASES = {
    "nearest-x2": dict(scale_factor=2.0, mode="nearest"),
    "nearest-size": dict(size=(7, 15), mode="nearest"),
    "nearest-exact": dict(scale_factor=0.5, mode="nearest-exact"),
    "bilinear-size": dict(size=(13, 7), mode="bilinear"),
    "bilinear-align": dict(scale_factor=1.5, mode="bilinear", align_corners=True),
    "bicubic": dict(scale_factor=1.25, mode="bicubic"),
    "bicubic-align": dict(size=(5, 17), mode="bicubic", align_corners=True),
    "area": dict(size=(4, 5), mode="area"),
    "bilinear-aa": dict(size=(4, 9), mode="bilinear", antialias=True),
    "bicubic-aa": dict(scale_factor=0.75, mode="bicubic", antialias=True),
    # W_out == 1 while H changes: ATen's CPU _aa kernels return zeros there; the reference works around it
    "bilinear-aa-w1": dict(size=(13, 1), mode="bilinear", antialias=True),
}
EXPECTED_PYTORCH_ATTRS = {
    "nearest-x2": dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor",
                       scales=[2.0, 2.0]),
    "nearest-exact": dict(mode="nearest", coordinate_transformation_mode="half_pixel",
                          nearest_mode="round_prefer_ceil", scales=[0.5, 0.5]),
    "bilinear-align": dict(mode="linear", coordinate_transformation_mode="align_corners", scales=[1.5, 1.5]),
    "bicubic-aa": dict(mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5, scales=[0.75, 0.75]),
    "area": dict(mode="area", scales=[0.0, 0.0]),
}


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", list(INTERPOLATE_CASES))
def test_interpolate_export(case, dynamo):
    model = Net(twinops.Interpolate(**INTERPOLATE_CASES[case]))
    x = _input(2, 3, 10, 12)
    proto = _export(model, (x,), dynamo, narrowing_ok=False)  # every scale here is a float32 value
    node, attrs = _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    assert attrs["pytorch"] == 1
    assert attrs["tensorrt_plugin_shape_input_indices"] == [1]
    assert len(attrs["scales"]) == 2 and len(attrs["roi"]) == 4
    for k, v in EXPECTED_PYTORCH_ATTRS.get(case, {}).items():
        assert (v.encode() if isinstance(v, str) else v) == attrs[k], k
    _compare(model, proto, (x,))


SAME_SIZE_CASES = {
    "nearest-1.25": dict(scale_factor=1.25, mode="nearest"),  # out == in
    "nearest-2.25": dict(scale_factor=2.25, mode="nearest"),  # out == 2 * in
    "bilinear-1.25": dict(scale_factor=1.25, mode="bilinear"),
    "bilinear-aa": dict(scale_factor=(1.25, 0.5), mode="bilinear", antialias=True),
    "bicubic-aa": dict(scale_factor=(2.0, 1.125), mode="bicubic", antialias=True),
}


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", list(SAME_SIZE_CASES))
def test_interpolate_scale_on_same_size_axis(case, dynamo):
    """A scale factor whose output length equals the input (or 2x for nearest): ATen's CPU kernels
    copy there, twinops and ATen's CUDA kernels apply the formula; so does the reference."""
    model = Net(twinops.Interpolate(**SAME_SIZE_CASES[case]))
    x = _input(1, 3, 3, 4)
    proto = _export(model, (x,), dynamo, narrowing_ok=False)
    _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    _compare(model, proto, (x,))


# ---------------------------------------------------------------------------------------
# ONNX Resize-19 (pytorch=0)
# ---------------------------------------------------------------------------------------

RESIZE_CASES = {
    "linear-sizes": dict(sizes=[13, 7], axes=[2, 3], mode="linear"),
    "nearest-ceil-asym": dict(scales=[1, 1, 2.0, 1.5], mode="nearest", nearest_mode="round_prefer_ceil",
                              coordinate_transformation_mode="asymmetric"),
    "nearest-floor-hps": dict(sizes=[2, 3, 7, 17], mode="nearest", nearest_mode="floor",
                              coordinate_transformation_mode="half_pixel_symmetric"),
    "cubic-exclude": dict(sizes=[9, 14], axes=[2, 3], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
    "cubic-pytorch-hp": dict(scales=[0.5, 1.75], axes=[2, 3], mode="cubic",
                             coordinate_transformation_mode="pytorch_half_pixel"),
    # int(float32(1.3) * 10) = 12: the scale (not out/in) drives the coordinates
    "linear-frac-scales": dict(scales=[1.3, 0.7], axes=[2, 3], mode="linear"),
    "nearest-frac-scales": dict(scales=[1.7, 0.45], axes=[2, 3], mode="nearest", nearest_mode="round_prefer_ceil"),
    "linear-aa": dict(scales=[0.5, 0.75], axes=[-2, -1], mode="linear", antialias=1),
    "cubic-aa": dict(sizes=[4, 5], axes=[2, 3], mode="cubic", antialias=1),
    "linear-align": dict(sizes=[6, 20], axes=[2, 3], mode="linear", coordinate_transformation_mode="align_corners"),
    "tf-crop": dict(roi=[-0.2, 0.1, 1.1, 0.9], sizes=[8, 11], axes=[2, 3], mode="linear",
                    coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=0.5),
    "tf-crop-cubic": dict(roi=[0.25, 0.0, 0.75, 1.0], scales=[1.5, 0.5], axes=[2, 3], mode="cubic",
                          coordinate_transformation_mode="tf_crop_and_resize"),
    "keep-aspect": dict(sizes=[25, 40], axes=[2, 3], mode="linear", keep_aspect_ratio_policy="not_larger"),
}


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", list(RESIZE_CASES))
def test_resize_export(case, dynamo):
    kwargs = dict(RESIZE_CASES[case])
    roi = kwargs.pop("roi", None)
    scales = kwargs.pop("scales", None)
    sizes = kwargs.pop("sizes", None)
    if sizes is not None and len(sizes) == 4:
        sizes = [2, 4] + sizes[2:]  # N, C after the first conv
    model = Net(twinops.Resize(roi=roi, scales=scales, sizes=sizes, **kwargs))
    x = _input(2, 3, 10, 12, seed=1)
    proto = _export(model, (x,), dynamo, narrowing_ok=False)  # ONNX scales are float32 already
    node, attrs = _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    assert attrs["pytorch"] == 0
    assert attrs["mode"] == kwargs["mode"].encode()
    assert attrs["coordinate_transformation_mode"] == kwargs.get("coordinate_transformation_mode",
                                                                 "half_pixel").encode()
    if case.startswith("tf-crop"):
        np.testing.assert_allclose(attrs["roi"], [roi[0], roi[1], roi[2], roi[3]], rtol=1e-6)
        assert attrs["extrapolation_value"] == pytest.approx(kwargs.get("extrapolation_value", 0.0))
    else:
        assert attrs["roi"] == [0.0, 0.0, 1.0, 1.0]
    _compare(model, proto, (x,))


def test_resize_sizes_export_exact_scale():
    """sizes 13 from 10 derives the scale 1.3 (not a float32); it exports as 0 (= out/in) without a warning."""
    model = Net(twinops.Resize(sizes=[13, 7], axes=[2, 3], mode="cubic"))
    x = _input(1, 3, 10, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", message="Exporting a model while it is in training mode")
        proto = export_onnx(model.eval(), (x,), dynamo=True)
    _, attrs = _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    assert attrs["scales"] == [0.0, 0.0]
    _compare(model, proto, (x,))


# ---------------------------------------------------------------------------------------
# DynamicTRTResize
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_dynamic_resize_export(align_corners, dynamo):
    model = SizedNet(twinops.DynamicResize(align_corners=align_corners))
    args = (_input(2, 3, 10, 12, seed=2), torch.zeros(1, 1, 7, 19))
    proto = _export(model, args, dynamo)
    node, attrs = _check_node(proto, "DynamicTRTResize", DYNAMIC_ATTRS)
    assert attrs["align_corners"] == int(align_corners)
    assert len(node.input) == 2
    _compare(model, proto, args)


# ---------------------------------------------------------------------------------------
# dynamic shapes: export at one size, run at another
# ---------------------------------------------------------------------------------------

DYNAMIC_CASES = {
    "bilinear-0.7": dict(scale_factor=0.7, mode="bilinear"),
    # floor(45 * 2.6) is 117 in double (F.interpolate's rule) but 116 in float32 arithmetic
    "bilinear-2.6": dict(scale_factor=2.6, mode="bilinear"),
    "nearest-x2": dict(scale_factor=2.0, mode="nearest"),
    "bicubic-aa-0.5": dict(scale_factor=0.5, mode="bicubic", antialias=True),
    "bilinear-size": dict(size=(16, 12), mode="bilinear"),
}


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", list(DYNAMIC_CASES))
def test_interpolate_dynamic_shapes(case, dynamo):
    model = Net(twinops.Interpolate(**DYNAMIC_CASES[case]))
    x = _input(2, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [0, 2, 3]})
    _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(3, 3, 13, 9, seed=5),))
    _compare(model, proto, (_input(1, 3, 45, 7, seed=6),))


class ShapeSized(torch.nn.Module):
    """Output size computed from the input's symbolic shape (ints in the graph, not a scale)."""

    def forward(self, x):
        return twinops.interpolate(x, size=(x.shape[2] * 2, x.shape[3] + 3), mode="bilinear")


def test_torchscript_refuses_a_size_computed_from_the_shape():
    # The tracer hands x.shape over as tensors; a size built from them would be recorded as a
    # constant (a silently fixed size), so twinops refuses it under the TorchScript exporter.
    with pytest.raises(Exception, match=r"size computed from a tensor .* TorchScript exporter"):
        _export(Net(ShapeSized()), (_input(2, 3, 10, 12),), False, dynamic={0: [0, 2, 3]})


@pytest.mark.parametrize("dynamo,resize", [
    pytest.param(True, ShapeSized(), id="size-from-shape-dynamo"),
    pytest.param(True, twinops.Interpolate(scale_factor=0.5, mode="area"), id="area-0.5-dynamo"),
    pytest.param(False, twinops.Interpolate(scale_factor=0.5, mode="area"), id="area-0.5-torchscript"),
])
def test_symbolic_output_size(dynamo, resize):
    model = Net(resize)
    x = _input(2, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [0, 2, 3]})
    _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(3, 3, 13, 9, seed=5),))


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_interpolate_dynamic_height_only(dynamo):
    """One dynamic axis: its length is rebuilt in the graph, the static one stays a constant."""
    model = Net(twinops.Interpolate(scale_factor=(2.6, 0.75), mode="bicubic"))
    x = _input(1, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [2]})
    _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(1, 3, 45, 12, seed=7),))


class MixedScales(torch.nn.Module):
    """The raw op with a scale on H only: H follows the input, W is a fixed length."""

    def forward(self, x):
        attrs = twinops.ResizeAttrs(mode="linear", scales=(2.5, 0.0), pytorch=1)
        return torch.ops.twinops.resize(x, [math.floor(torch.sym_float(x.shape[2]) * 2.5), 9], *attrs.op_args())


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_mixed_scale_axes(dynamo):
    model = Net(MixedScales())
    x = _input(1, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [2, 3]})
    _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(1, 3, 7, 5, seed=8),))


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_dynamic_resize_dynamic_shapes(dynamo):
    model = SizedNet(twinops.DynamicResize())
    args = (_input(2, 3, 10, 12), torch.zeros(1, 1, 7, 19))
    proto = _export(model, args, dynamo, dynamic={0: [0, 2, 3], 1: [2, 3]})
    _check_node(proto, "DynamicTRTResize", DYNAMIC_ATTRS)
    _compare(model, proto, args)
    _compare(model, proto, (_input(1, 3, 6, 9, seed=3), torch.zeros(1, 1, 15, 4)))


@pytest.mark.parametrize("dynamo,how,scales_attr", [
    # ONNX sizes fix the output size whatever the input size (the scale is out/in at run time).
    pytest.param(True, dict(sizes=[9, 14], mode="cubic"), [0.0, 0.0], id="sizes-dynamo"),
    pytest.param(False, dict(sizes=[9, 14], mode="cubic"), [0.0, 0.0], id="sizes-torchscript"),
    # ONNX scales under torch.export: the output size stays int(scale * length) at run time.
    pytest.param(True, dict(scales=[1.5, 0.5], mode="linear"), [1.5, 0.5], id="scales-dynamo"),
])
def test_resize_dynamic_shapes(dynamo, how, scales_attr):
    model = Net(twinops.Resize(axes=[2, 3], **how))
    x = _input(2, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [0, 2, 3]})
    _, attrs = _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    assert attrs["scales"] == scales_attr
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(3, 3, 7, 19, seed=4),))


# ---------------------------------------------------------------------------------------
# scale narrowing warning, registration
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_warns_for_non_float32_scale(dynamo):
    model = Net(twinops.Interpolate(scale_factor=1.1, mode="bilinear")).eval()
    x = _input(1, 3, 10, 12)
    kwargs = {} if dynamo else {"input_names": ["x"]}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        with pytest.warns(UserWarning, match=r"1\.1 .*not representable in float32"):
            proto = export_onnx(model, (x,), dynamo=dynamo, **kwargs)
    _, attrs = _check_node(proto, "TwinopsResize", RESIZE_ATTRS)
    assert attrs["scales"] == [float(np.float32(1.1))] * 2
    _compare(model, proto, (x,))


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_no_warning_for_float32_scale(dynamo):
    model = Net(twinops.Interpolate(scale_factor=1.25, mode="bilinear")).eval()
    kwargs = {} if dynamo else {"input_names": ["x"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        export_onnx(model, (_input(1, 3, 8, 8),), dynamo=dynamo, **kwargs)
    assert not [w for w in caught if "float32" in str(w.message)]


def test_plain_torch_onnx_export_entry_points(tmp_path):
    """Users need only the translation table (dynamo) or nothing extra (TorchScript, symbolics on import)."""
    register_torchscript_symbolics()  # idempotent
    register_torchscript_symbolics()
    table = onnx_translation_table()
    assert {torch.ops.twinops.resize.default, torch.ops.twinops.dynamic_resize.default} <= set(table)  # + other ops
    model = Net(twinops.Interpolate(size=(6, 6), mode="bicubic")).eval()
    x = _input(1, 3, 8, 8)
    program = torch.onnx.export(model, (x,), dynamo=True, custom_translation_table=table, verbose=False)
    _check_node(program.model_proto, "TwinopsResize", RESIZE_ATTRS)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        torch.onnx.export(model, (x,), buffer, dynamo=False)
    _check_node(onnx.load_from_string(buffer.getvalue()), "TwinopsResize", RESIZE_ATTRS)
    path = tmp_path / "m.onnx"
    proto = export_onnx(model, (x,), path)
    assert onnx.load(str(path)) == proto


# ---------------------------------------------------------------------------------------
# the reference kernels on hand-made nodes
# ---------------------------------------------------------------------------------------

def _resize_model(x_shape, sizes, **attrs):
    full = dict(mode="linear", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor",
                cubic_coeff_a=-0.75, exclude_outside=0, antialias=0, scales=[0.0, 0.0], roi=[0.0, 0.0, 1.0, 1.0],
                extrapolation_value=0.0, pytorch=0, tensorrt_plugin_shape_input_indices=[1])
    full.update(attrs)
    h = onnx.helper
    node = h.make_node("TwinopsResize", ["X", "sizes"], ["Y"], domain="twinops", **full)
    graph = h.make_graph(
        [node], "g", [h.make_tensor_value_info("X", onnx.TensorProto.FLOAT, list(x_shape))],
        [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)],
        initializer=[onnx.numpy_helper.from_array(np.asarray(sizes, dtype=np.int64), "sizes")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 19), h.make_opsetid("twinops", 1)])


HAND_MADE = [
    dict(sizes=[7, 9], mode="cubic", scales=[0.0, 0.75], exclude_outside=1),
    dict(sizes=[12, 8], mode="linear", scales=[1.2999999523162842, 0.699999988079071]),
    dict(sizes=[8, 11], mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
         roi=[-0.2, 0.1, 1.1, 0.9], extrapolation_value=0.5),
    dict(sizes=[5, 6], mode="nearest", nearest_mode="ceil", scales=[0.5, 0.5]),
    # roi arithmetic in float64 instead of Resize-19's float32 picks other source pixels here
    dict(sizes=[10, 12], mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
         roi=[0.22, 0.0, 0.85, 1.0]),
]


@pytest.mark.parametrize("case", range(len(HAND_MADE)))
def test_reference_matches_onnx_resize_and_fallback(case):
    """The pytorch=0 reference equals onnx's own Resize node, also through the older n-d helper."""
    attrs = dict(HAND_MADE[case])
    sizes = attrs.pop("sizes")
    x = _input(2, 3, 10, 12, seed=case).numpy()
    model = _resize_model(x.shape, sizes, **attrs)
    got = ReferenceEvaluator(model, new_ops=onnx_reference_ops()).run(None, {"X": x})[0]
    assert got.shape == (2, 3, *sizes)

    # the same resize as a standard ONNX Resize-19 node (scales input where the node has scales, else sizes)
    h = onnx.helper
    scales = attrs.pop("scales", [0.0, 0.0])
    roi = attrs.pop("roi", [0.0, 0.0, 1.0, 1.0])
    inputs = {"X": x, "roi": np.asarray([0, 0, roi[0], roi[1], 1, 1, roi[2], roi[3]], np.float32)}
    if all(s > 0 for s in scales):
        inputs["scales"] = np.asarray([1, 1, *scales], np.float32)
        names = ["X", "roi", "scales"]
    elif not any(s > 0 for s in scales):
        inputs["sizes"] = np.asarray([2, 3, *sizes], np.int64)
        names = ["X", "roi", "", "sizes"]
    else:
        names = None
    if names:
        node = h.make_node("Resize", names, ["Y"], **attrs)
        vi = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(inputs[n].dtype), inputs[n].shape)
              for n in names if n]
        std = h.make_model(h.make_graph([node], "g", vi, [h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, None)]),
                           opset_imports=[h.make_opsetid("", 19)])
        want = ReferenceEvaluator(std).run(None, {n: inputs[n] for n in names if n})[0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    # the n-d helper path kept for older onnx releases
    from twinops.library.resize.export import _onnx_resize

    a = dict(mode="linear", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor",
             cubic_coeff_a=-0.75, exclude_outside=0, antialias=0, extrapolation_value=0.0)
    a.update(attrs)
    args = (x, sizes, a["mode"], a["coordinate_transformation_mode"], a["nearest_mode"], a["cubic_coeff_a"],
            a["exclude_outside"], a["antialias"], scales, roi, a["extrapolation_value"])
    np.testing.assert_allclose(_onnx_resize(*args, per_axis=False), _onnx_resize(*args, per_axis=True),
                               rtol=1e-12, atol=1e-12)
