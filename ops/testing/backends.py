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
    return _outputs(spec, spec.fn(*(x.cuda() for x in xs), **kw))


def _as_list(xs) -> list:
    return [xs] if isinstance(xs, torch.Tensor) else list(xs)


def export(spec, xs, kw: dict):
    """The op's module exported (TorchScript exporter) with example inputs ``xs`` (a list, or one
    tensor), named as ``spec.inputs``: an onnx.ModelProto."""
    import twinops

    if spec.module is None:
        raise RuntimeError(f"op {spec.name!r} has no exportable module (OpSpec.module)")
    xs = _as_list(xs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = twinops.export_onnx(spec.module(**kw).eval(), tuple(xs), dynamo=False,
                                    input_names=list(spec.inputs)[:len(xs)])
    narrowed = [str(w.message) for w in caught if "not representable in float32" in str(w.message)]
    if narrowed:
        # A documented export limitation, not a kernel mismatch: the graph computes another scale.
        raise Unsupported(narrowed[0].split(" and the ")[0].replace("twinops ONNX export: ", ""))
    return model


def node_attributes(model, op_type: str = "TwinopsResize") -> dict:
    """The attributes of the (single) ``op_type`` node of ``model`` as Python values (str, not bytes)."""
    import onnx

    nodes = [n for n in model.graph.node if n.op_type == op_type]
    if len(nodes) != 1:
        raise RuntimeError(f"expected one {op_type} node in the exported graph, found {len(nodes)}")
    attrs = {}
    for a in nodes[0].attribute:
        v = onnx.helper.get_attribute_value(a)
        attrs[a.name] = v.decode() if isinstance(v, bytes) else (list(v) if isinstance(v, (list, tuple)) else v)
    return attrs


def _onnx_reference(spec, xs, kw, out_shape):
    from onnx.reference import ReferenceEvaluator

    import twinops

    # The graph is evaluated in float64 on the case's (dtype-rounded) input values: this backend
    # checks the exported node and its attributes, not a low-precision arithmetic.
    x64 = [x.double() for x in xs]
    model = export(spec, x64, kw)
    graph_inputs = {i.name for i in model.graph.input}
    feeds = {n: x.numpy() for n, x in zip(spec.inputs, x64) if n in graph_inputs}  # an unread input may be pruned
    ys = ReferenceEvaluator(model, new_ops=twinops.onnx_reference_ops()).run(None, feeds)
    return _outputs(spec, tuple(torch.from_numpy(y) for y in ys))


def _no_float64(xs, what: str) -> None:
    if any(x.dtype == torch.float64 for x in xs):
        raise Unsupported(f"{what} has no float64 I/O (TensorRT tensors are float32/float16/bfloat16)")


def _plugin_host(spec, xs, kw, out_shape):
    plugin_host = importlib.import_module("twinops.plugin_host")  # sys.modules first: replaceable in tests

    _no_float64(xs, "the plugin host")
    attrs = node_attributes(export(spec, [x.float() for x in xs], kw), spec.node)
    # run_resize builds the node's second input (sizes, or a size tensor) from the output size.
    # TODO(issue 22): plugin_host.run_plugin(node, inputs, shape_inputs) once it exists.
    y = plugin_host.run_resize(xs[0].cuda(), attrs, sizes=tuple(int(v) for v in out_shape[-2:]), plugin=spec.node)
    return _outputs(spec, y)


def _tensorrt(spec, xs, kw, out_shape):
    trt = importlib.import_module("twinops.trt")

    if spec.module is None:
        raise RuntimeError(f"op {spec.name!r} has no exportable module (OpSpec.module)")
    _no_float64(xs, "TensorRT")
    xc = [x.cuda() for x in xs]
    # The TorchScript exporter: static shapes, one engine per case, and much faster than dynamo.
    runner = trt.export_and_build(spec.module(**kw).eval(), tuple(xc), dynamo=False)
    out = runner(*xc)
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
