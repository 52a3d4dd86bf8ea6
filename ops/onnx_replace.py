"""Export without editing the model: PyTorch's own (ATen) ops written as twinops nodes.

``twinops.export_onnx(model, args, replace=(name, ...))`` exports a model that calls PyTorch's own
ops with twinops nodes in place of the standard ONNX ones, so it deploys with twinops' plugins
unchanged. Each name in ``replace`` is an :class:`AtenReplacement` that an op family's export
module (``twinops.library.<op>.export``) registers with :func:`register_replacement` when
``twinops`` is imported; :func:`replacements` lists them, and docs/ops/<op>.md says what each
maps. This module names no op.

A replacement gives, per ATen op it maps,

* a TorchScript-exporter symbolic (``torch.onnx.export(..., dynamo=False)``), registered by
  :func:`torchscript_symbolics` as a *custom* symbolic at every opset for the time of one export
  only (the built-in symbolic, or a user's custom one, is back afterwards, also when the export
  fails);
* a dynamo translation (``torch.onnx.export(..., dynamo=True)``) for each op overload
  (:func:`translation_table`); an overload in the translation table is not decomposed by the
  exporter, so the translation sees the op the model called.

:func:`aten_translation` gives a translation function the typed signature the dynamo exporter
reads (from the ATen schema) around a body taking ``{argument name: value}``.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil
import sys
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence

__all__ = ["AtenReplacement", "register_replacement", "replacements", "resolve_replace", "torchscript_symbolics",
           "translation_table", "aten_translation"]


@dataclass(frozen=True)
class AtenReplacement:
    """What ``export_onnx(replace=(name, ...))`` does for one name.

    Attributes:
        name: the name given in ``replace`` (the PyTorch function's name).
        summary: one line: which ATen ops become which twinops node, what stays standard ONNX.
        symbolics: ``{"aten::<op>": fn(g, *args)}`` (TorchScript exporter; the node's inputs as
            traced, i.e. every overload of the op goes to the one symbolic).
        translations: ``() -> {torch op overload: fn}`` (dynamo exporter), called on use, so that
            onnxscript is imported only then; each ``fn`` usually from :func:`aten_translation`.
    """

    name: str
    summary: str
    symbolics: Mapping[str, Callable]
    translations: Callable[[], Mapping]


_REGISTRY: Dict[str, AtenReplacement] = {}
_DISCOVERED = False


def register_replacement(r: AtenReplacement) -> AtenReplacement:
    """Adds ``r`` under ``r.name`` (a second, different one of that name is refused); returns it."""
    old = _REGISTRY.get(r.name)
    if old is not None and old is not r:
        raise ValueError(f"an ATen replacement named {r.name!r} is already registered")
    _REGISTRY[r.name] = r
    return r


def replacements() -> Dict[str, AtenReplacement]:
    """``{name: AtenReplacement}`` of every registered replacement, by name (each op family's
    ``export`` module registers its own when ``twinops`` is imported, following the op list)."""
    return dict(sorted(_REGISTRY.items()))


def resolve_replace(replace, who: str = "twinops.export_onnx") -> List[AtenReplacement]:
    """The replacements ``replace`` names (a name, or an iterable of names; None or empty: none).

    Raises:
        TypeError: ``replace`` is not a string or an iterable of strings.
        ValueError: a name is unknown (the message lists the known ones).
    """
    if replace is None:
        return []
    names = [replace] if isinstance(replace, str) else replace
    try:
        names = list(names)
    except TypeError:
        raise TypeError(f"{who}: replace must be a name or a sequence of names, got {type(replace).__name__}") from None
    known = replacements()
    out = []
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{who}: replace must contain op names (str), got {type(n).__name__}")
        if n not in known:
            raise ValueError(f"{who}: replace names an unknown op {n!r}; known: {', '.join(known) or 'none'}")
        if known[n] not in out:
            out.append(known[n])
    return out


# ---------------------------------------------------------------------------------------
# TorchScript exporter
# ---------------------------------------------------------------------------------------

def _opsets() -> range:
    from torch.onnx import _constants

    # The lookup takes the highest registered opset <= the target, and the built-in symbolics sit
    # at several opsets: an override must sit at every one to win at all of them.
    return range(7, _constants.ONNX_MAX_OPSET + 1)


@contextlib.contextmanager
def torchscript_symbolics(reps: Iterable[AtenReplacement]) -> Iterator[None]:
    """Registers the symbolics of ``reps`` as custom symbolics at every opset for the ``with``
    block; afterwards each (name, opset) is as before: a custom symbolic someone had registered
    there is put back, else the override is removed (the built-in symbolic applies again)."""
    from torch.onnx import register_custom_op_symbolic, unregister_custom_op_symbolic
    from torch.onnx._internal.torchscript_exporter import registration

    saved = []  # (name, opset, the custom symbolic it had or None)
    try:
        for r in reps:
            for name, fn in r.symbolics.items():
                group = registration.registry.get_function_group(name)
                for opset in _opsets():
                    had = None
                    if group is not None and group._functions.overridden(opset):
                        had = group._functions._overrides[opset]
                    saved.append((name, opset, had))
                    register_custom_op_symbolic(name, fn, opset)
        yield
    finally:
        for name, opset, had in reversed(saved):
            if had is None:
                unregister_custom_op_symbolic(name, opset)
            else:
                register_custom_op_symbolic(name, had, opset)


# ---------------------------------------------------------------------------------------
# dynamo exporter
# ---------------------------------------------------------------------------------------

def translation_table(reps: Iterable[AtenReplacement]) -> Dict[object, Callable]:
    """``{torch op overload: translation}`` of every replacement in ``reps`` (a fresh dict)."""
    table: Dict[object, Callable] = {}
    for r in reps:
        table.update(r.translations())
    return table


def _annotation(t) -> Optional[object]:
    """The Python annotation the dynamo exporter reads an ATen argument type by (a schema type
    object): attributes get their type; tensors, (Sym)Int lists and optional arguments none (the
    exporter's signatures have no optional attributes; such arguments reach the translation as
    the Python values, or None, they are in the graph)."""
    kind = t.kind()
    if kind == "OptionalType":
        return None
    if kind == "ListType":
        return Sequence[float] if t.getElementType().kind() == "FloatType" else None
    return {"BoolType": bool, "IntType": int, "FloatType": float, "StringType": str}.get(kind)


def aten_translation(overload, body: Callable[[dict], object]) -> Callable:
    """A dynamo translation function for the ATen ``overload`` calling ``body({name: value})``
    with every schema argument (defaults filled in)."""
    schema = overload._schema
    params, annotations = [], {}
    for arg in schema.arguments:
        ann = _annotation(arg.type)
        default = inspect.Parameter.empty
        if arg.has_default_value():
            default = arg.default_value
        elif arg.type.kind() == "OptionalType":
            default = None
        kw = {} if ann is None else {"annotation": ann}
        params.append(inspect.Parameter(arg.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, **kw))
        if ann is not None:
            annotations[arg.name] = ann
    # non-default after default is not a valid signature: defaults only on a trailing run
    seen_required = False
    for i in range(len(params) - 1, -1, -1):
        if params[i].default is inspect.Parameter.empty:
            seen_required = True
        elif seen_required:
            params[i] = params[i].replace(default=inspect.Parameter.empty)
    signature = inspect.Signature(params)

    def fn(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return body(dict(bound.arguments))

    fn.__signature__ = signature
    fn.__annotations__ = annotations
    fn.__name__ = fn.__qualname__ = f"twinops_replace_{schema.name.replace('::', '_')}_{overload._overloadname}"
    return fn
