"""Checks shared by the plugin-host tests (tests/test_plugin_host.py, tests/test_conformance.py and
each op's tests/<op>/test_<op>_plugins.py)."""


def host_marks():
    """``(needs_lib, needs_gpu)``: skip marks for plugin-host tests that need the plugin library
    and TensorRT headers (build phase, CPU), and for those that enqueue (a GPU, and twinops' CUDA
    kernels for the torch op they compare with), each with the reason."""
    import pytest

    import twinops
    from twinops import plugin_host as ph

    cpu = ph.unavailable_reason(enqueue=False)
    gpu = ph.unavailable_reason(enqueue=True) or (
        None if twinops.has_cuda_kernels() else "twinops was built without CUDA kernels (the torch op to compare with)")
    return (pytest.mark.skipif(cpu is not None, reason=f"plugin host: {cpu}"),
            pytest.mark.skipif(gpu is not None, reason=f"plugin host enqueue: {gpu}"))


def rejected(host, make, what):
    """make() must return None (nullptr) and the plugin must have logged why."""
    host.take_log()
    assert make() is None, f"{what}: accepted"
    log = host.take_log()
    assert "[plugin" in log, f"{what}: returned nullptr without a message from the plugin: {log!r}"


def formats(result, pos):
    """Accepted (DataType, TensorFormat) pairs at one position of a BuildResult."""
    return {(t, f) for t in range(result.formats.shape[1]) for f in range(64) if int(result.formats[pos, t]) >> f & 1}


def replace_field(fields, name, **kw):
    """``fields`` with the field ``name`` changed by ``kw`` (type, data, length)."""
    return [type(f)(**{**f.__dict__, **kw}) if f.name == name else f for f in fields]


def _test_library_host(tmp_dir, name, cu, cpp):
    """A plugin host over a library of csrc/trt's generic classes around a test-tree op (its CUDA
    sources ``cu`` and C++ sources ``cpp``, paths under tests/), built in ``tmp_dir`` against the
    host's headers."""
    import importlib.util
    import os

    from twinops import plugin_host as ph

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("twinops_trt_build", os.path.join(root, "csrc", "trt", "build.py"))
    trt_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trt_build)
    generic = [os.path.join(root, "csrc", "trt", f) for f in ("plugin_base.cpp", "plugin_v2.cpp", "plugin_v3.cpp",
                                                               "plugin_library.cpp")]
    out = os.path.join(str(tmp_dir), f"lib{name}_trt.so")
    trt_build.build(str(ph.header_dir()), out, archs="90", cache=os.path.join(str(tmp_dir), "cache"),
                    sources=([os.path.join(root, "tests", f) for f in cu],
                             generic + [os.path.join(root, "tests", f) for f in cpp]))
    return ph.PluginHost(out)


def copies_library_host(tmp_dir):
    """The host over tests/trt_multi_output_op.cpp (TwinopsTestCopies: ``copies`` copies of its input)."""
    return _test_library_host(tmp_dir, "copies", [], ["trt_multi_output_op.cpp"])


def prefix_library_host(tmp_dir):
    """The host over tests/trt_size_tensor_op.cpp (TwinopsTestPrefix: a data-dependent output;
    TensorRT >= 10 headers)."""
    return _test_library_host(tmp_dir, "prefix", [], ["trt_size_tensor_op.cpp"])


def kinds_library_host(tmp_dir):
    """The host over tests/trt_kinds_op.cpp (TwinopsTestKindsGather, tests/kinds_op.py's plugin)."""
    return _test_library_host(tmp_dir, "kinds", ["trt_kinds_op_kernels.cu"], ["trt_kinds_op.cpp"])
