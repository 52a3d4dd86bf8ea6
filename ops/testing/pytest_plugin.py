"""pytest plugin for twinops-based suites.

Enable it with ``pytest_plugins = ["twinops.testing.pytest_plugin"]`` in your top-level
conftest.py. It provides:

* markers ``cuda`` (needs a CUDA GPU and twinops' CUDA kernels), ``trt_headers`` (needs the
  TensorRT headers: ``TWINOPS_TRT_INCLUDE`` or ``TensorRT_ROOT``/``include``, ``.trt/*/include``,
  ``/usr/include/x86_64-linux-gnu``), ``tensorrt`` (needs the TensorRT Python runtime) and
  ``slow`` (runs only with ``--run-slow``, ``-m slow`` or ``TWINOPS_RUN_SLOW=1``); marked tests are skipped
  with the reason when their requirement is missing;
* a ``device`` parameter (``cpu``, and ``cuda`` marked ``cuda``) for any test taking ``device``;
* Hypothesis profiles ``ci`` (25 examples, derandomized), ``dev`` (10) and ``thorough`` (400),
  chosen by ``TWINOPS_HYPOTHESIS_PROFILE`` (default ``ci``).
"""
from __future__ import annotations

import glob
import os
from functools import lru_cache
from typing import Optional

import pytest
import torch
from hypothesis import HealthCheck, settings

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True, suppress_health_check=_SUPPRESS)
settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=_SUPPRESS)
settings.register_profile("thorough", max_examples=400, deadline=None, suppress_health_check=_SUPPRESS)
PROFILE = os.environ.get("TWINOPS_HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "dev", "thorough"):
    raise ValueError(f"TWINOPS_HYPOTHESIS_PROFILE must be ci, dev or thorough, got {PROFILE!r}")
settings.load_profile(PROFILE)

MARKERS = {
    "cuda": "needs a CUDA GPU and twinops built with its CUDA kernels",
    "trt_headers": "needs the TensorRT headers (NvInfer.h)",
    "tensorrt": "needs the TensorRT Python runtime",
    "slow": "slow; runs with --run-slow, -m slow or TWINOPS_RUN_SLOW=1",
}


@lru_cache(None)
def cuda_reason() -> Optional[str]:
    """Why CUDA tests cannot run here, or None."""
    import twinops

    reason = twinops.cuda_unavailable_reason()
    return reason and f"needs a CUDA GPU and twinops built with CUDA kernels ({reason})"


def trt_include_dirs() -> list:
    """Directories holding NvInfer.h, from the environment and the usual places (repo's .trt/ first)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates = [os.environ.get("TWINOPS_TRT_INCLUDE", "")]
    if os.environ.get("TensorRT_ROOT"):
        candidates.append(os.path.join(os.environ["TensorRT_ROOT"], "include"))
    candidates += sorted(glob.glob(os.path.join(repo, ".trt", "*", "include")))
    candidates += ["/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu", "/usr/local/tensorrt/include"]
    return [d for d in candidates if d and os.path.exists(os.path.join(d, "NvInfer.h"))]


@lru_cache(None)
def trt_headers_reason() -> Optional[str]:
    return None if trt_include_dirs() else (
        "TensorRT headers (NvInfer.h) not found: set TWINOPS_TRT_INCLUDE or TensorRT_ROOT")


@lru_cache(None)
def tensorrt_reason() -> Optional[str]:
    try:
        import tensorrt  # noqa: F401
    except Exception as e:  # ImportError, or a broken install raising anything else
        return f"TensorRT Python runtime not importable ({type(e).__name__}: {e})"
    if cuda_reason():
        return cuda_reason()
    return None


def _slow_reason(config) -> Optional[str]:
    if config.getoption("--run-slow", default=False) or os.environ.get("TWINOPS_RUN_SLOW") == "1":
        return None
    markexpr = getattr(config.option, "markexpr", "") or ""
    if "slow" in markexpr and "not slow" not in markexpr:  # `-m slow` asks for them explicitly
        return None
    return MARKERS["slow"]


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")


def pytest_configure(config):
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")


def device_params():
    """``["cpu", cuda]`` where the cuda param carries the ``cuda`` marker (skipped without CUDA)."""
    return ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda])]


def pytest_generate_tests(metafunc):
    # A parameter, not a fixture: Hypothesis-driven tests may then take `device` too.
    if "device" in metafunc.fixturenames and not any(
            m.name == "parametrize" and "device" in m.args[0] for m in metafunc.definition.iter_markers()):
        metafunc.parametrize("device", device_params())


def pytest_collection_modifyitems(config, items):
    reasons = {"cuda": cuda_reason, "trt_headers": trt_headers_reason, "tensorrt": tensorrt_reason,
               "slow": lambda: _slow_reason(config)}
    for item in items:
        for name, reason in reasons.items():
            if name in item.keywords:
                why = reason()
                if why:
                    item.add_marker(pytest.mark.skip(reason=why))
                    break
