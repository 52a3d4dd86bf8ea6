"""ONNX faces of a declared node (twinops.opdef.Node), for both torch exporters and onnx.reference.

From a node's declaration come: its attributes as the exporters write them
(:func:`node_attributes`: the declared attributes cast to their ONNX types, then
``tensorrt_plugin_shape_input_indices`` where the node has shape inputs, then ``plugin_version`` /
``plugin_namespace``), the TorchScript exporter's ``g.op`` call (:func:`ts_parse`, :func:`ts_node`),
the onnx OpSchema and onnxscript op the dynamo exporter builds nodes with (:func:`onnx_schema`,
:func:`onnxscript_op`), the translation function's typed signature (:func:`translation`), an
``onnx.reference`` kernel class (:func:`reference_op`) and, for a node whose torch op's arguments
are its inputs then its attributes, the whole symbolic and translation (:func:`default_symbolic`,
:func:`default_translation`). An op's export module supplies only what is special to it (e.g. how
an output size becomes a shape input: ``Node.symbolic`` / ``Node.translation``). onnx and onnxscript are
imported lazily. This module names no op.
"""
from __future__ import annotations

import inspect
from typing import Callable, Dict, List, Sequence

import torch

from .opdef import Node, check_arg, resolve

__all__ = ["PLUGIN_VERSION", "PLUGIN_NAMESPACE", "plugin_attributes", "node_attributes", "ts_parse", "ts_node",
           "default_symbolic", "onnx_schema", "onnxscript_op", "translation", "default_translation", "torch_overload",
           "reference_op"]

# TensorRT's ONNX parser looks a plugin creator up by (op_type, plugin_version, plugin_namespace);
# see plugin_attributes for why the nodes carry both explicitly.
PLUGIN_VERSION = "1"
PLUGIN_NAMESPACE = ""
DOMAIN_VERSION = 1

_TS_CODES = {"int": "i", "bool": "i", "float": "f", "str": "s", "ints": "is", "floats": "fs"}
_TS_SUFFIX = {"INT": "i", "FLOAT": "f", "STRING": "s", "INTS": "i", "FLOATS": "f"}
_ANNOTATIONS = {"int": int, "bool": int, "float": float, "str": str, "ints": Sequence[int], "floats": Sequence[float]}
_ONNX_TENSOR_TYPES = {torch.float32: "tensor(float)", torch.float64: "tensor(double)",
                      torch.float16: "tensor(float16)", torch.bfloat16: "tensor(bfloat16)",
                      torch.int64: "tensor(int64)", torch.int32: "tensor(int32)", torch.uint8: "tensor(uint8)",
                      torch.bool: "tensor(bool)"}


def plugin_attributes() -> Dict[str, str]:
    """``plugin_version`` and ``plugin_namespace`` node attributes, written explicitly on every node.

    onnx-tensorrt's FallbackPluginImporter looks the creator up as ``(op_type,
    plugin_version or "1", plugin_namespace or "")`` (release/8.6-GA ``builtin_op_importers.cpp``;
    the 10.0 - 10.9 ``onnxOpImporters.cpp``). Newer parsers (their ``onnxOpCheckers.cpp`` and
    importer, reported from 10.10 on, and 11.x) retry with the node's *domain* as the namespace
    when that first lookup finds nothing. The twinops creators are registered in namespace ""
    and the nodes live in domain ``twinops``: with both attributes explicit the first lookup is
    ``(op_type, "1", "")`` on every parser and finds twinops' creator; the domain retry only runs
    when no such creator is registered (the library not loaded), where it can only find a creator
    someone registered under namespace "twinops". ``twinops.plugin_host`` selects by the same rule.
    """
    return {"plugin_version": PLUGIN_VERSION, "plugin_namespace": PLUGIN_NAMESPACE}


def node_attributes(node: Node, values: dict) -> dict:
    """``{name: value}`` of every attribute the exporters write on ``node``: the declared ones
    (``values[name]``, cast to the attribute's type), ``tensorrt_plugin_shape_input_indices``
    (INTS) when the node has shape inputs, and :func:`plugin_attributes`."""
    out = {a.name: a.cast(values[a.name]) for a in node.attrs}
    if node.shape_input_indices:
        out["tensorrt_plugin_shape_input_indices"] = list(node.shape_input_indices)
    out.update(plugin_attributes())
    return out


def attribute_types(node: Node) -> Dict[str, str]:
    """``{name: ONNX attribute type name}`` of everything :func:`node_attributes` writes."""
    types = {a.name: a.onnx_type for a in node.attrs}
    if node.shape_input_indices:
        types["tensorrt_plugin_shape_input_indices"] = "INTS"
    types.update({k: "STRING" for k in plugin_attributes()})
    return types


# ---------------------------------------------------------------------------------------
# TorchScript exporter
# ---------------------------------------------------------------------------------------

def ts_parse(node: Node, args: Sequence) -> dict:
    """The symbolic's attribute arguments (``node.attrs`` order) as Python values."""
    from torch.onnx import symbolic_helper as sh

    if len(args) != len(node.attrs):
        raise TypeError(f"{node.op_type} symbolic: expected {len(node.attrs)} attributes "
                        f"({', '.join(a.name for a in node.attrs)}), got {len(args)}")
    return {a.name: sh._parse_arg(v, _TS_CODES[a.type]) for a, v in zip(node.attrs, args)}


def present_inputs(node: Node, inputs: Sequence, is_none: Callable) -> list:
    """``inputs`` without the optional ones left out at the end (an ONNX node lists inputs up to
    its last present one). An optional input left out before a present one has no spelling that
    every consumer reads (TensorRT's parser), so it is refused: ValueError naming it."""
    present = list(inputs)
    while present and is_none(present[-1]):
        present.pop()
    for t, v in zip(node.inputs, present):
        if is_none(v):
            raise ValueError(f"twinops ONNX export: {node.op_type}'s input {t.name!r} is left out before a later "
                             "input that is given; an optional input may be left out only after the last one given")
    return present


def ts_node(g, node: Node, inputs: Sequence, values: dict):
    """``g.op`` of ``node`` on ``inputs`` with :func:`node_attributes` (TorchScript's ``name_s/_f/_i``);
    trailing optional inputs left out (:func:`present_inputs`); one value per node output."""
    from torch.onnx import symbolic_helper

    types = attribute_types(node)
    attrs = {f"{k}_{_TS_SUFFIX[types[k]]}": v for k, v in node_attributes(node, values).items()}
    inputs = present_inputs(node, inputs, lambda v: v is None or symbolic_helper._is_none(v))
    extra = {"outputs": len(node.outputs)} if len(node.outputs) > 1 else {}
    return g.op(f"{node.domain}::{node.op_type}", *inputs, **attrs, **extra)


def ts_typed(g, outputs):
    """``outputs`` (a value or a sequence) typed as the traced torch op's outputs (dtype and
    sizes), and returned: ONNX shape inference cannot type a node of the ``twinops`` domain, and
    the exporter warns for every untyped one."""
    original = getattr(g, "original_node", None)
    if original is not None:
        for y, o in zip(outputs if isinstance(outputs, (tuple, list)) else (outputs,), original.outputs()):
            y.setType(o.type())
    return outputs


def default_symbolic(node: Node) -> Callable:
    """A TorchScript symbolic for ``node.torch_op`` whose arguments are the node's inputs, then its
    attributes: ``g.op`` of the node on them, typed as the torch op's outputs (:func:`ts_typed`)."""
    n = len(node.inputs)

    def symbolic(g, *args):
        return ts_typed(g, ts_node(g, node, args[:n], ts_parse(node, args[n:])))

    return symbolic


# ---------------------------------------------------------------------------------------
# dynamo exporter
# ---------------------------------------------------------------------------------------

def _type_constraints(node: Node):
    """(formal type per input and output, type constraints): tensors with the same several dtypes
    share one type variable, a single dtype is written directly, any dtype gets its own variable."""
    shared: Dict[tuple, str] = {}
    constraints, formal = [], []
    for i, t in enumerate(node.inputs + node.outputs):
        if len(t.dtypes) == 1:
            formal.append(_ONNX_TENSOR_TYPES[t.dtypes[0]])
            continue
        key = t.dtypes or ("any", i)
        if key not in shared:
            shared[key] = "T" if not shared else f"T{len(shared)}"
            kinds = t.dtypes or tuple(_ONNX_TENSOR_TYPES)
            constraints.append((shared[key], [_ONNX_TENSOR_TYPES[d] for d in kinds],
                                "any type (only the shape is read)" if not t.dtypes else "floating input and output"))
        formal.append(shared[key])
    return formal, constraints


def onnx_schema(node: Node):
    """The onnx ``OpSchema`` of ``node`` (not registered globally: onnxscript only needs it to build nodes)."""
    from onnx.defs import OpSchema

    formal, constraints = _type_constraints(node)
    P = OpSchema.FormalParameter
    n_in = len(node.inputs)
    return OpSchema(
        node.op_type, node.domain, DOMAIN_VERSION, node.doc,
        inputs=[P(t.name, formal[i], param_option=OpSchema.FormalParameterOption.Optional if t.optional else
                  OpSchema.FormalParameterOption.Single) for i, t in enumerate(node.inputs)],
        outputs=[P(t.name, formal[n_in + i]) for i, t in enumerate(node.outputs)],
        type_constraints=constraints,
        attributes=[OpSchema.Attribute(name, getattr(OpSchema.AttrType, kind), required=True)
                    for name, kind in attribute_types(node).items()])


def onnxscript_op(node: Node):
    """An ``onnxscript.values.Op`` that builds ``node`` (call it with inputs and :func:`node_attributes`)."""
    import onnxscript

    return onnxscript.values.Op(onnxscript.values.Opset(node.domain, DOMAIN_VERSION), node.op_type, onnx_schema(node))


def translation(node: Node, body: Callable) -> Callable:
    """A dynamo translation function for ``node.torch_op`` that calls ``body(args)`` with
    ``{argument name: value}`` of the torch op's schema.

    The exporter reads which arguments are ONNX attributes from the function's annotations: the
    node's attributes get their Python types (str, int, float, Sequence[...]); tensors and size
    lists stay unannotated (inputs)."""
    schema = _torch_schema(node)
    types = {a.name: _ANNOTATIONS[a.type] for a in node.attrs}
    # The schema's defaults too: torch.export leaves out trailing arguments equal to them.
    params = [inspect.Parameter(arg.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                **({"annotation": types[arg.name]} if arg.name in types else {}),
                                **({"default": arg.default_value} if arg.has_default_value() else {}))
              for arg in schema.arguments]
    signature = inspect.Signature(params)

    def fn(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return body(dict(bound.arguments))

    fn.__signature__ = signature
    fn.__annotations__ = {k: v for k, v in types.items() if k in signature.parameters}
    fn.__name__ = fn.__qualname__ = node.torch_op.replace("::", "_")
    return fn


def default_translation(node: Node) -> Callable:
    """A translation body for ``node`` (see :func:`translation`): the node on the torch op's first
    ``len(node.inputs)`` arguments, in order (their names may differ from the node's inputs': an ONNX
    node's ``X`` may be the torch op's ``input``), with :func:`node_attributes`."""
    if node.shape_input_indices:
        raise TypeError(f"{node.op_type} has a shape input: its declaration needs its own translation "
                        "(how the torch op's size argument becomes that input)")
    op = onnxscript_op(node)
    names = [a.name for a in _torch_schema(node).arguments[:len(node.inputs)]]

    def body(args: dict):
        inputs = present_inputs(node, [args[name] for name in names], lambda v: v is None)
        return op(*inputs, **node_attributes(node, args))

    return body


def torch_overload(node: Node):
    """``torch.ops.<namespace>.<name>.default`` of ``node.torch_op``."""
    namespace, name = node.torch_op.split("::")
    return getattr(getattr(torch.ops, namespace), name).default


def _torch_schema(node: Node):
    return torch_overload(node)._schema


# ---------------------------------------------------------------------------------------
# onnx.reference
# ---------------------------------------------------------------------------------------

def reference_op(node: Node, run) -> type:
    """An ``onnx.reference.op_run.OpRun`` subclass for ``node``: ``run(*inputs, **attributes)``
    (``run`` or its lazy name) with absent attributes at their declared defaults; returns a tuple.
    Attribute values are checked against the declaration first (types, choices), so the kernel
    refuses what the torch op and the plugin creators refuse (``ValueError`` / ``TypeError``
    naming the node and the attribute)."""
    from onnx.reference.op_run import OpRun

    defaults = {a.name: a.default for a in node.attrs}

    def _run(self, *inputs, **attrs):
        values = {k: (attrs[k] if attrs.get(k) is not None else v) for k, v in defaults.items()}
        for a in node.attrs:
            check_arg(a, values[a.name], f"{node.domain}::{node.op_type}")
        out = resolve(run)(*inputs, **values)
        return out if isinstance(out, tuple) else (out,)

    return type(node.op_type, (OpRun,), {"op_domain": node.domain, "_run": _run,
                                         "__doc__": f"onnx.reference kernel of {node.domain}::{node.op_type}."})


def unique_nodes(ops) -> List[Node]:
    """The distinct nodes of ``ops`` (OpDefs), in order of first appearance."""
    seen, out = set(), []
    for op in ops:
        if op.node.op_type not in seen:
            seen.add(op.node.op_type)
            out.append(op.node)
    return out
