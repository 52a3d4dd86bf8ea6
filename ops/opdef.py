"""One declaration per op: the registry every face of a twinops op is derived from.

An :class:`OpDef` says, once, what an op takes and gives: its tensor inputs (:class:`TensorArg`:
name, ranks, dtypes, whether only its shape is read), its outputs, its Python keyword arguments
(:class:`Attr`: name, type, default, allowed values), the ONNX node it exports to (:class:`Node`:
op_type, domain, node inputs, node attributes with their ONNX types), the TensorRT plugin creators
that run that node (:class:`Creator`), its reference and the cases the toolkit and the
conformance tests run. The generic argument checks (:func:`check_tensor`, :func:`check_arg`), the
exporters' node attributes and schemas (``twinops.onnx_nodes``), ``twinops check`` / ``regress``
(``twinops.testing.specs``), ``python -m twinops ops`` and ``tests/test_conformance.py`` read it.

This module names no op; each op's declarations live in its family's package
(``twinops.library.<op>.declaration``) and are registered on import of ``twinops``. Nothing here imports onnx, hypothesis or the
compiled extension: callables that need them are given as ``"module:attribute"`` strings and
resolved on first use (:func:`resolve`).
"""
from __future__ import annotations

import importlib
import math
import numbers
import re
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import torch

__all__ = ["TensorArg", "Attr", "Node", "Creator", "Sample", "OpDef", "DOMAIN", "FLOATING", "ATTR_TYPES", "register", "get",
           "registered", "resolve", "check_tensor", "check_arg", "dtype_names", "attrs_class", "creator_fields"]

# The ONNX domain of twinops' nodes (TensorRT's parser ignores it; see twinops.onnx_nodes.plugin_attributes).
DOMAIN = "twinops"
# float32 first: the order in which messages list the accepted dtypes.
FLOATING = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

# Attr.type -> (ONNX AttributeProto type name, Python types accepted, torch schema type).
# "bool" is a Python-only type: a node carries it as INT 0/1, as TensorRT's fields do.
ATTR_TYPES = {
    "int": ("INT", (int,), "int"),
    "bool": ("INT", (bool,), "int"),
    "float": ("FLOAT", (int, float), "float"),
    "str": ("STRING", (str,), "str"),
    "ints": ("INTS", (list, tuple), "int[]"),
    "floats": ("FLOATS", (list, tuple), "float[]"),
}


def dtype_names(dtypes: Sequence[torch.dtype]) -> str:
    """``"float32, float64, float16 or bfloat16"``: dtypes as an error message lists them."""
    names = [str(d).replace("torch.", "") for d in dtypes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass(frozen=True)
class TensorArg:
    """A tensor input or output.

    Attributes:
        name: the Python argument / ONNX input name (``input``, ``size_tensor``).
        ranks: the ranks accepted (empty: any rank, subject to ``min_rank``).
        min_rank: the smallest rank accepted when ``ranks`` is empty (default 0).
        layout: what the dims are, for messages (``"N, C, H, W"``; ``"its last two are the output H, W"``).
        dtypes: the dtypes accepted, in the order messages list them (empty: any dtype).
        shape_only: only the shape is read, never the values (MMDeploy's ``size_tensor``).
        shape_input: a 1-D int64 node input whose *values* a TensorRT IPluginV3 receives as a
            shape input (listed in the node's ``tensorrt_plugin_shape_input_indices``).
        optional: may be omitted.
        differentiable: gradients flow to it (gradcheck perturbs it).
        dynamic: dims that may change between runs of one exported graph (dynamic axes).
        factory: its values (``fn(ctx) -> Tensor`` or its lazy name, ``ctx`` a
            :class:`twinops.testing.inputs.InputContext`): valid boxes, indices in range, level
            shapes that match another input. None: :func:`twinops.testing.inputs.default_factory`
            (seeded normal data for a floating input, small non-negative ints for an integer one).
            ``twinops check`` / ``regress`` and the conformance tests make every input through it
            (:func:`twinops.testing.inputs.make_inputs`); a bench case may
            (``twinops.bench.harness.declared_inputs``).
        doc: one line for docs and ``python -m twinops ops``.
    """

    name: str
    ranks: Tuple[int, ...] = ()
    min_rank: int = 0
    layout: str = ""
    dtypes: Tuple[torch.dtype, ...] = ()
    shape_only: bool = False
    shape_input: bool = False
    optional: bool = False
    differentiable: bool = True
    dynamic: Tuple[int, ...] = ()
    factory: "Lazy" = None
    doc: str = ""

    def accepts_rank(self, rank: int) -> bool:
        return rank in self.ranks if self.ranks else rank >= self.min_rank

    def dtype_for(self, dtype: torch.dtype) -> torch.dtype:
        """The dtype this input takes in a case run in ``dtype``: that one where accepted (data
        inputs follow the case), else its first (an int64 index input stays int64)."""
        return dtype if not self.dtypes or dtype in self.dtypes else self.dtypes[0]


@dataclass(frozen=True)
class Attr:
    """A keyword argument of the Python API or an attribute of the ONNX node.

    Attributes:
        name: Python keyword == ONNX attribute == PluginField name.
        type: one of :data:`ATTR_TYPES` (``int``, ``bool``, ``float``, ``str``, ``ints``, ``floats``).
        default: the value when not given (``None``: no default / optional).
        choices: the values allowed (empty: any value of the type).
        length: the number of values of an ``ints``/``floats`` attribute (0: any).
        codes: the kernel's enum value of each choice, in ``choices``' order (empty: its
            position); two names may share a code (an older spelling of the same mode).
            The C++ choice tables (``csrc/kernels/<op>/<op>_choices.h``) are generated from
            ``choices`` and ``codes`` by tools/gen_choices.py.
        finite: a ``float`` must be finite (NaN and infinities refused).
        note: words after the list of choices in the unknown-choice message (``"for 4-D input"``).
        doc: one line for docs and ``python -m twinops ops``.
    """

    name: str
    type: str
    default: Any = None
    choices: Tuple[Any, ...] = ()
    length: int = 0
    codes: Tuple[int, ...] = ()
    finite: bool = False
    note: str = ""
    doc: str = ""

    def __post_init__(self):
        if self.type not in ATTR_TYPES:
            raise ValueError(f"Attr {self.name!r}: type must be one of {', '.join(ATTR_TYPES)}, got {self.type!r}")
        if self.codes and len(self.codes) != len(self.choices):
            raise ValueError(f"Attr {self.name!r}: codes must have one entry per choice ({len(self.choices)}), "
                             f"got {len(self.codes)}")

    @property
    def onnx_type(self) -> str:
        """The ONNX AttributeProto type name (``INT``, ``FLOAT``, ``STRING``, ``INTS``, ``FLOATS``)."""
        return ATTR_TYPES[self.type][0]

    def cast(self, value):
        """``value`` as the node (and the torch op) carries it: int, float, str or a list of them."""
        return _cast(self.type, value)

    def choice_message(self, value, who: str) -> str:
        listed = (" or ".join(map(str, self.choices)) if len(self.choices) == 2
                  else "one of " + ", ".join(map(str, self.choices)))
        return f"{who}: {self.name} must be {listed}{' ' + self.note if self.note else ''}, got {value!r}"


def _cast(kind: str, value):
    if kind in ("int", "bool"):
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "ints":
        return [int(v) for v in value]
    if kind == "floats":
        return [float(v) for v in value]
    return value


@dataclass(frozen=True)
class Node:
    """The ONNX node an op exports to (op_type == TensorRT plugin name; see docs/tensorrt.md).

    Attributes:
        op_type: the node's op_type.
        domain: its ONNX domain (TensorRT's parser ignores it).
        inputs: the node's inputs (a ``shape_input`` one is a 1-D int64 tensor).
        outputs: the node's outputs.
        attrs: the node attributes every exporter writes, in the torch op's argument order.
        torch_op: the torch op the node stands for (``"twinops::<op>"``): its schema arguments
            are the node's non-shape inputs, then an ``output_size``-like list where the node has a
            shape input, then ``attrs``.
        reference: its ``onnx.reference`` kernel, ``fn(*inputs, **attributes) -> array or tuple``
            (lazy name; absent attributes come at their defaults).
        symbolic: its TorchScript-exporter symbolic, ``fn(g, *torch op arguments)`` (lazy name);
            None: ``twinops.onnx_nodes.default_symbolic`` (the node on the torch op's inputs).
        translation: its dynamo translation, ``fn({torch op argument: value}) -> output`` (lazy
            name); None: ``twinops.onnx_nodes.default_translation``. A node with a shape input
            needs its own (how the torch op's size list becomes that input is the op's).
        doc: one line (the ONNX schema's doc string).
    """

    op_type: str
    domain: str
    inputs: Tuple[TensorArg, ...]
    outputs: Tuple[TensorArg, ...]
    attrs: Tuple[Attr, ...]
    torch_op: str
    reference: "Lazy" = None
    symbolic: "Lazy" = None
    translation: "Lazy" = None
    doc: str = ""

    @property
    def shape_input_indices(self) -> list:
        """Indices of the inputs a TensorRT IPluginV3 receives as shape inputs (their values)."""
        return [i for i, t in enumerate(self.inputs) if t.shape_input]

    def attr(self, name: str) -> Attr:
        for a in self.attrs:
            if a.name == name:
                return a
        raise KeyError(f"node {self.op_type} has no attribute {name!r} (attributes: "
                       f"{', '.join(a.name for a in self.attrs)})")


@dataclass(frozen=True)
class Creator:
    """A TensorRT plugin creator that runs the op's node (or a drop-in node of another toolkit).

    Attributes:
        name: the plugin name (== the ONNX op_type it is found by).
        versions: ``{plugin_version: interface}``, interface ``"v3"`` (IPluginV3 on TensorRT >= 10,
            IPluginV2DynamicExt on 8.6) or ``"v2"`` (IPluginV2DynamicExt).
        fields: the PluginFields it declares, ``(name, type, length)`` with an :data:`ATTR_TYPES`
            type and 0 for "any length"; None: one field per node attribute, same names and types.
        example: for a creator whose node the op's exporters do not write (a drop-in of another
            toolkit's node): ``(node attributes, API keyword arguments)``, a node of this creator on
            the inputs of the op's first :class:`Sample` and the API call it computes (the
            conformance tests' plugin case). None: the op's exported node.
        doc: one line (e.g. which toolkit's node it replaces).
        absent_defaults: the creator builds a plugin from a node that lacks some of its
            attributes, each taking its default (ONNX's rule; for a standard ONNX node, whose files
            often leave defaults out). False: every field is required, as twinops' exporters write
            them all. Either way the runtime phase (the plugin's own serialized fields) needs all.
        domain: a drop-in's ONNX domain (MMDeploy writes its nodes in ``"mmdeploy"``); the library
            registers the creator in plugin namespace ``""`` and in this one, where newer ONNX
            parsers look a node up after missing it in its ``plugin_namespace`` (the C++ creator's
            ``node_domain``). Empty: namespace ``""`` only.
        min_tensorrt: the oldest TensorRT major version whose library has the creator: 10 for
            a node with a data-dependent output (a size tensor, IPluginV3 only: the C++ creator's
            ``v3_only``), whose ``versions`` are then ``{"1": "v3"}``.
        domain_only: registered in ``domain`` alone, not in ``""``: a drop-in for a node whose name
            TensorRT's own plugin library also registers in ``""`` (so both can be loaded); a node
            selects it with ``plugin_namespace`` = ``domain`` (the C++ creator's ``domain_only``).
        outputs: a drop-in whose node has only the op's first ``outputs`` outputs (None: all).
        api: for a drop-in whose node computes something else than the op's API (another output
            layout): ``"module:function"`` that the ``example`` node computes, called with the
            inputs and the example's keyword arguments (the conformance tests' reference for it).
        example_shapes: the input shapes of the ``example`` call (None: the op's first sample's).
    """

    name: str
    versions: Dict[str, str] = field(default_factory=lambda: {"1": "v3", "legacy": "v2"})
    fields: Optional[Tuple[Tuple[str, str, int], ...]] = None
    example: Optional[Tuple[Dict[str, Any], Dict[str, Any]]] = None
    doc: str = ""
    absent_defaults: bool = False
    domain: str = ""
    min_tensorrt: int = 8
    domain_only: bool = False
    outputs: Optional[int] = None
    api: Optional[str] = None
    example_shapes: Optional[Tuple[Tuple[int, ...], ...]] = None

    @property
    def namespaces(self) -> Tuple[str, ...]:
        """The plugin namespaces the library registers the creator in."""
        if self.domain_only:
            return (self.domain,)
        return ("", self.domain) if self.domain else ("",)


@dataclass(frozen=True)
class Sample:
    """One conformance-test call: input shapes (one per tensor input of the Python API) and
    keyword arguments. The tests export it with the inputs' ``dynamic`` dims free and evaluate
    the graph at other shapes too (``dynamic=False``: this call's output size is fixed in
    Python from the input's lengths, so it exports for its own shapes only)."""

    shapes: Tuple[tuple, ...]
    kwargs: Dict[str, Any] = field(default_factory=dict)
    dynamic: bool = True


Lazy = Union[str, Callable, None]


@dataclass(frozen=True)
class OpDef:
    """Everything about one op, written once.

    Attributes:
        name: the registry key and the ``twinops.<name>`` Python function.
        api: the Python function, ``"module:attribute"`` (``fn(*inputs, **kwargs) -> Tensor``).
        module: its ``nn.Module`` form; ``module(**kwargs)`` whose ``forward(*inputs)`` calls ``api``.
        inputs / outputs: the API's tensor inputs and outputs.
        args: the API's keyword arguments whose type and choices the generic checks enforce
            (arguments with richer rules, e.g. a size or an axes list, are checked by the op).
        node: the ONNX node it exports to; several ops may share one node.
        plugins: the TensorRT creators that run the node (or drop-ins of other toolkits).
        backward_op: the torch op of its gradient (None: not differentiable).
        reference: the float64 reference, ``fn(*inputs, **kwargs)``; ``reference_doc`` names it.
        dtypes: the dtypes ``twinops check`` runs by default.
        tolerances: ``{dtype: (atol, rtol)}`` against the reference, or a lazy name of such a dict.
        cases: a lazy zero-argument callable giving the Hypothesis strategy of
            ``(shapes, kwargs)`` (shapes: one per input; a single shape means one input).
        edge_cases: fixed ``(shapes, kwargs)`` checked before the drawn ones.
        regress_cases: ``(label, shapes, kwargs)`` stored as golden baselines.
        unsuitable: lazy ``fn(shapes, kwargs) -> Optional[str]``: why a draw is skipped.
        samples: the conformance tests' calls (:class:`Sample`).
        cuda_dtypes: the dtypes the CUDA kernels take (None: every dtype the API takes); the
            others run on the CPU only, ``twinops check`` skips them on CUDA and ``python -m
            twinops ops`` marks them ``(CPU)``.
        exporters: the exporters that support the op (``"dynamo"``, ``"torchscript"``).
        doc: one line.

    ``python -m twinops ops`` lists as the op's dtypes its first input's (the API's), as its
    TensorRT dtypes its node's first input's without float64, and as ``check_dtypes`` ``dtypes``.
    """

    name: str
    api: Lazy
    module: Lazy
    inputs: Tuple[TensorArg, ...]
    outputs: Tuple[TensorArg, ...]
    args: Tuple[Attr, ...]
    node: Node
    plugins: Tuple[Creator, ...] = ()
    backward_op: Optional[str] = None
    reference: Lazy = None
    reference_doc: str = ""
    dtypes: Tuple[torch.dtype, ...] = (torch.float32,)
    tolerances: Union[str, Dict[torch.dtype, Tuple[float, float]], None] = None
    cases: Lazy = None
    edge_cases: Tuple[tuple, ...] = ()
    regress_cases: Tuple[tuple, ...] = ()
    unsuitable: Lazy = None
    samples: Tuple[Sample, ...] = ()
    cuda_dtypes: Optional[Tuple[torch.dtype, ...]] = None
    exporters: Tuple[str, ...] = ("dynamo", "torchscript")
    doc: str = ""

    def arg(self, name: str) -> Attr:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f"op {self.name} has no argument {name!r}")

    def input(self, name: str) -> TensorArg:
        for t in self.inputs:
            if t.name == name:
                return t
        raise KeyError(f"op {self.name} has no input {name!r}")

    def faces(self) -> dict:
        """The op's faces as plain data (what ``python -m twinops ops --json`` prints)."""
        return dict(
            name=self.name,
            python=_qualname(self.api),
            module=_qualname(self.module),
            inputs=[t.name for t in self.inputs],
            outputs=[t.name for t in self.outputs],
            torch_ops=[self.node.torch_op] + ([self.backward_op] if self.backward_op else []),
            onnx=dict(op_type=self.node.op_type, domain=self.node.domain,
                      attributes={a.name: a.onnx_type for a in self.node.attrs}),
            plugins=[dict(name=c.name, versions=dict(c.versions), namespaces=list(c.namespaces),
                          min_tensorrt=c.min_tensorrt,
                          fields=[f[0] for f in creator_fields(self.node, c)]) for c in self.plugins],
            reference=self.reference_doc or _qualname(self.reference),
            dtypes=_names(self.inputs[0].dtypes or self.dtypes),
            cpu_only_dtypes=_names(d for d in (self.inputs[0].dtypes or self.dtypes)
                                   if self.cuda_dtypes is not None and d not in self.cuda_dtypes),
            # TensorRT has no float64 tensors; bfloat16 needs TensorRT 10 or later
            tensorrt_dtypes=_names(d for d in (self.node.inputs[0].dtypes or self.dtypes) if d != torch.float64)
            if self.plugins else [],
            check_dtypes=_names(self.dtypes),
        )


def _names(dtypes) -> list:
    return [str(d).replace("torch.", "") for d in dtypes]


def _qualname(ref: Lazy) -> str:
    if ref is None:
        return ""
    if isinstance(ref, str):
        module, _, attr = ref.partition(":")
        return f"{module}.{attr}" if attr else module
    return f"{getattr(ref, '__module__', '?')}.{getattr(ref, '__qualname__', repr(ref))}"


def resolve(ref: Lazy):
    """``"package.module:attribute"`` imported and looked up; anything else returned as is."""
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------------------

_REGISTRY: Dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Adds ``op`` under ``op.name`` (a second declaration of a name is refused); returns it."""
    old = _REGISTRY.get(op.name)
    if old is not None and old is not op:
        raise ValueError(f"op {op.name!r} is already registered")
    _REGISTRY[op.name] = op
    return op


def get(name: str) -> OpDef:
    """The op declared as ``name``; ``KeyError`` naming the registered ops otherwise."""
    if name not in _REGISTRY:
        raise KeyError(f"unknown op {name!r} (registered: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[name]


def registered() -> Dict[str, OpDef]:
    """``{name: OpDef}`` of every declared op, in registration order."""
    return dict(_REGISTRY)


# ---------------------------------------------------------------------------------------
# what is derived
# ---------------------------------------------------------------------------------------

def check_tensor(t: TensorArg, value, who: str) -> None:
    """Raises the generic error for a value that is not a tensor of ``t``'s ranks and dtypes.

    Messages: ``"<who>: <name> must be a torch.Tensor, got <type>"`` (TypeError),
    ``"... must be a 4-D (N, C, H, W) tensor, got 3-D with shape (...)"`` or ``"... must have at
    least 2 dims (<layout>), got shape (...)"`` (ValueError), ``"... must be float32, ... or
    bfloat16, got torch.int32"`` (TypeError; not for a ``shape_only`` input).
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{who}: {t.name} must be a torch.Tensor, got {type_name(value)}")
    if value.layout != torch.strided:
        raise TypeError(f"{who}: {t.name} must be a dense (strided) tensor, got layout {value.layout} "
                        f"(call .to_dense() first)")
    if not t.accepts_rank(value.dim()):
        layout = f" ({t.layout})" if t.layout else ""
        if t.ranks:
            ranks = " or ".join(f"{r}-D" for r in t.ranks)
            raise ValueError(f"{who}: {t.name} must be a {ranks}{layout} tensor, got {value.dim()}-D "
                             f"with shape {tuple(value.shape)}")
        raise ValueError(f"{who}: {t.name} must have at least {t.min_rank} dims{layout}, got shape "
                         f"{tuple(value.shape)}")
    if t.dtypes and not t.shape_only and value.dtype not in t.dtypes:
        raise TypeError(f"{who}: {t.name} must be {dtype_names(t.dtypes)}, got {value.dtype}")


# The C++ ops' messages start with the op's name ("torch.ops.twinops.<op>: ..."); the Python
# API re-raises them under the function the caller named.
_OP_MESSAGE = re.compile(r"torch\.ops\.twinops\.\w+: ")


def renamed(e: RuntimeError, who: str) -> RuntimeError:
    """``e`` with its leading ``torch.ops.twinops.<op>:`` replaced by ``who``, or ``e`` when it has none."""
    msg = str(e)
    m = _OP_MESSAGE.match(msg)
    return RuntimeError(f"{who}: {msg[m.end():]}") if m else e


def check_arg(a: Attr, value, who: str) -> None:
    """Raises the generic error for a keyword argument of the wrong type or an unknown choice.

    ``None`` passes when the default is None. Messages: ``"<who>: <name> must be a bool, got
    int"`` (TypeError) and ``"<who>: <name> must be one of a, b, c[ <note>], got 'x'"`` or
    ``"... must be 0 or 1, got 2"`` (ValueError).
    """
    if value is None and a.default is None:
        return
    if a.type == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{who}: {a.name} must be a bool, got {type_name(value)}")
    elif a.choices:
        # membership is the check (0/1 flags also take True/False and 1.0, as ONNX Runtime does)
        if value not in a.choices:
            raise ValueError(a.choice_message(value, who))
        return
    elif not isinstance(value, _KINDS[a.type]):
        article = "an" if a.type == "int" else "a"
        raise TypeError(f"{who}: {a.name} must be {article} {a.type}, got {type_name(value)}")
    if a.choices and value not in a.choices:
        raise ValueError(a.choice_message(value, who))
    if a.finite and isinstance(value, numbers.Real) and not -math.inf < float(value) < math.inf:
        raise ValueError(f"{who}: {a.name} must be finite, got {value!r}")


def type_name(value) -> str:
    """The type of ``value`` as a message names it: ``int``, ``str``; ``numpy.int64``,
    ``torch.Size`` for types outside the builtins (numpy's ``bool`` is not Python's)."""
    t = type(value)
    module = t.__module__.split(".")[0]
    return t.__name__ if module == "builtins" else f"{module}.{t.__name__}"


# What check_arg accepts per type: symbolic numbers too (torch.compile traces the checks).
_KINDS = {"int": (numbers.Integral, torch.SymInt), "float": (numbers.Real, torch.SymInt, torch.SymFloat),
          "str": (str,), "ints": (list, tuple), "floats": (list, tuple)}


def attrs_class(name: str, node: Node, doc: str, module: str):
    """A frozen dataclass with one field per node attribute (its default), whose ``op_args()``
    gives the attributes in the torch op's order, cast as the op takes them."""
    spec = [(a.name, Any, field(default=tuple(a.default) if isinstance(a.default, list) else a.default))
            for a in node.attrs]

    # plain strings in the closure: torch.compile traces op_args and cannot wrap an Attr built here
    typed = tuple((a.name, a.type) for a in node.attrs)

    def op_args(self) -> tuple:
        return tuple(_cast(kind, getattr(self, name)) for name, kind in typed)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    cls = make_dataclass(name, spec, frozen=True, namespace={"op_args": op_args, "as_dict": as_dict, "__doc__": doc})
    cls.__module__ = module
    return cls


def creator_fields(node: Node, creator: Creator) -> list:
    """``[(field name, ATTR_TYPES type, length)]`` a creator declares: its own ``fields``, or one
    per node attribute (strings and any-length lists with length 0), in the node's order. This is
    the list TensorRT's ONNX parser reads attributes by (``getFieldNames``)."""
    if creator.fields is not None:
        return [tuple(f) for f in creator.fields]
    out = []
    for a in node.attrs:
        n = a.length if a.type in ("ints", "floats") else (0 if a.type == "str" else 1)
        out.append((a.name, a.type, n))
    return out
