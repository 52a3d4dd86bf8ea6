"""Resize's declarations (twinops.opdef): the three Python entry points over one kernel.

* ``interpolate`` and ``resize`` share the torch ops ``twinops::resize`` / ``twinops::resize_backward``
  and the ONNX node ``TwinopsResize`` (:data:`RESIZE_NODE`, whose ten attributes are the op's).
* ``dynamic_resize`` (two inputs: input, size_tensor) is ``twinops::dynamic_resize`` and the node
  ``DynamicTRTResize`` (MMDeploy's contract: only ``size_tensor``'s shape is read).

Everything else (argument checks, exporters, onnx.reference, plugin fields, ``twinops check`` /
``regress`` cases, conformance tests, ``python -m twinops ops``) reads these declarations.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Creator, Node, OpDef, Sample, TensorArg, register

INTERPOLATE_MODES = ("nearest", "nearest-exact", "bilinear", "bicubic", "area")
ONNX_MODES = ("nearest", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric",
                    "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")
# The kernels' largest length along H or W (int32 table indices).
LENGTH_MAX = 2**31 - 1

_ONNX = "twinops.library.resize.export"  # symbolics, translations and onnx.reference kernels of the nodes

# N may change too between runs of one exported graph; C is fixed by the layers around the op.
INPUT = TensorArg("input", ranks=(4,), layout="N, C, H, W", dtypes=FLOATING, dynamic=(0, 2, 3),
                  doc="the image batch; any strides (channels_last in gives channels_last out)")
OUTPUT = TensorArg("output", ranks=(4,), layout="N, C, H_out, W_out", dtypes=FLOATING)
SIZE_TENSOR = TensorArg("size_tensor", min_rank=2, layout="its last two are the output H, W", shape_only=True,
                        differentiable=False, dynamic=(-2, -1),
                        doc="only its shape is read: its last two dims are (H_out, W_out)")

# The op's attributes, in twinops::resize's argument order (after input and output_size). They use
# the ONNX Resize-19 names; pytorch=1 selects F.interpolate's arithmetic.
RESIZE_ATTRS = (
    Attr("mode", "str", "nearest", choices=ONNX_MODES + ("area",), doc="area: pytorch=1 only"),
    Attr("coordinate_transformation_mode", "str", "half_pixel", choices=COORDINATE_MODES),
    Attr("nearest_mode", "str", "round_prefer_floor", choices=NEAREST_MODES),
    Attr("cubic_coeff_a", "float", -0.75, finite=True, doc="Keys coefficient of cubic"),
    Attr("exclude_outside", "int", 0, choices=(0, 1), doc="1: taps outside the input get weight 0"),
    Attr("antialias", "int", 0, choices=(0, 1), doc="1: the filter stretches by the scale when downsampling"),
    Attr("scales", "floats", (0.0, 0.0), length=2,
         doc="per axis (H, W); 0 = none: pytorch=1 uses in/out, pytorch=0 out/in"),
    Attr("roi", "floats", (0.0, 0.0, 1.0, 1.0), length=4, doc="(h_start, w_start, h_end, w_end), tf_crop_and_resize"),
    Attr("extrapolation_value", "float", 0.0, doc="tf_crop_and_resize samples outside the input"),
    Attr("pytorch", "int", 0, choices=(0, 1), doc="1: F.interpolate's arithmetic (ATen's scales, float coordinates)"),
)

RESIZE_NODE = Node(
    "TwinopsResize", DOMAIN,
    inputs=(TensorArg("X", ranks=(4,), dtypes=FLOATING),
            TensorArg("sizes", ranks=(1,), dtypes=(torch.int64,), shape_input=True, differentiable=False,
                      doc="[H_out, W_out]")),
    outputs=(TensorArg("Y", ranks=(4,), dtypes=FLOATING),),
    attrs=RESIZE_ATTRS, torch_op="twinops::resize", reference=f"{_ONNX}:twinops_resize_reference",
    symbolic=f"{_ONNX}:ts_resize", translation=f"{_ONNX}:translate_resize",
    doc="twinops resize (ONNX Resize-19 or F.interpolate arithmetic)")

DYNAMIC_NODE = Node(
    "DynamicTRTResize", DOMAIN,
    inputs=(TensorArg("input", ranks=(4,), dtypes=FLOATING), TensorArg("size_tensor", min_rank=2, shape_only=True)),
    outputs=(TensorArg("output", ranks=(4,), dtypes=FLOATING),),
    attrs=(Attr("align_corners", "int", 0, choices=(0, 1)),), torch_op="twinops::dynamic_resize",
    reference=f"{_ONNX}:dynamic_trt_resize_reference", symbolic=f"{_ONNX}:ts_dynamic_resize",
    doc="bicubic resize to size_tensor.shape[-2:] (MMDeploy)")

TWINOPS_RESIZE = Creator("TwinopsResize", doc="twinops' node; V3 reads sizes as a shape input")

_REF = "twinops.library.resize.reference"
_TOL = "twinops.testing.tolerances:TOLERANCES"
_STRATEGIES = "twinops.library.resize.strategies"

INTERPOLATE_REGRESS = tuple(
    (f"{mode}{'-ac' if ac else ''}{'-aa' if aa else ''}", (1, 2, 7, 9),
     dict(mode=mode, **({"align_corners": True} if ac else {}), **({"antialias": True} if aa else {}),
          **({"size": (11, 5)} if i % 2 else {"scale_factor": (1.5, 0.75)})))
    for i, (mode, ac, aa) in enumerate([("nearest", 0, 0), ("nearest-exact", 0, 0), ("area", 0, 0),
                                        ("bilinear", 0, 0), ("bilinear", 1, 0), ("bilinear", 0, 1),
                                        ("bicubic", 0, 0), ("bicubic", 1, 0), ("bicubic", 0, 1)])
)
RESIZE_REGRESS = tuple(
    (f"{mode}-{coord}", (1, 2, 6, 8),
     dict(mode=mode, coordinate_transformation_mode=coord, sizes=[1, 2, 9, 5],
          **({"roi": [0, 0, 0.1, -0.2, 1, 1, 0.8, 1.1], "extrapolation_value": -3.5}
             if coord == "tf_crop_and_resize" else {})))
    for mode in ("nearest", "linear", "cubic")
    for coord in ("half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric", "tf_crop_and_resize")
) + (("linear-antialias", (1, 2, 6, 8), dict(mode="linear", antialias=1, scales=[1, 1, 0.5, 0.6])),
     ("cubic-antialias-exclude", (1, 2, 6, 8), dict(mode="cubic", antialias=1, exclude_outside=1,
                                                     cubic_coeff_a=-0.5, scales=[1, 1, 0.5, 0.6])))

INTERPOLATE = register(OpDef(
    name="interpolate",
    api="twinops:interpolate", module="twinops:Interpolate",
    inputs=(INPUT,), outputs=(OUTPUT,),
    args=(Attr("mode", "str", "nearest", choices=INTERPOLATE_MODES, note="for 4-D input"),
          Attr("align_corners", "bool", None, doc="bilinear/bicubic only")),
    node=RESIZE_NODE,
    plugins=(TWINOPS_RESIZE,
             Creator("TRTBicubicInterpolate", fields=(("scale_factor", "floats", 2), ("align_corners", "int", 1)),
                     example=({"scale_factor": [1.5, 0.5], "align_corners": 1},
                              dict(mode="bicubic", scale_factor=(1.5, 0.5), align_corners=True)),
                     doc="MMDeploy's bicubic interpolate node (drop-in)", domain="mmdeploy")),
    backward_op="twinops::resize_backward",
    reference=f"{_REF}:interpolate_reference", reference_doc="torch.nn.functional.interpolate",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    tolerances=_TOL,
    # float32 scale factors: the graph backends (ONNX, plugin, TensorRT) get the same scale
    cases=f"{_STRATEGIES}:interpolate_cases",
    edge_cases=(
        ((1, 1, 1, 1), dict(mode="bicubic", size=(3, 2))),
        ((1, 2, 5, 4), dict(mode="bilinear", align_corners=True, size=(1, 1))),
        ((1, 1, 1, 10), dict(mode="nearest", scale_factor=(1.0, 1.05))),  # ATen CPU short cut
        ((1, 2, 6, 7), dict(mode="bicubic", antialias=True, size=(3, 1))),  # ATen CPU aa W_out=1
        ((2, 3, 17, 13), dict(mode="bilinear", antialias=True, scale_factor=0.25)),
        ((1, 2, 4, 5), dict(mode="area", size=(3, 7))),
    ),
    regress_cases=INTERPOLATE_REGRESS,
    samples=(Sample(((2, 3, 5, 6),), dict(mode="bicubic", scale_factor=1.5)),
             Sample(((1, 2, 6, 5),), dict(mode="bilinear", size=(4, 7), antialias=True)),
             Sample(((1, 2, 6, 7),), dict(mode="nearest", scale_factor=(2.0, 0.5)))),
    doc="torch.nn.functional.interpolate for 4-D input",
))

RESIZE = register(OpDef(
    name="resize",
    api="twinops:resize", module="twinops:Resize",
    inputs=(INPUT,), outputs=(OUTPUT,),
    args=(Attr("mode", "str", "nearest", choices=ONNX_MODES),
          Attr("coordinate_transformation_mode", "str", "half_pixel", choices=COORDINATE_MODES),
          Attr("nearest_mode", "str", "round_prefer_floor", choices=NEAREST_MODES),
          Attr("keep_aspect_ratio_policy", "str", "stretch", choices=ASPECT_POLICIES, doc="sizes only"),
          Attr("antialias", "int", 0, choices=(0, 1)),
          Attr("exclude_outside", "int", 0, choices=(0, 1)),
          Attr("cubic_coeff_a", "float", -0.75, finite=True),
          Attr("extrapolation_value", "float", 0.0)),
    node=RESIZE_NODE,
    plugins=(TWINOPS_RESIZE,),
    backward_op="twinops::resize_backward",
    reference=f"{_REF}:onnx_reference", reference_doc="onnx.reference Resize-19",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    # onnx.reference computes cubic weights in float32 (its cubic_coeff_a is a float32 attribute):
    # float64 results can only be held to float32's tolerance against it.
    tolerances=f"{_REF}:ONNX_TOLERANCES",
    cases=f"{_STRATEGIES}:onnx_configs",
    edge_cases=(
        ((1, 1, 4, 4), dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                            roi=[0, 0, -0.5, -0.5, 1, 1, 1.5, 1.5], sizes=[1, 1, 5, 5], extrapolation_value=7.25)),
        ((2, 3, 8, 11), dict(mode="cubic", coordinate_transformation_mode="half_pixel_symmetric", antialias=1,
                             scales=[1.0, 1.0, 0.6, 2.4])),
        ((2, 3, 8, 11), dict(mode="nearest", nearest_mode="ceil", sizes=[9, 5], axes=[2, 3],
                             keep_aspect_ratio_policy="not_larger")),
        ((1, 2, 5, 6), dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5, scales=[0.45, 1.5], axes=[-2, -1])),
    ),
    regress_cases=RESIZE_REGRESS,
    unsuitable=f"{_REF}:onnx_unsuitable",
    samples=(Sample(((2, 3, 5, 6),), dict(mode="cubic", scales=[1.5, 0.5], axes=[2, 3])),
             Sample(((1, 2, 6, 5),), dict(mode="linear", antialias=1, coordinate_transformation_mode="half_pixel_symmetric",
                                          sizes=[4, 7], axes=[2, 3])),
             Sample(((1, 2, 6, 7),), dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                          roi=[0.1, -0.2, 0.8, 1.1], extrapolation_value=-3.5, scales=[2.0, 0.5],
                                          axes=[2, 3])),
             Sample(((1, 2, 6, 8),), dict(mode="nearest", nearest_mode="ceil", sizes=[9, 4], axes=[2, 3],
                                          keep_aspect_ratio_policy="not_larger"), dynamic=False),
             # scales that are not out/in: the node keeps them, which the legacy V2 plugin (input shapes only) needs
             Sample(((1, 2, 5, 7),), dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5, scales=[1.5, 0.75],
                                          axes=[2, 3]))),
    doc="ONNX Resize-19 on 4-D NCHW input (H and W), every attribute",
))

DYNAMIC_RESIZE = register(OpDef(
    name="dynamic_resize",
    api="twinops:dynamic_resize", module="twinops:DynamicResize",
    inputs=(INPUT, SIZE_TENSOR), outputs=(OUTPUT,),
    args=(Attr("align_corners", "bool", False),),
    node=DYNAMIC_NODE,
    plugins=(Creator("DynamicTRTResize", doc="MMDeploy's DynamicTRTResize node (drop-in)", domain="mmdeploy"),),
    backward_op="twinops::resize_backward",
    reference=f"{_REF}:dynamic_resize_reference",
    reference_doc="F.interpolate(size=size_tensor.shape[-2:], mode='bicubic')",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    tolerances=_TOL,
    cases=f"{_STRATEGIES}:dynamic_resize_cases",
    edge_cases=(
        (((1, 1, 1, 1), (1, 3, 2)), dict(align_corners=False)),
        (((1, 2, 5, 4), (1, 1)), dict(align_corners=True)),
        (((2, 3, 9, 7), (2, 4, 3, 5)), dict(align_corners=False)),
    ),
    regress_cases=(
        ("up", ((1, 2, 7, 9), (1, 11, 13)), dict(align_corners=False)),
        ("up-ac", ((1, 2, 7, 9), (1, 11, 13)), dict(align_corners=True)),
        ("down", ((1, 2, 7, 9), (2, 3, 5)), dict(align_corners=False)),
        ("down-ac", ((1, 2, 7, 9), (2, 3, 5)), dict(align_corners=True)),
    ),
    samples=(Sample(((2, 3, 5, 6), (1, 7, 9)), dict(align_corners=False)),
             Sample(((1, 2, 6, 5), (4, 3)), dict(align_corners=True))),
    doc="bicubic resize to size_tensor.shape[-2:] (MMDeploy's DynamicTRTResize)",
))
