"""Conformance of every declared op (twinops.opdef): the same contract, read from each declaration.

Per op and per declared Sample: torch.library.opcheck of every twinops op the call reaches
(forward and backward), float64 gradcheck, torch.compile(fullgraph=True) == eager, both
exporters + onnx.checker + onnx.reference == eager at the export shape and three others (the
inputs' dynamic dims free); per op: the generic bad-input errors derived from the declaration
and the plugin creators' fields. An op's own test file holds only what is special to it.
"""
import re

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import twinops
from twinops import onnx_nodes, opdef
from twinops.testing import random_input

OPS = list(opdef.registered().values())
SAMPLES = [pytest.param(op, s, id=f"{op.name}-{i}") for op in OPS for i, s in enumerate(op.samples)]
EXPORTERS = ["dynamo", "torchscript"]


def _inputs(op, shapes, dtype=torch.float32, seed=0):
    return [random_input(s, dtype, seed=seed + i) for i, s in enumerate(shapes)]


def _api(op):
    return opdef.resolve(op.api)


def _who(op):
    return opdef._qualname(op.api)


class _Recorder(TorchDispatchMode):
    """Records every call of a twinops op (func, args) below autograd."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.namespace == "twinops":
            self.calls.append((func, args))
        return func(*args, **(kwargs or {}))


def _clone(v, grad):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(grad and v.is_floating_point())
    return v


@pytest.mark.parametrize("op,sample", SAMPLES)
def test_opcheck(op, sample):
    xs = [x.requires_grad_(t.differentiable) for x, t in zip(_inputs(op, sample.shapes), op.inputs)]
    with _Recorder() as rec:
        y = _api(op)(*xs, **sample.kwargs)
        if op.backward_op:
            y.sum().backward()
    called = {f"{f.namespace}::{f._opname}" for f, _ in rec.calls}
    assert op.node.torch_op in called
    if op.backward_op:
        assert op.backward_op in called
    for func, args in rec.calls:
        first = func._opname == op.node.torch_op.split("::")[1]
        torch.library.opcheck(func, tuple(_clone(a, first) for a in args))


@pytest.mark.parametrize("op,sample", SAMPLES)
def test_gradcheck_float64(op, sample):
    if not op.backward_op:
        pytest.skip(f"{op.name} is not differentiable")
    xs = _inputs(op, sample.shapes, torch.float64)
    grads = [i for i, t in enumerate(op.inputs) if t.differentiable]

    def f(*free):
        full = list(xs)
        for i, v in zip(grads, free):
            full[i] = v
        return _api(op)(*full, **sample.kwargs)

    assert torch.autograd.gradcheck(f, tuple(xs[i].requires_grad_() for i in grads))


@pytest.mark.parametrize("op,sample", SAMPLES)
def test_torch_compile_fullgraph_equals_eager(op, sample):
    torch._dynamo.reset()
    xs = _inputs(op, sample.shapes)
    fn = _api(op)
    compiled = torch.compile(lambda *a: fn(*a, **sample.kwargs), fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(*xs), fn(*xs, **sample.kwargs), rtol=0, atol=0)


def _dynamic_dims(op, shapes):
    """{input index: [dims]}: the declared dynamic dims whose example length is at least 2
    (torch.export specialises lengths 0 and 1)."""
    out = {}
    for i, (t, s) in enumerate(zip(op.inputs, shapes)):
        dims = sorted({d % len(s) for d in t.dynamic if s[d % len(s)] >= 2})
        if dims:
            out[i] = dims
    return out


def _other_shapes(shapes, dynamic):
    """Three sets of input shapes other than ``shapes``, varying only the dynamic dims."""
    out = []
    for change in (lambda n: n + 1, lambda n: 2 * n + 1, lambda n: max(2, n - 1) if n > 2 else n + 2):
        out.append(tuple(tuple(change(n) if d in dynamic.get(i, ()) else n for d, n in enumerate(s))
                         for i, s in enumerate(shapes)))
    return out


def _export(op, module, xs, dims, exporter):
    import warnings

    names = [t.name for t in op.inputs]
    kwargs = {}
    if exporter == "dynamo":
        d = torch.export.Dim.DYNAMIC
        kwargs["dynamic_shapes"] = tuple({k: d for k in dims.get(i, [])} or None for i in range(len(xs)))
    else:
        kwargs["input_names"] = names
        kwargs["dynamic_axes"] = {names[i]: {k: f"{names[i]}_{k}" for k in ds} for i, ds in dims.items()}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        return twinops.export_onnx(module, tuple(xs), dynamo=exporter == "dynamo", **kwargs)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("op,sample", SAMPLES)
def test_export_checker_and_reference_at_other_shapes(op, sample, exporter):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxscript")
    from onnx.reference import ReferenceEvaluator

    if exporter not in op.exporters:
        pytest.skip(f"{op.name} does not support the {exporter} exporter")
    module = opdef.resolve(op.module)(**sample.kwargs).eval()
    xs = _inputs(op, sample.shapes, torch.float64)
    dims = _dynamic_dims(op, sample.shapes) if sample.dynamic else {}
    proto = _export(op, module, xs, dims, exporter)
    onnx.checker.check_model(proto, full_check=True)
    nodes = [n for n in proto.graph.node if n.domain == op.node.domain]
    assert [n.op_type for n in nodes] == [op.node.op_type]
    types = {a.name: onnx.AttributeProto.AttributeType.Name(a.type) for a in nodes[0].attribute}
    assert types == onnx_nodes.attribute_types(op.node)

    atol, rtol = opdef.resolve(op.tolerances)[torch.float64]
    ev = ReferenceEvaluator(proto, new_ops=twinops.onnx_reference_ops())
    graph_inputs = [i.name for i in proto.graph.input]
    for shapes in [sample.shapes] + (_other_shapes(sample.shapes, dims) if dims else []):
        xs = _inputs(op, shapes, torch.float64, seed=1)
        feeds = {i.name: x.numpy() for i, x in zip(proto.graph.input, xs)} if len(graph_inputs) == len(xs) else \
            {t.name: x.numpy() for t, x in zip(op.inputs, xs) if t.name in graph_inputs}
        (got,) = ev.run(None, feeds)
        with torch.no_grad():
            want = module(*xs).numpy()
        assert got.shape == want.shape, shapes
        np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=str(shapes))


# ---------------------------------------------------------------------------------------
# bad input: the generic messages, computed from the declaration
# ---------------------------------------------------------------------------------------

def _bad_cases(op):
    """(what, argument index or name, bad value) for every check the declaration implies."""
    out = []
    for i, t in enumerate(op.inputs):
        out.append((f"{t.name}-not-a-tensor", i, [1.0, 2.0]))
        if t.ranks:
            out.append((f"{t.name}-rank", i, torch.ones((1,) * (max(t.ranks) + 1))))
        elif t.min_rank:
            out.append((f"{t.name}-rank", i, torch.ones((2,) * (t.min_rank - 1))))
        if t.dtypes and not t.shape_only:
            out.append((f"{t.name}-dtype", i, torch.ones(op.samples[0].shapes[i], dtype=torch.int32)))
    for a in op.args:
        if a.type == "bool":
            out.append((f"{a.name}-type", a.name, "yes"))
        elif a.choices:
            out.append((f"{a.name}-choice", a.name, "bogus" if a.type == "str" else 7))
        if a.finite:
            out.append((f"{a.name}-finite", a.name, float("nan")))
    return out


BAD = [pytest.param(op, where, value, id=f"{op.name}-{what}") for op in OPS for what, where, value in _bad_cases(op)]


@pytest.mark.parametrize("op,where,value", BAD)
def test_bad_input_message_from_the_declaration(op, where, value):
    sample = op.samples[0]
    xs = _inputs(op, sample.shapes)
    kw = dict(sample.kwargs)
    who = _who(op)
    if isinstance(where, int):
        xs[where] = value
        check = lambda: opdef.check_tensor(op.inputs[where], value, who)  # noqa: E731
    else:
        kw[where] = value
        check = lambda: opdef.check_arg(op.arg(where), value, who)  # noqa: E731
    with pytest.raises((TypeError, ValueError)) as expected:
        check()
    with pytest.raises(type(expected.value), match=f"^{re.escape(str(expected.value))}$"):
        _api(op)(*xs, **kw)


# ---------------------------------------------------------------------------------------
# plugin creators: the fields the host reads a node by
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_declared_plugin_fields_match_the_library(op):
    host_mod = pytest.importorskip("twinops.plugin_host")
    reason = host_mod.unavailable_reason(enqueue=False)
    if reason:
        pytest.skip(f"plugin host: {reason}")
    host = host_mod.get_host()
    for c in op.plugins:
        for version in c.versions:
            found = host.find(c.name, version)
            assert found is not None, f"{c.name} v{version} is not in the plugin library"
            assert [f[0] for f in found.fields] == [f[0] for f in opdef.creator_fields(op.node, c)]


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_declaration_is_consistent(op):
    """What the faces read from the declaration exists: the API, module, torch ops, node attributes
    in the torch op's argument order, a reference kernel, tolerances for every dtype."""
    assert callable(_api(op)) and isinstance(opdef.resolve(op.module)(**op.samples[0].kwargs), torch.nn.Module)
    schema = [a.name for a in onnx_nodes._torch_schema(op.node).arguments]
    assert schema[-len(op.node.attrs):] == [a.name for a in op.node.attrs]
    assert op.node.reference is not None and callable(opdef.resolve(op.node.reference))
    assert set(op.dtypes) <= set(opdef.resolve(op.tolerances))
    assert op.node.op_type in {c.name for c in op.plugins}
