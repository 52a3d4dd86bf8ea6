"""twinops.trt: build and run TensorRT engines of models that use twinops ops.

TensorRT (Python package ``tensorrt``, version 10 or 11) is imported lazily: importing twinops
never imports it, and every entry point that needs it raises an ``ImportError`` saying so.

Typical use::

    runner = twinops.trt.export_and_build(net.cuda().eval(), (x,), dynamic_shapes=({2: Dim.DYNAMIC, 3: Dim.DYNAMIC},))
    y = runner(x)["output"]                    # dict of output name -> torch tensor

or step by step: ``load_plugins()``, ``plan = build_engine(onnx_model, shapes={"x": (min, opt, max)})``,
``TRTRunner(plan)(x=x)``.
"""
from __future__ import annotations

import ctypes
import logging
import math
import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from . import opdef as _opdef  # the package's import has registered every op's declaration

__all__ = ["LIBRARY_NAME", "PLUGIN_NAMES", "TRTBuildError", "unavailable_reason", "plugin_library", "load_plugins",
           "build_engine", "TRTRunner", "export_and_build", "derive_profiles"]

LIBRARY_NAME = "libtwinops_trt.so"
# Creator names the library registers (csrc/trt); used to recognise an already registered library.
# Every declared op's plugin creators (twinops.opdef), in declaration order.
PLUGIN_NAMES = tuple(dict.fromkeys(c.name for op in _opdef.registered().values() for c in op.plugins))
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_LOG = logging.getLogger("twinops.trt")

Shape = Tuple[int, ...]
Profile = Tuple[Shape, Shape, Shape]


class TRTBuildError(RuntimeError):
    """An ONNX model TensorRT could not parse, or a network it could not build or deserialize."""


# ---------------------------------------------------------------------------------------
# TensorRT import, logger, availability
# ---------------------------------------------------------------------------------------

def _tensorrt():
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise ImportError("twinops.trt needs the TensorRT Python package `tensorrt` (version 10 or 11), which is not "
                          f"importable here ({exc}); install it with `pip install tensorrt` or from NVIDIA's "
                          "TensorRT archive") from exc
    if int(trt.__version__.split(".")[0]) < 10:
        raise ImportError(f"twinops.trt needs TensorRT >= 10 (tensor-address API); found tensorrt {trt.__version__}")
    return trt


def _major(trt) -> int:
    return int(trt.__version__.split(".")[0])


_LOGGER = None
_LOCK = threading.Lock()


def _logger():
    """One process-wide logger: forwards to logging.getLogger('twinops.trt') and keeps recent errors
    so exceptions can quote what TensorRT said (the builder returns only None on failure)."""
    global _LOGGER
    if _LOGGER is None:
        trt = _tensorrt()

        class _Logger(trt.ILogger):
            def __init__(self):
                trt.ILogger.__init__(self)
                self.errors: List[str] = []

            def log(self, severity, msg):
                if severity in (trt.ILogger.INTERNAL_ERROR, trt.ILogger.ERROR):
                    self.errors = (self.errors + [msg])[-20:]
                    _LOG.error(msg)
                elif severity == trt.ILogger.WARNING:
                    _LOG.warning(msg)
                else:
                    _LOG.debug(msg)

        _LOGGER = _Logger()
    return _LOGGER


def _logged_errors(since: int = 0) -> str:
    errors = _LOGGER.errors[since:] if _LOGGER is not None else []
    return ("\nTensorRT log:\n  " + "\n  ".join(errors)) if errors else ""


def unavailable_reason() -> Optional[str]:
    """None when TensorRT (>= 10) is importable and torch sees a CUDA GPU; otherwise why not."""
    try:
        _tensorrt()
    except ImportError as exc:
        return str(exc)
    if not torch.cuda.is_available():
        return "twinops.trt needs a CUDA GPU and torch does not see one"
    return None


# ---------------------------------------------------------------------------------------
# the plugin library
# ---------------------------------------------------------------------------------------

def plugin_library() -> str:
    """Path of ``libtwinops_trt.so`` (built by setup.py next to this module); FileNotFoundError if absent."""
    path = os.path.join(_PACKAGE_DIR, LIBRARY_NAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"twinops TensorRT plugin library not found at {path}: twinops was built without TensorRT headers. "
            "Rebuild from the repository root with the headers located, e.g.\n"
            "    TENSORRT_ROOT=/opt/tensorrt pip install --no-build-isolation -e .\n"
            "(or TENSORRT_INCLUDE_DIR=/path/to/include containing NvInfer.h); setup.py prints why it skipped the "
            "library otherwise")
    return path


_LOADED: Dict[str, List[Tuple[str, str, str]]] = {}


def _creator_keys(registry) -> List[Tuple[str, str, str]]:
    creators = getattr(registry, "all_creators", None)
    if creators is None:  # TRT 10.0 before all_creators: V2 creators only
        creators = registry.plugin_creator_list
    return [(c.name, c.plugin_version, c.plugin_namespace) for c in creators]


def load_plugins(path: Optional[str] = None) -> List[Tuple[str, str, str]]:
    """Registers the twinops plugin creators with TensorRT's global plugin registry.

    Args:
        path: the plugin library; default :func:`plugin_library`.

    Uses ``IPluginRegistry.load_library`` (the library's ``getCreators``/``getPluginCreators``
    exports, as trtexec --dynamicPlugins does) and falls back to ``ctypes.CDLL(path, RTLD_GLOBAL)``,
    whose static initialisers register the creators. Idempotent per library path.

    Returns:
        list of (name, version, namespace) of the twinops creators now registered.
    """
    trt = _tensorrt()
    path = os.path.realpath(path if path is not None else plugin_library())
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_plugins: path {path!r} is not a file")
    with _LOCK:
        if path in _LOADED:
            return list(_LOADED[path])
        _logger()
        registry = trt.get_plugin_registry()
        before = set(_creator_keys(registry))
        handle = registry.load_library(path) if hasattr(registry, "load_library") else None
        if handle is None:
            _LOG.info("load_library(%s) failed or is unavailable; loading with ctypes.CDLL", path)
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        ours = [k for k in _creator_keys(registry) if k not in before or k[0] in PLUGIN_NAMES]
        if not ours:
            raise RuntimeError(f"load_plugins: {path} registered no plugin creators{_logged_errors()}")
        _LOADED[path] = ours
        return list(ours)


def _uses_plugins(model) -> bool:
    return any(n.domain == "twinops" or n.op_type in PLUGIN_NAMES for n in model.graph.node)


# ---------------------------------------------------------------------------------------
# profiles
# ---------------------------------------------------------------------------------------

def _check_profiles(inputs: Mapping[str, Sequence[int]], shapes: Mapping[str, Sequence]) -> Dict[str, Profile]:
    """Validates ``shapes`` against the network inputs ({name: dims, -1 = dynamic}); returns clean tuples."""
    unknown = sorted(set(shapes) - set(inputs))
    if unknown:
        raise ValueError(f"shapes: no network input named {unknown}; the inputs are {dict(inputs)}")
    out = {}
    for name, dims in inputs.items():
        dims = tuple(int(d) for d in dims)
        if name not in shapes:
            if any(d < 0 for d in dims):
                raise ValueError(f"shapes: input {name!r} has dynamic shape {dims}; give shapes[{name!r}] = "
                                 "(min, opt, max) shapes")
            continue
        prof = shapes[name]
        if not (isinstance(prof, (tuple, list)) and len(prof) == 3):
            raise ValueError(f"shapes[{name!r}]: expected a (min, opt, max) triple of shapes, got {prof!r}")
        lo, opt, hi = (tuple(int(v) for v in s) for s in prof)
        for what, s in (("min", lo), ("opt", opt), ("max", hi)):
            if len(s) != len(dims):
                raise ValueError(f"shapes[{name!r}]: {what} shape {s} has rank {len(s)}, input has shape {dims}")
            if any(d >= 0 and v != d for d, v in zip(dims, s)):
                raise ValueError(f"shapes[{name!r}]: {what} shape {s} differs from the static dims of {dims}")
        if not all(a <= b <= c for a, b, c in zip(lo, opt, hi)) or min(lo, default=0) < 0:
            raise ValueError(f"shapes[{name!r}]: expected 0 <= min <= opt <= max per dim, got {lo}, {opt}, {hi}")
        out[name] = (lo, opt, hi)
    return out


def derive_profiles(example_shapes: Mapping[str, Sequence[int]],
                    dynamic_dims: Mapping[str, Mapping[int, Tuple[Optional[int], Optional[int]]]],
                    max_scale: int = 2) -> Dict[str, Profile]:
    """(min, opt, max) profiles from example shapes and the dynamic dims of each input.

    The rule: ``opt`` = the example shape; a dynamic dim of example length ``d`` gets
    ``min = max(1, d // max_scale)`` and ``max = d * max_scale``, replaced by the bounds the user gave
    (``torch.export.Dim(min=, max=)``) where finite; static dims keep ``d`` in all three.

    Args:
        example_shapes: {input name: example shape}.
        dynamic_dims: {input name: {dim index: (lower bound or None, upper bound or None)}}.
        max_scale: int >= 1, default 2.
    """
    if int(max_scale) != max_scale or max_scale < 1:
        raise ValueError(f"max_scale: expected an int >= 1, got {max_scale!r}")
    out = {}
    for name, shape in example_shapes.items():
        shape = tuple(int(d) for d in shape)
        lo, hi = list(shape), list(shape)
        for dim, (bmin, bmax) in (dynamic_dims.get(name) or {}).items():
            if not -len(shape) <= dim < len(shape):
                raise ValueError(f"dynamic_shapes: input {name!r} of shape {shape} has no dim {dim}")
            d = shape[dim]
            lo[dim] = max(1, d // max_scale) if bmin is None else int(bmin)
            hi[dim] = d * max_scale if bmax is None else int(bmax)
            if not lo[dim] <= d <= hi[dim]:
                raise ValueError(f"dynamic_shapes: input {name!r} dim {dim}: example length {d} is outside the "
                                 f"bounds [{lo[dim]}, {hi[dim]}]")
        out[name] = (tuple(lo), shape, tuple(hi))
    return out


# ---------------------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------------------

def _parser_errors(parser) -> str:
    """Every parser error verbatim: node index, name, operator, description, code and source location."""
    lines = []
    for i in range(parser.num_errors):
        e = parser.get_error(i)
        where = f"node {e.node()}"
        for attr in ("node_name", "node_operator"):  # TRT >= 10
            if hasattr(e, attr) and getattr(e, attr)():
                where += f" {attr.split('_')[1]}={getattr(e, attr)()!r}"
        lines.append(f"  [{i}] {where}: {e.desc()} (code {e.code()}, {e.file()}:{e.line()} {e.func()})")
    return "\n".join(lines)


def build_engine(onnx_model, shapes: Optional[Mapping[str, Sequence]] = None, *, fp16: bool = False,
                 tf32: bool = True, workspace: Optional[int] = None, plugins: Union[None, bool, str] = None,
                 strongly_typed: Optional[bool] = None, plugin_override: bool = False) -> bytes:
    """Builds a TensorRT engine from an ONNX model and returns the serialized engine (plan bytes).

    Args:
        onnx_model: ``onnx.ModelProto``, serialized bytes, or a path to a .onnx file.
        shapes: {input name: (min, opt, max) shapes} for one optimization profile; required for every
            input with a dynamic dim, optional for static ones.
        fp16: allow float16 kernels inside a float32 network (``BuilderFlag.FP16``; weakly typed
            networks, TensorRT 10 only). For float16 I/O export the model in float16 instead: networks
            are strongly typed (default on TensorRT 10, always on 11) and keep the ONNX types.
        tf32: allow TF32 for float32 matmul/conv (TensorRT's default True).
        workspace: workspace pool limit in bytes (default: TensorRT's, the device memory).
        plugins: None loads the twinops plugins when the model has twinops nodes; True always;
            False never; a str loads that library path.
        strongly_typed: default True, except False when ``fp16`` asks for the weakly typed flag.
        plugin_override: set the parser's ``OnnxParserFlag.ENABLE_PLUGIN_OVERRIDE`` (TensorRT >= 10.15):
            a standard ONNX node whose op_type names a registered plugin (version "1", namespace "")
            runs that plugin instead of TensorRT's own importer; loads the twinops plugins unless
            ``plugins`` is False or a path.

    Raises:
        TRTBuildError with every ONNX parser error (node, name, operator, description) or the
        builder's logged errors; ValueError for bad ``shapes``.
    """
    import onnx

    trt = _tensorrt()
    if isinstance(onnx_model, (str, os.PathLike)):
        path, data = os.fspath(onnx_model), None
        model = onnx.load(path, load_external_data=False)
    elif isinstance(onnx_model, (bytes, bytearray)):
        path, data, model = None, bytes(onnx_model), onnx.load_from_string(bytes(onnx_model))
    elif isinstance(onnx_model, onnx.ModelProto):
        path, data, model = None, onnx_model.SerializeToString(), onnx_model
    else:
        raise TypeError(f"onnx_model: expected onnx.ModelProto, bytes or a path, got {type(onnx_model).__name__}")
    if plugins is True or (plugins is None and (plugin_override or _uses_plugins(model))):
        load_plugins()
    elif isinstance(plugins, (str, os.PathLike)):
        load_plugins(os.fspath(plugins))

    has_fp16_flag = hasattr(trt.BuilderFlag, "FP16")
    if fp16 and not has_fp16_flag:
        raise ValueError(f"fp16=True: TensorRT {trt.__version__} networks are strongly typed and have no FP16 "
                         "builder flag; export the model in float16 (module.half(), half inputs) instead")
    if strongly_typed is None:
        strongly_typed = not fp16
    if strongly_typed and fp16:
        raise ValueError("fp16=True needs strongly_typed=False (the FP16 flag is refused by strongly typed networks)")
    if not strongly_typed and _major(trt) >= 11:
        raise ValueError(f"strongly_typed=False: TensorRT {trt.__version__} networks are always strongly typed")

    logger = _logger()
    since = len(logger.errors)
    builder = trt.Builder(logger)
    flags = 0
    if strongly_typed and _major(trt) == 10:  # TRT 11: always on, the flag is deprecated
        flags |= 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if plugin_override:
        flag = getattr(getattr(trt, "OnnxParserFlag", None), "ENABLE_PLUGIN_OVERRIDE", None)
        if flag is None:
            raise ValueError(f"plugin_override=True: TensorRT {trt.__version__}'s ONNX parser has no "
                             "OnnxParserFlag.ENABLE_PLUGIN_OVERRIDE (added in 10.15)")
        parser.set_flag(flag)
    ok = parser.parse_from_file(path) if path is not None else parser.parse(data)
    if not ok:
        raise TRTBuildError(f"TensorRT's ONNX parser rejected the model ({parser.num_errors} errors):\n"
                            f"{_parser_errors(parser)}{_logged_errors(since)}")

    inputs = {network.get_input(i).name: tuple(network.get_input(i).shape) for i in range(network.num_inputs)}
    profiles = _check_profiles(inputs, shapes or {})
    config = builder.create_builder_config()
    if profiles:
        profile = builder.create_optimization_profile()
        for name, (lo, opt, hi) in profiles.items():
            profile.set_shape(name, lo, opt, hi)
        config.add_optimization_profile(profile)
    if fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    if not tf32:
        config.clear_flag(trt.BuilderFlag.TF32)
    if workspace is not None:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace))
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise TRTBuildError(f"TensorRT could not build the engine{_logged_errors(since) or ' (no error logged)'}")
    return bytes(plan)



# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------

_DTYPES = {"FLOAT": torch.float32, "HALF": torch.float16, "BF16": torch.bfloat16, "INT32": torch.int32,
           "INT64": torch.int64, "BOOL": torch.bool, "INT8": torch.int8, "UINT8": torch.uint8}


def _torch_dtype(trt, dt) -> torch.dtype:
    for name, dtype in _DTYPES.items():
        if getattr(trt.DataType, name, None) == dt:
            return dtype
    raise TypeError(f"TRTRunner: engine tensor type {dt} has no torch equivalent")


def _output_allocator(trt, device: torch.device):
    """A ``trt.IOutputAllocator`` for one output whose shape depends on the data: TensorRT asks it
    for memory during ``execute_async_v3`` (a fresh torch buffer per call, so outputs never
    alias) and tells it the shape before the call returns."""

    class _Allocator(trt.IOutputAllocator):
        def __init__(self):
            trt.IOutputAllocator.__init__(self)
            self.buffer: Optional[torch.Tensor] = None
            self.shape: Optional[Tuple[int, ...]] = None

        def _allocate(self, size: int) -> int:
            # torch's allocations are 512-byte aligned, more than TensorRT asks for
            self.buffer = torch.empty(max(int(size), 1), dtype=torch.uint8, device=device)
            return self.buffer.data_ptr()

        def reallocate_output(self, tensor_name, memory, size, alignment):
            return self._allocate(size)

        def reallocate_output_async(self, tensor_name, memory, size, alignment, stream):
            return self._allocate(size)

        def notify_shape(self, tensor_name, shape):
            self.shape = tuple(shape)

    return _Allocator()


def _allocated_output(alloc, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The tensor an output allocator holds after a call: its buffer's first bytes as ``dtype``
    in the notified shape (an empty tensor when the shape has no elements)."""
    nbytes = math.prod(alloc.shape) * torch.empty((), dtype=dtype).element_size()
    if nbytes == 0:
        return torch.empty(alloc.shape, dtype=dtype, device=device)
    if alloc.buffer is None:
        raise RuntimeError(f"TRTRunner: TensorRT notified shape {alloc.shape} but asked for no memory this call")
    if alloc.buffer.numel() < nbytes:
        raise RuntimeError(f"TRTRunner: TensorRT asked for {alloc.buffer.numel()} bytes but notified shape "
                           f"{alloc.shape} of {dtype}, {nbytes} bytes")
    return alloc.buffer[:nbytes].view(dtype).view(alloc.shape)


class TRTRunner:
    """Runs a TensorRT engine on torch tensors, on the current torch CUDA stream.

    Args:
        engine: serialized engine (``bytes`` from :func:`build_engine`, ``trt.IHostMemory``), the path of
            a saved engine file, or a ``trt.ICudaEngine``.
        plugins: None loads the twinops plugins when the library is built (needed to deserialize engines
            with twinops layers); True requires them; False skips; a str loads that library path.
        device: CUDA device of the engine (default: the current device).

    ``runner(*inputs, **named) -> {output name: tensor}``: inputs positionally in ``input_names`` order
    and/or by name, each exactly once, with the engine's dtype and rank, on ``runner.device`` (host
    shape tensors on the CPU), shapes inside the engine's profile (dynamic shapes are set per call);
    non-contiguous inputs are copied contiguous. Outputs are new torch tensors; an output whose shape
    depends on the data (a plugin's size-tensor output) gets its memory from an
    ``IOutputAllocator`` during the call and its shape before the call returns. The work is enqueued on
    ``torch.cuda.current_stream()`` (execute_async_v3) and not synchronized, like a torch op. One call at
    a time per runner (it owns one execution context).
    """

    def __init__(self, engine, *, plugins: Union[None, bool, str] = None, device=None):
        trt = _tensorrt()
        if not torch.cuda.is_available():
            raise RuntimeError("TRTRunner needs a CUDA GPU and torch does not see one")
        device = torch.device("cuda") if device is None else torch.device(device)
        if device.type != "cuda":
            raise ValueError(f"TRTRunner: device must be a CUDA device, got {device}")
        self.device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
        if plugins is True:
            load_plugins()
        elif isinstance(plugins, (str, os.PathLike)):
            load_plugins(os.fspath(plugins))
        elif plugins is None and os.path.isfile(os.path.join(_PACKAGE_DIR, LIBRARY_NAME)):
            load_plugins()
        since = len(_logger().errors)
        with torch.cuda.device(self.device):
            if isinstance(engine, trt.ICudaEngine):
                self._runtime, self.engine = None, engine
            else:
                if isinstance(engine, (str, os.PathLike)):
                    with open(engine, "rb") as f:
                        engine = f.read()
                elif not isinstance(engine, (bytes, bytearray)):
                    engine = bytes(engine)  # IHostMemory supports the buffer protocol
                self._runtime = trt.Runtime(_logger())
                self.engine = self._runtime.deserialize_cuda_engine(bytes(engine))
                if self.engine is None:
                    raise TRTBuildError("TensorRT could not deserialize the engine (built by another TensorRT version, "
                                        "or a plugin it uses is not registered: twinops.trt.load_plugins())"
                                        f"{_logged_errors(since)}")
            self.context = self.engine.create_execution_context()
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        self.input_names = [n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.INPUT]
        self.output_names = [n for n in names if self.engine.get_tensor_mode(n) == trt.TensorIOMode.OUTPUT]
        self.dtypes = {n: _torch_dtype(trt, self.engine.get_tensor_dtype(n)) for n in names}
        self._host = {n: self.engine.get_tensor_location(n) == trt.TensorLocation.HOST for n in names}
        self._ranks = {n: len(self.engine.get_tensor_shape(n)) for n in names}
        self._allocators = {}  # data-dependent outputs' IOutputAllocators, made on first use

    def profile(self, name: str) -> Profile:
        """(min, opt, max) shapes of input ``name`` in the engine's first profile."""
        return tuple(tuple(s) for s in self.engine.get_tensor_profile_shape(name, 0))

    def __call__(self, *args: torch.Tensor, **named: torch.Tensor) -> Dict[str, torch.Tensor]:
        if len(args) > len(self.input_names):
            raise TypeError(f"TRTRunner: {len(args)} positional inputs for an engine with inputs {self.input_names}")
        feeds = dict(zip(self.input_names, args))
        both = sorted(set(feeds) & set(named))
        if both:
            raise TypeError(f"TRTRunner: input(s) {both} given both positionally and by name")
        feeds.update(named)
        missing = [n for n in self.input_names if n not in feeds]
        extra = sorted(set(feeds) - set(self.input_names))
        if missing or extra:
            raise ValueError(f"TRTRunner: the engine's inputs are {self.input_names}; missing {missing}, unexpected {extra}")
        keep, outputs = [], {}
        since = len(_logger().errors)
        with torch.cuda.device(self.device):
            for name in self.input_names:
                t = feeds[name]
                if not isinstance(t, torch.Tensor):
                    raise TypeError(f"TRTRunner: input {name!r} must be a torch.Tensor, got {type(t).__name__}")
                if t.dtype != self.dtypes[name]:
                    raise TypeError(f"TRTRunner: input {name!r} has dtype {t.dtype}; the engine expects {self.dtypes[name]}")
                where = torch.device("cpu") if self._host[name] else self.device
                if t.device != where:
                    raise ValueError(f"TRTRunner: input {name!r} is on {t.device}; the engine expects it on {where}")
                if t.dim() != self._ranks[name]:
                    raise ValueError(f"TRTRunner: input {name!r} has shape {tuple(t.shape)}; the engine expects rank "
                                     f"{self._ranks[name]} ({tuple(self.engine.get_tensor_shape(name))})")
                t = t.contiguous()
                keep.append(t)
                if not self.context.set_input_shape(name, tuple(t.shape)):
                    lo, _, hi = self.profile(name)
                    raise ValueError(f"TRTRunner: input {name!r} has shape {tuple(t.shape)}, outside the engine's "
                                     f"profile (min {lo}, max {hi}){_logged_errors(since)}")
                self.context.set_tensor_address(name, t.data_ptr())
            allocated = {}  # outputs whose shape depends on the data: TensorRT asks for their memory
            for name in self.output_names:
                shape = tuple(self.context.get_tensor_shape(name))
                if any(d < 0 for d in shape):
                    if name not in self._allocators:
                        self._allocators[name] = _output_allocator(_tensorrt(), self.device)
                        self.context.set_output_allocator(name, self._allocators[name])
                    allocated[name] = self._allocators[name]
                    allocated[name].buffer = allocated[name].shape = None
                    continue
                out = torch.empty(shape, dtype=self.dtypes[name], device=self.device)
                self.context.set_tensor_address(name, out.data_ptr())
                outputs[name] = out
            if not self.context.execute_async_v3(torch.cuda.current_stream(self.device).cuda_stream):
                raise RuntimeError(f"TRTRunner: execute_async_v3 failed{_logged_errors(since)}")
            for name, alloc in allocated.items():
                if alloc.shape is None:
                    raise RuntimeError(f"TRTRunner: TensorRT gave no shape for the data-dependent output {name!r}"
                                       f"{_logged_errors(since)}")
                outputs[name] = _allocated_output(alloc, self.dtypes[name], self.device)
        return {name: outputs[name] for name in self.output_names}


# ---------------------------------------------------------------------------------------
# export + build
# ---------------------------------------------------------------------------------------

def _bound(value, lower: bool) -> Optional[int]:
    """A finite torch.export.Dim bound, or None (unbounded, the default 0 lower bound, or a hint)."""
    if isinstance(value, bool) or not isinstance(value, int):  # None, hints and int_oo are not bounds
        return None
    return None if value >= 2 ** 31 or (lower and value <= 0) else value


def _dim_specs(module, n_inputs: int, dynamic_shapes) -> List[Dict[int, Any]]:
    """dynamic_shapes (torch.export's forms: tuple/list per input, or dict by forward argument name) as
    one {dim: spec} per input."""
    if dynamic_shapes is None:
        return [{} for _ in range(n_inputs)]
    if isinstance(dynamic_shapes, Mapping):
        import inspect

        params = list(inspect.signature(module.forward).parameters)[:n_inputs]
        specs = [dynamic_shapes.get(p) for p in params]
    else:
        specs = list(dynamic_shapes)
    if len(specs) != n_inputs:
        raise ValueError(f"dynamic_shapes: {len(specs)} entries for {n_inputs} example inputs")
    out = []
    for spec in specs:
        if spec is None:
            out.append({})
        elif isinstance(spec, Mapping):
            out.append({int(k): v for k, v in spec.items()})
        else:
            out.append({i: v for i, v in enumerate(spec) if v is not None})
    return out


def export_and_build(module: torch.nn.Module, example_inputs, dynamic_shapes=None, *,
                     shapes: Optional[Mapping[str, Sequence]] = None, max_scale: int = 2, dynamo: bool = True,
                     onnx_path=None, export_kwargs: Optional[dict] = None, **build_kwargs) -> TRTRunner:
    """Exports ``module`` with :func:`twinops.export_onnx`, builds an engine and returns its runner.

    Args:
        module: the model (put it in eval mode; float16 parameters and inputs give float16 I/O).
        example_inputs: a tensor or a tuple of tensors (the example shapes are the profiles' ``opt``).
        dynamic_shapes: torch.export's ``dynamic_shapes`` (per input ``{dim: Dim}`` or a list), or None
            for a static engine; with ``dynamo=False`` it is turned into ``dynamic_axes``.
        shapes: {ONNX input name: (min, opt, max)} overriding the derived profiles.
        max_scale: the profile rule of :func:`derive_profiles` for dims dynamic in the exported graph:
            ``min = max(1, d // max_scale)``, ``opt = d``, ``max = d * max_scale``, or the Dim's finite bounds.
        dynamo, onnx_path, export_kwargs: passed to :func:`twinops.export_onnx` (``onnx_path`` = its ``f``).
        **build_kwargs: passed to :func:`build_engine` (``fp16``, ``tf32``, ``workspace``, ``plugins`` ...).

    Returns:
        a :class:`TRTRunner`, with ``onnx_model`` and ``profiles`` attributes set.
    """
    from .onnx_export import export_onnx

    _tensorrt()  # fail before a long export when TensorRT is missing
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    if not all(isinstance(a, torch.Tensor) for a in args):
        raise TypeError("export_and_build: example_inputs must be a tensor or a tuple of tensors")
    specs = _dim_specs(module, len(args), dynamic_shapes)
    kwargs = dict(export_kwargs or {})
    if dynamo:
        if dynamic_shapes is not None:
            kwargs["dynamic_shapes"] = dynamic_shapes
    elif any(specs):
        kwargs.setdefault("input_names", [f"input{i}" for i in range(len(args))])
        kwargs["dynamic_axes"] = {kwargs["input_names"][i]: {d: f"input{i}_{d}" for d in s}
                                  for i, s in enumerate(specs) if s}
    proto = export_onnx(module, args, onnx_path, dynamo=dynamo, **kwargs)
    graph_inputs = list(proto.graph.input)
    if len(graph_inputs) != len(args):
        raise RuntimeError(f"export_and_build: the exported model has inputs {[i.name for i in graph_inputs]} for "
                           f"{len(args)} example inputs; pass shapes= by name and use build_engine directly")
    examples, dynamic = {}, {}
    for value, arg, spec in zip(graph_inputs, args, specs):
        dims = value.type.tensor_type.shape.dim
        examples[value.name] = tuple(arg.shape)
        # The exported graph decides which dims are dynamic (export may specialise one); the Dim gives bounds.
        dynamic[value.name] = {i: (_bound(getattr(spec.get(i), "min", None), True),
                                   _bound(getattr(spec.get(i), "max", None), False))
                               for i, d in enumerate(dims) if not d.HasField("dim_value")}
    profiles = derive_profiles(examples, dynamic, max_scale)
    profiles.update(shapes or {})
    runner = TRTRunner(build_engine(proto, profiles, **build_kwargs), plugins=build_kwargs.get("plugins"))
    runner.onnx_model, runner.profiles = proto, profiles
    return runner
