"""deform_conv2d: deformable convolution (torchvision.ops.deform_conv2d, DCNv1 / DCNv2) over one
implicit-GEMM kernel, deterministic backward (docs/ops/deform_conv2d.md)."""
from . import declaration  # noqa: F401  (registers the op)
from . import export  # noqa: F401
from .api import DeformConv2d, DeformConv2dOp, deform_conv2d, deform_conv2d_op

__all__ = ["deform_conv2d", "DeformConv2d"]
