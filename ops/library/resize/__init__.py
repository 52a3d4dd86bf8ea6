"""resize: F.interpolate, ONNX Resize-19 and MMDeploy's DynamicTRTResize over one kernel
(docs/ops/resize.md)."""
from . import export  # noqa: F401  (its TorchScript symbolics and ATen replacements)
from .api import (COORDINATE_MODES, INTERPOLATE_MODES, NEAREST_MODES, ONNX_MODES, DynamicResize, Interpolate, Resize,
                  ResizeAttrs, dynamic_resize, interpolate, resize)

__all__ = ["interpolate", "resize", "dynamic_resize", "Interpolate", "Resize", "DynamicResize", "ResizeAttrs",
           "INTERPOLATE_MODES", "ONNX_MODES", "COORDINATE_MODES", "NEAREST_MODES"]

# ``python -m twinops <command>`` commands this family adds: name -> ("module:function", summary).
COMMANDS = {"table": ("twinops.library.resize.table:main",
                      "the quick table: twinops.interpolate vs F.interpolate per mode and device")}
