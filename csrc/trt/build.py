"""Builds libtwinops_trt.so, the TensorRT plugin library (no torch, no libnvinfer needed).

    python csrc/trt/build.py --include .trt/10/include --out build/libtwinops_trt.so [--arch 90]

Steps: nvcc compiles the kernels (the .cu files of csrc/kernels and of its folder per op in
ops/op_list.py; cached by content, since they do not depend on TensorRT), g++ compiles the plugin
sources (csrc/trt and its op folders) and the kernels' host code (their .cpp files)
against the given TensorRT headers with -Wall -Wextra -Werror (TensorRT's and CUDA's headers are -isystem), and g++
links them with the static CUDA runtime (no libcudart.so needed at run time), -z defs (every symbol
resolved: nothing from libnvinfer) and hidden visibility (only the entry points are exported).
setup.py and tests/test_trt_build.py import this file; it needs only the standard library.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
from typing import List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def op_names(root: str = ROOT) -> Tuple[str, ...]:
    """The op list (``OPS`` of ops/op_list.py, read without importing twinops)."""
    import runpy

    return tuple(runpy.run_path(os.path.join(root, "ops", "op_list.py"))["OPS"])


def layer_sources(layer: str, suffix: str, root: str = ROOT) -> List[str]:
    """The ``suffix`` files of one csrc layer (``kernels``, ``torch``, ``trt``): its root's, then
    each listed op's folder's, in op-list order."""
    base = os.path.join(root, "csrc", layer)
    out = sorted(glob.glob(os.path.join(base, f"*{suffix}")))
    for op in op_names(root):
        out += sorted(glob.glob(os.path.join(base, op, f"*{suffix}")))
    return out


def kernel_sources(root: str = ROOT) -> Tuple[List[str], List[str]]:
    """(CUDA sources, C++ sources) of the kernels (csrc/kernels and its op folders). setup.py's
    torch extension takes the same files, so both builds follow the op list."""
    return layer_sources("kernels", ".cu", root), layer_sources("kernels", ".cpp", root)


def headers(root: str = ROOT) -> List[str]:
    """Every header under csrc/ (the object cache's digest covers them all)."""
    return sorted(p for ext in (".h", ".cuh") for p in glob.glob(os.path.join(root, "csrc", "**", f"*{ext}"),
                                                                 recursive=True))


KERNEL_CU, _KERNEL_CPP = kernel_sources()
HOST_SOURCES = layer_sources("trt", ".cpp") + _KERNEL_CPP
# Without a visible GPU: Hopper only, the architecture CI builds and the kernels' tuning
# constants were measured on; TORCH_CUDA_ARCH_LIST (e.g. "8.0;8.6;8.9;9.0") builds for others.
NO_GPU_ARCHS = "9.0"
EXPORTS = ("getCreators", "getPluginCreators", "setLoggerFinder")


class BuildError(RuntimeError):
    """A compiler or linker failure; the message holds the command and its output."""


def cuda_home() -> str:
    """CUDA_HOME / CUDA_PATH, else /usr/local/cuda, else the directory above `which nvcc`."""
    for key in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(key):
            return os.environ[key]
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda"
    nvcc = shutil.which("nvcc")
    return os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda"


def trt_version(include_dir: str) -> Optional[str]:
    """'MAJOR.MINOR.PATCH' from NvInferVersion.h, or None when the header is missing."""
    path = os.path.join(include_dir, "NvInferVersion.h")
    if not os.path.exists(path):
        return None
    text = open(path, encoding="utf-8", errors="replace").read()
    values = {}
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#define\s+NV_TENSORRT_{part}\s+(\w+)", text)
        v = m.group(1) if m else "?"
        if not v.isdigit():  # 10.x+ defines NV_TENSORRT_MAJOR as TRT_MAJOR_ENTERPRISE etc.
            m2 = re.search(rf"#define\s+{v}\s+(\d+)", text)
            v = m2.group(1) if m2 else "?"
        values[part] = v
    return f"{values['MAJOR']}.{values['MINOR']}.{values['PATCH']}"


def gpu_archs(capabilities: Optional[Sequence[Tuple[int, int]]] = None) -> Optional[str]:
    """The architectures of the visible GPUs as a TORCH_CUDA_ARCH_LIST ("8.6;9.0"), None when
    there is none. ``capabilities``: (major, minor) per GPU (setup.py passes torch's, which honour
    CUDA_VISIBLE_DEVICES); None asks ``nvidia-smi``."""
    if capabilities is None:
        try:
            proc = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        capabilities = [tuple(int(v) for v in line.strip().split(".")) for line in proc.stdout.splitlines()
                        if re.fullmatch(r"\s*\d+\.\d+\s*", line)] if proc.returncode == 0 else []
    found = sorted(set(tuple(c) for c in capabilities))
    return ";".join(f"{major}.{minor}" for major, minor in found) or None


def default_archs(capabilities: Optional[Sequence[Tuple[int, int]]] = None) -> Tuple[str, str]:
    """(architectures, where they come from) of a build that names none: TORCH_CUDA_ARCH_LIST
    when set, else the visible GPUs' (:func:`gpu_archs`), else :data:`NO_GPU_ARCHS`. setup.py and
    :func:`build` both use it, so the torch extension and the plugin library get the same list."""
    env = os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip()
    if env:
        return env, "TORCH_CUDA_ARCH_LIST"
    found = gpu_archs(capabilities)
    if found:
        return found, "the visible GPUs' architectures (TORCH_CUDA_ARCH_LIST unset)"
    return NO_GPU_ARCHS, ("no GPU visible and TORCH_CUDA_ARCH_LIST unset: sm_90 only, the architecture the kernels "
                          "are tuned on; set TORCH_CUDA_ARCH_LIST, e.g. '8.0;8.6;8.9;9.0', for other GPUs")


def arch_flags(archs: str) -> List[str]:
    """'80;90+PTX' or TORCH_CUDA_ARCH_LIST style '8.0;9.0a;10.0f+PTX' -> nvcc -gencode flags (an
    ``a`` / ``f`` suffix: the architecture- or family-specific target, as torch reads it)."""
    flags = []
    for a in re.split(r"[;, ]+", archs.strip()):
        if not a:
            continue
        ptx = a.endswith("+PTX")
        num = a.replace("+PTX", "").replace(".", "")
        if not re.fullmatch(r"\d+[af]?", num):
            raise ValueError(f"twinops trt build: bad CUDA architecture {a!r} in {archs!r} (expected e.g. 90, 9.0a "
                             "or 9.0+PTX)")
        flags.append(f"-gencode=arch=compute_{num},code=sm_{num}")
        if ptx:
            flags.append(f"-gencode=arch=compute_{num},code=compute_{num}")
    if not flags:
        raise ValueError(f"twinops trt build: no CUDA architecture in {archs!r}")
    return flags


def _run(cmd: Sequence[str]) -> None:
    proc = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise BuildError(f"command failed (rc={proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")


def _kernel_objects(cuda: str, archs: str, cache: str, kernel_cu: Sequence[str]) -> List[str]:
    """nvcc objects of the kernels and their device link, reused while sources, headers and
    flags are unchanged. They are one set (the device link refers to the very objects it linked),
    so concurrent builds (pytest -n) each compile into a directory of their own and publish it by
    one rename; a build that finds a set published first uses that one."""
    nvcc = os.path.join(cuda, "bin", "nvcc")
    # --split-compile=0: every core on the one large kernel unit (as setup.py). -ewp and the
    # device link with cudadevrt: see setup.py (the gathers launch their fix-up from the device).
    flags = ["-O3", "-std=c++17", "--expt-relaxed-constexpr", "-lineinfo", "--split-compile=0", "-ewp", "-Xcompiler",
             "-fPIC,-fvisibility=hidden"]
    flags += arch_flags(archs)
    digest = hashlib.sha256(" ".join(flags).encode())
    for path in list(kernel_cu) + headers():
        digest.update(open(path, "rb").read())
    if not kernel_cu:
        return []
    os.makedirs(cache, exist_ok=True)
    final = os.path.join(cache, f"kernels.{digest.hexdigest()[:16]}")
    names = [f"{os.path.basename(cu)}.o" for cu in kernel_cu] + ["dlink.o"]
    if not all(os.path.exists(os.path.join(final, n)) for n in names):
        tmp = f"{final}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        objs = [os.path.join(tmp, n) for n in names[:-1]]
        for cu, obj in zip(kernel_cu, objs):
            _run([nvcc, *flags, "-c", cu, "-o", obj])
        _run([nvcc, *arch_flags(archs), "-dlink", "-Xcompiler", "-fPIC,-fvisibility=hidden", *objs,
              "-L" + os.path.join(cuda, "lib64"), "-lcudadevrt", "-o", os.path.join(tmp, names[-1])])
        try:
            os.rename(tmp, final)  # atomic; refused when another build published the set first
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not all(os.path.exists(os.path.join(final, n)) for n in names):
                raise BuildError(f"the kernel objects in {final} are incomplete: remove that directory")
    return [os.path.join(final, n) for n in names]


def compile_flags(include_dir: str, cuda: str) -> List[str]:
    """g++ flags of the plugin sources (strict warnings; third-party headers as -isystem)."""
    # -ffp-contract=off: tables the host builds for the kernels must be bitwise the device's (see mul_rn).
    return ["-std=c++17", "-O2", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
            "-DTWIN_WITH_CUDA_RUNTIME", "-isystem", include_dir, "-isystem", os.path.join(cuda, "include")]


def build(include_dir: str, out: str, archs: Optional[str] = None, cuda: Optional[str] = None,
          cache: Optional[str] = None, jobs: int = 2, cxx: str = "g++",
          sources: Optional[Tuple[Sequence[str], Sequence[str]]] = None) -> str:
    """Builds the plugin library against the TensorRT headers in `include_dir`; returns `out`.

    Args:
        include_dir: directory holding NvInfer.h (TensorRT 8.6, 10.x or 11.x).
        out: path of the shared library to write (directories are created).
        archs: CUDA architectures, "90" / "8.0;9.0+PTX" (default: TWINOPS_TRT_ARCH, else
            :func:`default_archs`).
        cuda: CUDA toolkit root (default: cuda_home()).
        cache: directory for objects (default: build/trt next to `out`'s repo, i.e. <repo>/build/trt).
        jobs: parallel g++ processes.
        sources: (CUDA sources, C++ sources) instead of (KERNEL_CU, HOST_SOURCES), e.g. a test
            library of the generic plugin classes around a test op.
    Raises BuildError with the failing command's output.
    """
    include_dir = os.path.abspath(include_dir)
    if not os.path.exists(os.path.join(include_dir, "NvInfer.h")):
        raise BuildError(f"no NvInfer.h in {include_dir}")
    cuda = cuda or cuda_home()
    archs = archs or os.environ.get("TWINOPS_TRT_ARCH") or default_archs()[0]
    cache = os.path.abspath(cache or os.path.join(ROOT, "build", "trt"))
    version = trt_version(include_dir) or "unknown"
    obj_dir = os.path.join(cache, f"trt-{version}-{hashlib.sha256(include_dir.encode()).hexdigest()[:8]}")
    os.makedirs(obj_dir, exist_ok=True)
    kernel_cu, host_sources = sources if sources is not None else (KERNEL_CU, HOST_SOURCES)
    kernel_objs = _kernel_objects(cuda, archs, cache, kernel_cu)
    flags = compile_flags(include_dir, cuda)

    def compile_one(src: str) -> str:
        # Concurrent builds against the same headers (pytest -n) share obj_dir: each compiles
        # into its own file and renames it into place, so no build links another's
        # half-written object.
        obj = os.path.join(obj_dir, os.path.basename(src) + ".o")
        tmp = obj + f".tmp{os.getpid()}"
        _run([cxx, *flags, "-c", src, "-o", tmp])
        os.replace(tmp, obj)
        return obj

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        host_objs = list(pool.map(compile_one, host_sources))
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = out + f".tmp{os.getpid()}"
    _run([cxx, "-shared", "-o", tmp, *host_objs, *kernel_objs, "-L" + os.path.join(cuda, "lib64"),
          "-Wl,-Bstatic", "-lcudadevrt", "-lcudart_static", "-Wl,-Bdynamic", "-ldl", "-lrt", "-lpthread",
          "-Wl,--exclude-libs,ALL", "-Wl,-z,defs"])
    os.replace(tmp, out)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--include", required=True, help="TensorRT include directory (holds NvInfer.h)")
    ap.add_argument("--out", required=True, help="output path of libtwinops_trt.so")
    ap.add_argument("--arch", default=None, help="CUDA architectures, e.g. 90 or '8.0;9.0+PTX' (default: "
                    "TWINOPS_TRT_ARCH, TORCH_CUDA_ARCH_LIST, the visible GPUs', else 9.0)")
    ap.add_argument("--cuda", default=None, help="CUDA toolkit root (default: CUDA_HOME or /usr/local/cuda)")
    ap.add_argument("--cache", default=None, help="object cache directory (default: <repo>/build/trt)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        path = build(args.include, args.out, args.arch, args.cuda, args.cache, args.jobs)
    except (BuildError, ValueError) as e:
        print(f"twinops trt build failed: {e}", file=sys.stderr)
        return 1
    print(f"built {path} against TensorRT {trt_version(os.path.abspath(args.include))} headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
