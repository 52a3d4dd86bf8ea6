"""twinops.trt.TRTRunner pieces that run without TensorRT: the output allocator of data-dependent
outputs (the runner itself needs TensorRT and a GPU: each op's test_<op>_trt_engine.py)."""
import types

import pytest
import torch

from twinops import trt as ttrt


def test_output_allocator_glue():
    # twinops.trt's IOutputAllocator for data-dependent outputs, with a stand-in for TensorRT's
    # base class, on the CPU: a fresh buffer per request, the notified shape, the typed view.
    fake = types.ModuleType("tensorrt")

    class IOutputAllocator:
        def __init__(self):
            pass

    fake.IOutputAllocator = IOutputAllocator
    alloc = ttrt._output_allocator(fake, torch.device("cpu"))
    first = alloc.reallocate_output_async("keep", 0, 7 * 8, 256, 0)
    assert alloc.buffer.numel() == 56 and first == alloc.buffer.data_ptr()
    alloc.buffer.view(torch.int64)[:7] = torch.arange(7)
    alloc.notify_shape("keep", [5])
    out = ttrt._allocated_output(alloc, torch.int64, torch.device("cpu"))
    assert out.tolist() == [0, 1, 2, 3, 4]
    held = alloc.buffer
    alloc.reallocate_output("keep", 0, 16, 256)
    assert alloc.buffer is not held  # a new buffer per call: earlier outputs are never overwritten
    alloc.notify_shape("keep", [0])
    assert ttrt._allocated_output(alloc, torch.int64, torch.device("cpu")).shape == (0,)
    alloc.notify_shape("keep", [3])
    with pytest.raises(RuntimeError, match="asked for 16 bytes but notified shape"):
        ttrt._allocated_output(alloc, torch.int64, torch.device("cpu"))
    alloc.buffer = None
    with pytest.raises(RuntimeError, match="asked for no memory this call"):
        ttrt._allocated_output(alloc, torch.int64, torch.device("cpu"))
