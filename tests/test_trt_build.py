"""The TensorRT plugin library compiles, warning-free, against every TensorRT header set found.

Header sets: env TWINOPS_TRT_HEADERS (os.pathsep-separated include dirs), else .trt/*/include in
the repo. For each: build libtwinops_trt.so with csrc/trt/build.py (g++ -Wall -Wextra -Werror on our
sources), check its exported / undefined symbols with nm, and run tests/trt_build_smoke.cpp (CPU
only: creators, fields, serialization round trip, bad fields and garbage buffers -> nullptr + message).
Those tests skip with the reason when no headers, nvcc, g++ or nm are available; the checks of the
build script itself (flags, objects renamed into place) always run. No GPU and no TensorRT runtime needed.
"""
import glob
import importlib.util
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_build():
    spec = importlib.util.spec_from_file_location("twinops_trt_build", os.path.join(ROOT, "csrc", "trt", "build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


trt_build = _load_build()


def _header_sets():
    env = os.environ.get("TWINOPS_TRT_HEADERS")
    dirs = [d for d in env.split(os.pathsep) if d] if env is not None else sorted(glob.glob(os.path.join(ROOT, ".trt", "*", "include")))
    return [d for d in dirs if os.path.exists(os.path.join(d, "NvInfer.h"))]


HEADERS = _header_sets()
_NVCC = os.path.join(trt_build.cuda_home(), "bin", "nvcc")
_MISSING = [name for name, ok in (("nvcc", os.path.exists(_NVCC)), ("g++", shutil.which("g++")), ("nm", shutil.which("nm")))
            if not ok]

_NO_HEADERS = pytest.mark.skipif(
    not HEADERS, reason="no TensorRT headers: set TWINOPS_TRT_HEADERS or extract them under .trt/<ver>/include")
_NO_TOOLS = pytest.mark.skipif(bool(_MISSING), reason=f"missing build tools: {', '.join(_MISSING)}")


def needs_build(test):
    """The test builds the library: skipped without TensorRT headers or build tools."""
    return _NO_HEADERS(_NO_TOOLS(test))


def _major(include_dir):
    return int(trt_build.trt_version(include_dir).split(".")[0])


@pytest.fixture(scope="module", params=HEADERS, ids=lambda d: f"trt{trt_build.trt_version(d)}")
def built(request, tmp_path_factory):
    """(include dir, path of the library built against it). A compile warning fails the build (-Werror)."""
    include = request.param
    out = tmp_path_factory.mktemp("trt") / "libtwinops_trt.so"
    try:
        # One architecture keeps this fast; the kernel object is cached by content under build/trt.
        trt_build.build(include, str(out), archs="90")
    except trt_build.BuildError as e:
        pytest.fail(f"libtwinops_trt.so does not build against {include}:\n{e}")
    return include, str(out)


def _nm(path, *flags):
    out = subprocess.run(["nm", "-D", *flags, path], check=True, stdout=subprocess.PIPE, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def test_strict_warnings_are_errors():
    flags = trt_build.compile_flags("/x", "/usr/local/cuda")
    assert {"-Wall", "-Wextra", "-Werror"} <= set(flags)


def test_objects_are_renamed_into_place(tmp_path, monkeypatch):
    """Concurrent builds against the same headers (pytest -n) share the object directory, so
    every object is compiled into a file of its own and renamed into place: writing the shared
    path directly let one build link another's half-written object (seen on the H200 as an
    undefined ResizeCreatorV2 constructor). Runs the build with a recording compiler."""
    include = tmp_path / "include"
    include.mkdir()
    (include / "NvInfer.h").write_text("// stand-in\n")
    written = []

    def fake_run(cmd):
        cmd = list(cmd)
        target = cmd[cmd.index("-o") + 1]
        assert not os.path.exists(target), f"{target} is written where another build may read it"
        written.append(target)
        with open(target, "w") as f:
            f.write(f"object of pid {os.getpid()}")

    monkeypatch.setattr(trt_build, "_run", fake_run)
    cache = tmp_path / "cache"
    for _ in range(2):  # the second build replaces the first build's objects
        out = trt_build.build(str(include), str(tmp_path / "lib" / "libtwinops_trt.so"), archs="90",
                              cuda="/usr/local/cuda", cache=str(cache))
    assert os.path.exists(out) and not glob.glob(str(cache / "**" / "*.tmp*"), recursive=True)
    host = [w for w in written if w.endswith(f".o.tmp{os.getpid()}")]
    kernels = [w for w in written if f".tmp{os.getpid()}{os.sep}" in w]
    # The host objects are built by each build; the kernel objects and their device link are
    # cached as one set: built once.
    assert len(host) == 2 * len(trt_build.HOST_SOURCES) and len(kernels) == len(trt_build.KERNEL_CU) + 1
    for src in trt_build.HOST_SOURCES:
        assert glob.glob(str(cache / "*" / (os.path.basename(src) + ".o")))


@needs_build
def test_exported_entry_points(built):
    include, lib = built
    defined = _nm(lib, "--defined-only")
    expected = {"getPluginCreators", "setLoggerFinder", "twinops_trt_last_error", "twinops_trt_version"}
    if _major(include) >= 10:
        expected.add("getCreators")  # loadLibrary's V3 entry point; TensorRT 8.6 has no IPluginCreatorInterface
    assert expected <= defined, f"missing exports: {sorted(expected - defined)}"
    if _major(include) < 10:
        assert "getCreators" not in defined
    # Hidden visibility: no twinops C++ symbol leaks out of the library.
    assert not [s for s in defined if "twinops" in s and not s.startswith("twinops_trt_")]


@needs_build
def test_no_link_time_dependency_on_tensorrt(built):
    _, lib = built
    undefined = _nm(lib, "--undefined-only")
    bad = sorted(s for s in undefined if "nvinfer" in s.lower() or s in ("getPluginRegistry", "getLogger")
                 or s.startswith("createInfer"))
    assert not bad, f"undefined TensorRT symbols: {bad}"
    needed = subprocess.run(["readelf", "-d", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert "libnvinfer" not in needed
    assert "libcudart" not in needed, "the CUDA runtime is linked statically"


@needs_build
def test_smoke_driver(built, tmp_path):
    """Creators, parser-style fields, serialization round trip, 2000 garbage buffers -> nullptr."""
    include, lib = built
    exe = tmp_path / "smoke"
    cuda_inc = os.path.join(trt_build.cuda_home(), "include")
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-isystem", include, "-isystem", cuda_inc,
                    os.path.join(ROOT, "tests", "trt_build_smoke.cpp"), "-o", str(exe), "-ldl"], check=True)
    proc = subprocess.run([str(exe), lib], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("OK"), proc.stdout


@needs_build
def test_load_time_registration(built, tmp_path):
    """ctypes.CDLL path: creators register with an already-loaded libnvinfer's registry (a fake
    getPluginRegistry exported by the driver), and getCreators withdraws them for loadLibrary."""
    include, lib = built
    if _major(include) != 10:
        pytest.skip("the fake IPluginRegistry in trt_registry_smoke.cpp follows the TensorRT 10 interface")
    exe = tmp_path / "registry"
    cuda_inc = os.path.join(trt_build.cuda_home(), "include")
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-rdynamic", "-isystem", include, "-isystem",
                    cuda_inc, os.path.join(ROOT, "tests", "trt_registry_smoke.cpp"), "-o", str(exe), "-ldl"], check=True)
    proc = subprocess.run([str(exe), lib], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("OK"), proc.stdout


# ---------------------------------------------------------------------------------------
# the default CUDA architectures (setup.py and the plugin library share them)
# ---------------------------------------------------------------------------------------

def test_default_archs_are_the_visible_gpus_else_sm90(monkeypatch):
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    assert trt_build.default_archs([(9, 0)])[0] == "9.0"
    assert trt_build.default_archs([(9, 0), (8, 6), (9, 0)])[0] == "8.6;9.0"
    archs, why = trt_build.default_archs([])
    assert archs == trt_build.NO_GPU_ARCHS == "9.0" and "no GPU visible" in why and "TORCH_CUDA_ARCH_LIST" in why
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0+PTX")
    assert trt_build.default_archs([(8, 6)]) == ("8.0;9.0+PTX", "TORCH_CUDA_ARCH_LIST")


def test_gpu_archs_read_nvidia_smi(monkeypatch, tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nprintf '9.0\\n8.9\\n'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert trt_build.gpu_archs() == "8.9;9.0"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    assert trt_build.gpu_archs() is None


def test_arch_flags_read_torch_arch_lists():
    """TORCH_CUDA_ARCH_LIST as torch reads it, with architecture-specific (a) and family (f) targets."""
    assert trt_build.arch_flags("9.0a") == ["-gencode=arch=compute_90a,code=sm_90a"]
    assert trt_build.arch_flags("8.0;10.0f+PTX") == ["-gencode=arch=compute_80,code=sm_80",
                                                     "-gencode=arch=compute_100f,code=sm_100f",
                                                     "-gencode=arch=compute_100f,code=compute_100f"]
    for bad in ("9.0b", "sm_90", "9.x"):
        with pytest.raises(ValueError, match="bad CUDA architecture"):
            trt_build.arch_flags(bad)


def test_kernel_objects_are_published_as_one_set(tmp_path, monkeypatch):
    """Two builds compiling the same kernels at once (pytest -n): the device link must come with
    the objects it linked. A build that finds a set published while it compiled uses that set,
    whole, and leaves nothing of its own behind."""
    cache = tmp_path / "cache"

    def fake_run(cmd):
        cmd = list(cmd)
        target = cmd[cmd.index("-o") + 1]
        with open(target, "w") as f:
            f.write("mine")
        if "-dlink" in cmd:  # another build publishes the same set first
            other = os.path.dirname(target).rsplit(".tmp", 1)[0]
            os.makedirs(other)
            for name in os.listdir(os.path.dirname(target)):
                with open(os.path.join(other, name), "w") as f:
                    f.write("theirs")

    monkeypatch.setattr(trt_build, "_run", fake_run)
    objs = trt_build._kernel_objects("/usr/local/cuda", "90", str(cache), trt_build.KERNEL_CU)
    assert len(objs) == len(trt_build.KERNEL_CU) + 1 and len({os.path.dirname(o) for o in objs}) == 1
    assert all(open(o).read() == "theirs" for o in objs)
    assert not glob.glob(str(cache / "*.tmp*"))
    assert trt_build._kernel_objects("/usr/local/cuda", "90", str(cache), trt_build.KERNEL_CU) == objs  # cached
