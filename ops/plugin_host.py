"""A TensorRT-free plugin host: drives the twinops TensorRT plugins without a TensorRT runtime.

The host (``csrc/trt_host``, a small C++ library built on first use against TensorRT *headers*
only, driven through ctypes) loads the plugin library the way ``IPluginRegistry::loadLibrary``
does (``dlopen``, ``setLoggerFinder``, ``getCreators`` / ``getPluginCreators``), builds
``PluginFieldCollection``\\ s from ONNX node attributes exactly as TensorRT's ONNX parser does
(:func:`node_fields`) and takes each plugin through the build and runtime lifecycle: output
types, output shapes through a symbolic ``IExprBuilder`` (min/opt/max profile and concrete
shapes), ``supportsFormatCombination`` over every (type, format) pair, ``configurePlugin``,
workspace size, serialization round trip into the runtime phase, clone, ``attachToContext``,
``onShapeChange`` and finally ``enqueue`` on CUDA tensors.

Configuration (environment):

* ``TWINOPS_TRT_HEADERS``: ``os.pathsep``-separated TensorRT include dirs; the first holding
  ``NvInfer.h`` is used (an empty or header-less value makes the host unavailable). Default:
  setup.py's search (``$TENSORRT_ROOT/include``, ``TENSORRT_INCLUDE_DIR``, system dirs), then the
  repository's ``.trt/{10,11}/include``, preferring the plugin library's TensorRT major version.
* ``TWINOPS_TRT_PLUGIN_LIB``: the plugin library; default ``twinops.trt.plugin_library()`` or
  ``libtwinops_trt.so`` next to this file.
* ``TWINOPS_CACHE``: where the host library is built (default ``~/.cache/twinops``).

The module is two layers: ``twinops.plugin_host_library`` (ctypes: discovery, the host library,
:class:`PluginHost`, :class:`Plugin`; its public names are re-exported here) and this file (ONNX
node -> PluginFields, :func:`prepare_plugin` / :func:`run_plugin` for any node; an op family may
add thin wrappers in its package, ``twinops.library.<op>.plugin_host``).

Typical use::

    outputs = twinops.plugin_host.run_plugin(node, [x, y])   # any exported node, CUDA inputs
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

from .plugin_host_library import (DATA_TYPES, DOMAIN_FALLBACK_SINCE, FIELD_TYPES, LINEAR, MAX_DIMS, BuildResult,
                                  CreatorInfo, Field, HostError, Plugin, PluginHost, TensorSpec, engine_dtype,
                                  expr_selftest, get_host, header_dir, host_library, parser_lookup_keys,
                                  plugin_library_path, unavailable_reason)
from .plugin_host_library import _attr_map, _host_reason  # noqa: F401  (tests read the host's own reason)

__all__ = ["unavailable_reason", "header_dir", "plugin_library_path", "host_library", "expr_selftest", "get_host",
           "PluginHost", "Plugin", "Field", "CreatorInfo", "TensorSpec", "BuildResult", "HostError", "FIELD_TYPES",
           "DATA_TYPES", "LINEAR", "MAX_DIMS", "parser_lookup_keys", "DOMAIN_FALLBACK_SINCE", "engine_dtype",
           "node_fields", "attributes_node", "prepare_plugin", "run_plugin"]


# ---------------------------------------------------------------------------------------
# ONNX node -> PluginFields, as TensorRT's ONNX parser does it
# ---------------------------------------------------------------------------------------

def node_fields(node, creator: CreatorInfo) -> List[Field]:
    """PluginFields for ``node`` exactly as onnx-tensorrt's ``loadFields`` builds them: only the
    field names ``creator`` declares (absent attributes skipped, undeclared ones dropped), in the
    creator's order; INT -> kINT32 (int64 narrowed by a C cast), FLOAT -> kFLOAT32, STRING ->
    kCHAR with a NUL appended (length counts it), INTS -> kINT32 array, FLOATS -> kFLOAT32 array,
    STRINGS -> kCHAR (each NUL-terminated, concatenated), TENSOR -> its element type."""
    from onnx import AttributeProto as A
    from onnx import numpy_helper

    attrs = _attr_map(node)
    out = []
    for name, _, _ in creator.fields:
        if name not in attrs:
            continue
        a = attrs[name]
        if a.type == A.FLOAT:
            arr, t = np.asarray([a.f], np.float32), FIELD_TYPES["FLOAT32"]
        elif a.type == A.INT:
            arr, t = np.asarray([a.i], np.int64).astype(np.int32), FIELD_TYPES["INT32"]
        elif a.type == A.STRING:
            data = a.s + b"\0"
            out.append(Field(name, FIELD_TYPES["CHAR"], data, len(data)))
            continue
        elif a.type == A.FLOATS:
            arr, t = np.asarray(a.floats, np.float32), FIELD_TYPES["FLOAT32"]
        elif a.type == A.INTS:
            arr, t = np.asarray(a.ints, np.int64).astype(np.int32), FIELD_TYPES["INT32"]
        elif a.type == A.STRINGS:
            data = b"".join(s + b"\0" for s in a.strings)
            out.append(Field(name, FIELD_TYPES["CHAR"], data, len(data)))
            continue
        elif a.type == A.TENSOR:
            arr = numpy_helper.to_array(a.t)
            kinds = {np.float32: "FLOAT32", np.int8: "INT8", np.int16: "INT16", np.int32: "INT32",
                     np.float16: "FLOAT16", np.float64: "FLOAT64"}
            if arr.dtype.type not in kinds:
                raise HostError(f"attribute {name!r}: tensor type {arr.dtype} is unsupported in plugin fields")
            t = FIELD_TYPES[kinds[arr.dtype.type]]
        else:
            raise HostError(f"attribute {name!r}: attributes of ONNX type {a.type} are unsupported as plugin fields")
        arr = np.ascontiguousarray(arr).reshape(-1)
        out.append(Field(name, t, arr.tobytes(), int(arr.size)))
    return out


def attributes_node(op_type: str, attrs: Dict[str, object], inputs: Sequence[str] = ("X", "sizes")):
    """An ONNX node ``op_type(inputs) -> Y`` in the twinops domain with ``attrs`` typed the way
    ``onnx.helper.make_attribute`` types Python values (so pass floats as floats). Attribute names
    may be any, including make_node's own parameter names (name, inputs, outputs, domain)."""
    from onnx import helper

    node = helper.make_node(op_type, list(inputs), ["Y"], domain="twinops")
    node.attribute.extend(helper.make_attribute(k, v) for k, v in sorted(attrs.items()) if v is not None)
    return node


# ---------------------------------------------------------------------------------------
# any node end to end
# ---------------------------------------------------------------------------------------

def _profile(dims: Sequence[int]) -> Dict[str, List[int]]:
    """Dynamic profile around concrete dims: min 1, opt = dims, max = 2 * dims (symbolic shapes)."""
    return dict(min=[1] * len(dims), opt=list(dims), max=[2 * max(1, d) for d in dims])


def _as_node(node, nb_inputs: int):
    """An onnx.NodeProto as is; (op_type, attrs) as :func:`attributes_node` with inputs in0..in<n-1>."""
    import onnx

    if isinstance(node, onnx.NodeProto):
        return node
    if not (isinstance(node, (tuple, list)) and len(node) == 2 and isinstance(node[0], str)
            and isinstance(node[1], dict)):
        raise ValueError(f"run_plugin: node must be an onnx.NodeProto or (op_type, attrs dict), got {node!r:.80}")
    return attributes_node(node[0], dict(node[1]), [f"in{i}" for i in range(nb_inputs)])


def _shape_values(shape_inputs, listed: Sequence[int], nb_inputs: int) -> Dict[int, List[int]]:
    """{node input index: values}: a dict as given, a sequence for the node's
    tensorrt_plugin_shape_input_indices in order (else for its last inputs)."""
    if shape_inputs is None:
        return {}
    items = list(shape_inputs.items()) if isinstance(shape_inputs, dict) else list(shape_inputs)
    if not isinstance(shape_inputs, dict):
        idx = list(listed) or list(range(nb_inputs - len(items), nb_inputs))
        if len(idx) != len(items):
            raise ValueError(f"run_plugin: {len(items)} shape inputs for the node's "
                             f"tensorrt_plugin_shape_input_indices {list(listed)}")
        items = list(zip(idx, items))
    out = {}
    for i, v in items:
        i = int(i) + (nb_inputs if int(i) < 0 else 0)
        values = [int(x) for x in (v.tolist() if isinstance(v, torch.Tensor) else v)]
        if not 0 <= i < nb_inputs or i in out:
            raise ValueError(f"run_plugin: shape input index {i} is not a distinct input index of a node with "
                             f"{nb_inputs} inputs")
        if not values or len(values) > MAX_DIMS:
            raise ValueError(f"run_plugin: shape input {i} must hold 1 to {MAX_DIMS} ints, got {values}")
        out[i] = values
    return out


def prepare_plugin(node, inputs: Sequence[torch.Tensor], shape_inputs=None, *, version: Optional[str] = None,
                   interface: Optional[str] = None, host: Optional[PluginHost] = None):
    """Everything in :func:`run_plugin` up to and including the runtime phase, on the CPU.

    Returns ``(runtime_plugin, build_plugin, tensors)``: ``tensors`` are the plugin's regular inputs
    in node order (``inputs`` plus the shape inputs the plugin takes as int tensors). Inputs only
    contribute their shapes and dtypes here, so they may live on the CPU.
    """
    if isinstance(inputs, torch.Tensor) or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ValueError("run_plugin: inputs must be a sequence of tensors")
    for t in inputs:
        if t.dtype not in DATA_TYPES or t.dim() > MAX_DIMS:
            raise ValueError(f"run_plugin: TensorRT has no tensor type for {t.dtype} of {t.dim()} dims (inputs: at "
                             f"most {MAX_DIMS} dims of {', '.join(str(d)[6:] for d in DATA_TYPES)})")
    n = len(inputs) + (len(shape_inputs) if shape_inputs is not None else 0)
    node = _as_node(node, n)
    a = _attr_map(node)
    listed = list(a["tensorrt_plugin_shape_input_indices"].ints) if "tensorrt_plugin_shape_input_indices" in a else []
    values = _shape_values(shape_inputs, listed, n)
    listed = {i + (n if i < 0 else 0) for i in listed}
    host = host or get_host()
    creator = host.select(node, version, interface)
    specs, shape_specs, tensors, rest = [], [], [], iter(inputs)
    for i in range(n):
        if i in values and creator.interface == "v3" and i in listed:  # V3: the parser passes the values
            shape_specs.append(TensorSpec(torch.int64, values[i], **_profile(values[i])))
            continue
        if i in values:  # otherwise an ordinary int tensor (int64; cast to int32 on 8.6)
            t = torch.tensor(values[i], dtype=torch.int64 if host.trt_major >= 10 else torch.int32)
        else:
            # an int64 input narrowed to int32 before TensorRT 9, as the ONNX parser narrows it there
            t = next(rest)
            t = t.to(engine_dtype(t.dtype, host.trt_major))
        # float tensors get a dynamic profile; int tensors (sizes, indices) keep their static shape
        specs.append(TensorSpec(t.dtype, tuple(t.shape), **(_profile(t.shape) if t.is_floating_point() else {})))
        tensors.append(t)
    built = host.create(creator, node_fields(node, creator), name=node.name or node.op_type)
    if built is None:
        raise HostError(f"{creator.name} v{creator.version}: createPlugin returned nullptr:\n{host.take_log()}")
    built.build(specs, shape_specs)
    return built.runtime(), built, tensors


def run_plugin(node, inputs: Sequence[torch.Tensor], shape_inputs=None, *, version: Optional[str] = None,
               interface: Optional[str] = None, stream=None, host: Optional[PluginHost] = None) -> List[torch.Tensor]:
    """Run any plugin of the library through its whole lifecycle and enqueue it; returns its outputs.

    * ``node``: the ``onnx.NodeProto`` as exported, or ``(op_type, attrs)`` with ``attrs`` a dict
      typed as ``onnx.helper.make_attribute`` types Python values (a node with inputs in0, in1, ...).
    * ``inputs``: the node's tensor inputs in node order, shape inputs left out: CUDA tensors
      (made contiguous: plugins take linear tensors).
    * ``shape_inputs``: values of the node's 1-D int shape inputs, as ``{node input index:
      values}`` or a sequence for the indices in the node's ``tensorrt_plugin_shape_input_indices``
      (else for its last inputs). A V3 creator whose node lists the index gets them as shape-input
      values; any other creator as an int tensor input (int64; int32 on TensorRT 8.6), as the parser passes them.
    * ``version`` / ``interface``: the creator, as in :meth:`PluginHost.select`.
    * ``stream``: a ``torch.cuda.Stream`` to enqueue on (default: a fresh non-default stream,
      synchronised with the current one); ``host``: default :func:`get_host`.

    Returns every output of the plugin, in order. Every output is allocated poisoned (NaN, or the
    type's minimum for ints) so a plugin that skips elements fails a comparison. A data-dependent
    output (``BuildResult.size_tensors``) is allocated at its declared upper bound and returned
    narrowed to the length its size-tensor output holds after enqueue (the size tensors are
    returned too, last as the plugin orders them; the ONNX node names only the outputs before).
    Raises :class:`HostError` with the logs when a step fails, ``enqueue`` returns non-zero or a
    size tensor holds a length outside [0, upper bound], ``ValueError`` for bad arguments.
    """
    reason = unavailable_reason(enqueue=True) if host is None else (
        None if torch.cuda.is_available() else "enqueue needs a CUDA GPU (torch.cuda.is_available() is False)")
    if reason:
        raise HostError(f"run_plugin: {reason}")
    if isinstance(inputs, torch.Tensor) or not all(isinstance(t, torch.Tensor) and t.is_cuda for t in inputs):
        raise ValueError("run_plugin: inputs must be a sequence of CUDA tensors")
    if len({t.device for t in inputs}) > 1:
        raise ValueError(f"run_plugin: inputs are on several devices: {sorted({str(t.device) for t in inputs})}")
    device = inputs[0].device if inputs else torch.device("cuda", torch.cuda.current_device())
    rt, built, tensors = prepare_plugin(node, [t.contiguous() for t in inputs], shape_inputs, version=version,
                                        interface=interface, host=host)
    tensors = [t.to(device).contiguous() for t in tensors]
    outs = []
    for o in rt.result.outputs:
        dtype = {v: k for k, v in DATA_TYPES.items()}[o["type"]]
        poison = float("nan") if dtype.is_floating_point else (True if dtype == torch.bool else torch.iinfo(dtype).min)
        outs.append(torch.full(o["dims"], poison, dtype=dtype, device=device))
    ws = torch.empty(rt.result.workspace, dtype=torch.uint8, device=device) if rt.result.workspace else None
    current = torch.cuda.current_stream(device)
    stream = stream or torch.cuda.Stream(device=device)
    stream.wait_stream(current)  # inputs, outputs and the workspace were produced on the current stream
    status = rt.enqueue([t.data_ptr() for t in tensors], [y.data_ptr() for y in outs],
                        ws.data_ptr() if ws is not None else 0, stream.cuda_stream)
    for t in [*tensors, *outs, *([ws] if ws is not None else [])]:
        t.record_stream(stream)
    current.wait_stream(stream)
    if status != 0:
        raise HostError(f"{rt.creator.name}: enqueue returned {status}:\n{rt.host.take_log()}")
    del built
    return _narrowed(rt.creator.name, rt.result, outs)


def _narrowed(name: str, result: BuildResult, outs: List[torch.Tensor]) -> List[torch.Tensor]:
    """``outs`` with each data-dependent dimension cut to the length its size tensor holds."""
    got = []
    for i, (o, y) in enumerate(zip(result.outputs, outs)):
        for j, k in sorted(o["size_tensor"].items()):
            n = int(outs[k].item())  # waits for the enqueue
            if not 0 <= n <= y.shape[j]:
                raise HostError(f"{name}: output {k} gives output {i} a length of {n} along dim {j}, outside "
                                f"[0, {y.shape[j]}] (its declared upper bound)")
            y = y.narrow(j, 0, n)
        got.append(y)
    return got
