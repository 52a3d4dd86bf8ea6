"""The kernels behind one call, each with its time (``python -m twinops.bench OP --kernels``: twinops'
and the baseline's, for each forward and backward case).

Where a case's time goes, kernel by kernel: the call runs ``reps`` times under ``torch.profiler``
(CUDA activity only: kernels, copies and sets, no hardware counters), and each kernel's device
time is averaged per call. No L2 flush between calls, unlike the bench's timings, so the
per-kernel times are a split of the work, not a second measurement of the total.
"""
from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

import torch

from .harness import BenchCase, grad_outputs, gradient_call

# (kernel name, launches per call, microseconds per call)
KernelRow = Tuple[str, float, float]


def kernel_times(fn: Callable[[], object], reps: int = 10) -> List[KernelRow]:
    """The device work of ``fn()`` (one warm-up call, then ``reps`` profiled): one row per kernel
    name, the most time first."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for event in prof.key_averages():
        total = getattr(event, "device_time_total", None)
        if total is None:  # torch before the device_* names
            total = getattr(event, "cuda_time_total", 0.0)
        if total > 0:
            rows.append((event.key, event.count / reps, total / reps))
    return sorted(rows, key=lambda r: -r[2])


def kernel_lines(title: str, rows: Sequence[KernelRow], width: int = 100) -> List[str]:
    """``rows`` as text: a title line, one line per kernel (time, share, launches, name cut to
    ``width``), then the total."""
    total = sum(r[2] for r in rows)
    out = [f"{title}: {total:.1f} us of device work per call"]
    for name, calls, us in rows:
        share = 100.0 * us / total if total else 0.0
        out.append(f"  {us:9.1f} us {share:5.1f}%  {calls:g}x  {name[:width]}")
    return out


def case_calls(case: BenchCase, inputs: Sequence[torch.Tensor]) -> Tuple[Callable[[], object], Callable[[], object]]:
    """(twinops' call, the baseline's call) of a bench case on ``inputs``: the forward, or for a
    backward case the gradients of its differentiable inputs for random output gradients
    (twinops' backward op called directly where the case gives one), each graph built once here."""
    if case.direction == "forward":
        return (lambda: case.candidate(*inputs)), (lambda: case.baseline(*inputs))
    device = inputs[0].device
    grads_out = grad_outputs(case, torch.Generator(device).manual_seed(1), device)
    direct = case.candidate_backward(inputs, grads_out)
    ours = direct if direct is not None else gradient_call(case.candidate, case, inputs, grads_out)
    return ours, gradient_call(case.baseline, case, inputs, grads_out)
