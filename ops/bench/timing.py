"""Measuring speed on one device (names no op): the timer of ``python -m twinops.bench``
(CUDA events, warm-up, median, L2 flushed by a read, ``torch.cuda._sleep`` head start), the
copy bandwidth, a timed copy of a case's bytes, and the HBM-floor arithmetic. Also used by
``tools/l2_flush.py``.
"""
from __future__ import annotations

import math
import statistics
import time
from typing import Callable, Optional, Sequence

import torch


# ---------------------------------------------------------------------------------------
# the HBM floor
# ---------------------------------------------------------------------------------------

def tensor_bytes(shapes: Sequence[Sequence[int]], dtype: torch.dtype) -> int:
    """Bytes of one tensor of each shape in ``shapes``, all of ``dtype``: e.g. a one-input op's
    ``tensor_bytes([in_shape, out_shape], dtype)`` reads one and writes the other."""
    return sum(math.prod(s) for s in shapes) * dtype.itemsize


def floor_ms(nbytes: int, bandwidth: float) -> float:
    """Time to move ``nbytes`` at ``bandwidth`` bytes/s, in milliseconds."""
    if bandwidth <= 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth}")
    return nbytes / bandwidth * 1e3


def pct_of_floor(floor: float, time_ms: Optional[float]) -> Optional[float]:
    """``floor / time * 100``: 100% means the kernel moves its bytes at copy speed; None
    without a time."""
    if not time_ms:
        return None
    return floor / time_ms * 100.0


# ---------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------

class Timer:
    """Median time of a callable on one device: CUDA events on GPU, perf_counter on CPU.

    ``warmup`` untimed calls, then up to ``reps`` timed ones (see :meth:`median_ms`).
    ``flush`` (CUDA only): evict the L2 before each repetition by reading a ``flush_bytes``
    buffer (default 256 MiB), or by writing it where ``flush_write`` (the benchmark's flush
    before 2026-11-30, kept for ``tools/l2_flush.py``, which compares the two). ``budget_ms``
    (default 2000) caps the total time of the repetitions.
    """

    def __init__(self, device: torch.device, warmup: int, reps: int, flush: bool = True,
                 budget_ms: float = 2000.0, flush_bytes: int = 256 << 20, flush_write: bool = False):
        self.device, self.warmup, self.reps, self.budget_ms = device, warmup, reps, budget_ms
        self.cuda = device.type == "cuda"
        self.flush_write = flush_write
        self.flush_buf = torch.zeros(flush_bytes // 4, dtype=torch.float32, device=device) if (self.cuda and flush) else None

    def _prepare(self) -> None:
        # Evict the L2 (the floor is an HBM floor) and keep the GPU busy while Python
        # enqueues the timed call, so the start event fires right before its first kernel.
        # The flush reads its buffer: writing it (zero_) left the L2 full of dirty lines,
        # whose write-back the timed call then paid (2-3 us per call on the H200, also for a
        # plain copy), bytes that are not the case's.
        if self.flush_buf is not None:
            if self.flush_write:
                self.flush_buf.zero_()
            else:
                self.flush_buf.amax()
        if self.cuda and hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(100_000)

    def median_ms(self, fn: Callable[[], object]) -> float:
        """Median time of ``fn()`` in ms over the timed repetitions after ``warmup`` calls.

        The repetition count adapts down (to no fewer than 10, or ``reps`` if smaller) when
        ``reps`` calls would exceed ``budget_ms``.
        """
        for _ in range(self.warmup):
            fn()
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            est = (time.perf_counter() - t0) * 1e3
            times = []
            for _ in range(self._reps_for(est)):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return statistics.median(times)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self._prepare()
        start.record()
        fn()
        end.record()
        end.synchronize()
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(self._reps_for(start.elapsed_time(end)))]
        for s, e in events:
            self._prepare()
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize(self.device)
        return statistics.median(s.elapsed_time(e) for s, e in events)

    def _reps_for(self, estimate_ms: float) -> int:
        if estimate_ms <= 0 or not math.isfinite(self.budget_ms):
            return self.reps
        return max(min(self.reps, 10), min(self.reps, int(self.budget_ms / estimate_ms)))


def measure_copy_bandwidth(device: torch.device, nbytes: int = 1 << 30, warmup: int = 5, reps: int = 20) -> float:
    """Device-to-device copy bandwidth in bytes/s: (bytes read + bytes written) / median time.

    ``nbytes`` (per buffer, default 1 GiB) should be far larger than the L2 so the copy runs
    from HBM.
    """
    n = nbytes // 4
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    timer = Timer(device, warmup, reps, flush=False, budget_ms=float("inf"))
    ms = timer.median_ms(lambda: dst.copy_(src))
    return 2 * n * 4 / (ms * 1e-3)


def copy_ms(device: torch.device, timer: Timer, nbytes: int) -> float:
    """Median time in ms of a device-to-device copy moving ``nbytes`` in all (``nbytes // 2``
    read, as many written), timed by ``timer`` like the cases (L2 flushed before each)."""
    n = max(nbytes // 2, 1)
    src = torch.randint(1, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return timer.median_ms(lambda: dst.copy_(src))
