"""Build tools the tests that compile sources look for (none of them needs a GPU)."""
import os
import shutil
from typing import Optional


def nvcc() -> Optional[str]:
    """CUDA_HOME / CUDA_PATH's nvcc (default /usr/local/cuda), else the one on PATH, else None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    path = os.path.join(home, "bin", "nvcc")
    return path if os.path.exists(path) else shutil.which("nvcc")
