"""The plugin host's library layer (ctypes): public names are re-exported by ``twinops.plugin_host``.

Finds the TensorRT headers and the plugin library, builds the host library (``csrc/trt_host``,
against TensorRT *headers* only) on first use, declares its C entry points, and wraps them:
:class:`PluginHost` (the plugin library loaded as ``IPluginRegistry::loadLibrary`` does, its
creators and their declared fields, creator selection as TensorRT's ONNX parser does it) and
:class:`Plugin` (build phase, serialization, runtime phase, enqueue). Turning ONNX nodes into
fields and running whole nodes is ``twinops.plugin_host``'s other half (the node layer).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

__all__ = ["unavailable_reason", "header_dir", "plugin_library_path", "host_library", "expr_selftest", "get_host",
           "PluginHost", "Plugin", "Field", "CreatorInfo", "TensorSpec", "BuildResult", "HostError", "FIELD_TYPES",
           "DATA_TYPES", "LINEAR", "MAX_DIMS", "parser_lookup_keys", "DOMAIN_FALLBACK_SINCE"]

_HERE = Path(__file__).resolve().parent
_SOURCES = ["expr_builder.h", "plugin_host.h", "plugin_host.cpp", "lifecycle.cpp"]
MAX_DIMS = 8

# nvinfer1::PluginFieldType and nvinfer1::DataType values (identical in the 8.6, 10 and 11 headers
# for the members used here).
FIELD_TYPES = {"FLOAT16": 0, "FLOAT32": 1, "FLOAT64": 2, "INT8": 3, "INT16": 4, "INT32": 5, "CHAR": 6,
               "DIMS": 7, "UNKNOWN": 8, "BF16": 9, "INT64": 10}
DATA_TYPES = {torch.float32: 0, torch.float16: 1, torch.int8: 2, torch.int32: 3, torch.bool: 4, torch.uint8: 5,
              torch.bfloat16: 7, torch.int64: 8}
LINEAR = 0  # TensorFormat::kLINEAR


def engine_dtype(dtype: torch.dtype, trt_major: int) -> torch.dtype:
    """The dtype a tensor of ``dtype`` has in a TensorRT ``trt_major`` network: int64 is int32
    before TensorRT 9 (DataType has no kINT64 there; the ONNX parser narrows int64 tensors and a
    plugin declares int32), every other dtype itself."""
    return torch.int32 if dtype == torch.int64 and trt_major < 9 else dtype


class HostError(RuntimeError):
    """A lifecycle step failed; the message carries the host's and the plugin's log lines."""


# ---------------------------------------------------------------------------------------
# discovery and build
# ---------------------------------------------------------------------------------------

def _source_dir() -> Path:
    for cand in (_HERE.parent / "csrc" / "trt_host", _HERE / "csrc" / "trt_host"):
        if (cand / "plugin_host.cpp").is_file():
            return cand
    raise FileNotFoundError("csrc/trt_host sources not found (the plugin host needs a source checkout)")


def _header_major(inc: Path) -> Optional[int]:
    """TensorRT major version of an include dir (NvInferVersion.h), None if unreadable."""
    import re

    try:
        text = (inc / "NvInferVersion.h").read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"#define\s+(?:TRT_MAJOR_ENTERPRISE|NV_TENSORRT_MAJOR)\s+(\d+)", text)
    return int(m.group(1)) if m else None


def _library_major(path: str) -> Optional[int]:
    """TensorRT major version the plugin library was compiled against (its twinops_trt_version export)."""
    try:
        v = int(ctypes.CDLL(path).twinops_trt_version())
    except (OSError, AttributeError):
        return None
    return v // 10000 if v >= 100000 else v // 1000  # 10.x: M*10000 + m*100 + p; 8.x: M*1000 + m*100 + p


def header_dir() -> Optional[Path]:
    """The TensorRT include dir the host compiles against (see the module doc), or None.

    Without TWINOPS_TRT_HEADERS the candidates are searched in setup.py's order, then the
    repository's .trt/{10,11}/include; when they hold different major versions, the one the
    plugin library was compiled against wins (the host and the library must agree)."""
    env = os.environ.get("TWINOPS_TRT_HEADERS")
    if env is not None:
        cands = [p for p in env.split(os.pathsep) if p]
    else:
        cands = [os.path.join(os.environ["TENSORRT_ROOT"], "include")] if os.environ.get("TENSORRT_ROOT") else []
        cands += [os.environ.get("TENSORRT_INCLUDE_DIR", ""), "/usr/include/x86_64-linux-gnu",
                  "/usr/include/aarch64-linux-gnu", "/usr/include", "/usr/local/tensorrt/include",
                  "/opt/tensorrt/include"]
        cands += [str(_HERE.parent / ".trt" / v / "include") for v in ("10", "11")]
    found = [Path(c) for c in cands if c and (Path(c) / "NvInfer.h").is_file()]
    if env is None and len({_header_major(f) for f in found}) > 1:
        lib = plugin_library_path()
        major = _library_major(lib) if lib else None
        found = [f for f in found if _header_major(f) == major] or found
    return found[0] if found else None


def _cuda_include() -> Optional[Path]:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    p = Path(home) / "include"
    return p if (p / "cuda_runtime_api.h").is_file() else None


def plugin_library_path() -> Optional[str]:
    """Path of the plugin library to load, or None when none is built."""
    env = os.environ.get("TWINOPS_TRT_PLUGIN_LIB")
    if env:
        return env if os.path.isfile(env) else None
    try:
        from . import trt as _trt  # helper module owning the library location

        return _trt.plugin_library()
    except Exception:  # noqa: BLE001 -- missing module or library: fall back to the package dir
        lib = _HERE / "libtwinops_trt.so"
        return str(lib) if lib.is_file() else None


def _host_reason() -> Optional[str]:
    """Why the host library itself cannot be compiled here (None when it can)."""
    if header_dir() is None:
        return ("no TensorRT headers found (set TWINOPS_TRT_HEADERS or TENSORRT_INCLUDE_DIR to a dir "
                "holding NvInfer.h)")
    if _cuda_include() is None:
        return "no CUDA toolkit headers (cuda_runtime_api.h) found; set CUDA_HOME"
    if shutil.which(os.environ.get("CXX", "g++")) is None:
        return f"no C++ compiler ({os.environ.get('CXX', 'g++')}) on PATH"
    try:
        _source_dir()
    except FileNotFoundError as e:
        return str(e)
    return None


def _cpu_reason() -> Optional[str]:
    reason = _host_reason()
    if reason:
        return reason
    if plugin_library_path() is None:
        return ("the TensorRT plugin library (libtwinops_trt.so) is not built: rebuild twinops with TensorRT "
                "headers (TENSORRT_INCLUDE_DIR) or set TWINOPS_TRT_PLUGIN_LIB")
    return None


def unavailable_reason(enqueue: bool = True) -> Optional[str]:
    """None when the host can run here, else why not.

    ``enqueue=False`` asks only for the CPU-side capability (the whole lifecycle except
    ``enqueue``: headers, compiler, plugin library); ``enqueue=True`` also needs a CUDA GPU.
    """
    reason = _cpu_reason()
    if reason or not enqueue:
        return reason
    if not torch.cuda.is_available():
        return "enqueue needs a CUDA GPU (torch.cuda.is_available() is False)"
    return None


_LIB: Dict[str, ctypes.CDLL] = {}


def _build_host() -> ctypes.CDLL:
    inc, cuda = header_dir(), _cuda_include()
    src = _source_dir()
    key = hashlib.sha256(str(inc).encode() + b"\0" + b"".join((src / f).read_bytes() for f in _SOURCES))
    out_dir = Path(os.environ.get("TWINOPS_CACHE", Path.home() / ".cache" / "twinops")) / "plugin_host"
    lib = out_dir / f"libtwinops_plugin_host-{key.hexdigest()[:16]}.so"
    if str(lib) in _LIB:
        return _LIB[str(lib)]
    if not lib.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=out_dir)
        os.close(fd)
        cmd = [os.environ.get("CXX", "g++"), "-std=c++17", "-O1", "-g", "-fPIC", "-shared", "-Wall", "-Wextra",
               "-Wno-deprecated-declarations", f"-I{src}", "-isystem", str(inc), "-isystem", str(cuda),
               *[str(src / f) for f in _SOURCES if f.endswith(".cpp")], "-ldl", "-o", tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            os.unlink(tmp)
            raise HostError(f"building the plugin host failed:\n{' '.join(cmd)}\n{proc.stderr[-4000:]}")
        os.replace(tmp, lib)  # atomic: concurrent test processes never see half a library
    dll = ctypes.CDLL(str(lib))
    _declare(dll)
    _LIB[str(lib)] = dll
    return dll


class _Field(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("type", ctypes.c_int32),
                ("length", ctypes.c_int32)]


class _Tensor(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("format", ctypes.c_int32), ("nb_dims", ctypes.c_int32),
                ("dims", ctypes.c_int64 * MAX_DIMS), ("min", ctypes.c_int64 * MAX_DIMS),
                ("opt", ctypes.c_int64 * MAX_DIMS), ("max", ctypes.c_int64 * MAX_DIMS),
                ("size_tensor", ctypes.c_int32 * MAX_DIMS)]


def _declare(d: ctypes.CDLL) -> None:
    P, I, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
    sig = {
        "th_log": (S, []), "th_log_clear": (None, []), "th_trt_major": (I, []), "th_num_types": (I, []),
        "th_num_formats": (I, []), "th_open": (P, [S]), "th_num_creators": (I, [P]),
        "th_creator": (I, [P, I, ctypes.POINTER(S), ctypes.POINTER(S), ctypes.POINTER(S), ctypes.POINTER(I),
                           ctypes.POINTER(I)]),
        "th_num_fields": (I, [P, I]),
        "th_field_decl": (I, [P, I, I, ctypes.POINTER(S), ctypes.POINTER(I), ctypes.POINTER(I)]),
        "th_create": (P, [P, I, S, ctypes.POINTER(_Field), I, I]),
        "th_deserialize": (P, [P, I, S, P, ctypes.c_size_t]), "th_destroy": (None, [P]),
        "th_serialize": (I, [P]), "th_ser_field": (I, [P, I, ctypes.POINTER(_Field)]), "th_runtime": (P, [P]),
        "th_build": (I, [P, ctypes.POINTER(_Tensor), I, ctypes.POINTER(_Tensor), I, ctypes.POINTER(_Tensor), I,
                         ctypes.POINTER(I), ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t)]),
        "th_enqueue": (I, [P, ctypes.POINTER(P), ctypes.POINTER(P), P, P]),
        "th_expr_selftest": (I, [I, ctypes.c_int64, ctypes.c_int64, I, ctypes.POINTER(ctypes.c_int64),
                                 ctypes.POINTER(I)]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(d, name)
        fn.restype, fn.argtypes = res, args


# ---------------------------------------------------------------------------------------
# host objects
# ---------------------------------------------------------------------------------------

@dataclass
class Field:
    """One PluginField: ``type`` a PluginFieldType value, ``data`` its bytes, ``length`` in elements."""
    name: str
    type: int
    data: bytes
    length: int


@dataclass
class CreatorInfo:
    """A creator found in the library. ``interface``: "v3" (IPluginCreatorV3One) or "v2"
    (IPluginCreator); ``fields``: declared (name, PluginFieldType, length); ``sources``: the entry
    points listing it ("getCreators", "getPluginCreators")."""
    index: int
    name: str
    version: str
    namespace: str
    interface: str
    fields: List[Tuple[str, int, int]]
    sources: List[str]


@dataclass
class TensorSpec:
    """A plugin input: ``dtype`` (torch dtype), concrete ``dims`` and the min/opt/max profile
    (each defaults to ``dims``). For a shape input the dims are the tensor's *values*."""
    dtype: torch.dtype
    dims: Sequence[int]
    min: Optional[Sequence[int]] = None
    opt: Optional[Sequence[int]] = None
    max: Optional[Sequence[int]] = None

    def _c(self) -> _Tensor:
        t = _Tensor()
        if len(self.dims) > MAX_DIMS:
            raise ValueError(f"TensorSpec: at most {MAX_DIMS} dims, got {len(self.dims)}")
        t.type, t.format, t.nb_dims = DATA_TYPES[self.dtype], LINEAR, len(self.dims)
        for name in ("dims", "min", "opt", "max"):
            vals = getattr(self, name) or self.dims
            if len(vals) != len(self.dims):
                raise ValueError(f"TensorSpec.{name}: {len(vals)} values for {len(self.dims)} dims")
            for j, v in enumerate(vals):
                getattr(t, name)[j] = int(v)
        return t


@dataclass
class BuildResult:
    """What the build phase reported. ``outputs``: per output, dict(type=DataType value,
    dims/min/opt/max=tuples, size_tensor=dict); ``formats[pos, type]``: bitmask of accepted
    TensorFormats at input/output position ``pos`` for DataType ``type``; ``workspace``: bytes.

    A data-dependent output dimension j (the plugin declared it with
    ``IExprBuilder::declareSizeTensor``) appears in its output's ``size_tensor`` as ``{j: k}``,
    k the index of the 0-D int output that holds its length after enqueue; its ``dims[j]`` and
    ``max[j]`` are the declared upper bound (what is allocated), ``min[j]`` 0 and ``opt[j]`` the
    plugin's opt."""
    outputs: List[Dict[str, object]]
    formats: np.ndarray
    workspace: int

    @property
    def size_tensors(self) -> List[int]:
        """The indices of the outputs that hold another output's data-dependent length (TensorRT
        leaves them out of the ONNX node's outputs)."""
        return sorted({k for o in self.outputs for k in o["size_tensor"].values()})


class Plugin:
    """One plugin object inside the host (build or runtime phase)."""

    def __init__(self, host: "PluginHost", handle: int, creator: CreatorInfo):
        self.host, self._h, self.creator = host, handle, creator
        self.result: Optional[BuildResult] = None

    def __del__(self):
        if getattr(self, "_h", None):
            self.host.lib.th_destroy(self._h)
            self._h = None

    def build(self, inputs: Sequence[TensorSpec], shape_inputs: Sequence[TensorSpec] = ()) -> BuildResult:
        """Build phase: types, shapes (symbolic and concrete), formats, configurePlugin, workspace, clone."""
        lib = self.host.lib
        cin = (_Tensor * max(1, len(inputs)))(*[s._c() for s in inputs])
        csh = (_Tensor * max(1, len(shape_inputs)))(*[s._c() for s in shape_inputs])
        cap = 16  # outputs the host can take (th_build reports more as an error)
        out = (_Tensor * cap)()
        nout = ctypes.c_int(0)
        ntypes = lib.th_num_types()
        mask = (ctypes.c_uint64 * ((len(inputs) + cap) * ntypes))()
        ws = ctypes.c_size_t(0)
        st = lib.th_build(self._h, cin, len(inputs), csh, len(shape_inputs), out, cap, ctypes.byref(nout), mask,
                          ctypes.byref(ws))
        if st != 0:
            raise HostError(f"{self.creator.name} v{self.creator.version}: build phase failed:\n{self.host.take_log()}")
        n = nout.value
        outs = [dict(type=out[i].type, **{k: tuple(getattr(out[i], k)[:out[i].nb_dims])
                                          for k in ("dims", "min", "opt", "max")},
                     size_tensor={j: out[i].size_tensor[j] - 1 for j in range(out[i].nb_dims) if out[i].size_tensor[j]})
                for i in range(n)]
        formats = np.ctypeslib.as_array(mask)[: (len(inputs) + n) * ntypes].reshape(len(inputs) + n, ntypes).copy()
        self.result = BuildResult(outs, formats, int(ws.value))
        return self.result

    def serialize(self) -> List[Field]:
        """V3: getFieldsToSerialize as Fields; V2: one Field (name "") holding the serialize() bytes."""
        lib = self.host.lib
        n = lib.th_serialize(self._h)
        if n < 0:
            raise HostError(f"serialize failed:\n{self.host.take_log()}")
        fields = []
        for j in range(n):
            f = _Field()
            lib.th_ser_field(self._h, j, ctypes.byref(f))
            nbytes = f.length * _ELEM_SIZE.get(f.type, 1) if f.name else f.length
            fields.append(Field(f.name.decode(), f.type, ctypes.string_at(f.data, nbytes) if nbytes else b"", f.length))
        return fields

    def runtime(self) -> "Plugin":
        """Serialize -> recreate in the runtime phase -> clone -> attachToContext -> onShapeChange."""
        h = self.host.lib.th_runtime(self._h)
        if not h:
            raise HostError(f"{self.creator.name}: runtime phase failed:\n{self.host.take_log()}")
        p = Plugin(self.host, h, self.creator)
        p.result = self.result
        return p

    def enqueue(self, inputs: Sequence[int], outputs: Sequence[int], workspace: int, stream: int) -> int:
        """enqueue with device pointers and a cudaStream_t handle; returns the plugin's status."""
        ins = (ctypes.c_void_p * max(1, len(inputs)))(*inputs)
        outs = (ctypes.c_void_p * max(1, len(outputs)))(*outputs)
        return self.host.lib.th_enqueue(self._h, ins, outs, workspace or None, stream or None)


_ELEM_SIZE = {0: 2, 1: 4, 2: 8, 3: 1, 4: 2, 5: 4, 6: 1, 9: 2, 10: 8}


class PluginHost:
    """The plugin library loaded as IPluginRegistry::loadLibrary would (``path`` defaults to
    :func:`plugin_library_path`)."""

    def __init__(self, path: Optional[str] = None):
        reason = _cpu_reason() if path is None else None
        if reason:
            raise HostError(reason)
        self.lib = _build_host()
        self.path = path or plugin_library_path()
        self.take_log()
        self._h = self.lib.th_open(str(self.path).encode())
        if not self._h:
            raise HostError(f"loading {self.path} failed:\n{self.take_log()}")
        self.creators = [self._creator(i) for i in range(self.lib.th_num_creators(self._h))]

    @property
    def trt_major(self) -> int:
        """The TensorRT major version of the headers the host (and so the library) was built with."""
        return self.lib.th_trt_major()

    def take_log(self) -> str:
        """The host's and the plugins' log lines since the last call (then cleared)."""
        text = self.lib.th_log().decode(errors="replace")
        self.lib.th_log_clear()
        return text

    def _creator(self, i: int) -> CreatorInfo:
        S, I = ctypes.c_char_p, ctypes.c_int
        name, ver, ns, iface, src = S(), S(), S(), I(), I()
        self.lib.th_creator(self._h, i, *(ctypes.byref(v) for v in (name, ver, ns, iface, src)))
        fields = []
        for j in range(max(0, self.lib.th_num_fields(self._h, i))):
            fn, ft, fl = S(), I(), I()
            self.lib.th_field_decl(self._h, i, j, ctypes.byref(fn), ctypes.byref(ft), ctypes.byref(fl))
            fields.append(((fn.value or b"").decode(), ft.value, fl.value))
        sources = [s for bit, s in ((1, "getCreators"), (2, "getPluginCreators")) if src.value & bit]
        return CreatorInfo(i, (name.value or b"").decode(), (ver.value or b"").decode(), (ns.value or b"").decode(),
                           "v3" if iface.value == 3 else "v2", fields, sources)

    def find(self, name: str, version: str = "1", namespace: str = "") -> Optional[CreatorInfo]:
        """The creator registered under (name, version, namespace), as the registry looks it up."""
        for c in self.creators:
            if (c.name, c.version, c.namespace) == (name, version, namespace):
                return c
        return None

    def select(self, node, version: Optional[str] = None, interface: Optional[str] = None,
               parser: Optional[Tuple[int, int]] = None) -> CreatorInfo:
        """The creator TensorRT's ONNX parser picks for ``node``: the first of
        :func:`parser_lookup_keys` (``parser`` = the parser's (major, minor); default the newest
        rule) that names a creator. ``version`` overrides the node's ``plugin_version``;
        ``interface`` ("v3"/"v2") picks among the creators of that name and namespace instead."""
        keys = parser_lookup_keys(node, parser, version)
        listing = [(c.name, c.version, c.namespace, c.interface) for c in self.creators]
        if interface is not None and version is None:
            if interface not in ("v2", "v3"):
                raise ValueError(f"interface must be 'v2' or 'v3', got {interface!r}")
            preferred = keys[0][1]
            for name, _, ns in keys:
                found = [c for c in self.creators if (c.name, c.namespace, c.interface) == (name, ns, interface)]
                if not found:
                    continue
                if len(found) > 1 and any(c.version == preferred for c in found):  # 8.6: "1" and "legacy" are both V2
                    found = [c for c in found if c.version == preferred]
                if len(found) != 1:
                    raise HostError(f"{len(found)} {interface} creators named {name!r} in namespace {ns!r}: {listing}")
                return found[0]
            raise HostError(f"no {interface} creator named {node.op_type!r} in namespace "
                            f"{' or '.join(repr(k[2]) for k in keys)}; the library has {listing}")
        for key in keys:
            c = self.find(*key)
            if c is not None:
                if interface is not None and c.interface != interface:
                    break
                return c
        raise HostError(f"no {interface or ''} creator {node.op_type!r} version {keys[0][1]!r} namespace "
                        f"{' or '.join(repr(k[2]) for k in keys)}; the library has {listing}")

    def create(self, creator: CreatorInfo, fields: Sequence[Field], name: str = "plugin",
               runtime: bool = False) -> Optional[Plugin]:
        """createPlugin(name, fields, kBUILD or kRUNTIME); None when the creator returns nullptr."""
        keep = [ctypes.create_string_buffer(f.data, max(1, len(f.data))) for f in fields]
        cf = (_Field * max(1, len(fields)))()
        for i, (f, buf) in enumerate(zip(fields, keep)):
            cf[i].name, cf[i].type, cf[i].length = f.name.encode(), f.type, f.length
            cf[i].data = ctypes.cast(buf, ctypes.c_void_p) if f.data else None
        h = self.lib.th_create(self._h, creator.index, name.encode(), cf, len(fields), 1 if runtime else 0)
        return Plugin(self, h, creator) if h else None

    def deserialize(self, creator: CreatorInfo, blob: bytes, name: str = "plugin") -> Optional[Plugin]:
        """V2 deserializePlugin; None when the creator returns nullptr."""
        buf = ctypes.create_string_buffer(blob, max(1, len(blob)))
        h = self.lib.th_deserialize(self._h, creator.index, name.encode(), buf, len(blob))
        return Plugin(self, h, creator) if h else None


def host_library() -> ctypes.CDLL:
    """The compiled host library (built on first use; needs headers and a compiler, not the plugins)."""
    reason = _host_reason()
    if reason:
        raise HostError(reason)
    return _build_host()


def expr_selftest(op: int, a: int, b: int, symbolic: bool) -> Optional[Tuple[int, bool]]:
    """``DimensionOperation(op)`` applied to (a, b) through the host's IExprBuilder, ``a`` given as
    a symbol bound to ``a`` or as a constant: (value, folded to a constant), or None when the
    builder rejects it (invalid op, division by zero)."""
    lib = host_library()
    v, c = ctypes.c_int64(0), ctypes.c_int(0)
    if lib.th_expr_selftest(op, a, b, int(symbolic), ctypes.byref(v), ctypes.byref(c)):
        return None
    return v.value, bool(c.value)


_HOSTS: Dict[str, PluginHost] = {}


def get_host(path: Optional[str] = None) -> PluginHost:
    """A cached :class:`PluginHost` for ``path`` (default: the built plugin library)."""
    key = path or plugin_library_path() or ""
    if key not in _HOSTS:
        _HOSTS[key] = PluginHost(path)
    return _HOSTS[key]


def _attr_map(node) -> Dict[str, object]:
    return {a.name: a for a in node.attribute}


# ---------------------------------------------------------------------------------------
# creator lookup, as TensorRT's ONNX parser does it
# ---------------------------------------------------------------------------------------

# The parser release from which a missed lookup is retried with the node's domain as namespace
# (reported for 10.10; the sources read for parser_lookup_keys bracket it).
DOMAIN_FALLBACK_SINCE = (10, 10)


def parser_lookup_keys(node, parser: Optional[Tuple[int, int]] = None,
                       version: Optional[str] = None) -> List[Tuple[str, str, str]]:
    """The ``(name, version, namespace)`` keys onnx-tensorrt's FallbackPluginImporter tries for
    ``node``, in order; the first one registered wins.

    Every parser first looks up ``(op_type, plugin_version or "1", plugin_namespace or "")``
    (release/8.6-GA ``builtin_op_importers.cpp``; ``onnxOpImporters.cpp`` of 10.1-GA and of a
    later 10.x with IPluginCreatorV3Quick creators). Newer parsers (reported from 10.10;
    ``onnxOpCheckers.cpp`` and the importer of current main; 11.x) retry a missed lookup with the
    node's domain as the namespace, whether or not ``plugin_namespace`` was given. twinops'
    exporters write ``plugin_version="1"`` and ``plugin_namespace=""`` and register the creators in
    namespace "", so the first key finds them on 8.6, 10.x and 11.x alike.

    Args:
        node: an ``onnx.NodeProto``.
        parser: the parser's (major, minor); None = the newest rule (with the domain retry).
        version: overrides the node's ``plugin_version``.

    Returns:
        one key, or two when the retry applies and the domain differs from the first namespace.
    """
    attrs = _attr_map(node)
    if version is None:
        version = attrs["plugin_version"].s.decode() if "plugin_version" in attrs else "1"
    ns = attrs["plugin_namespace"].s.decode() if "plugin_namespace" in attrs else ""
    keys = [(node.op_type, version, ns)]
    if (parser is None or tuple(parser) >= DOMAIN_FALLBACK_SINCE) and node.domain != ns:
        keys.append((node.op_type, version, node.domain))
    return keys
