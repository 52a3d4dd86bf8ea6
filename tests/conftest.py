"""Shared pytest setup: Hypothesis profiles, device parametrisation, skip reasons."""
import os

import pytest
import torch
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("TWINOPS_HYPOTHESIS_PROFILE", "ci"))


def cuda_available() -> bool:
    import twinops

    return torch.cuda.is_available() and twinops.has_cuda_kernels()


CUDA_SKIP_REASON = ("needs a CUDA GPU and twinops built with CUDA kernels"
                    if not torch.cuda.is_available() else "twinops was built without CUDA kernels")

DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.cuda,
                                              pytest.mark.skipif(not cuda_available(), reason=CUDA_SKIP_REASON)])]


def pytest_generate_tests(metafunc):
    # A parameter, not a fixture: Hypothesis-driven tests may then take `device` too.
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES)


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason=CUDA_SKIP_REASON)
    if not cuda_available():
        for item in items:
            if "cuda" in item.keywords:
                item.add_marker(skip)
