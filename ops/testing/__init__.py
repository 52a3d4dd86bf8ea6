"""twinops.testing: build parity suites for your own ops on twinops' tools.

* Strategies (Hypothesis): :func:`nchw_shapes`, :func:`dtypes`, :func:`scale_factors`,
  :func:`size_or_scale`, :func:`interpolate_attrs`, :func:`interpolate_configs`,
  :func:`onnx_resize_attrs`, :func:`onnx_configs`; data: :func:`random_input`.
* Comparison with Polygraphy's semantics: :func:`compare` (statistics), :func:`assert_parity`
  (``stat="elemwise"|"max"|"mean"|"median"|"quantile"``), :func:`report`; the twinops suite's
  stricter allclose rule: :func:`assert_close`.
* References and tolerances of the resize ops: :data:`TOLERANCES`, :func:`interpolate_reference`,
  :func:`onnx_reference`, :func:`onnx_reference_is_unstable`.
* Op specs for ``python -m twinops check`` / ``regress``: :class:`OpSpec`, :func:`register`
  (every op declared in ``twinops.opdef`` has one: :func:`from_opdef`).
* pytest plugin: add ``pytest_plugins = ["twinops.testing.pytest_plugin"]`` to your conftest.py
  (markers ``cuda``, ``trt_headers``, ``tensorrt``, ``slow`` with automatic skip reasons;
  Hypothesis profiles ``ci``/``dev``/``thorough`` chosen by ``TWINOPS_HYPOTHESIS_PROFILE``).
"""
from .compare import STATS, Comparison, assert_close, assert_parity, compare, report
from .resize_ref import TOLERANCES, interpolate_reference, onnx_reference, onnx_reference_is_unstable
from .specs import OpSpec, from_opdef, get, register, registered
from .strategies import (
    FLOAT_DTYPES,
    dtypes,
    interpolate_attrs,
    interpolate_configs,
    nchw_shapes,
    onnx_configs,
    onnx_resize_attrs,
    random_input,
    scale_factors,
    size_or_scale,
)

__all__ = [
    "STATS", "Comparison", "assert_close", "assert_parity", "compare", "report",
    "TOLERANCES", "interpolate_reference", "onnx_reference", "onnx_reference_is_unstable",
    "OpSpec", "from_opdef", "get", "register", "registered",
    "FLOAT_DTYPES", "dtypes", "interpolate_attrs", "interpolate_configs", "nchw_shapes", "onnx_configs",
    "onnx_resize_attrs", "random_input", "scale_factors", "size_or_scale",
]
