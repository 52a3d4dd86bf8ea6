"""export_onnx(replace=...): a model calling F.grid_sample / F.interpolate, not edited, exports
twinops nodes (both exporters) that equal eager under onnx.reference, also at other dynamic shapes."""
import io
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
from onnx.reference import ReferenceEvaluator  # noqa: E402

import twinops  # noqa: E402
from twinops import onnx_replace  # noqa: E402
from twinops.onnx_export import export_onnx, onnx_reference_ops  # noqa: E402

from export_helpers import export_quietly  # noqa: E402

EXPORTERS = [pytest.param(True, id="dynamo"), pytest.param(False, id="torchscript")]
HAS_GRID_SAMPLE = hasattr(twinops, "grid_sample")
needs_grid_sample = pytest.mark.skipif(not HAS_GRID_SAMPLE, reason="twinops.grid_sample is not in this build")
STANDARD = {"Resize", "GridSample", "Upsample"}


def _export(model, args, dynamo, dynamic=None, replace=("grid_sample", "interpolate"), **kwargs):
    """Exports quietly; ``dynamic``: {input index: [dims]} in either exporter's form."""
    return export_quietly(model, args, dynamo, dynamic, replace=replace, **kwargs)


def _ops(proto):
    return [n.op_type for n in proto.graph.node]


def _twinops(proto, op_type):
    return [n for n in proto.graph.node if n.domain == "twinops" and n.op_type == op_type]


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _compare(model, proto, args, atol=1e-5):
    ev = ReferenceEvaluator(proto, new_ops=onnx_reference_ops())
    got = ev.run(None, {i.name: a.numpy() for i, a in zip(proto.graph.input, args)})
    with torch.no_grad():
        want = model(*args)
    want = (want,) if isinstance(want, torch.Tensor) else want
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), atol=atol, rtol=1e-5)


def _input(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * 2 - 0.5


# ---------------------------------------------------------------------------------------
# F.interpolate
# ---------------------------------------------------------------------------------------

INTERPOLATE_CASES = {
    "nearest-x2": dict(scale_factor=2.0, mode="nearest"),
    "nearest-1.5": dict(scale_factor=1.5, mode="nearest"),
    "nearest-size": dict(size=(7, 15), mode="nearest"),
    "nearest-exact": dict(scale_factor=0.5, mode="nearest-exact"),
    "bilinear-0.7": dict(scale_factor=0.7, mode="bilinear"),
    "bilinear-align": dict(scale_factor=1.5, mode="bilinear", align_corners=True),
    "bilinear-size": dict(size=(13, 7), mode="bilinear"),
    # floor(45 * 2.6) is 117 in double (eager's rule), 116 in float32 arithmetic
    "bicubic-2.6": dict(scale_factor=2.6, mode="bicubic"),
    "bicubic-align-size": dict(size=(5, 17), mode="bicubic", align_corners=True),
    "bilinear-aa": dict(size=(4, 9), mode="bilinear", antialias=True),
    "bicubic-aa": dict(scale_factor=0.75, mode="bicubic", antialias=True),
}


class Interp(torch.nn.Module):
    """A model that calls F.interpolate itself (nothing twinops in it)."""

    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def forward(self, x):
        return F.interpolate(x, **self.kwargs)


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", list(INTERPOLATE_CASES))
def test_interpolate_replaced(case, dynamo):
    kwargs = INTERPOLATE_CASES[case]
    model = Interp(**kwargs)
    x = _input(2, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [0, 2, 3]}, replace=("interpolate",))
    onnx.checker.check_model(proto, full_check=True)
    assert not STANDARD & set(_ops(proto)), _ops(proto)
    (node,) = _twinops(proto, "TwinopsResize")
    # the attributes twinops.interpolate's own export writes for the same call
    mine = _export(twinops.Interpolate(**kwargs), (x,), dynamo, dynamic={0: [0, 2, 3]}, replace=())
    (want,) = _twinops(mine, "TwinopsResize")
    assert _attrs(node) == _attrs(want)
    assert _attrs(node)["pytorch"] == 1
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(3, 3, 13, 9, seed=5),))
    _compare(model, proto, (_input(1, 3, 45, 7, seed=6),))


class ShapeSized(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, size=(x.shape[2] * 2, x.shape[3] + 3), mode="bilinear")


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_interpolate_size_from_the_shape(dynamo):
    """Integer size arithmetic on the input's shape stays in the graph (both exporters)."""
    model = ShapeSized()
    x = _input(1, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [2, 3]}, replace="interpolate")
    assert len(_twinops(proto, "TwinopsResize")) == 1 and "Resize" not in _ops(proto)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(1, 3, 7, 21, seed=2),))


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_interpolate_float_size_is_refused_when_dynamic(dynamo):
    """recompute_scale_factor=True computes the size in float32 in the graph: wrong at some
    sizes, so refused with dynamic H/W; exported with static H/W."""
    model = Interp(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)
    x = _input(1, 3, 10, 12)
    with pytest.raises(ValueError, match="twinops ONNX export.*floating point"):
        _export(model, (x,), dynamo, dynamic={0: [2, 3]}, replace="interpolate")
    proto = _export(model, (x,), dynamo, replace="interpolate")
    assert len(_twinops(proto, "TwinopsResize")) == 1
    _compare(model, proto, (x,))


class Explicit(torch.nn.Module):
    """The explicit ATen overloads, called directly (F.interpolate calls ``.vec``)."""

    def forward(self, x):
        a = torch.ops.aten.upsample_nearest2d.default(x, [x.shape[2] * 2, x.shape[3] * 2], 2.0, 2.0)
        b = torch.ops.aten._upsample_bicubic2d_aa.default(x, [7, 9], False)
        return a, b


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_explicit_overloads(dynamo):
    """Under TorchScript a directly called overload's size list is recorded as constants; with a
    scale it is rebuilt as floor(in * s) on a dynamic axis, as for twinops::resize."""
    model = Explicit()
    x = _input(1, 3, 10, 12)
    proto = _export(model, (x,), dynamo, dynamic={0: [2, 3]}, replace="interpolate")
    assert len(_twinops(proto, "TwinopsResize")) == 2 and "Resize" not in _ops(proto)
    _compare(model, proto, (x,))
    _compare(model, proto, (_input(1, 3, 7, 5, seed=3),))


class NotMapped(torch.nn.Module):
    """What "interpolate" leaves to standard ONNX: area (adaptive_avg_pool2d, also what global
    pooling calls) and 3-D input (upsample_linear1d; twinops' resize is 4-D)."""

    def forward(self, x, s):
        return F.interpolate(x, size=(5, 6), mode="area"), F.interpolate(s, scale_factor=2.0, mode="linear")


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_area_and_other_ranks_stay_standard(dynamo):
    model = NotMapped()
    args = (_input(1, 3, 10, 12), _input(1, 3, 8))
    proto = _export(model, args, dynamo, replace="interpolate")
    # the exporter's own forms (Resize, AveragePool, or gathers where it decomposes), no twinops node
    assert not [n for n in proto.graph.node if n.domain == "twinops"], _ops(proto)
    _compare(model, proto, args)


# ---------------------------------------------------------------------------------------
# F.grid_sample (with F.interpolate in the same model)
# ---------------------------------------------------------------------------------------

class Warp(torch.nn.Module):
    """Conv -> F.interpolate (three modes) -> F.grid_sample with a flow, as a model writes it."""

    def __init__(self, mode="bilinear", padding_mode="zeros", align_corners=False):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)

    def forward(self, x, grid):
        y = self.conv(x)
        up = F.interpolate(y, scale_factor=2.0, mode="bilinear")
        near = F.interpolate(y, scale_factor=2.0, mode="nearest")
        cubic = F.interpolate(y, size=(up.shape[2], up.shape[3]), mode="bicubic", align_corners=True)
        return F.grid_sample(up + near - cubic, grid, **self.kw)


GRID_CASES = [
    dict(mode="bilinear", padding_mode="zeros", align_corners=False),
    dict(mode="nearest", padding_mode="border", align_corners=True),
    dict(mode="bicubic", padding_mode="reflection", align_corners=False),
]


def _grid(n, h, w, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, h, w, 2, generator=g) * 2.4 - 1.2  # reaches outside [-1, 1]


@needs_grid_sample
@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", range(len(GRID_CASES)), ids=[c["mode"] for c in GRID_CASES])
def test_grid_sample_and_interpolate_replaced(case, dynamo):
    kw = GRID_CASES[case]
    model = Warp(**kw)
    args = (_input(2, 3, 6, 7), _grid(2, 5, 9))
    proto = _export(model, args, dynamo, dynamic={0: [0, 2, 3], 1: [0, 1, 2]})
    onnx.checker.check_model(proto, full_check=True)
    assert not STANDARD & set(_ops(proto)), _ops(proto)
    assert len(_twinops(proto, "TwinopsResize")) == 3
    (node,) = _twinops(proto, "TwinopsGridSample")
    attrs = _attrs(node)
    names = {"bilinear": b"linear", "nearest": b"nearest", "bicubic": b"cubic"}
    assert attrs["mode"] == names[kw["mode"]]
    assert attrs["padding_mode"] == kw["padding_mode"].encode()
    assert attrs["align_corners"] == int(kw["align_corners"])
    assert attrs["plugin_version"] == b"1" and attrs["plugin_namespace"] == b""
    _compare(model, proto, args)
    _compare(model, proto, (_input(1, 3, 9, 4, seed=3), _grid(1, 3, 11, seed=4)))


class FGridSample(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x, grid):
        return F.grid_sample(x, grid, **self.kw)


@needs_grid_sample
@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("case", range(len(GRID_CASES)), ids=[c["mode"] for c in GRID_CASES])
def test_grid_sample_node_equals_twinops_modules(case, dynamo):
    """The replaced F.grid_sample's node is the node twinops.GridSample exports."""
    kw = GRID_CASES[case]
    args = (_input(1, 2, 5, 6), _grid(1, 3, 4))
    (got,) = _twinops(_export(FGridSample(**kw), args, dynamo, replace="grid_sample"), "TwinopsGridSample")
    (want,) = _twinops(_export(twinops.GridSample(**kw), args, dynamo, replace=()), "TwinopsGridSample")
    assert _attrs(got) == _attrs(want)


class Warp3d(torch.nn.Module):
    def forward(self, x, grid):
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=True)


@needs_grid_sample
@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_grid_sample_5d_replaced(dynamo):
    model = Warp3d()
    g = torch.Generator().manual_seed(2)
    args = (_input(1, 2, 4, 5, 6), torch.rand(1, 3, 4, 2, 3, generator=g) * 2.2 - 1.1)
    proto = _export(model, args, dynamo, dynamic={0: [2, 3, 4], 1: [1, 2, 3]}, replace=["grid_sample"])
    assert _ops(proto) == ["TwinopsGridSample"]
    _compare(model, proto, args)
    _compare(model, proto, (_input(1, 2, 3, 7, 2, seed=5), torch.rand(1, 2, 5, 3, 3, generator=g) * 2 - 1))


def test_aten_codes_map_to_onnx_names():
    from twinops.library.grid_sample.export import node_values

    assert node_values(0, 0, False, 4) == {"mode": "linear", "padding_mode": "zeros", "align_corners": 0}
    assert node_values(1, 1, True, 5) == {"mode": "nearest", "padding_mode": "border", "align_corners": 1}
    assert node_values(2, 2, 1, 4) == {"mode": "cubic", "padding_mode": "reflection", "align_corners": 1}
    with pytest.raises(ValueError, match="bicubic interpolation supports 4-D input only"):
        node_values(2, 0, False, 5)
    with pytest.raises(ValueError, match="interpolation_mode must be 0 .*got 3"):
        node_values(3, 0, False, 4)
    with pytest.raises(ValueError, match="padding_mode must be 0 .*got 7"):
        node_values(0, 7, False, 4)


# ---------------------------------------------------------------------------------------
# without replace, names, the TorchScript registry
# ---------------------------------------------------------------------------------------

class Both(torch.nn.Module):
    def forward(self, x, grid):
        return F.grid_sample(F.interpolate(x, scale_factor=2.0, mode="bilinear"), grid, align_corners=False)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_without_replace_the_export_is_unchanged(dynamo):
    model, args = Both(), (_input(1, 3, 6, 7), _grid(1, 4, 5))
    default = _export(model, args, dynamo, replace=None)
    empty = _export(model, args, dynamo, replace=())
    assert _ops(default) == _ops(empty)
    assert {"Resize", "GridSample"} <= set(_ops(default))
    assert not [n for n in default.graph.node if n.domain == "twinops"]


def test_unknown_names_are_refused():
    known = onnx_replace.replacements()
    assert {"interpolate", "grid_sample"} <= set(known)
    model, args = Both(), (_input(1, 3, 6, 7), _grid(1, 4, 5))
    with pytest.raises(ValueError, match=r"replace names an unknown op 'resize'; known: .*interpolate"):
        export_onnx(model, args, replace=("interpolate", "resize"))
    with pytest.raises(ValueError, match="replace names an unknown op 'GridSample'"):
        export_onnx(model, args, dynamo=False, replace="GridSample")
    with pytest.raises(TypeError, match="replace must contain op names"):
        export_onnx(model, args, replace=(1,))


def _plain_torchscript_ops(model, args):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        torch.onnx.export(model, args, buffer, dynamo=False)
    return _ops(onnx.load_from_string(buffer.getvalue()))


def test_torchscript_symbolics_are_removed_after_the_export():
    model, args = Interp(scale_factor=2.0, mode="bilinear"), (_input(1, 3, 6, 7),)
    before = _plain_torchscript_ops(model, args)
    assert "Resize" in before
    assert "TwinopsResize" in _ops(_export(model, args, False, replace="interpolate"))
    assert _plain_torchscript_ops(model, args) == before
    # also when the export fails inside the symbolic
    bad = Interp(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)
    with pytest.raises(ValueError):
        _export(bad, args, False, dynamic={0: [2, 3]}, replace="interpolate")
    assert _plain_torchscript_ops(model, args) == before


def test_a_users_custom_symbolic_is_put_back():
    from torch.onnx import register_custom_op_symbolic, unregister_custom_op_symbolic

    def mine(g, input, *args):
        return g.op("Identity", input)

    model, args = Interp(scale_factor=1.0, mode="bilinear"), (_input(1, 3, 6, 7),)
    register_custom_op_symbolic("aten::upsample_bilinear2d", mine, 20)
    try:
        assert "TwinopsResize" in _ops(_export(model, args, False, replace="interpolate", opset_version=20))
        assert _ops(_export(model, args, False, replace=(), opset_version=20)) == ["Identity"]
    finally:
        unregister_custom_op_symbolic("aten::upsample_bilinear2d", 20)


def test_plain_torch_onnx_export_with_the_replacements():
    """The documented recipe for torch.onnx.export itself (both exporters)."""
    reps = onnx_replace.resolve_replace(("interpolate",))
    model, args = Interp(scale_factor=2.0, mode="bicubic"), (_input(1, 3, 6, 7),)
    table = {**twinops.onnx_translation_table(), **onnx_replace.translation_table(reps)}
    program = torch.onnx.export(model, args, dynamo=True, custom_translation_table=table, verbose=False)
    assert _ops(program.model_proto) == ["TwinopsResize"]
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        with onnx_replace.torchscript_symbolics(reps):
            torch.onnx.export(model, args, buffer, dynamo=False)
    assert "TwinopsResize" in _ops(onnx.load_from_string(buffer.getvalue()))
    assert "Resize" in _plain_torchscript_ops(model, args)


@needs_grid_sample
def test_torchscript_below_opset_16():
    """ONNX has no GridSample before opset 16; the twinops node exports at any opset (here 11)."""
    model, args = Warp(mode="bicubic", padding_mode="border", align_corners=True), (_input(1, 3, 5, 6), _grid(1, 4, 3))
    proto = _export(model, args, False, opset_version=11)
    onnx.checker.check_model(proto, full_check=True)
    assert len(_twinops(proto, "TwinopsGridSample")) == 1 and not STANDARD & set(_ops(proto))
    _compare(model, proto, args)
