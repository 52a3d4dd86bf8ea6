"""ONNX export of every registered twinops op (both torch exporters) and its onnx.reference kernels.

Generic over the declarations (``twinops.opdef``): each registered op's :class:`~twinops.opdef.Node`
gives its node (op_type, domain ``twinops``, inputs, attributes, ``twinops.onnx_nodes``), its
TorchScript symbolic (``Node.symbolic``, else :func:`twinops.onnx_nodes.default_symbolic`), its
dynamo translation (``Node.translation``, else :func:`twinops.onnx_nodes.default_translation`)
and its ``onnx.reference`` kernel (``Node.reference``). The module a node's entries point to
documents its inputs, attributes and size rules; ``python -m twinops ops`` lists the nodes. Every
node carries ``plugin_version="1"`` and ``plugin_namespace=""`` (STRING), see
:func:`twinops.onnx_nodes.plugin_attributes`.

Usage::

    model = twinops.export_onnx(net, (x,))                                    # dynamo exporter
    model = twinops.export_onnx(net, (x,), replace=(name, ...))               # PyTorch's own ops too
    torch.onnx.export(net, (x,), dynamo=True, custom_translation_table=twinops.onnx_translation_table())
    torch.onnx.export(net, (x,), "m.onnx", dynamo=False)                      # symbolics are registered on import
    onnx.reference.ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops()).run(None, {...})

``replace=`` (:func:`export_onnx`) maps PyTorch's own ATen ops to twinops nodes as each op's
export module registers them (``twinops.onnx_replace``).

onnx and onnxscript are imported lazily: importing this module needs neither. ``twinops``
imports it after its ops, so the symbolics of every op it declares are registered on import.
"""
import contextlib
import io
import logging
import os
import warnings
from typing import Any, Dict, List

import torch

from . import _ext  # noqa: F401  (registers the compiled torch.ops.twinops ops)
from . import onnx_nodes as N
from .onnx_nodes import PLUGIN_NAMESPACE, PLUGIN_VERSION
from .onnx_replace import resolve_replace, torchscript_symbolics, translation_table
from .onnx_sizes import MAX_INPUT_LENGTH, exact_size_constants, exact_size_model
from .opdef import DOMAIN, Node, registered, resolve

__all__ = [
    "DOMAIN",
    "register_torchscript_symbolics",
    "onnx_translation_table",
    "onnx_reference_ops",
    "export_onnx",
    "exact_size_constants",
    "exact_size_model",
    "MAX_INPUT_LENGTH",
    "PLUGIN_VERSION",
    "PLUGIN_NAMESPACE",
]

# The lowest opset the TorchScript symbolics are registered for (a node that rebuilds a size in
# the graph may need a later one; its symbolic says so).
_TS_MIN_OPSET = 7


def _nodes() -> List[Node]:
    """The distinct nodes of the registered ops, in registration order."""
    return N.unique_nodes(registered().values())


# ---------------------------------------------------------------------------------------
# TorchScript exporter (torch.onnx.export(..., dynamo=False))
# ---------------------------------------------------------------------------------------

_TS_REGISTERED: set = set()


def register_torchscript_symbolics() -> None:
    """Registers the TorchScript-exporter symbolic of every registered op's node.

    Idempotent (a node registered since the last call is added); runs when twinops is imported.
    Each symbolic is ``Node.symbolic`` (the op's export module says which output sizes it
    rebuilds in the graph for ``dynamic_axes`` and which it refuses) or the generic
    :func:`twinops.onnx_nodes.default_symbolic`, registered for opset 7 and up.
    """
    from torch.onnx import register_custom_op_symbolic

    for node in _nodes():
        if node.op_type in _TS_REGISTERED:
            continue
        symbolic = resolve(node.symbolic) if node.symbolic is not None else N.default_symbolic(node)
        register_custom_op_symbolic(node.torch_op, symbolic, _TS_MIN_OPSET)
        _TS_REGISTERED.add(node.op_type)


# ---------------------------------------------------------------------------------------
# dynamo exporter (torch.onnx.export(..., dynamo=True))
# ---------------------------------------------------------------------------------------

_TABLE: Dict[str, tuple] = {}  # op_type -> (torch op overload, translation function)


def onnx_translation_table() -> Dict[Any, Any]:
    """Translation functions for ``torch.onnx.export(..., dynamo=True, custom_translation_table=...)``.

    Returns ``{torch op overload: fn}`` for every registered op's node (a fresh dict each call;
    merge it with your own entries). Needs onnx and onnxscript. Each ``fn`` has the torch op's
    signature (:func:`twinops.onnx_nodes.translation`) around ``Node.translation`` or the generic
    :func:`twinops.onnx_nodes.default_translation`; the op's export module documents how symbolic
    sizes (``dynamic_shapes``) are exported and which it refuses with a ValueError.
    """
    for node in _nodes():
        if node.op_type not in _TABLE:
            body = resolve(node.translation) if node.translation is not None else N.default_translation(node)
            _TABLE[node.op_type] = (N.torch_overload(node), N.translation(node, body))
    return dict(_TABLE.values())


# ---------------------------------------------------------------------------------------
# export helper
# ---------------------------------------------------------------------------------------

def export_onnx(model, args, f=None, *, dynamo: bool = True, replace=(), **kwargs):
    """Exports ``model`` to ONNX with the twinops nodes and returns the ``onnx.ModelProto``.

    Args:
        model: an ``nn.Module`` (or anything ``torch.onnx.export`` accepts).
        args: tuple of example inputs.
        f: optional path or binary file object; the model is also written there.
        dynamo: True (default) uses the torch.export-based exporter with
            :func:`onnx_translation_table` merged under any ``custom_translation_table`` given;
            False uses the TorchScript exporter after :func:`register_torchscript_symbolics`.
        replace: names of PyTorch ops whose ATen ops are exported as twinops nodes too, so a
            model that calls them deploys with twinops' plugins without being edited (default
            ``()``: the export is the plain one). Each name is a PyTorch function's (its ATen ops
            become the twinops node of the op family that registered it):
            ``twinops.onnx_replace.replacements()`` lists them with what each maps and what stays
            standard ONNX, and docs/ops/<op>.md documents each. Output sizes follow dynamic shapes
            exactly, as for the twinops ops. Both exporters; with ``dynamo=False`` the symbolics
            are registered for this export only.
        **kwargs: passed to ``torch.onnx.export`` (``dynamic_shapes=`` for dynamo,
            ``dynamic_axes=``/``input_names=`` for TorchScript, ``opset_version=`` ...).

    Returns:
        ``onnx.ModelProto`` (opset_import includes domain ``twinops`` version 1).

    Raises:
        ValueError: an op's export refuses a call it cannot export exactly (e.g. an output size
            that would be wrong at other dynamic input sizes; the message starts with "twinops ONNX"
            and says why); the dynamo exporter's wrapping errors are unwrapped to it. Also an
            unknown name in ``replace`` (the message lists the known ones).
    """
    import onnx

    reps = resolve_replace(replace)
    if dynamo:
        table = onnx_translation_table()
        table.update(translation_table(reps))
        table.update(kwargs.pop("custom_translation_table", None) or {})
        kwargs.setdefault("verbose", False)
        try:
            with _without_torchvision_notices(), warnings.catch_warnings():
                for message in _TORCH_INTERNAL_WARNINGS:
                    warnings.filterwarnings("ignore", message=message, category=FutureWarning)
                program = torch.onnx.export(model, args, dynamo=True, custom_translation_table=table, **kwargs)
        except Exception as e:  # noqa: BLE001 - surface a twinops refusal instead of the exporter's wrappers
            cause = e
            while cause is not None and not (isinstance(cause, ValueError) and str(cause).startswith("twinops ONNX")):
                cause = cause.__cause__
            if cause is None:
                raise
            raise cause from e
        proto = program.model_proto
    else:
        register_torchscript_symbolics()
        buffer = io.BytesIO()
        with torchscript_symbolics(reps):
            torch.onnx.export(model, args, buffer, dynamo=False, **kwargs)
        proto = onnx.load_from_string(buffer.getvalue())
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            onnx.save(proto, f)
        else:
            f.write(proto.SerializeToString())
    return proto


# torch's own exporter code warns about its own use of a deprecated pytree API (torch 2.11's
# "`isinstance(treespec, LeafSpec)` is deprecated"): nothing a caller can act on.
_TORCH_INTERNAL_WARNINGS = (r"`isinstance\(treespec, LeafSpec\)` is deprecated",)


class _TorchvisionNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("torchvision is not installed")


@contextlib.contextmanager
def _without_torchvision_notices():
    """The dynamo exporter logs "torchvision is not installed. Skipping torchvision::<op>" for each
    of torchvision's ops on every export where torchvision is absent; a model that ran without
    torchvision calls none of those ops, so the lines say nothing about it."""
    logger = logging.getLogger("torch.onnx._internal.exporter._registration")
    notice = _TorchvisionNotice()
    logger.addFilter(notice)
    try:
        yield
    finally:
        logger.removeFilter(notice)


# ---------------------------------------------------------------------------------------
# onnx.reference kernels
# ---------------------------------------------------------------------------------------

_REFERENCE_OPS: Dict[str, type] = {}


def onnx_reference_ops() -> list:
    """``onnx.reference.op_run.OpRun`` subclasses (op_domain ``twinops``) for every registered
    node that declares a reference kernel (``Node.reference``).

    Use as ``onnx.reference.ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops())``.
    The kernels never call the twinops kernels; the module each one lives in documents its
    arithmetic. Outputs have the input's dtype.
    """
    for node in _nodes():
        if node.reference is not None and node.op_type not in _REFERENCE_OPS:
            _REFERENCE_OPS[node.op_type] = N.reference_op(node, node.reference)
    return list(_REFERENCE_OPS.values())


register_torchscript_symbolics()
