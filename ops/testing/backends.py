"""The backends ``twinops check`` compares: where an op can run, and why one is missing.

Every backend takes the CPU inputs (a list, one tensor per input of the op, already in the
case's dtype) and returns ``{output name: CPU tensor}``. Backends that need an exported graph
export the op's module with the TorchScript exporter (fast, static shapes: one graph per case),
its inputs named as the spec names them.
"""
from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import torch

ORDER = ("torch-cpu", "torch-cuda", "plugin-host", "tensorrt", "onnx-reference")


class Unsupported(Exception):
    """A backend cannot run this case for a documented reason (reported as skipped, not failed)."""


@dataclass
class Backend:
    """``name``; ``reason`` why it is missing (None: usable); ``run(spec, inputs_cpu, kwargs, out_shape)``
    with ``inputs_cpu`` a list of tensors and ``out_shape`` the reference's (first) output shape."""

    name: str
    reason: Optional[str]
    run: Callable

    @property
    def available(self) -> bool:
        return self.reason is None


def _module_reason(module: str) -> Optional[str]:
    """The optional twinops module's own unavailable_reason(), or why it cannot be imported."""
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        return f"{module} cannot be imported ({e})"
    try:
        return mod.unavailable_reason()
    except Exception as e:  # a broken probe must not take the whole check down
        return f"{module}.unavailable_reason() raised {type(e).__name__}: {e}"


def _outputs(spec, y) -> Dict[str, torch.Tensor]:
    ys = y if isinstance(y, (tuple, list)) else (y,)
    if len(ys) != len(spec.outputs):
        raise RuntimeError(f"{spec.name}: expected {len(spec.outputs)} outputs, got {len(ys)}")
    return {name: t.detach().cpu() for name, t in zip(spec.outputs, ys)}


def _torch_cpu(spec, xs, kw, out_shape):
    return _outputs(spec, spec.fn(*xs, **kw))


def _torch_cuda(spec, xs, kw, out_shape):
    if spec.cuda_dtypes is not None:
        for x in xs:
            if x is not None and x.is_floating_point() and x.dtype not in spec.cuda_dtypes:
                kinds = ", ".join(str(d).replace("torch.", "") for d in spec.cuda_dtypes)
                raise Unsupported(f"{spec.name}'s CUDA kernels take {kinds}; {str(x.dtype).replace('torch.', '')} "
                                  "runs on the CPU only")
    return _outputs(spec, spec.fn(*(x.cuda() if x is not None else None for x in xs), **kw))


def _as_list(xs) -> list:
    """The inputs as a list, trailing optional inputs left out (None) dropped: the module's
    defaults stand for them, and the exported graph has no such input."""
    xs = [xs] if isinstance(xs, torch.Tensor) else list(xs)
    while xs and xs[-1] is None:
        xs.pop()
    return xs


def _floating_as(xs, dtype) -> list:
    """``xs`` with their floating tensors in ``dtype`` (index and other integer inputs kept)."""
    return [x.to(dtype) if x is not None and x.is_floating_point() else x for x in xs]


def export(spec, xs, kw: dict):
    """The op's module exported (TorchScript exporter) with example inputs ``xs`` (a list, or one
    tensor), named as ``spec.inputs``: an onnx.ModelProto."""
    import twinops

    if spec.module is None:
        raise RuntimeError(f"op {spec.name!r} has no exportable module (OpSpec.module)")
    xs = _as_list(xs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # an optional input left out before a given one (None) is no graph input
        model = twinops.export_onnx(spec.module(**kw).eval(), tuple(xs), dynamo=False,
                                    input_names=[n for n, x in zip(spec.inputs, xs) if x is not None])
    narrowed = [str(w.message) for w in caught if "not representable in float32" in str(w.message)]
    if narrowed:
        # A documented export limitation, not a kernel mismatch: the graph computes another scale.
        raise Unsupported(narrowed[0].split(" and the ")[0].replace("twinops ONNX export: ", ""))
    return model


def _onnx_reference(spec, xs, kw, out_shape):
    from onnx.reference import ReferenceEvaluator

    import twinops

    # The graph is evaluated in float64 on the case's (dtype-rounded) input values: this backend
    # checks the exported node and its attributes, not a low-precision arithmetic.
    x64 = _floating_as(_as_list(xs), torch.float64)
    model = export(spec, x64, kw)
    graph_inputs = {i.name for i in model.graph.input}
    feeds = {n: x.numpy() for n, x in zip(spec.inputs, x64) if n in graph_inputs and x is not None}  # may be pruned
    ys = ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops()).run(None, feeds)
    return _outputs(spec, tuple(torch.from_numpy(y) for y in ys))


def _no_float64(xs, what: str) -> None:
    if any(x is not None and x.dtype == torch.float64 for x in xs):  # None: an absent optional input
        raise Unsupported(f"{what} has no float64 I/O (TensorRT tensors are float32/float16/bfloat16)")


def _no_plugin(spec) -> None:
    if spec.node is None:
        raise Unsupported(f"op {spec.name!r} has no TensorRT plugin (its declaration lists no creator "
                          "for its node)")


def _declared_node(op_type: str):
    """The declaration (twinops.opdef.Node) of the ONNX node ``op_type``, or None."""
    from .. import opdef

    for op in opdef.registered().values():
        if op.node.op_type == op_type:
            return op.node
    return None


def plugin_call(model, op_type: str, feeds: Dict[str, torch.Tensor]):
    """``(node, inputs, shape_inputs)`` for :func:`twinops.plugin_host.run_plugin` from the single
    ``op_type`` node of an exported ``model``: each node input's value is the graph input of that
    name in ``feeds``, a constant of the graph, or computed by ``onnx.reference`` from ``feeds``.
    Inputs the op's declaration marks ``shape_input`` become ``shape_inputs`` (``{index: values}``:
    TensorRT hands them to an IPluginV3 as values where the node lists them, to other plugins as
    int tensors); the others are ``inputs``, in node order."""
    import onnx
    from onnx import numpy_helper

    nodes = [n for n in model.graph.node if n.op_type == op_type]
    if len(nodes) != 1:
        raise RuntimeError(f"expected one {op_type} node in the exported graph, found {len(nodes)}")
    node = nodes[0]
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            values[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    missing = [name for name in node.input if name and name not in feeds and name not in values]
    if missing:  # computed in the graph (e.g. from input shapes): evaluate up to them
        from onnx.reference import ReferenceEvaluator

        import twinops

        graph_inputs = {i.name for i in model.graph.input}
        partial = onnx.ModelProto()
        partial.CopyFrom(model)
        del partial.graph.output[:]
        partial.graph.output.extend(onnx.helper.make_empty_tensor_value_info(m) for m in missing)
        got = ReferenceEvaluator(partial, new_ops=twinops.onnx_reference_ops()).run(
            None, {k: v.detach().cpu().numpy() for k, v in feeds.items() if k in graph_inputs})
        values.update(zip(missing, got))
    declared = _declared_node(op_type)
    shape_idx = set(declared.shape_input_indices) if declared is not None else set()
    inputs, shape_inputs = [], {}
    for i, name in enumerate(node.input):
        if i in shape_idx:
            v = feeds[name] if name in feeds else values[name]
            shape_inputs[i] = [int(d) for d in (v.tolist() if isinstance(v, torch.Tensor) else v.reshape(-1))]
        elif name in feeds:
            inputs.append(feeds[name])
        else:
            inputs.append(_torch_from_onnx(values[name]))
    return node, inputs, shape_inputs or None


def _torch_from_onnx(a) -> torch.Tensor:
    """A graph constant as onnx.numpy_helper gives it (bfloat16 as ml_dtypes' type, which torch
    cannot take) as a CPU tensor of the same dtype and values."""
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view("uint16").copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _plugin_host(spec, xs, kw, out_shape):
    plugin_host = importlib.import_module("twinops.plugin_host")  # sys.modules first: replaceable in tests

    _no_plugin(spec)
    _no_float64(xs, "the plugin host")
    # Exported as the user would (the case's dtype, on the GPU, as the tensorrt backend does): a
    # constant the export writes from the inputs (a zero optional input standing in before a given
    # one) has the inputs' dtype, which the plugin requires.
    model = export(spec, [x.cuda() if x is not None else None for x in _as_list(xs)], kw)
    node, inputs, shape_inputs = plugin_call(model, spec.node, dict(zip(spec.inputs, xs)))
    ys = plugin_host.run_plugin(node, [t.cuda() for t in inputs], shape_inputs)
    return _outputs(spec, tuple(ys[: len(node.output)]))  # a data-dependent output's size tensor comes after


def _tensorrt(spec, xs, kw, out_shape):
    trt = importlib.import_module("twinops.trt")

    if spec.module is None:
        raise RuntimeError(f"op {spec.name!r} has no exportable module (OpSpec.module)")
    _no_plugin(spec)
    _no_float64(xs, "TensorRT")
    xc = [x.cuda() if x is not None else None for x in _as_list(xs)]
    # The TorchScript exporter: static shapes, one engine per case, and much faster than dynamo.
    runner = trt.export_and_build(spec.module(**kw).eval(), tuple(xc), dynamo=False)
    out = runner(*[x for x in xc if x is not None])
    return _outputs(spec, tuple(out.values()) if isinstance(out, dict) else out)


def discover() -> List[Backend]:
    """Every backend twinops knows, in :data:`ORDER`, each with the reason it is missing (or None)."""
    import twinops

    cuda = twinops.cuda_unavailable_reason()
    # The plugin paths need a GPU and their own pieces (headers, plugin library, TensorRT), not
    # twinops._C's CUDA kernels: each module's own reason says which is missing.
    host = _module_reason("twinops.plugin_host")
    engine = _module_reason("twinops.trt") or (None if torch.cuda.is_available() else "no CUDA GPU visible to torch")
    try:
        import onnx.reference  # noqa: F401

        onnx_reason = None
    except ImportError as e:
        onnx_reason = f"onnx.reference cannot be imported ({e})"
    return [Backend("torch-cpu", None, _torch_cpu), Backend("torch-cuda", cuda, _torch_cuda),
            Backend("plugin-host", host, _plugin_host), Backend("tensorrt", engine, _tensorrt),
            Backend("onnx-reference", onnx_reason, _onnx_reference)]
