"""twinops: CUDA kernels compiled twice, as PyTorch custom ops and as TensorRT plugins.

Public API: the functions and modules of every op family in the op list (``ops/op_list.py``;
each family's ``twinops.library.<op>.__all__``), with their shapes, defaults and semantics in
docs/ops/<op>.md; ``python -m twinops ops`` lists every registered op and its faces. Also:

* :func:`has_cuda_kernels`, :func:`cuda_unavailable_reason`;
* ONNX: :func:`export_onnx`, :func:`onnx_translation_table` (dynamo exporter),
  :func:`register_torchscript_symbolics` (TorchScript exporter, done on import) and
  :func:`onnx_reference_ops` (run exported models in ``onnx.reference``).
"""
import importlib as _importlib

from ._ext import cuda_unavailable_reason, has_cuda_kernels
from .op_list import OPS as _OPS

__version__ = "0.1.0"

__all__ = ["has_cuda_kernels", "cuda_unavailable_reason"]
for _op in _OPS:
    _family = _importlib.import_module(f".library.{_op}", __name__)
    globals().update({_name: getattr(_family, _name) for _name in _family.__all__})
    __all__ += _family.__all__
del _op, _family

# after the ops: registers the TorchScript symbolics of every declared op
from .onnx_export import export_onnx, onnx_reference_ops, onnx_translation_table, register_torchscript_symbolics  # noqa: E402

__all__ += ["export_onnx", "onnx_reference_ops", "onnx_translation_table", "register_torchscript_symbolics"]
