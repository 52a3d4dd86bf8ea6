"""nms: torchvision's nms and batched_nms with a fixed tie rule, over one kernel (docs/ops/nms.md)."""
from .api import batched_nms, nms

__all__ = ["nms", "batched_nms"]
