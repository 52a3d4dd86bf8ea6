"""grid_sample's declaration (twinops.opdef): ``torch.nn.functional.grid_sample`` over one kernel.

``twinops.grid_sample`` is the torch op ``twinops::grid_sample`` (backward
``twinops::grid_sample_backward``) and the ONNX node ``TwinopsGridSample`` whose attributes are ONNX
GridSample-20's (mode ``linear | nearest | cubic``, padding_mode, align_corners as an int). Three
plugin creators run that kernel: ``TwinopsGridSample`` (the node the exporters write), MMDeploy's
``grid_sampler`` (integer codes) and ``GridSample`` (a standard ONNX GridSample node routed to a
plugin by TensorRT >= 10's ``kENABLE_PLUGIN_OVERRIDE`` parser flag).

Everything else (argument checks, exporters, onnx.reference, plugin fields, ``twinops check`` /
``regress`` cases, conformance tests, ``python -m twinops ops``) reads this declaration.
"""
from __future__ import annotations

import torch

from ...opdef import DOMAIN, FLOATING, Attr, Creator, Node, OpDef, Sample, TensorArg, register

# The Python API's names (F.grid_sample's) and the node's (ONNX GridSample-20's), in the same order:
# the kernel's Mode and Padding enums (csrc/kernels/sampling.cuh) and MMDeploy's integer codes.
MODES = ("bilinear", "nearest", "bicubic")
ONNX_MODES = ("linear", "nearest", "cubic")
PADDING_MODES = ("zeros", "border", "reflection")
# GridSample-16 spelled linear and cubic as bilinear and bicubic; the kernels' attribute parser
# reads both spellings (NODE_MODE_CODES: the kernel's Mode of each), so a node may carry either.
NODE_MODES = ONNX_MODES + ("bilinear", "bicubic")
NODE_MODE_CODES = (0, 1, 2, 0, 2)

_REF = "twinops.library.grid_sample.reference"
_STRATEGIES = "twinops.library.grid_sample.strategies"

# Every dim but the coordinate one may change between runs of an exported graph. Negative indices
# count from the end: (0, 1, -3, -2, -1) is N, C, H, W of a 4-D input and N, C, D, H, W of a 5-D one.
INPUT = TensorArg("input", ranks=(4, 5), layout="N, C, [D,] H, W", dtypes=FLOATING, dynamic=(0, 1, -3, -2, -1),
                  doc="the sampled tensor, 4-D (N, C, H, W) or 5-D (N, C, D, H, W); any strides")
GRID = TensorArg("grid", ranks=(4, 5), layout="N, [D_out,] H_out, W_out, 2 or 3", dtypes=FLOATING,
                 dynamic=(0, -4, -3, -2),
                 doc="sampling points in [-1, 1] (x, y[, z]): (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3)")
OUTPUT = TensorArg("output", ranks=(4, 5), layout="N, C, [D_out,] H_out, W_out", dtypes=FLOATING)

# The node's attributes, in twinops::grid_sample's argument order (TWIN_GRID_SAMPLE_ATTRS).
GRID_SAMPLE_ATTRS = (
    Attr("mode", "str", "linear", choices=NODE_MODES, codes=NODE_MODE_CODES,
         doc="linear, nearest or cubic (4-D only); bilinear/bicubic too"),
    Attr("padding_mode", "str", "zeros", choices=PADDING_MODES),
    Attr("align_corners", "int", 0, choices=(0, 1), doc="1: -1 and 1 are the centres of the corner elements"),
)

GRID_SAMPLE_NODE = Node(
    "TwinopsGridSample", DOMAIN,
    inputs=(TensorArg("X", ranks=(4, 5), dtypes=FLOATING), TensorArg("grid", ranks=(4, 5), dtypes=FLOATING)),
    outputs=(TensorArg("Y", ranks=(4, 5), dtypes=FLOATING),),
    attrs=GRID_SAMPLE_ATTRS, torch_op="twinops::grid_sample",
    reference="twinops.library.grid_sample.export:twinops_grid_sample_reference",
    doc="twinops grid_sample (F.grid_sample's semantics, ONNX GridSample-20 attribute names; 4-D and 5-D)")

GRID_SAMPLE = register(OpDef(
    name="grid_sample",
    api="twinops:grid_sample", module="twinops:GridSample",
    inputs=(INPUT, GRID), outputs=(OUTPUT,),
    args=(Attr("mode", "str", "bilinear", choices=MODES),
          Attr("padding_mode", "str", "zeros", choices=PADDING_MODES),
          Attr("align_corners", "bool", None, doc="default None = False")),
    node=GRID_SAMPLE_NODE,
    plugins=(
        Creator("TwinopsGridSample", doc="twinops' node"),
        Creator("grid_sampler",
                fields=(("interpolation_mode", "int", 1), ("padding_mode", "int", 1), ("align_corners", "int", 1)),
                example=({"interpolation_mode": 0, "padding_mode": 1, "align_corners": 0},
                         dict(mode="bilinear", padding_mode="border", align_corners=False)),
                doc="MMDeploy's grid_sampler node (drop-in): codes 0 bilinear / 1 nearest / 2 bicubic, "
                    "0 zeros / 1 border / 2 reflection", domain="mmdeploy"),
        Creator("GridSample",
                example=({"mode": "bicubic", "padding_mode": "reflection", "align_corners": 1},
                         dict(mode="bicubic", padding_mode="reflection", align_corners=True)),
                doc="ONNX GridSample nodes, through the kENABLE_PLUGIN_OVERRIDE parser flag (TensorRT >= 10.15)",
                absent_defaults=True),
    ),
    backward_op="twinops::grid_sample_backward",
    reference=f"{_REF}:grid_sample_reference",
    reference_doc="torch.nn.functional.grid_sample (float64; NaN/Inf grid rule)",
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.float64),
    tolerances=f"{_REF}:TOLERANCES",
    cases=f"{_STRATEGIES}:grid_sample_cases",
    edge_cases=(
        (((1, 1, 1, 1), (1, 2, 3, 2)), dict(mode="bicubic", padding_mode="border", align_corners=True)),
        (((1, 2, 1, 5), (1, 1, 4, 2)), dict(mode="bilinear", padding_mode="reflection", align_corners=True)),
        (((2, 3, 4, 5), (2, 1, 1, 2)), dict(mode="nearest", padding_mode="reflection")),
        (((1, 2, 1, 1, 1), (1, 2, 2, 2, 3)), dict(mode="bilinear", padding_mode="border")),
        (((0, 2, 3, 4), (0, 2, 2, 2)), dict(mode="bilinear")),  # empty N
        (((2, 0, 3, 4), (2, 2, 2, 2)), dict(mode="bicubic")),  # empty C
        (((1, 2, 3, 4), (1, 0, 5, 2)), dict(mode="nearest")),  # empty output
        (((1, 2, 3, 4, 5), (1, 2, 0, 2, 3)), dict(mode="bilinear", padding_mode="reflection")),
    ),
    regress_cases=tuple(
        (f"{mode}-{pad}{'-ac' if ac else ''}", ((1, 2, 5, 6), (1, 4, 3, 2)),
         dict(mode=mode, padding_mode=pad, align_corners=bool(ac)))
        for mode in MODES for pad in PADDING_MODES for ac in (0, 1)
    ) + tuple(
        (f"3d-{mode}-{pad}{'-ac' if ac else ''}", ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3)),
         dict(mode=mode, padding_mode=pad, align_corners=bool(ac)))
        for mode in MODES[:2] for pad in PADDING_MODES for ac in (0, 1)
    ),
    # The first sample is 4-D: the drop-in creators' examples run on its inputs (GridSample's is bicubic).
    samples=(Sample(((2, 3, 5, 6), (2, 4, 7, 2)), dict(mode="bilinear", padding_mode="zeros", align_corners=False)),
             Sample(((1, 2, 6, 5), (1, 3, 4, 2)), dict(mode="bicubic", padding_mode="border", align_corners=True)),
             Sample(((2, 2, 5, 4), (2, 3, 3, 2)), dict(mode="nearest", padding_mode="reflection")),
             Sample(((1, 2, 4, 5, 6), (1, 2, 3, 4, 3)), dict(mode="bilinear", padding_mode="reflection",
                                                             align_corners=True)),
             Sample(((2, 3, 3, 4, 5), (2, 3, 2, 2, 3)), dict(mode="nearest", padding_mode="border"))),
    doc="torch.nn.functional.grid_sample for 4-D and 5-D input",
))
