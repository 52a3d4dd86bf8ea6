"""nms's declaration (twinops.opdef): ``torchvision.ops.nms`` and ``batched_nms`` with a fixed tie rule.

``twinops.nms`` is the torch op ``twinops::nms`` and the ONNX node ``TwinopsNMS``;
``twinops.batched_nms`` is ``twinops::batched_nms`` and ``TwinopsBatchedNMS``. Both give the kept
boxes' indices, a 1-D int64 output whose length depends on the data (at most K). No TensorRT
plugin creators yet (docs/ops/nms.md, "Faces not yet built"). Not differentiable.

Everything else (argument checks, exporters, onnx.reference, ``twinops check`` / ``regress``
cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Node, OpDef, Sample, TensorArg, register

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
    reference=f"{_REF}:batched_nms_case_reference", cases=f"{_STRATEGIES}:batched_nms_cases",
    edge_cases=((((0, 4), (0,), (0,)), dict(iou_threshold=0.5)), (((9, 4), (9,), (9,)), dict(iou_threshold=0.3))),
    regress_cases=(("k40-iou0.5", ((40, 4), (40,), (40,)), dict(iou_threshold=0.5)),),
    samples=(Sample(((30, 4), (30,), (30,)), dict(iou_threshold=0.5)),),
    doc="torchvision.ops.batched_nms with a fixed tie rule",
    **_CASES,
))
