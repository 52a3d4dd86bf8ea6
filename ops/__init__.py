"""twinops: CUDA kernels compiled twice, as PyTorch custom ops and as TensorRT plugins.

Public API (see README.md for shapes, defaults and semantics):

* :func:`interpolate`, :func:`resize`, :func:`dynamic_resize` and their modules
  :class:`Interpolate`, :class:`Resize`, :class:`DynamicResize`.
"""
from ._ext import has_cuda_kernels
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

__version__ = "0.1.0"

__all__ = [
    "interpolate",
    "resize",
    "dynamic_resize",
    "Interpolate",
    "Resize",
    "DynamicResize",
    "ResizeAttrs",
    "has_cuda_kernels",
    "INTERPOLATE_MODES",
    "ONNX_MODES",
    "COORDINATE_MODES",
    "NEAREST_MODES",
]
