"""nms's declaration (twinops.opdef): ``torchvision.ops.nms`` and ``batched_nms`` with a fixed tie rule.

``twinops.nms`` is the torch op ``twinops::nms`` and the ONNX node ``TwinopsNMS``;
``twinops.batched_nms`` is ``twinops::batched_nms`` and ``TwinopsBatchedNMS``. Both give the kept
boxes' indices, a 1-D int64 output whose length depends on the data (at most K).
``twinops.batched_nms_padded`` is ``twinops::batched_nms_padded`` and ``TwinopsBatchedNMSPadded``:
per image, fixed-shape outputs padded past the detections (EfficientNMS_TRT's layout plus the
boxes' indices). The data-dependent nodes have IPluginV3 creators (TensorRT >= 10: keep's
length is a size tensor, the plugin's second output); the padded node's creator serves every
TensorRT version (IPluginV3 and IPluginV2DynamicExt). Not differentiable.

Everything else (argument checks, exporters, onnx.reference, ``twinops check`` / ``regress``
cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Creator, Node, OpDef, Sample, TensorArg, register

_REF = "twinops.library.nms.reference"
_STRATEGIES = "twinops.library.nms.strategies"
_EXPORT = "twinops.library.nms.export"

BOXES = TensorArg("boxes", ranks=(2,), layout="K, 4: x1, y1, x2, y2", dtypes=FLOATING, differentiable=False,
                  dynamic=(0,), factory=f"{_STRATEGIES}:boxes_factory",
                  doc="(K, 4) boxes as (x1, y1, x2, y2)")
SCORES = TensorArg("scores", ranks=(1,), layout="K", dtypes=FLOATING, differentiable=False, dynamic=(0,),
                   factory=f"{_STRATEGIES}:scores_factory", doc="(K,) one score per box, boxes' dtype")
IDXS = TensorArg("idxs", ranks=(1,), layout="K", dtypes=(torch.int64, torch.int32), differentiable=False,
                 dynamic=(0,), factory=f"{_STRATEGIES}:classes_factory",
                 doc="(K,) the class of each box: different classes never suppress each other")
KEEP = TensorArg("keep", ranks=(1,), layout="M <= K", dtypes=(torch.int64,), differentiable=False,
                 doc="the kept boxes' indices by decreasing score (ties: lower index first); M depends on the data")

IOU_THRESHOLD = Attr("iou_threshold", "float", None, finite=True,
                     doc="in [0, 1]: a box is suppressed by a kept one whose IoU with it is greater")

NMS_NODE = Node(
    "TwinopsNMS", DOMAIN, inputs=(BOXES, SCORES), outputs=(KEEP,), attrs=(IOU_THRESHOLD,),
    torch_op="twinops::nms", reference=f"{_EXPORT}:twinops_nms_reference",
    doc="twinops nms (torchvision.ops.nms with equal scores ranking the lower index first); "
        "output length data-dependent")
BATCHED_NMS_NODE = Node(
    "TwinopsBatchedNMS", DOMAIN, inputs=(BOXES, SCORES, IDXS), outputs=(KEEP,), attrs=(IOU_THRESHOLD,),
    torch_op="twinops::batched_nms", reference=f"{_EXPORT}:twinops_batched_nms_reference",
    doc="twinops batched_nms (torchvision.ops.batched_nms per class, equal scores ranking the lower "
        "index first); output length data-dependent")

_CASES = dict(
    reference_doc="the kernels' rules in numpy (twinops.library.nms.reference; torchvision.ops on inputs without ties)",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    tolerances=f"{_REF}:TOLERANCES",
)

NMS = register(OpDef(
    name="nms", api="twinops:nms", module="twinops.library.nms.api:NMS",
    inputs=(BOXES, SCORES), outputs=(KEEP,), args=(IOU_THRESHOLD,), node=NMS_NODE,
    plugins=(Creator("TwinopsNMS", versions={"1": "v3"}, min_tensorrt=10,
                     doc="twinops' node; keep's length is the plugin's second output, a size tensor"),),
    reference=f"{_REF}:nms_case_reference", cases=f"{_STRATEGIES}:nms_cases",
    edge_cases=((((0, 4), (0,)), dict(iou_threshold=0.5)), (((1, 4), (1,)), dict(iou_threshold=0.0)),
                (((7, 4), (7,)), dict(iou_threshold=1.0))),
    regress_cases=(("k40-iou0.5", ((40, 4), (40,)), dict(iou_threshold=0.5)),
                   ("k40-iou0", ((40, 4), (40,)), dict(iou_threshold=0.0))),
    samples=(Sample(((30, 4), (30,)), dict(iou_threshold=0.5)),),
    doc="torchvision.ops.nms with a fixed tie rule",
    **_CASES,
))

BATCHED_NMS = register(OpDef(
    name="batched_nms", api="twinops:batched_nms", module="twinops.library.nms.api:BatchedNMS",
    inputs=(BOXES, SCORES, IDXS), outputs=(KEEP,), args=(IOU_THRESHOLD,), node=BATCHED_NMS_NODE,
    plugins=(Creator("TwinopsBatchedNMS", versions={"1": "v3"}, min_tensorrt=10,
                     doc="twinops' node; keep's length is the plugin's second output, a size tensor"),),
    reference=f"{_REF}:batched_nms_case_reference", cases=f"{_STRATEGIES}:batched_nms_cases",
    edge_cases=((((0, 4), (0,), (0,)), dict(iou_threshold=0.5)), (((9, 4), (9,), (9,)), dict(iou_threshold=0.3))),
    regress_cases=(("k40-iou0.5", ((40, 4), (40,), (40,)), dict(iou_threshold=0.5)),),
    samples=(Sample(((30, 4), (30,), (30,)), dict(iou_threshold=0.5)),),
    doc="torchvision.ops.batched_nms with a fixed tie rule",
    **_CASES,
))


# batched_nms_padded: per image b of B, N boxes (one per box, or one per box and class) and C scores.
PADDED_BOXES = TensorArg("boxes", ranks=(3, 4), layout="B, N, 4 or B, N, C, 4: x1, y1, x2, y2", dtypes=FLOATING,
                         differentiable=False, dynamic=(0, 1), factory=f"{_STRATEGIES}:padded_boxes_factory",
                         doc="(B, N, 4) boxes shared by the classes, or (B, N, C, 4) one box per class")
PADDED_SCORES = TensorArg("scores", ranks=(3,), layout="B, N, C", dtypes=FLOATING, differentiable=False,
                          dynamic=(0, 1), factory=f"{_STRATEGIES}:padded_scores_factory",
                          doc="(B, N, C) one score per box and class, boxes' dtype")
NUM_DETECTIONS = TensorArg("num_detections", ranks=(2,), layout="B, 1", dtypes=(torch.int32,),
                           differentiable=False, doc="detections per image (at most max_output_boxes)")
DETECTION_BOXES = TensorArg("detection_boxes", ranks=(3,), layout="B, K, 4", dtypes=FLOATING, differentiable=False,
                            doc="the kept boxes by decreasing score, zeros past num_detections")
DETECTION_SCORES = TensorArg("detection_scores", ranks=(2,), layout="B, K", dtypes=FLOATING, differentiable=False,
                             doc="their scores, zeros past num_detections")
DETECTION_CLASSES = TensorArg("detection_classes", ranks=(2,), layout="B, K", dtypes=(torch.int32,),
                              differentiable=False, doc="their classes, zeros past num_detections")
DETECTION_INDICES = TensorArg("detection_indices", ranks=(2,), layout="B, K", dtypes=(torch.int64,),
                              differentiable=False, doc="their box indices n in [0, N), -1 past num_detections")

SCORE_THRESHOLD = Attr("score_threshold", "float", None, finite=True,
                       doc="a (box, class) pair is a candidate when its score is greater")
MAX_OUTPUT_BOXES = Attr("max_output_boxes", "int", None, doc=">= 1: K, the detections kept per image at most")
PRE_NMS_TOP_K = Attr("pre_nms_top_k", "int", -1,
                     doc="-1 (every candidate) or >= 1: the candidates of highest score NMS considers per image")
CLASS_AGNOSTIC = Attr("class_agnostic", "bool", False, doc="boxes of different classes suppress each other too")
PADDED_ATTRS = (SCORE_THRESHOLD, IOU_THRESHOLD, MAX_OUTPUT_BOXES, PRE_NMS_TOP_K, CLASS_AGNOSTIC)
# The node's attributes: ONNX has no bool attribute, so class_agnostic is an INT 0 or 1 there.
PADDED_NODE_ATTRS = PADDED_ATTRS[:-1] + (
    Attr("class_agnostic", "int", 0, choices=(0, 1), doc="1: boxes of different classes suppress each other too"),)
PADDED_OUTPUTS = (NUM_DETECTIONS, DETECTION_BOXES, DETECTION_SCORES, DETECTION_CLASSES, DETECTION_INDICES)

BATCHED_NMS_PADDED_NODE = Node(
    "TwinopsBatchedNMSPadded", DOMAIN, inputs=(PADDED_BOXES, PADDED_SCORES), outputs=PADDED_OUTPUTS,
    attrs=PADDED_NODE_ATTRS, torch_op="twinops::batched_nms_padded",
    reference=f"{_EXPORT}:twinops_batched_nms_padded_reference",
    doc="twinops batched_nms_padded (per-image NMS into fixed-shape outputs, EfficientNMS_TRT's layout "
        "plus the box indices)")

BATCHED_NMS_PADDED = register(OpDef(
    name="batched_nms_padded", api="twinops:batched_nms_padded", module="twinops.library.nms.api:BatchedNMSPadded",
    inputs=(PADDED_BOXES, PADDED_SCORES), outputs=PADDED_OUTPUTS, args=PADDED_ATTRS, node=BATCHED_NMS_PADDED_NODE,
    plugins=(Creator("TwinopsBatchedNMSPadded",
                     doc="twinops' node; fixed shapes (TensorRT 8.6 too, detection_indices int32 there); "
                         "at most 360,448 candidates per image"),
             Creator("EfficientNMS_TRT",
                     fields=(("score_threshold", "float", 1), ("iou_threshold", "float", 1),
                             ("max_output_boxes", "int", 1), ("background_class", "int", 1),
                             ("score_activation", "int", 1), ("class_agnostic", "int", 1), ("box_coding", "int", 1)),
                     example=(dict(score_threshold=0.3, iou_threshold=0.5, max_output_boxes=10, background_class=-1,
                                   score_activation=0, class_agnostic=0, box_coding=0, plugin_namespace="twinops"),
                              dict(score_threshold=0.3, iou_threshold=0.5, max_output_boxes=10)),
                     doc="TensorRT's EfficientNMS_TRT node by its rules (drop-in; a node selects it with "
                         "plugin_namespace=\"twinops\")",
                     absent_defaults=True, domain="twinops", domain_only=True, outputs=4),
             Creator("TRTBatchedNMS",
                     fields=(("background_label_id", "int", 1), ("num_classes", "int", 1), ("topk", "int", 1),
                             ("keep_topk", "int", 1), ("score_threshold", "float", 1), ("iou_threshold", "float", 1),
                             ("is_normalized", "int", 1), ("clip_boxes", "int", 1), ("return_index", "int", 1)),
                     example=(dict(background_label_id=-1, num_classes=3, topk=20, keep_topk=10, score_threshold=0.3,
                                   iou_threshold=0.5, is_normalized=1, clip_boxes=0, return_index=1),
                              dict(background_label_id=-1, num_classes=3, topk=20, keep_topk=10, score_threshold=0.3,
                                   iou_threshold=0.5, clip_boxes=False, return_index=True)),
                     example_shapes=((2, 30, 1, 4), (2, 30, 3)), api=f"{_REF}:trt_batched_nms_reference",
                     doc="MMDeploy's TRTBatchedNMS node (drop-in; per-class top-k, dets / labels / index)",
                     absent_defaults=True, domain="mmdeploy")),
    reference=f"{_REF}:batched_nms_padded_reference", cases=f"{_STRATEGIES}:batched_nms_padded_cases",
    edge_cases=((((1, 0, 4), (1, 0, 3)), dict(score_threshold=0.0, iou_threshold=0.5, max_output_boxes=5)),
                (((2, 9, 4), (2, 9, 3)), dict(score_threshold=0.3, iou_threshold=0.5, max_output_boxes=4,
                                              pre_nms_top_k=6)),
                (((2, 9, 3, 4), (2, 9, 3)), dict(score_threshold=0.0, iou_threshold=0.3, max_output_boxes=30,
                                                 class_agnostic=True))),
    regress_cases=(("b2-n40-c3", ((2, 40, 4), (2, 40, 3)),
                    dict(score_threshold=0.2, iou_threshold=0.5, max_output_boxes=20)),
                   ("b2-n30-c3-per-class-agnostic", ((2, 30, 3, 4), (2, 30, 3)),
                    dict(score_threshold=0.2, iou_threshold=0.5, max_output_boxes=20, pre_nms_top_k=40,
                         class_agnostic=True))),
    samples=(Sample(((2, 30, 4), (2, 30, 3)), dict(score_threshold=0.2, iou_threshold=0.5, max_output_boxes=10)),),
    doc="per-image batched NMS into fixed-shape outputs (EfficientNMS_TRT's layout)",
    **{**_CASES, "reference_doc": "per image, batched_nms's numpy rules over the candidates "
                                  "(twinops.library.nms.reference; torchvision.ops on inputs without ties)"},
))
