"""ms_deform_attn's declaration (twinops.opdef): multi-scale deformable attention (MSDA).

``twinops.ms_deform_attn`` is the torch op ``twinops::ms_deform_attn`` (backward
``twinops::ms_deform_attn_backward``) and the ONNX node ``TwinopsMSDeformAttn``: mmcv's
``MultiScaleDeformableAttnFunction`` / ``multi_scale_deformable_attn_pytorch`` (Deformable DETR's
op), the value pyramid sampled bilinearly at each query's points (align_corners=False, zero
padding) and summed with the attention weights. No attributes. Three plugin creators run its
forward: ``TwinopsMSDeformAttn`` (the node the exporters write), MMDeploy's
``MMCVMultiScaleDeformableAttention`` and TensorRT's ``MultiscaleDeformableAttnPlugin_TRT`` layout
(output (N, Lq, M, D); registered in plugin namespace ``twinops`` only, so a node selects it with
``plugin_namespace="twinops"`` and libnvinfer_plugin's own stays usable).

Everything else (argument checks, exporters, onnx.reference, ``twinops check`` / ``regress``
cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Creator, Node, OpDef, Sample, TensorArg, register

_REF = "twinops.library.ms_deform_attn.reference"
_STRATEGIES = "twinops.library.ms_deform_attn.strategies"
_INDEX = (torch.int64, torch.int32)

VALUE = TensorArg("value", ranks=(4,), layout="N, S, M, D", dtypes=FLOATING, dynamic=(0, 1),
                  doc="(N, S, M, D) the levels' features flattened (S = sum of h * w), M heads of D channels")
SPATIAL_SHAPES = TensorArg("spatial_shapes", ranks=(2,), layout="L, 2: h, w", dtypes=_INDEX, differentiable=False,
                           factory=f"{_STRATEGIES}:spatial_shapes_factory",
                           doc="(L, 2) each level's (h, w), int64 or int32, each at least 1")
LEVEL_START_INDEX = TensorArg("level_start_index", ranks=(1,), layout="L", dtypes=_INDEX, differentiable=False,
                              factory=f"{_STRATEGIES}:level_start_index_factory",
                              doc="(L,) where each level starts in S: the exclusive cumulative sum of h * w")
SAMPLING_LOCATIONS = TensorArg("sampling_locations", ranks=(6,), layout="N, Lq, M, L, P, 2: x, y", dtypes=FLOATING,
                               dynamic=(0, 1), factory=f"{_STRATEGIES}:locations_factory",
                               doc="(N, Lq, M, L, P, 2) points as (x, y) normalised to [0, 1] per level")
ATTENTION_WEIGHTS = TensorArg("attention_weights", ranks=(5,), layout="N, Lq, M, L, P", dtypes=FLOATING,
                              dynamic=(0, 1), doc="(N, Lq, M, L, P) each point's weight (softmaxed by the caller)")
OUTPUT = TensorArg("output", ranks=(3,), layout="N, Lq, M*D", dtypes=FLOATING)
INPUTS = (VALUE, SPATIAL_SHAPES, LEVEL_START_INDEX, SAMPLING_LOCATIONS, ATTENTION_WEIGHTS)

MS_DEFORM_ATTN_NODE = Node(
    "TwinopsMSDeformAttn", DOMAIN, inputs=INPUTS, outputs=(OUTPUT,), attrs=(),
    torch_op="twinops::ms_deform_attn",
    reference="twinops.library.ms_deform_attn.export:twinops_ms_deform_attn_reference",
    doc="twinops multi-scale deformable attention (mmcv's MultiScaleDeformableAttnFunction)")

# Shapes: value (N, S, M, D), spatial_shapes (L, 2), level_start_index (L,), locations
# (N, Lq, M, L, P, 2), weights (N, Lq, M, L, P); the level sizes come from spatial_shapes_factory.
def _shapes(n, s, m, d, lq, levels, points):
    return ((n, s, m, d), (levels, 2), (levels,), (n, lq, m, levels, points, 2), (n, lq, m, levels, points))


MS_DEFORM_ATTN = register(OpDef(
    name="ms_deform_attn",
    api="twinops:ms_deform_attn", module="twinops:MSDeformAttn",
    inputs=INPUTS, outputs=(OUTPUT,), args=(),
    node=MS_DEFORM_ATTN_NODE,
    plugins=(
        Creator("TwinopsMSDeformAttn", fields=(), doc="twinops' node"),
        Creator("MMCVMultiScaleDeformableAttention", fields=(), example=({}, {}), domain="mmdeploy",
                doc="MMDeploy's node (drop-in; no fields, its im2col_step attribute ignored)"),
        Creator("MultiscaleDeformableAttnPlugin_TRT", fields=(), example=({"plugin_namespace": "twinops"}, {}),
                domain="twinops", domain_only=True, api="twinops.library.ms_deform_attn.api:heads_layout",
                doc="TensorRT's plugin layout, output (N, Lq, M, D) (drop-in; a node selects it with "
                    "plugin_namespace=\"twinops\")"),
    ),
    backward_op="twinops::ms_deform_attn_backward",
    reference=f"{_REF}:ms_deform_attn_reference",
    reference_doc="per-level F.grid_sample (float64, bilinear, zeros, align_corners=False) weighted and summed",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    cuda_dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances=f"{_REF}:TOLERANCES",
    cases=f"{_STRATEGIES}:ms_deform_attn_cases",
    edge_cases=(
        (_shapes(1, 1, 1, 1, 1, 1, 1), {}),  # one 1x1 level
        (_shapes(2, 7, 2, 3, 4, 1, 2), {}),  # one 1x7 level
        (_shapes(0, 21, 2, 4, 3, 2, 2), {}),  # empty N
        (_shapes(2, 21, 2, 4, 0, 2, 2), {}),  # empty Lq
        (_shapes(1, 30, 1, 5, 3, 4, 3), {}),
    ),
    regress_cases=(
        ("l3-p4-m2-d8", _shapes(1, 84, 2, 8, 5, 3, 4), {}),
        ("l1-p1-m1-d3", _shapes(2, 12, 1, 3, 4, 1, 1), {}),
    ),
    samples=(Sample(_shapes(2, 84, 2, 8, 5, 3, 4), {}),
             Sample(_shapes(1, 30, 3, 5, 7, 2, 2), {})),
    doc="multi-scale deformable attention (mmcv's MultiScaleDeformableAttnFunction)",
))
