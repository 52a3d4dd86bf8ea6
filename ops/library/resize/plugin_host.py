"""resize's plugins through the TensorRT-free plugin host: thin wrappers over
:func:`twinops.plugin_host.prepare_plugin` / :func:`~twinops.plugin_host.run_plugin` that build
the node from a resize's attributes and sizes.

    y = twinops.library.resize.plugin_host.run_resize(x, attrs, sizes=(H_out, W_out))  # x: CUDA (N, C, H, W)
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

from ... import plugin_host as _ph
from ...plugin_host import DATA_TYPES, HostError, PluginHost, attributes_node

__all__ = ["prepare_resize", "run_resize"]


def _resize_call(x: torch.Tensor, attrs, sizes: Optional[Sequence[int]], plugin: str):
    """(node, inputs, shape_inputs) of a resize plugin for prepare_plugin / run_plugin."""
    import onnx

    if not isinstance(x, torch.Tensor) or x.dim() != 4 or x.dtype not in (torch.float32, torch.float16,
                                                                             torch.bfloat16):
        raise ValueError(f"run_resize: x must be a 4-D float32/float16/bfloat16 tensor, got "
                         f"{getattr(x, 'dtype', type(x))} of shape {tuple(getattr(x, 'shape', ()))}")
    if sizes is not None:
        sizes = [int(s) for s in sizes]
        if len(sizes) != 2 or min(sizes) < 1:
            raise ValueError(f"run_resize: sizes must be two positive ints (H_out, W_out), got {sizes}")
    node = attrs if isinstance(attrs, onnx.NodeProto) else attributes_node(
        plugin, dict(attrs), ["X", "sizes"] if sizes is not None else ["X"])
    if sizes is None:
        return node, [x], None
    if node.op_type == "DynamicTRTResize":  # MMDeploy contract: only size_tensor's shape is read
        return node, [x, torch.zeros((1, 1, *sizes), dtype=x.dtype, device=x.device)], None
    return node, [x], {1: sizes}  # a shape input on V3 when the node lists index 1, else an int tensor


def prepare_resize(x: torch.Tensor, attrs, sizes: Optional[Sequence[int]] = None, *, plugin: str = "TwinopsResize",
                   version: Optional[str] = None, interface: Optional[str] = None, host: Optional[PluginHost] = None):
    """Everything in :func:`run_resize` up to and including the runtime phase, on the CPU.

    Returns ``(runtime_plugin, build_plugin, extra_input)``: ``extra_input`` is the tensor the
    plugin reads as its second regular input (None when ``sizes`` is a V3 shape input or absent).
    ``x`` only contributes its shape and dtype here, so it may live on the CPU.
    """
    node, inputs, shape_inputs = _resize_call(x, attrs, sizes, plugin)
    rt, built, tensors = _ph.prepare_plugin(node, inputs, shape_inputs, version=version, interface=interface, host=host)
    if rt.result.outputs[0]["type"] != DATA_TYPES[x.dtype]:
        raise HostError(f"output type {rt.result.outputs[0]['type']} differs from the input's {DATA_TYPES[x.dtype]}")
    return rt, built, tensors[1] if len(tensors) > 1 else None


def run_resize(x: torch.Tensor, attrs, sizes: Optional[Sequence[int]] = None, *, plugin: str = "TwinopsResize",
               version: Optional[str] = None, interface: Optional[str] = None, stream=None) -> torch.Tensor:
    """Run a resize plugin through its whole lifecycle and enqueue it on ``x`` (:func:`run_plugin`).

    * ``x``: CUDA tensor ``(N, C, H, W)``, float32 / float16 / bfloat16.
    * ``attrs``: the exported node itself, or its attributes as a dict (typed as
      ``onnx.helper.make_attribute`` types Python values).
    * ``sizes``: ``(H_out, W_out)`` for the node's second input: the V3 shape input (values) when the
      node lists index 1 in ``tensorrt_plugin_shape_input_indices``, a ``(1, 1, H_out, W_out)`` size
      tensor for ``DynamicTRTResize``, else the int64 sizes tensor; None: no second input.
    * ``plugin``: the node's op_type for a dict ``attrs``; ``version``, ``interface``, ``stream``: as
      in :func:`run_plugin`.

    Returns the NaN-poisoned output after enqueue, ``(N, C, H_out, W_out)`` in ``x``'s dtype.
    """
    # Through the module: the checks (a host, a GPU, CUDA inputs) and the enqueue are run_plugin's,
    # and a test that records run_plugin's calls records these too.
    node, inputs, shape_inputs = _resize_call(x, attrs, sizes, plugin)
    (y,) = _ph.run_plugin(node, inputs, shape_inputs, version=version, interface=interface, stream=stream)
    if y.dtype != x.dtype:
        raise HostError(f"{node.op_type}: output type {y.dtype} differs from the input's {x.dtype}")
    return y
