"""roi_align's declaration (twinops.opdef): ``torchvision.ops.roi_align`` (plus mmcv's max mode) over one kernel.

``twinops.roi_align`` is the torch op ``twinops::roi_align`` (backward ``twinops::roi_align_backward``)
and the ONNX node ``TwinopsRoiAlign`` (attributes output_height, output_width, spatial_scale,
sampling_ratio, aligned as an int, pool_mode). Two plugin creators run that kernel:
``TwinopsRoiAlign`` (the node the exporters write) and MMDeploy's ``MMCVRoiAlign`` (domain ``mmcv``;
its field ``mode`` is pool_mode).

Everything else (argument checks, exporters, onnx.reference, plugin fields, ``twinops check`` /
``regress`` cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Creator, Node, OpDef, Sample, TensorArg, register

_REF = "twinops.library.roi_align.reference"
_STRATEGIES = "twinops.library.roi_align.strategies"

POOL_MODES = ("avg", "max")

INPUT = TensorArg("input", ranks=(4,), layout="N, C, H, W", dtypes=FLOATING, dynamic=(0, 1, 2, 3),
                  doc="the feature map (N, C, H, W); any strides")
BOXES = TensorArg("boxes", ranks=(2,), layout="K, 5: batch index, x1, y1, x2, y2", dtypes=FLOATING,
                 differentiable=False, dynamic=(0,), factory=f"{_STRATEGIES}:rois_factory",
                 doc="(K, 5) rois as (batch index, x1, y1, x2, y2) in image coordinates, input's dtype (the API also takes a "
                      "list of (L_i, 4) boxes)")
OUTPUT = TensorArg("output", ranks=(4,), layout="K, C, PH, PW", dtypes=FLOATING)
INPUTS = (INPUT, BOXES)

# The node's attributes, in twinops::roi_align's argument order (TWIN_ROI_ALIGN_ATTRS).
ROI_ALIGN_ATTRS = (
    Attr("output_height", "int", 1, doc="PH >= 1"),
    Attr("output_width", "int", 1, doc="PW >= 1"),
    Attr("spatial_scale", "float", 1.0, finite=True, doc="> 0: feature-map units per image unit"),
    Attr("sampling_ratio", "int", 0, doc="samples per bin and axis; <= 0: adaptive, ceil(roi size / bins)"),
    Attr("aligned", "int", 0, choices=(0, 1), doc="1: shift the scaled roi by -0.5 (pixel centres)"),
    Attr("pool_mode", "str", "avg", choices=POOL_MODES, doc="avg (torchvision) or max (mmcv)"),
)

ROI_ALIGN_NODE = Node(
    "TwinopsRoiAlign", DOMAIN, inputs=INPUTS, outputs=(OUTPUT,), attrs=ROI_ALIGN_ATTRS,
    torch_op="twinops::roi_align",
    reference="twinops.library.roi_align.export:twinops_roi_align_reference",
    doc="twinops roi_align (torchvision.ops.roi_align's semantics, plus mmcv's max pool mode)")

ROI_ALIGN = register(OpDef(
    name="roi_align",
    api="twinops:roi_align", module="twinops:RoIAlign",
    inputs=INPUTS, outputs=(OUTPUT,),
    args=(Attr("spatial_scale", "float", 1.0, finite=True),
          Attr("sampling_ratio", "int", -1),
          Attr("aligned", "bool", False),
          Attr("pool_mode", "str", "avg", choices=POOL_MODES)),
    node=ROI_ALIGN_NODE,
    plugins=(
        Creator("TwinopsRoiAlign", doc="twinops' node"),
        Creator("MMCVRoiAlign",
                fields=(("output_height", "int", 1), ("output_width", "int", 1), ("spatial_scale", "float", 1),
                        ("sampling_ratio", "int", 1), ("mode", "str", 0), ("aligned", "int", 1)),
                example=({"output_height": 3, "output_width": 4, "spatial_scale": 0.5, "sampling_ratio": 2,
                          "mode": "max", "aligned": 1},
                         dict(output_size=(3, 4), spatial_scale=0.5, sampling_ratio=2, pool_mode="max",
                              aligned=True)),
                doc="MMDeploy's MMCVRoiAlign node (drop-in; mode is pool_mode)", domain="mmcv"),
    ),
    backward_op="twinops::roi_align_backward",
    reference=f"{_REF}:roi_align_reference",
    reference_doc="torchvision.ops.roi_align's rules in float64 (twinops.library.roi_align.reference; "
                  "equal to torchvision.ops.roi_align on finite inputs), mmcv's max mode",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    cuda_dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances=f"{_REF}:TOLERANCES",
    cases=f"{_STRATEGIES}:roi_align_cases",
    edge_cases=(
        (((1, 1, 1, 1), (3, 5)), dict(output_size=1)),
        (((2, 3, 5, 6), (0, 5)), dict(output_size=(2, 3))),  # no rois
        (((2, 0, 5, 6), (4, 5)), dict(output_size=2)),  # no channels
        (((1, 2, 7, 3), (5, 5)), dict(output_size=(3, 2), sampling_ratio=3, aligned=True, pool_mode="max")),
        (((2, 2, 4, 9), (6, 5)), dict(output_size=(1, 4), spatial_scale=0.25, sampling_ratio=0)),
    ),
    regress_cases=tuple(
        (f"{mode}{'-aligned' if al else ''}-sr{sr}", ((2, 3, 12, 10), (8, 5)),
         dict(output_size=(3, 4), spatial_scale=0.5, sampling_ratio=sr, aligned=bool(al), pool_mode=mode))
        for mode in POOL_MODES for al in (0, 1) for sr in (-1, 2)
    ),
    samples=(Sample(((2, 3, 10, 12), (6, 5)), dict(output_size=(3, 4), spatial_scale=0.5, sampling_ratio=2,
                                                   aligned=True)),
             Sample(((1, 2, 7, 9), (4, 5)), dict(output_size=2, sampling_ratio=-1, pool_mode="max")),
             Sample(((2, 4, 6, 5), (5, 5)), dict(output_size=(2, 3), spatial_scale=0.25, sampling_ratio=0))),
    doc="torchvision.ops.roi_align (and mmcv's max mode) with a deterministic backward",
))


# multi_level_roi_align: each roi pooled from the level its size selects, as one op. The node's
# inputs are MMDeploy's MMCVMultiLevelRoiAlign order: rois, then the levels (finest first); levels
# after the first are optional (a node of fewer inputs).
MAX_LEVELS = 5
LEVEL_RULES = ("mmdet", "torchvision")
ROIS = TensorArg("rois", ranks=(2,), layout="K, 5: batch index, x1, y1, x2, y2", dtypes=FLOATING,
                 differentiable=False, dynamic=(0,), factory=f"{_STRATEGIES}:multi_level_rois_factory",
                 doc="(K, 5) rois as (batch index, x1, y1, x2, y2) in image coordinates, the levels' dtype")
LEVELS = tuple(
    TensorArg(f"level{i}", ranks=(4,), layout="N, C, H_l, W_l", dtypes=FLOATING, dynamic=(0, 2, 3), optional=i > 0,
              doc=f"level {i}'s feature map (N, C, H_{i}, W_{i}), stride featmap_strides[{i}]"
                  + ("" if i == 0 else "; optional (levels are given in order)"))
    for i in range(MAX_LEVELS))
MULTI_INPUTS = (ROIS,) + LEVELS

MULTI_LEVEL_ATTRS = (
    Attr("output_height", "int", 1, doc="PH >= 1"),
    Attr("output_width", "int", 1, doc="PW >= 1"),
    Attr("featmap_strides", "floats", None, doc="each level's stride (image units per map unit), finest first"),
    Attr("sampling_ratio", "int", 0, doc="samples per bin and axis; <= 0: adaptive"),
    Attr("aligned", "int", 1, choices=(0, 1), doc="1: shift the scaled roi by -0.5 (pixel centres)"),
    Attr("pool_mode", "str", "avg", choices=POOL_MODES, doc="avg or max (mmcv)"),
    Attr("finest_scale", "float", 56.0, finite=True, doc="mmdet's rule: the roi scale of level 0"),
    Attr("roi_scale_factor", "float", 1.0, finite=True, doc="> 0: rois scaled about their centre after the "
                                                            "level is chosen (mmdet's roi_rescale)"),
    Attr("level_rule", "str", "mmdet", choices=LEVEL_RULES,
         doc="mmdet: floor(log2(sqrt(area) / finest_scale + 1e-6)); torchvision: LevelMapper (224 at level 4)"),
)

MULTI_LEVEL_ROI_ALIGN_NODE = Node(
    "TwinopsMultiLevelRoiAlign", DOMAIN, inputs=MULTI_INPUTS, outputs=(OUTPUT,), attrs=MULTI_LEVEL_ATTRS,
    torch_op="twinops::multi_level_roi_align",
    reference="twinops.library.roi_align.export:twinops_multi_level_roi_align_reference",
    doc="twinops multi_level_roi_align (each roi pooled by roi_align from the level its size selects)")


def _ml_shapes(k, n, c, sizes):
    """(rois, level0, ...): MAX_LEVELS shapes, None for the levels not given."""
    levels = [(n, c, h, w) for h, w in sizes]
    return ((k, 5),) + tuple(levels) + (None,) * (MAX_LEVELS - len(levels))


_FPN = ((16, 20), (8, 10), (4, 5), (2, 3), (1, 2))
_STRIDES = (4.0, 8.0, 16.0, 32.0, 64.0)

MULTI_LEVEL_ROI_ALIGN = register(OpDef(
    name="multi_level_roi_align",
    api="twinops.library.roi_align.multi_level:multi_level_roi_align_nodes",
    module="twinops.library.roi_align.multi_level:MultiLevelRoIAlignNodes",
    inputs=MULTI_INPUTS, outputs=(OUTPUT,),
    args=(Attr("sampling_ratio", "int", 0),
          Attr("aligned", "bool", True),
          Attr("pool_mode", "str", "avg", choices=POOL_MODES),
          Attr("finest_scale", "float", 56.0, finite=True),
          Attr("roi_scale_factor", "float", 1.0, finite=True),
          Attr("level_rule", "str", "mmdet", choices=LEVEL_RULES)),
    node=MULTI_LEVEL_ROI_ALIGN_NODE,
    plugins=(
        Creator("TwinopsMultiLevelRoiAlign", doc="twinops' node"),
        Creator("MMCVMultiLevelRoiAlign",
                fields=(("output_height", "int", 1), ("output_width", "int", 1), ("pool_mode", "int", 1),
                        ("sampling_ratio", "int", 1), ("featmap_strides", "floats", 0),
                        ("roi_scale_factor", "float", 1), ("finest_scale", "int", 1), ("aligned", "int", 1)),
                example=({"output_height": 3, "output_width": 2, "pool_mode": 1, "sampling_ratio": 2,
                          "featmap_strides": list(_STRIDES), "roi_scale_factor": 1.0, "finest_scale": 8,
                          "aligned": 1},
                         dict(output_size=(3, 2), featmap_strides=_STRIDES, sampling_ratio=2,
                              aligned=True, pool_mode="avg", finest_scale=8.0)),
                doc="MMDeploy's MMCVMultiLevelRoiAlign node (drop-in; pool_mode 0 max / 1 avg, level rule mmdet)",
                domain="mmdeploy"),
    ),
    backward_op="twinops::multi_level_roi_align_backward",
    reference=f"{_REF}:multi_level_roi_align_reference",
    reference_doc="per roi, its level by the rule, then roi_align_reference (float64)",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    cuda_dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances=f"{_REF}:TOLERANCES",
    cases=f"{_STRATEGIES}:multi_level_roi_align_cases",
    edge_cases=(
        (_ml_shapes(4, 1, 2, ((5, 6),)), dict(output_size=2, featmap_strides=(4.0,))),
        (_ml_shapes(0, 2, 3, _FPN[:4]), dict(output_size=(2, 3), featmap_strides=_STRIDES[:4])),
        (_ml_shapes(6, 2, 2, _FPN[:2]), dict(output_size=3, featmap_strides=(4.0, 8.0), pool_mode="max",
                                             level_rule="torchvision")),
    ),
    regress_cases=tuple(
        (f"{rule}-{mode}", _ml_shapes(10, 2, 3, _FPN[:4]),
         dict(output_size=(3, 4), featmap_strides=_STRIDES[:4], sampling_ratio=2, pool_mode=mode,
              finest_scale=8.0, level_rule=rule))
        for rule in LEVEL_RULES for mode in POOL_MODES
    ),
    # The samples give every level (the generic checks run each input); fewer levels are
    # tests/roi_align's.
    samples=(Sample(_ml_shapes(8, 2, 3, _FPN), dict(output_size=(3, 2), featmap_strides=_STRIDES, sampling_ratio=2,
                                                    finest_scale=8.0)),
             Sample(_ml_shapes(5, 1, 2, _FPN), dict(output_size=2, featmap_strides=_STRIDES, pool_mode="max",
                                                    aligned=False, level_rule="torchvision"))),
    doc="multi-level RoIAlign (mmdet's SingleRoIExtractor, torchvision's MultiScaleRoIAlign) as one op",
))
