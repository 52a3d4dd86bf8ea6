"""Shared pytest setup: twinops' own pytest plugin (Hypothesis profiles, the device parameter,
markers cuda / trt_headers / tensorrt / slow with skip reasons). User suites enable it the same way."""
import os
import sys

import pytest

pytest_plugins = ["twinops.testing.pytest_plugin"]

# tests/ holds helper modules (resize_spec) imported by name
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def exclusive_gpu_memory(tmp_path_factory):
    """For a test that takes tens of GiB of GPU memory: one such test at a time across the
    pytest-xdist workers (a file lock in the run's shared temporary root), and the cached blocks
    given back when it ends, so that fifteen parallel workers fit on an 80 GB card."""
    import fcntl

    import torch

    root = tmp_path_factory.getbasetemp().parent  # pytest-N/, above each worker's popen-gwK/
    with open(root / "exclusive_gpu_memory.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
