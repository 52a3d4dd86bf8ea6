"""ms_deform_attn's ONNX faces beyond the generic ones: the node's ``onnx.reference`` kernel.

Both exporters write ``twinops::TwinopsMSDeformAttn`` on the torch op's five inputs through the
generic symbolic and translation (``twinops.onnx_nodes``): the node has no attributes and no
shape input, so N, S and Lq stay dynamic as they are.
"""
from __future__ import annotations

import numpy as np
import torch

from .reference import ms_deform_attn_reference

__all__ = ["twinops_ms_deform_attn_reference"]


def twinops_ms_deform_attn_reference(value, spatial_shapes, level_start_index, sampling_locations,
                                     attention_weights):
    """The ``onnx.reference`` kernel of ``twinops::TwinopsMSDeformAttn``:
    :func:`~twinops.library.ms_deform_attn.reference.ms_deform_attn_reference` on numpy arrays,
    output (N, Lq, M * D) in value's dtype."""
    t = [torch.from_numpy(np.asarray(a)) for a in (value, spatial_shapes, level_start_index, sampling_locations,
                                                   attention_weights)]
    return ms_deform_attn_reference(*t).numpy().astype(np.asarray(value).dtype)
