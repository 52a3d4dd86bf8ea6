"""deform_conv2d's declaration (twinops.opdef): deformable convolution, DCNv1 and DCNv2.

``twinops.deform_conv2d`` (torchvision.ops.deform_conv2d's signature) is the torch op
``twinops::deform_conv2d`` (backward ``twinops::deform_conv2d_backward``) and the ONNX node
``TwinopsDeformConv2d``: inputs (input, offset, weight, bias?, mask?), attributes stride, padding
and dilation as (H, W) pairs; groups and offset_groups follow from the shapes, as in torchvision.
The toolkit calls the op in its tensors-first form (:func:`deform_conv2d_op`, module
:class:`DeformConv2dOp`), whose inputs are the node's. Four plugin creators run its forward:
``TwinopsDeformConv2d``, MMDeploy's ``MMCVModulatedDeformConv2d`` and ``MMCVDeformConv2d``
(domain mmdeploy) and ``DeformConv`` (standard ONNX DeformConv-19 nodes, through the parser's
plugin override).

Everything else (argument checks, exporters, onnx.reference, ``twinops check`` / ``regress``
cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Creator, Node, OpDef, Sample, TensorArg, register

_REF = "twinops.library.deform_conv2d.reference"
_STRATEGIES = "twinops.library.deform_conv2d.strategies"

# Dynamic dims: N. H and W may vary too in an exported graph (the T3 tests build engines over
# ranges of them), but offset's and mask's must follow input's by the convolution arithmetic,
# which the generic tests' independent changes of each dim cannot keep.
INPUT = TensorArg("input", ranks=(4,), layout="N, C_in, H, W", dtypes=FLOATING, dynamic=(0,),
                  doc="(N, C_in, H, W) the feature map")
OFFSET = TensorArg("offset", ranks=(4,), layout="N, 2 * offset_groups * kh * kw, H_out, W_out", dtypes=FLOATING,
                   dynamic=(0,), factory=f"{_STRATEGIES}:offset_factory",
                   doc="(N, 2 * offset_groups * kh * kw, H_out, W_out) each tap's (dy, dx) per offset group")
WEIGHT = TensorArg("weight", ranks=(4,), layout="C_out, C_in / groups, kh, kw", dtypes=FLOATING,
                   doc="(C_out, C_in / groups, kh, kw) the kernel")
BIAS = TensorArg("bias", ranks=(1,), layout="C_out", dtypes=FLOATING, optional=True, doc="(C_out,) or absent")
MASK = TensorArg("mask", ranks=(4,), layout="N, offset_groups * kh * kw, H_out, W_out", dtypes=FLOATING,
                 optional=True, dynamic=(0,),
                 doc="(N, offset_groups * kh * kw, H_out, W_out) each tap's modulation (DCNv2), or absent (DCNv1)")
OUTPUT = TensorArg("output", ranks=(4,), layout="N, C_out, H_out, W_out", dtypes=FLOATING)
INPUTS = (INPUT, OFFSET, WEIGHT, BIAS, MASK)

PAIR_ATTRS = (
    Attr("stride", "ints", [1, 1], length=2, doc="(H, W), each at least 1"),
    Attr("padding", "ints", [0, 0], length=2, doc="(H, W) zeros added on both sides, each at least 0"),
    Attr("dilation", "ints", [1, 1], length=2, doc="(H, W), each at least 1"),
)

DEFORM_CONV2D_NODE = Node(
    "TwinopsDeformConv2d", DOMAIN, inputs=INPUTS, outputs=(OUTPUT,), attrs=PAIR_ATTRS,
    torch_op="twinops::deform_conv2d",
    reference="twinops.library.deform_conv2d.export:twinops_deform_conv2d_reference",
    doc="twinops deformable convolution (torchvision.ops.deform_conv2d)")


def _shapes(n, c_in, h, w, c_out, k, groups=1, offset_groups=1, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
            bias=True, mask=True):
    """The five input shapes of a case (None for an absent bias or mask) and its keyword arguments."""
    kh, kw = k
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    shapes = ((n, c_in, h, w), (n, 2 * offset_groups * kh * kw, ho, wo), (c_out, c_in // groups, kh, kw),
              (c_out,) if bias else None, (n, offset_groups * kh * kw, ho, wo) if mask else None)
    return shapes, dict(stride=list(stride), padding=list(padding), dilation=list(dilation))


def _in_order(shapes, order):
    """The shapes (input, offset, weight, bias, mask) in a drop-in node's input order, given as
    the positions of those five (e.g. (0, 1, 4, 2, 3): input, offset, mask, weight, bias)."""
    return tuple(shapes[i] for i in order)


_MMCV_ORDER = (0, 1, 4, 2, 3)  # MMCVModulatedDeformConv2d: input, offset, mask, weight, bias
_ONNX_ORDER = (0, 2, 1, 3, 4)  # DeformConv: X, W, offset, B, mask

_MMCV_PAIRS = (("stride", "ints", 2), ("padding", "ints", 2), ("dilation", "ints", 2), ("groups", "int", 1),
               ("deform_groups", "int", 1))

DEFORM_CONV2D = register(OpDef(
    name="deform_conv2d",
    api="twinops.library.deform_conv2d:deform_conv2d_op", module="twinops.library.deform_conv2d:DeformConv2dOp",
    inputs=INPUTS, outputs=(OUTPUT,), args=(),
    node=DEFORM_CONV2D_NODE,
    plugins=(
        Creator("TwinopsDeformConv2d", doc="twinops' node"),
        Creator("MMCVModulatedDeformConv2d", fields=_MMCV_PAIRS,
                example=({"stride": [1, 2], "padding": [1, 0], "dilation": [2, 1], "groups": 1, "deform_groups": 1},
                         dict(stride=[1, 2], padding=[1, 0], dilation=[2, 1])),
                example_shapes=_in_order(_shapes(2, 4, 7, 9, 6, (3, 2), stride=(1, 2), padding=(1, 0),
                                                 dilation=(2, 1))[0], _MMCV_ORDER),
                api="twinops.library.deform_conv2d.api:mmcv_modulated_layout", domain="mmdeploy",
                doc="MMDeploy's node (drop-in): inputs (input, offset, mask, weight, bias?), (H, W) pairs"),
        Creator("MMCVDeformConv2d", fields=(("stride", "ints", 2), ("padding", "ints", 4), ("dilation", "ints", 2),
                                            ("groups", "int", 1), ("deform_groups", "int", 1)),
                example=({"stride": [2, 1], "padding": [1, 1, 0, 0], "dilation": [1, 2], "groups": 1,
                          "deform_groups": 1}, dict(stride=[2, 1], padding=[1, 0], dilation=[1, 2])),
                example_shapes=_shapes(2, 4, 7, 9, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2),
                                       bias=False, mask=False)[0],
                domain="mmdeploy",
                doc="MMDeploy's DCNv1 node (drop-in): inputs (input, offset, weight), padding as MMDeploy writes "
                    "it (pad_h, pad_h, pad_w, pad_w)"),
        Creator("DeformConv", fields=(("dilations", "ints", 2), ("group", "int", 1), ("kernel_shape", "ints", 2),
                                      ("offset_group", "int", 1), ("pads", "ints", 4), ("strides", "ints", 2)),
                example=({"dilations": [1, 2], "group": 1, "kernel_shape": [3, 2], "offset_group": 1,
                          "pads": [1, 0, 1, 0], "strides": [2, 1]},
                         dict(stride=[2, 1], padding=[1, 0], dilation=[1, 2])),
                example_shapes=_in_order(_shapes(2, 4, 7, 9, 6, (3, 2), stride=(2, 1), padding=(1, 0),
                                                 dilation=(1, 2))[0], _ONNX_ORDER),
                api="twinops.library.deform_conv2d.api:onnx_layout", absent_defaults=True,
                doc="ONNX DeformConv-19 nodes (inputs X, W, offset, B?, mask?), through the kENABLE_PLUGIN_OVERRIDE "
                    "parser flag (TensorRT >= 10.15)"),
    ),
    backward_op="twinops::deform_conv2d_backward",
    reference=f"{_REF}:deform_conv2d_reference",
    reference_doc="torchvision.ops.deform_conv2d (float64, CPU)",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    cuda_dtypes=(torch.float32, torch.float16, torch.bfloat16),
    tolerances=f"{_REF}:TOLERANCES",
    cases=f"{_STRATEGIES}:deform_conv2d_cases",
    edge_cases=(
        _shapes(1, 1, 1, 1, 1, (1, 1)),  # a 1x1 image, a 1x1 kernel
        _shapes(0, 2, 4, 5, 3, (3, 3), padding=(1, 1)),  # empty N
        _shapes(2, 4, 5, 6, 2, (2, 3), groups=2, offset_groups=2, bias=False),
        _shapes(1, 3, 6, 5, 4, (3, 1), stride=(2, 1), padding=(0, 2), dilation=(1, 3), mask=False),
        _shapes(1, 2, 3, 3, 0, (3, 3), padding=(1, 1)),  # no output channels
    ),
    regress_cases=(
        ("dcnv2-3x3-p1",) + _shapes(1, 4, 6, 7, 5, (3, 3), padding=(1, 1)),
        ("dcnv1-groups-s2",) + _shapes(2, 4, 7, 6, 4, (2, 3), groups=2, offset_groups=4, stride=(2, 1),
                                       dilation=(1, 2), mask=False, bias=False),
    ),
    samples=(Sample(*_shapes(2, 4, 7, 9, 6, (3, 2), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
             Sample(*_shapes(1, 6, 6, 5, 4, (3, 3), groups=2, offset_groups=3, padding=(1, 1), mask=False)),
             Sample(*_shapes(2, 2, 5, 5, 3, (1, 1), bias=False, mask=False))),
    doc="torchvision.ops.deform_conv2d (DCNv1 / DCNv2)",
))
