"""nms: torchvision's nms and batched_nms with a fixed tie rule, over one kernel (docs/ops/nms.md)."""
from . import declaration  # noqa: F401  (registers the ops)
from . import export  # noqa: F401  (its torchvision replacement)
from .api import NMS, BatchedNMS, batched_nms, nms

__all__ = ["nms", "batched_nms", "NMS", "BatchedNMS"]
