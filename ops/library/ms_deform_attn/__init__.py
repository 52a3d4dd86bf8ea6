"""ms_deform_attn: multi-scale deformable attention (mmcv's MultiScaleDeformableAttnFunction) over
one kernel, deterministic backward (docs/ops/ms_deform_attn.md)."""
from . import declaration  # noqa: F401  (registers the op)
from . import export  # noqa: F401
from .api import MSDeformAttn, ms_deform_attn

__all__ = ["ms_deform_attn", "MSDeformAttn"]
