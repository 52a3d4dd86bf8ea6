"""roi_align and multi_level_roi_align: torchvision.ops.roi_align (plus mmcv's max mode) over one kernel,
single- or multi-level, deterministic backward (docs/ops/roi_align.md)."""
from . import declaration  # noqa: F401  (registers the op)
from . import export  # noqa: F401
from .api import RoIAlign, roi_align
from .multi_level import MultiLevelRoIAlign, multi_level_roi_align

__all__ = ["roi_align", "RoIAlign", "multi_level_roi_align", "MultiLevelRoIAlign"]
