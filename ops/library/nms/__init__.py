"""nms: torchvision's nms and batched_nms with a fixed tie rule, over one kernel, and the padded
per-image form for fixed-shape engines (docs/ops/nms.md)."""
from . import declaration  # noqa: F401  (registers the ops)
from . import export  # noqa: F401  (its torchvision replacement)
from .api import NMS, BatchedNMS, BatchedNMSPadded, batched_nms, batched_nms_padded, nms

__all__ = ["nms", "batched_nms", "batched_nms_padded", "NMS", "BatchedNMS", "BatchedNMSPadded"]
