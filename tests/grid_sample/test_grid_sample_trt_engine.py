"""grid_sample on real TensorRT engines (T3): skipped where `tensorrt` or a GPU is missing.

Three ways a model reaches twinops' grid_sample kernel in an engine, each built with a dynamic
min/opt/max profile, run at two shapes of it and compared bitwise with the torch op (the same
kernel): twinops' own TwinopsGridSample node (twinops.export_onnx), MMDeploy's grid_sampler node,
and the standard ONNX GridSample node that torch.onnx writes for F.grid_sample, through the
parser's plugin override (TensorRT >= 10.15).
"""
import io
import warnings

import pytest
import torch

import twinops
from twinops import trt as ttrt

REASON = ttrt.unavailable_reason()
needs_trt = pytest.mark.skipif(REASON is not None, reason=f"real TensorRT engine tests: {REASON}")
TORCH_MODE = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
CASES = [  # (X shape, grid shape, F.grid_sample keyword arguments)
    ((2, 3, 9, 7), (2, 5, 6, 2), dict(mode="bilinear", padding_mode="zeros", align_corners=False)),
    ((2, 3, 9, 7), (2, 5, 6, 2), dict(mode="bicubic", padding_mode="border", align_corners=True)),
    ((2, 3, 9, 7), (2, 5, 6, 2), dict(mode="nearest", padding_mode="reflection", align_corners=False)),
    ((2, 3, 4, 6, 5), (2, 3, 5, 4, 3), dict(mode="bilinear", padding_mode="reflection", align_corners=True)),
    ((2, 3, 4, 6, 5), (2, 3, 5, 4, 3), dict(mode="nearest", padding_mode="border", align_corners=False)),
]
IDS = [f"{len(c[0])}d-{c[2]['mode']}-{c[2]['padding_mode']}-ac{int(c[2]['align_corners'])}" for c in CASES]


def _data(shape, grid_shape, dtype, seed=0):
    """CUDA X and a grid reaching a little outside [-1, 1]."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    grid = torch.rand(grid_shape, generator=g) * 2.4 - 1.2
    return x.to("cuda", dtype), grid.to("cuda", dtype)


def _torch_op(x, grid, kw):
    return torch.ops.twinops.grid_sample(x, grid, TORCH_MODE[kw["mode"]], kw["padding_mode"],
                                         int(kw["align_corners"]))


def _dynamic_axes(rank):
    """Every dim dynamic but C and the grid's coordinate count; N shared by X and grid."""
    spatial = "dhw"[3 - (rank - 2):]
    return {"x": {0: "n", **{2 + i: s for i, s in enumerate(spatial)}},
            "grid": {0: "n", **{1 + i: s + "_out" for i, s in enumerate(spatial)}}}


def _grown(shape, fixed):
    """The profile's max: dynamic dims doubled."""
    return tuple(d if i in fixed else 2 * d for i, d in enumerate(shape))


def _profiles(shape, grid_shape):
    """{input: (min, opt, max)}: dynamic dims from half to twice the example."""
    def one(s, fixed):
        return (tuple(d if i in fixed else max(1, d // 2) for i, d in enumerate(s)), tuple(s), _grown(s, fixed))
    return {"x": one(shape, {1}), "grid": one(grid_shape, {len(grid_shape) - 1})}


def _check_engine(runner, shape, grid_shape, dtype, kw):
    for seed, (s, gs) in enumerate([(shape, grid_shape), (_grown(shape, {1}), _grown(grid_shape, {len(shape) - 1}))]):
        x, grid = _data(s, gs, dtype, seed)
        (y,) = runner(x=x, grid=grid).values()
        torch.cuda.synchronize()
        assert y.dtype == dtype and y.shape == (s[0], s[1], *gs[1:-1])
        torch.testing.assert_close(y, _torch_op(x, grid, kw), rtol=0, atol=0, equal_nan=True, msg=f"{kw} at {s}")


class _Call(torch.nn.Module):
    def __init__(self, fn, kw):
        super().__init__()
        self.fn, self.kw = fn, kw

    def forward(self, x, grid):
        return self.fn(x, grid, **self.kw)


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,grid_shape,kw", CASES, ids=IDS)
def test_twinops_node_engine_equals_the_torch_op(dtype, shape, grid_shape, kw):
    x, grid = _data(shape, grid_shape, dtype)
    proto = twinops.export_onnx(_Call(twinops.grid_sample, kw), (x, grid), dynamo=False, input_names=["x", "grid"],
                                output_names=["y"], dynamic_axes=_dynamic_axes(len(shape)))
    assert [n.op_type for n in proto.graph.node if n.domain == "twinops"] == ["TwinopsGridSample"]
    runner = ttrt.TRTRunner(ttrt.build_engine(proto, _profiles(shape, grid_shape)))
    _check_engine(runner, shape, grid_shape, dtype, kw)


def _mmdeploy_model(rank, dtype, kw):
    """A graph of one MMDeploy grid_sampler node, as MMDeploy's exporter writes it (domain mmdeploy, int codes)."""
    from onnx import TensorProto, helper

    codes = dict(interpolation_mode=("bilinear", "nearest", "bicubic").index(kw["mode"]),
                 padding_mode=("zeros", "border", "reflection").index(kw["padding_mode"]),
                 align_corners=int(kw["align_corners"]))
    node = helper.make_node("grid_sampler", ["x", "grid"], ["y"], domain="mmdeploy", **codes)
    t = {torch.float32: TensorProto.FLOAT, torch.float16: TensorProto.FLOAT16}[dtype]
    axes = _dynamic_axes(rank)
    x = helper.make_tensor_value_info("x", t, [axes["x"].get(i, 3) for i in range(rank)])
    grid = helper.make_tensor_value_info("grid", t, [axes["grid"].get(i, rank - 2) for i in range(rank)])
    y = helper.make_tensor_value_info("y", t, ["n", 3] + [axes["grid"][i] for i in range(1, rank - 1)])
    graph = helper.make_graph([node], "grid_sampler", [x, grid], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mmdeploy", 1)])


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,grid_shape,kw", CASES, ids=IDS)
def test_mmdeploy_grid_sampler_engine_equals_the_torch_op(dtype, shape, grid_shape, kw):
    model = _mmdeploy_model(len(shape), dtype, kw)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(shape, grid_shape), plugins=True))
    _check_engine(runner, shape, grid_shape, dtype, kw)


def _torch_onnx_gridsample(shape, grid_shape, dtype, kw):
    """torch.onnx's (TorchScript) export of F.grid_sample: a standard GridSample node."""
    import onnx

    x, grid = _data(shape, grid_shape, dtype)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Call(torch.nn.functional.grid_sample, kw), (x, grid), f, dynamo=False,
                          opset_version=20 if len(shape) == 5 else 16, input_names=["x", "grid"],
                          output_names=["y"], dynamic_axes=_dynamic_axes(len(shape)))
    model = onnx.load_from_string(f.getvalue())
    assert [n.op_type for n in model.graph.node] == ["GridSample"]
    return model


def _needs_override():
    import tensorrt as trt

    if not hasattr(getattr(trt, "OnnxParserFlag", None), "ENABLE_PLUGIN_OVERRIDE"):
        pytest.skip(f"TensorRT {trt.__version__}'s ONNX parser has no plugin override (10.15+)")


@needs_trt
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape,grid_shape,kw", CASES, ids=IDS)
def test_standard_gridsample_node_with_plugin_override_runs_twinops(dtype, shape, grid_shape, kw):
    _needs_override()
    model = _torch_onnx_gridsample(shape, grid_shape, dtype, kw)
    runner = ttrt.TRTRunner(ttrt.build_engine(model, _profiles(shape, grid_shape), plugin_override=True))
    _check_engine(runner, shape, grid_shape, dtype, kw)


@needs_trt
def test_a_5d_gridsample_node_needs_the_override():
    """TensorRT's own GridSample layer is 4-D only: the 5-D node builds through the override alone."""
    _needs_override()
    shape, grid_shape, kw = CASES[3]
    model = _torch_onnx_gridsample(shape, grid_shape, torch.float32, kw)
    with pytest.raises(ttrt.TRTBuildError):
        ttrt.build_engine(model, _profiles(shape, grid_shape), plugins=False)
    ttrt.build_engine(model, _profiles(shape, grid_shape), plugin_override=True)
