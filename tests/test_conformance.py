"""Conformance of every declared op (twinops.opdef): the same contract, read from each declaration.

Per op and per declared Sample: torch.library.opcheck of every twinops op the call reaches
(forward and backward), float64 gradcheck, torch.compile(fullgraph=True) == eager, both
exporters + onnx.checker + onnx.reference == eager at the export shape and three others (the
inputs' dynamic dims free); per op: the generic bad-input errors derived from the declaration;
per op and declared plugin creator version, through the TensorRT-free plugin host: the declared
fields against the library's, the lifecycle (CPU), field fuzzing (Hypothesis), corrupted
serialized forms, and enqueue parity with the API (GPU). An op's own test file holds only what is special to it.
"""
import re

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import twinops
from twinops import onnx_nodes, opdef
from twinops.testing.inputs import make_inputs

OPS = list(opdef.registered().values())
SAMPLES = [pytest.param(op, s, id=f"{op.name}-{i}") for op in OPS for i, s in enumerate(op.samples)]
EXPORTERS = ["dynamo", "torchscript"]


def _inputs(op, shapes, dtype=torch.float32, seed=0):
    """The sample's inputs from the declaration's factories (input i: seed + i)."""
    return make_inputs(op.inputs, shapes, dtype, seed)


def _api(op, creator=None):
    """The op's API, or the callable a drop-in's example node computes (Creator.api)."""
    return opdef.resolve(creator.api if creator is not None and creator.api else op.api)


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
    xs = [x.requires_grad_(t.differentiable) if x is not None else None
          for x, t in zip(_inputs(op, sample.shapes), op.inputs)]
    with _Recorder() as rec:
        y = _api(op)(*xs, **sample.kwargs)
        if op.backward_op:
            y.sum().backward()
    called = {f"{f.namespace}::{f._opname}" for f, _ in rec.calls}
    assert op.node.torch_op in called
    if op.backward_op:
        assert op.backward_op in called
    # torch's aot check backpropagates through every output: an op whose floating outputs are
    # not differentiable (its backward raises, by design) is compiled in its own tests instead.
    utils = [u for u in ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
             if not (u == "test_aot_dispatch_dynamic" and not op.backward_op
                     and any(t.dtypes[0].is_floating_point for t in op.outputs))]
    for func, args in rec.calls:
        first = func._opname == op.node.torch_op.split("::")[1]
        torch.library.opcheck(func, tuple(_clone(a, first) for a in args), test_utils=utils)


@pytest.mark.parametrize("op,sample", SAMPLES)
def test_gradcheck_float64(op, sample):
    if not op.backward_op:
        pytest.skip(f"{op.name} is not differentiable")
    xs = _inputs(op, sample.shapes, torch.float64)
    grads = [i for i, t in enumerate(op.inputs) if t.differentiable and xs[i] is not None]

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


def _given(xs) -> list:
    """The inputs without the optional ones left out at the end (None): the module's defaults
    stand for them, and the exported graph has no such input."""
    xs = list(xs)
    while xs and xs[-1] is None:
        xs.pop()
    return xs


def _dynamic_dims(op, shapes):
    """{input index: [dims]}: the declared dynamic dims whose example length is at least 2
    (torch.export specialises lengths 0 and 1)."""
    out = {}
    for i, (t, s) in enumerate(zip(op.inputs, shapes)):
        if s is None:
            continue
        dims = sorted({d % len(s) for d in t.dynamic if s[d % len(s)] >= 2})
        if dims:
            out[i] = dims
    return out


def _other_shapes(shapes, dynamic):
    """Three sets of input shapes other than ``shapes``, varying only the dynamic dims."""
    out = []
    for change in (lambda n: n + 1, lambda n: 2 * n + 1, lambda n: max(2, n - 1) if n > 2 else n + 2):
        out.append(tuple(tuple(change(n) if d in dynamic.get(i, ()) else n for d, n in enumerate(s))
                         if s is not None else None for i, s in enumerate(shapes)))
    return out


def _export(op, module, xs, dims, exporter):
    import warnings

    names = [t.name for t in op.inputs][: len(xs)]
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
    xs = _given(_inputs(op, sample.shapes, torch.float64))
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
        xs = _given(_inputs(op, shapes, torch.float64, seed=1))
        feeds = {i.name: x.numpy() for i, x in zip(proto.graph.input, xs)} if len(graph_inputs) == len(xs) else \
            {t.name: x.numpy() for t, x in zip(op.inputs, xs) if t.name in graph_inputs}
        gots = ev.run(None, feeds)
        with torch.no_grad():
            wants = module(*xs)
        wants = wants if isinstance(wants, (tuple, list)) else (wants,)
        assert len(gots) == len(wants) == len(op.outputs)
        for got, want, t in zip(gots, wants, op.outputs):
            assert got.shape == tuple(want.shape) and got.dtype == want.numpy().dtype, (t.name, shapes)
            np.testing.assert_allclose(got, want.numpy(), atol=atol, rtol=rtol, err_msg=f"{t.name} {shapes}")


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
            bad = next(d for d in (torch.int32, torch.float32, torch.uint8) if d not in t.dtypes)
            out.append((f"{t.name}-dtype", i, torch.ones(op.samples[0].shapes[i], dtype=bad)))
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
# plugin creators through the TensorRT-free plugin host (CPU with TensorRT headers; enqueue on a GPU)
# ---------------------------------------------------------------------------------------

CREATORS = [pytest.param(op, c, v, id=f"{op.name}-{c.name}-{v}") for op in OPS for c in op.plugins for v in c.versions]
# TensorRT's ONNX parser: the PluginFieldType a node attribute of each ONNX type becomes (onnx-tensorrt's
# loadFields; docs/tensorrt.md, "The TensorRT-free plugin host").
PARSER_FIELD_TYPE = {"INT": "INT32", "FLOAT": "FLOAT32", "STRING": "CHAR", "INTS": "INT32", "FLOATS": "FLOAT32"}


def _host():
    """(twinops.plugin_host, the host of the built plugin library), or a skip with the reason."""
    ph = pytest.importorskip("twinops.plugin_host")
    reason = ph.unavailable_reason(enqueue=False)
    if reason:
        pytest.skip(f"plugin host: {reason}")
    return ph, ph.get_host()


def _creator(host, creator, version):
    if host.trt_major < creator.min_tensorrt:
        assert host.find(creator.name, version) is None, f"{creator.name} is in a TensorRT {host.trt_major} library"
        pytest.skip(f"{creator.name} needs TensorRT >= {creator.min_tensorrt} (a size tensor: IPluginV3 only); "
                    f"the library is built for {host.trt_major}")
    info = host.find(creator.name, version, creator.namespaces[0])
    assert info is not None, f"{creator.name} v{version} is not in the plugin library"
    return info


_CASES = {}


def _plugin_case(op, creator, version):
    """(node, plugin inputs, shape inputs, API inputs, API kwargs) of a creator version: the op's
    first sample the plugin builds, exported (TorchScript) and its node's inputs found as the
    plugin-host backend of ``twinops check`` finds them; or the creator's declared example node on
    the first sample's inputs. A V2 plugin reads input shapes only: the samples before, whose
    output size it cannot compute from the attributes, must be refused with a message."""
    from twinops import plugin_host as ph
    from twinops.testing import backends, specs

    key = (op.name, creator.name, version)
    if key in _CASES:
        return _CASES[key]
    host = ph.get_host()
    refused = []
    for sample in op.samples[:1] if creator.example is not None else op.samples:
        xs = _inputs(op, creator.example_shapes or sample.shapes)
        if creator.example is not None:
            attrs, kwargs = creator.example
            given = [(t.name, x) for t, x in zip(op.inputs, xs) if x is not None]  # absent optional inputs left out
            node = ph.attributes_node(creator.name, attrs, [name for name, _ in given])
            case = node, [x for _, x in given], None, xs, dict(kwargs)
        else:
            assert creator.name == op.node.op_type, f"{creator.name} runs another node than {op.name}'s: declare an example"
            model = backends.export(specs.get(op.name), xs, sample.kwargs)
            case = (*backends.plugin_call(model, op.node.op_type, {t.name: x for t, x in zip(op.inputs, xs)}), xs,
                    dict(sample.kwargs))
        try:
            ph.prepare_plugin(*case[:3], version=version, host=host)
        except ph.HostError as e:
            assert "[plugin" in str(e), f"refused without a message from the plugin: {e}"
            if host.find(creator.name, version).interface != "v2":
                raise
            refused.append(str(e))
            continue
        _CASES[key] = case
        return case
    pytest.fail(f"{creator.name} v{version} builds none of {op.name}'s samples:\n" + "\n".join(refused))


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_declared_plugin_fields_match_the_library(op):
    """The declaration's fields (the host reads nodes by the library's, as TensorRT's parser does):
    the same names, in the same order, of the types the parser converts the node's attributes to."""
    ph, host = _host()
    for c in op.plugins:
        want = [(name, ph.FIELD_TYPES[PARSER_FIELD_TYPE[opdef.ATTR_TYPES[kind][0]]], n)
                for name, kind, n in opdef.creator_fields(op.node, c)]
        for version in c.versions:
            if host.trt_major < c.min_tensorrt:
                assert host.find(c.name, version) is None, f"{c.name} is in a TensorRT {host.trt_major} library"
                continue
            assert _creator(host, c, version).fields == want, f"{c.name} v{version}"


@pytest.mark.parametrize("op,creator,version", CREATORS)
def test_plugin_host_lifecycle(op, creator, version):
    """creator -> fields -> output types and shapes -> formats -> configurePlugin -> workspace ->
    serialization round trip -> runtime phase, on the CPU."""
    from plugin_checks import formats

    ph, host = _host()
    info = _creator(host, creator, version)
    node, inputs, shape_inputs, xs, kwargs = _plugin_case(op, creator, version)
    declared = {a.name for a in node.attribute}
    assert [f.name for f in ph.node_fields(node, info)] == [f[0] for f in info.fields if f[0] in declared]
    rt, built, tensors = ph.prepare_plugin(node, inputs, shape_inputs, version=version, host=host)
    with torch.no_grad():
        want = _api(op, creator)(*xs, **kwargs)
    want = (want if isinstance(want, (tuple, list)) else (want,))[: creator.outputs]
    outs, sizes = rt.result.outputs, rt.result.size_tensors
    node_outputs = len(want) if creator.api else len(op.node.outputs[: creator.outputs])  # api: its own layout
    assert len(outs) - len(sizes) == node_outputs == len(want)
    assert sizes == list(range(len(want), len(outs))), "size tensors come after the node's outputs"
    for pos, (o, w) in enumerate(zip(outs, want), start=len(tensors)):
        assert o["type"] == ph.DATA_TYPES[ph.engine_dtype(w.dtype, host.trt_major)]
        for j, n in enumerate(w.shape):
            if j in o["size_tensor"]:  # data-dependent: allocated at the bound, which holds this call's length
                assert o["min"][j] == 0 and n <= o["dims"][j] <= o["max"][j] and o["opt"][j] <= o["max"][j]
            else:
                assert o["dims"][j] == o["opt"][j] == n
        assert len(o["dims"]) == w.dim()
        assert formats(rt.result, pos) == {(o["type"], ph.LINEAR)}, "an output takes its type, linear"
    for k in sizes:  # TensorRT's rule: a 0-D int32 / int64 output
        assert outs[k]["dims"] == () and outs[k]["type"] in (ph.DATA_TYPES[torch.int32], ph.DATA_TYPES[torch.int64])
    assert (ph.DATA_TYPES[torch.float32], ph.LINEAR) in formats(rt.result, 0)
    assert rt.result.workspace >= 0
    ser = built.serialize()
    if info.interface == "v3":
        assert [f.name for f in ser] == [f[0] for f in info.fields]  # getFieldsToSerialize: the declared fields
        again = host.create(info, ser, runtime=True)
        assert again is not None and [f.__dict__ for f in again.serialize()] == [f.__dict__ for f in ser]
    else:
        (blob,) = ser
        back = host.deserialize(info, blob.data)
        assert back is not None and back.serialize()[0].data == blob.data
    assert [f.__dict__ for f in rt.serialize()] == [f.__dict__ for f in ser]  # the runtime plugin is the same


DROP_INS = [pytest.param(op, c, v, id=f"{op.name}-{c.name}-{v}") for op in OPS for c in op.plugins
            if c.domain and not c.domain_only for v in c.versions]
OWN_NAMESPACE = [pytest.param(op, c, v, id=f"{op.name}-{c.name}-{v}") for op in OPS for c in op.plugins
                 if c.domain_only for v in c.versions]


def _in_domain(node, domain, namespace=None):
    """A copy of ``node`` in ONNX domain ``domain``, with ``plugin_namespace`` set to ``namespace``
    (None: the attribute removed, as another toolkit's exporter leaves it)."""
    import onnx
    from onnx import helper

    out = onnx.NodeProto()
    out.CopyFrom(node)
    out.domain = domain
    kept = [a for a in out.attribute if a.name != "plugin_namespace"]
    del out.attribute[:]
    out.attribute.extend(kept)
    if namespace is not None:
        out.attribute.append(helper.make_attribute("plugin_namespace", namespace))
    return out


@pytest.mark.parametrize("op,creator,version", OWN_NAMESPACE)
def test_drop_ins_of_tensorrt_nodes_are_registered_in_their_namespace_alone(op, creator, version):
    """A drop-in for a node TensorRT's own plugin library serves (its name in namespace "") is in
    its namespace alone: a node naming it with plugin_namespace selects it on every parser; a node
    without one finds no twinops creator (it keeps TensorRT's)."""
    ph, host = _host()
    node, inputs, shape_inputs, _, _ = _plugin_case(op, creator, version)
    assert host.find(creator.name, version, "") is None, f"{creator.name} v{version} is in namespace \"\""
    info = host.find(creator.name, version, creator.domain)
    for parser in ((8, 6), ph.DOMAIN_FALLBACK_SINCE, None):
        assert host.select(_in_domain(node, "", creator.domain), version=version, parser=parser) is info
        with pytest.raises(ph.HostError, match="no .*creator"):
            host.select(_in_domain(node, ""), version=version, parser=parser)


@pytest.mark.parametrize("op,creator,version", DROP_INS)
def test_drop_ins_are_registered_in_namespace_and_domain(op, creator, version):
    """A drop-in of another toolkit's node is in namespace "" and in its node's domain: a node
    that names either namespace builds from that creator, the same plugin; a node in the domain
    whose plugin_namespace misses is found by parsers that retry with the domain (10.10 on), not
    by older ones."""
    ph, host = _host()
    node, inputs, shape_inputs, _, _ = _plugin_case(op, creator, version)
    infos = {ns: host.find(creator.name, version, ns) for ns in creator.namespaces}
    assert all(infos.values()), f"{creator.name} v{version}: namespaces {list(infos)} -> {infos}"
    assert len({(i.interface, tuple(i.fields)) for i in infos.values()}) == 1
    serialized = []
    for ns in creator.namespaces:
        named = _in_domain(node, creator.domain, ns)
        assert host.select(named, version=version) is infos[ns]
        rt, built, _ = ph.prepare_plugin(named, inputs, shape_inputs, version=version, host=host)
        serialized.append([f.__dict__ for f in built.serialize()])
    assert serialized[0] == serialized[1]
    missed = _in_domain(node, creator.domain, "elsewhere")
    assert host.select(missed, version=version, parser=ph.DOMAIN_FALLBACK_SINCE) is infos[creator.domain]
    with pytest.raises(ph.HostError, match="no .*creator"):
        host.select(missed, version=version, parser=(8, 6))
    assert host.select(_in_domain(node, creator.domain), version=version, parser=(8, 6)) is infos[""]
    if ph.unavailable_reason(enqueue=True) is None:  # on a GPU: the same outputs, bit for bit
        outs = [ph.run_plugin(_in_domain(node, creator.domain, ns), [t.cuda() for t in inputs], shape_inputs,
                              version=version) for ns in creator.namespaces]
        torch.cuda.synchronize()
        for a, b in zip(*outs):
            torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("op,creator,version", CREATORS)
def test_plugin_host_enqueue_parity(op, creator, version):
    """The plugin's outputs on a GPU equal the API's on the same inputs (the float32 tolerance: an
    exported float32 scale may differ from the call's)."""
    ph = pytest.importorskip("twinops.plugin_host")
    reason = ph.unavailable_reason(enqueue=True) or twinops.cuda_unavailable_reason()
    if reason:
        pytest.skip(f"enqueue parity needs a GPU, the plugin library and twinops' CUDA kernels: {reason}")
    node, inputs, shape_inputs, xs, kwargs = _plugin_case(op, creator, version)
    got = ph.run_plugin(node, [t.cuda() for t in inputs], shape_inputs, version=version)
    torch.cuda.synchronize()
    want = _api(op, creator)(*(x.cuda() if x is not None else None for x in xs), **kwargs)
    want = (want if isinstance(want, (tuple, list)) else (want,))[: creator.outputs]
    want = [w.to(g.device) for w, g in zip(want, got)]  # a reference (Creator.api) may answer on the CPU
    atol, rtol = opdef.resolve(op.tolerances)[torch.float32]
    assert len(got) >= len(want)
    assert all(t.dim() == 0 for t in got[len(want):]), "only size tensors (0-D) follow the node's outputs"
    trt_major = ph.get_host().trt_major
    for g, w in zip(got, want):  # the node's outputs (narrowed by their size tensors, which follow)
        assert g.dtype == ph.engine_dtype(w.dtype, trt_major)
        torch.testing.assert_close(g.to(w.dtype), w, atol=atol, rtol=rtol)


def _field_value(kind, length, choices):
    """A field's node attribute value: within the declaration (a choice, the type, the length) or
    outside it (another type, length or choice, a non-finite or huge number); None: absent."""
    from hypothesis import strategies as st

    n = length or 2
    f32 = st.floats(-4, 4, width=32)
    within = {"int": st.sampled_from(choices) if choices else st.integers(-4, 4),
              "bool": st.sampled_from((0, 1)), "float": f32,
              "str": st.sampled_from(choices) if choices else st.text("abxyz_", min_size=1, max_size=8),
              "ints": st.lists(st.integers(-4, 4), min_size=n, max_size=n),
              "floats": st.lists(f32, min_size=n, max_size=n)}[kind]
    outside = st.one_of(st.integers(-2**40, 2**40), st.floats(width=32), st.text(max_size=12),
                        st.lists(st.integers(-2**33, 2**33), min_size=1, max_size=6),
                        st.lists(st.floats(width=32), min_size=1, max_size=6), st.none())
    return st.one_of(within, outside)


@pytest.mark.parametrize("op,creator,version", CREATORS)
def test_plugin_fields_fuzz(op, creator, version):
    """Drawn field values, within and outside the declared types and choices: the plugin is built
    (build and runtime phase) or refused with a message from the plugin, never a crash."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from onnx import helper

    ph, host = _host()
    _creator(host, creator, version)
    base, inputs, shape_inputs, _, _ = _plugin_case(op, creator, version)
    decl = opdef.creator_fields(op.node, creator)
    choices = {a.name: a.choices for a in op.node.attrs} if creator.fields is None else {}
    drawn = st.fixed_dictionaries({name: _field_value(kind, n, choices.get(name, ())) for name, kind, n in decl})

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(values=drawn)
    def check(values):
        node = type(base)()
        node.CopyFrom(base)
        keep = [a for a in node.attribute if a.name not in values]
        del node.attribute[:]
        node.attribute.extend(keep + [helper.make_attribute(k, v) for k, v in values.items() if v is not None])
        host.take_log()
        try:
            rt, _, _ = ph.prepare_plugin(node, inputs, shape_inputs, version=version, host=host)
        except ph.HostError as e:
            assert "[plugin" in str(e), f"refused without a message from the plugin: {e}"
        else:
            if creator.api is None:  # a drop-in of another layout may vary its output count with its fields
                assert len(rt.result.outputs) - len(rt.result.size_tensors) == len(op.node.outputs[: creator.outputs])

    check()


@pytest.mark.parametrize("op,creator,version", CREATORS)
def test_plugin_serialized_forms_corrupted_are_refused(op, creator, version):
    """Every declared field is required (build phase: unless the creator declares absent_defaults,
    then the plugin serializes every field anyway); a serialized form truncated, padded, with a
    byte flipped (V2 blob) or with fields missing, shortened, retyped or random (V3 runtime fields)
    is refused with a message (or, for random V3 fields that happen to be valid, gives a working plugin)."""
    from plugin_checks import rejected, replace_field

    ph, host = _host()
    info = _creator(host, creator, version)
    good = ph.node_fields(_plugin_case(op, creator, version)[0], info)
    ser = host.create(info, good).serialize()
    for i, f in enumerate(good):
        if not creator.absent_defaults:
            rejected(host, lambda: host.create(info, good[:i] + good[i + 1:]), f"without {f.name}")
            continue
        p = host.create(info, good[:i] + good[i + 1:])
        assert p is not None, f"without {f.name}: refused\n{host.take_log()}"
        assert [(g.name, len(g.data) > 0) for g in p.serialize()] == [(g.name, len(g.data) > 0) for g in ser]
    rng = np.random.default_rng(0)
    if info.interface == "v2":
        blob = ser[0].data
        for n in range(len(blob)):
            rejected(host, lambda: host.deserialize(info, blob[:n]), f"truncated to {n} bytes")
        rejected(host, lambda: host.deserialize(info, blob + b"\0"), "padded")
        for i in range(len(blob)):
            flipped = blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1:]
            rejected(host, lambda: host.deserialize(info, flipped), f"byte {i} flipped")
        for _ in range(200):
            junk = rng.bytes(int(rng.integers(0, 2 * len(blob))))
            rejected(host, lambda: host.deserialize(info, junk), f"random {junk[:16]!r}...")
        return
    for i, f in enumerate(ser):
        rejected(host, lambda: host.create(info, ser[:i] + ser[i + 1:], runtime=True), f"without {f.name}")
        if f.type != ph.FIELD_TYPES["CHAR"]:  # a shorter string can still name a valid value
            short = replace_field(ser, f.name, length=f.length - 1, data=f.data[: len(f.data) * (f.length - 1) // f.length])
            rejected(host, lambda: host.create(info, short, runtime=True), f"truncated {f.name}")
        wrong = ph.FIELD_TYPES["INT32"] if f.type == ph.FIELD_TYPES["CHAR"] else ph.FIELD_TYPES["CHAR"]
        rejected(host, lambda: host.create(info, replace_field(ser, f.name, type=wrong), runtime=True),
                 f"{f.name} as type {wrong}")
    types = list(ph.FIELD_TYPES.values())
    for _ in range(200):  # garbage collections: nullptr with a message, or a plugin that still works
        names = rng.permutation([f.name for f in ser])[: rng.integers(0, len(ser) + 1)]
        fuzz = [ph.Field(str(n), int(rng.choice(types)), rng.bytes(k * 8), k)
                for n, k in ((n, int(rng.integers(0, 9))) for n in names)]
        host.take_log()
        p = host.create(info, fuzz, runtime=True)
        if p is None:
            assert "[plugin" in host.take_log()
        else:
            assert len(p.serialize()) == len(ser)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_declaration_is_consistent(op):
    """What the faces read from the declaration exists: the API, module, torch ops, node attributes
    in the torch op's argument order, a reference kernel, tolerances for every dtype."""
    assert callable(_api(op)) and isinstance(opdef.resolve(op.module)(**op.samples[0].kwargs), torch.nn.Module)
    schema = [a.name for a in onnx_nodes._torch_schema(op.node).arguments]
    assert schema[len(schema) - len(op.node.attrs):] == [a.name for a in op.node.attrs]
    assert op.node.reference is not None and callable(opdef.resolve(op.node.reference))
    assert set(op.dtypes) <= set(opdef.resolve(op.tolerances))
    # an op with TensorRT plugins has one for its own node (an op may have none yet)
    assert not op.plugins or op.node.op_type in {c.name for c in op.plugins}
    # a creator of another node than the op's exported one declares a node to test it with
    assert all(c.example is not None for c in op.plugins if c.name != op.node.op_type)
