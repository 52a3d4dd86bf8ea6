"""twinops: CUDA kernels compiled twice, as PyTorch custom ops and as TensorRT plugins.

Public API (docs/ops/resize.md and docs/ops/grid_sample.md have the shapes, defaults and
semantics; ``python -m twinops ops`` lists every registered op and its faces):

* :func:`interpolate`, :func:`resize`, :func:`dynamic_resize` and their modules
  :class:`Interpolate`, :class:`Resize`, :class:`DynamicResize`.
* :func:`grid_sample` (``torch.nn.functional.grid_sample``, 4-D and 5-D) and :class:`GridSample`.
* ONNX: :func:`export_onnx`, :func:`onnx_translation_table` (dynamo exporter),
  :func:`register_torchscript_symbolics` (TorchScript exporter, done on import) and
  :func:`onnx_reference_ops` (run exported models in ``onnx.reference``).
"""
from ._ext import cuda_unavailable_reason, has_cuda_kernels
from .resize import (
    COORDINATE_MODES,
    INTERPOLATE_MODES,
    NEAREST_MODES,
    ONNX_MODES,
    DynamicResize,
    Interpolate,
    Resize,
    ResizeAttrs,
    dynamic_resize,
    interpolate,
    resize,
)
from .grid_sample import GRID_SAMPLE_MODES, GRID_SAMPLE_PADDING_MODES, GridSample, GridSampleAttrs, grid_sample

# after the ops: registers the TorchScript symbolics of every declared op
from .onnx_export import export_onnx, onnx_reference_ops, onnx_translation_table, register_torchscript_symbolics

__version__ = "0.1.0"

__all__ = [
    "interpolate",
    "resize",
    "dynamic_resize",
    "Interpolate",
    "Resize",
    "DynamicResize",
    "ResizeAttrs",
    "grid_sample",
    "GridSample",
    "GridSampleAttrs",
    "has_cuda_kernels",
    "cuda_unavailable_reason",
    "export_onnx",
    "onnx_reference_ops",
    "onnx_translation_table",
    "register_torchscript_symbolics",
    "INTERPOLATE_MODES",
    "ONNX_MODES",
    "COORDINATE_MODES",
    "NEAREST_MODES",
    "GRID_SAMPLE_MODES",
    "GRID_SAMPLE_PADDING_MODES",
]
