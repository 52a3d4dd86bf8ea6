"""``python -m twinops.bench``: each op's twinops implementation timed against its PyTorch
baseline on CUDA, forward and backward, with a parity check per case, the HBM floor and a
same-run copy of the case's bytes.

* :mod:`~twinops.bench.harness`: the method (parity first, the check that the timed
  backward is autograd's, then the timings) and its API: :class:`BenchCase`,
  :class:`OpBench`, :class:`Config`, :class:`Row`, :func:`run_benchmark`;
* :mod:`~twinops.bench.timing`: :class:`Timer` (CUDA events, warm-up, median, L2 flushed by
  a read), the copy bandwidth, a timed copy of a case's bytes, the floor arithmetic;
* :mod:`~twinops.bench.report`: the tables (rich or plain text, markdown, JSON);
* :mod:`~twinops.bench.cli`: ``python -m twinops.bench [OP ...] [options]`` and the
  registry of op benches (:func:`registered`);
* one module per op, named after it (``<op>.py``), defining its cases and ``BENCH``.

Adding an op's bench: write ``twinops.library.<op>.bench`` (ops/library/<op>/bench.py) with a frozen-dataclass
:class:`BenchCase` subclass (inputs, baseline, candidate, bytes, labels), a
``build_cases(config)``, and ``BENCH = OpBench(name="<op>", ...)``; the CLI finds it.
"""
from .cli import main, registered
from .harness import (
    DTYPES,
    FAILED,
    STATUS_ERROR,
    STATUS_MISMATCH,
    STATUS_NO_REF,
    STATUS_OK,
    TOLERANCE,
    BenchCase,
    Config,
    OpBench,
    Row,
    check_parity,
    ops_called,
    run_benchmark,
    run_case,
)
from .timing import Timer, copy_ms, floor_ms, measure_copy_bandwidth, pct_of_floor, tensor_bytes

__all__ = [
    "main", "registered",
    "DTYPES", "FAILED", "STATUS_ERROR", "STATUS_MISMATCH", "STATUS_NO_REF", "STATUS_OK", "TOLERANCE",
    "BenchCase", "Config", "OpBench", "Row", "Timer",
    "check_parity", "copy_ms", "floor_ms", "measure_copy_bandwidth", "ops_called", "pct_of_floor",
    "run_benchmark", "run_case", "tensor_bytes",
]
