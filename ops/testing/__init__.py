"""twinops.testing: build parity suites for your own ops on twinops' tools.

* Strategies (Hypothesis): :func:`nchw_shapes`, :func:`dtypes`, :func:`scale_factors`; data:
  :func:`random_input`. Each op's own strategies and references live in its package:
  ``twinops.library.<op>.strategies`` and ``twinops.library.<op>.reference``.
* Comparison with Polygraphy's semantics: :func:`compare` (statistics), :func:`assert_parity`
  (``stat="elemwise"|"max"|"mean"|"median"|"quantile"``), :func:`report`; the twinops suite's
  stricter allclose rule: :func:`assert_close`.
* The default per-dtype tolerances: :data:`TOLERANCES`.
* Op specs for ``python -m twinops check`` / ``regress``: :class:`OpSpec`, :func:`register`
  (every op declared in ``twinops.opdef`` has one: :func:`from_opdef`).
* pytest plugin: add ``pytest_plugins = ["twinops.testing.pytest_plugin"]`` to your conftest.py
  (markers ``cuda``, ``trt_headers``, ``tensorrt``, ``slow`` with automatic skip reasons;
  Hypothesis profiles ``ci``/``dev``/``thorough`` chosen by ``TWINOPS_HYPOTHESIS_PROFILE``).
"""
from .compare import STATS, Comparison, assert_close, assert_parity, compare, report
from .specs import OpSpec, from_opdef, get, register, registered
from .strategies import FLOAT_DTYPES, dtypes, nchw_shapes, random_input, scale_factors
from .tolerances import TOLERANCES

__all__ = [
    "STATS", "Comparison", "assert_close", "assert_parity", "compare", "report",
    "TOLERANCES",
    "OpSpec", "from_opdef", "get", "register", "registered",
    "FLOAT_DTYPES", "dtypes", "nchw_shapes", "random_input", "scale_factors",
]
