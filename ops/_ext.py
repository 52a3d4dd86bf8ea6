"""Loads the compiled extension twinops._C (every op's TORCH_LIBRARY_FRAGMENT registrations)."""
from typing import Optional

import torch

_BUILD_HINT = (
    "twinops._C is not built. Build it from the repository root with\n"
    "    pip install --no-build-isolation -e .\n"
    "(CUDA kernels are built when torch has CUDA and nvcc is found; TWINOPS_CUDA=0/1 forces either way)."
)

try:
    from twinops import _C  # noqa: F401  (import registers torch.ops.twinops.*)
except ImportError as exc:  # pragma: no cover - exercised only on a broken install
    raise ImportError(f"{_BUILD_HINT}\nOriginal error: {exc}") from exc


def has_cuda_kernels() -> bool:
    """True when twinops._C was built with its CUDA kernels (its WITH_CUDA flag: asks no op)."""
    return bool(getattr(_C, "WITH_CUDA", 0))


def cuda_unavailable_reason() -> Optional[str]:
    """None when twinops can run its CUDA kernels here, else why not (one line)."""
    if not torch.cuda.is_available():
        return "torch sees no CUDA GPU"
    if not has_cuda_kernels():
        return "twinops was built without its CUDA kernels (rebuild with TWINOPS_CUDA=1)"
    return None


def size_hints(sizes) -> list:
    """Concrete sizes (list of int) for an op's C++ check under FakeTensorMode: an int stays, a
    symbolic size is its hint (the example value it was traced with), or 1 (any valid length)
    without one; the real kernel checks its actual value."""
    out = []
    for v in sizes:
        if not isinstance(v, int):
            node = getattr(v, "node", None)
            v = node.hint if node is not None and node.has_hint() else 1
        out.append(int(v))
    return out
