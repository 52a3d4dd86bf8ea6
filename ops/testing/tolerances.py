"""The default per-dtype tolerances of twinops' parity checks (an op's declaration may give its own).

``|actual - expected| <= atol + rtol * |expected|``, ``expected`` computed in float64.
"""
from __future__ import annotations

import torch

__all__ = ["TOLERANCES"]

# float32: a few ulps of the largest sum of weighted terms; half types: one rounding of the output.
TOLERANCES = {
    torch.float64: (1e-10, 1e-10),
    torch.float32: (2e-5, 2e-5),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}
