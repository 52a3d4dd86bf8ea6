"""Builds twinops._C (torch custom ops, CPU and optionally CUDA).

Environment:
  TWINOPS_CUDA=1|0       force the CUDA build on / off (default: on when torch has CUDA and nvcc is found)
  TORCH_CUDA_ARCH_LIST   GPU architectures, e.g. "9.0" or "8.0;8.6;8.9;9.0" (default: the visible GPUs'
                         architectures; without a GPU "9.0", the one the kernels are tuned on)
  MAX_JOBS               parallel compile jobs (ninja; default: the CPU count)
  TWINOPS_TRT=0          do not build the TensorRT plugin library libtwinops_trt.so (built next to twinops._C
                         when TensorRT headers are found: TENSORRT_ROOT/include, TENSORRT_INCLUDE_DIR, then
                         /usr/include/x86_64-linux-gnu, /usr/include, /usr/local/tensorrt/include, /opt/tensorrt/include)
  TWINOPS_TRT_ARCH       CUDA architectures of the plugin library (default: TORCH_CUDA_ARCH_LIST)
"""
import functools
import os
import shutil
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _default_cuda_home():
    # torch finds CUDA through `which nvcc`; a /usr/local/bin/nvcc symlink then yields
    # CUDA_HOME=/usr/local, which has no CUDA headers. Prefer the toolkit's own root.
    if not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH"):
        if os.path.exists("/usr/local/cuda/include/cuda_runtime_api.h"):
            os.environ["CUDA_HOME"] = "/usr/local/cuda"


def _rel(paths):
    return sorted(os.path.relpath(p, HERE) for p in paths)


def _want_cuda(torch):
    from torch.utils.cpp_extension import CUDA_HOME

    forced = os.environ.get("TWINOPS_CUDA")
    have_nvcc = CUDA_HOME is not None and shutil.which(os.path.join(CUDA_HOME, "bin", "nvcc")) is not None
    if forced is not None:
        if forced not in ("0", "1"):
            sys.exit(f"twinops setup: TWINOPS_CUDA must be 0 or 1, got {forced!r}")
        if forced == "1" and (torch.version.cuda is None or not have_nvcc):
            sys.exit(
                "twinops setup: TWINOPS_CUDA=1 but "
                + ("this torch build has no CUDA" if torch.version.cuda is None else "nvcc was not found (set CUDA_HOME)")
            )
        return forced == "1"
    return torch.version.cuda is not None and have_nvcc


def _extensions():
    _default_cuda_home()
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

    trt_build = _trt_build_module()
    # The op list (ops/op_list.py) names the folders; the plugin library takes the same kernels.
    # A frontend's CUDA registrations (<op>_cuda.cpp) compile to nothing without TWINOPS_WITH_CUDA.
    kernel_cu, kernel_cpp = trt_build.kernel_sources(HERE)
    sources = _rel(kernel_cpp) + _rel(trt_build.layer_sources("torch", ".cpp", HERE))
    # -ffp-contract=off: the host builds resize tables bitwise as the device does (mul_rn in
    # csrc/kernels/resize/resize.cuh); MSVC does not contract under its default /fp:precise.
    # -g0 drops the debug info that Python's own flags ask for (-g): about a third of each
    # frontend unit's compile time (torch's templates), no kernel or host code changes.
    cxx = ["-O3", "-Wall", "-Wno-unknown-pragmas"] + ([] if sys.platform == "win32" else ["-ffp-contract=off", "-g0"])
    if _want_cuda(torch):
        # One list for both builds (the plugin library reads it from the environment too);
        # torch's capabilities honour CUDA_VISIBLE_DEVICES.
        caps = [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())] \
            if torch.cuda.is_available() else []
        archs, why = trt_build.default_archs(caps)
        os.environ["TORCH_CUDA_ARCH_LIST"] = archs
        sources += _rel(kernel_cu)
        print(f"twinops setup: building with CUDA for TORCH_CUDA_ARCH_LIST={archs} ({why})")
        # --split-compile=0: optimise the functions of a translation unit on every core
        # (an op's kernels are one large unit).
        # -ewp (extensible whole program) and a device link with the CUDA device runtime: the
        # gathers launch their non-finite fix-up from the device (csrc/kernels/resize/resize_fixup.cuh).
        # Unlike relocatable device code (-rdc), whole-program compilation keeps every kernel's
        # registers as before (docs/perf/resize-notes.md, "Non-finite values on CUDA").
        nvcc = ["-O3", "--expt-relaxed-constexpr", "-lineinfo", "--split-compile=0", "-ewp"]
        cuda_lib = os.path.join(CUDA_HOME, "lib64")
        # torch runs the device link when "nvcc_dlink" is given (its own dlink= arguments would
        # also reach setuptools, which warns about them).
        dlink = ["-dlink", *trt_build.arch_flags(os.environ["TORCH_CUDA_ARCH_LIST"]), "-Xcompiler", "-fPIC",
                 f"-L{cuda_lib}", "-lcudadevrt"]
        return [CUDAExtension("twinops._C", sources, extra_compile_args={"cxx": cxx, "nvcc": nvcc, "nvcc_dlink": dlink},
                              define_macros=[("TWINOPS_WITH_CUDA", "1")], library_dirs=[cuda_lib],
                              libraries=["cudadevrt"])]
    print("twinops setup: building CPU-only (no CUDA torch or nvcc, or TWINOPS_CUDA=0)")
    return [CppExtension("twinops._C", sources, extra_compile_args={"cxx": cxx})]


@functools.lru_cache(maxsize=None)
def _trt_build_module():
    """csrc/trt/build.py (standard library only), loaded once without importing twinops."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("twinops_trt_build", os.path.join(HERE, "csrc", "trt", "build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _trt_include_dir():
    """(include dir, None) for the first TensorRT headers found, else (None, why not)."""
    candidates = []
    if os.environ.get("TENSORRT_ROOT"):
        candidates.append(os.path.join(os.environ["TENSORRT_ROOT"], "include"))
    if os.environ.get("TENSORRT_INCLUDE_DIR"):
        candidates.append(os.environ["TENSORRT_INCLUDE_DIR"])
    candidates += ["/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu", "/usr/include",
                   "/usr/local/tensorrt/include", "/opt/tensorrt/include"]
    for d in candidates:
        if os.path.exists(os.path.join(d, "NvInfer.h")):
            return d, None
    return None, "no TensorRT headers (NvInfer.h) in TENSORRT_ROOT/include, TENSORRT_INCLUDE_DIR or " + ", ".join(candidates[-5:])


def _build_trt_plugins(ext_dir):
    """Builds libtwinops_trt.so into `ext_dir` (next to twinops._C), or prints one line saying why not."""
    if os.environ.get("TWINOPS_TRT") == "0":
        print("twinops setup: skipping the TensorRT plugin library (TWINOPS_TRT=0)")
        return
    include, why = _trt_include_dir()
    if include is None:
        print(f"twinops setup: skipping the TensorRT plugin library: {why}")
        return
    _default_cuda_home()
    trt_build = _trt_build_module()
    nvcc = os.path.join(trt_build.cuda_home(), "bin", "nvcc")
    if not os.path.exists(nvcc):
        print(f"twinops setup: skipping the TensorRT plugin library: no nvcc at {nvcc} (set CUDA_HOME)")
        return
    out = os.path.join(ext_dir, "libtwinops_trt.so")
    print(f"twinops setup: building {out} against TensorRT {trt_build.trt_version(include)} headers in {include}")
    try:
        trt_build.build(include, out, jobs=int(os.environ.get("MAX_JOBS", "2")))
    except trt_build.BuildError as e:
        sys.exit(f"twinops setup: the TensorRT plugin library failed to build (TWINOPS_TRT=0 skips it):\n{e}")


def _cmdclass():
    from torch.utils.cpp_extension import BuildExtension

    base = BuildExtension.with_options(use_ninja=True)

    class BuildWithPlugins(base):
        def run(self):
            super().run()
            _build_trt_plugins(os.path.dirname(self.get_ext_fullpath("twinops._C")))

    return {"build_ext": BuildWithPlugins}


setup(
    name="twinops",
    version="0.1.0",
    description="CUDA kernels compiled twice: PyTorch custom ops and TensorRT plugins, with parity suites",
    # the subpackages too: a non-editable install (wheel) has only what is listed
    packages=["twinops", "twinops.bench", "twinops.testing", "twinops.library"]
    + [f"twinops.library.{op}" for op in _trt_build_module().op_names(HERE)],
    package_dir={"twinops": "ops"},
    ext_modules=_extensions(),
    cmdclass=_cmdclass(),
    python_requires=">=3.10",
    install_requires=["torch>=2.4", "numpy"],
    extras_require={
        "test": ["pytest", "pytest-xdist", "hypothesis", "expecttest", "onnx", "onnxscript", "onnxruntime", "matplotlib", "rich"],
    },
)
