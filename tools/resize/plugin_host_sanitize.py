"""resize's cases for tools/plugin_host_sanitize.py: TwinopsResize from twinops.resize (V3,
sizes as a shape input) and twinops.interpolate (V3, and the legacy V2 plugin where scales
are given), MMDeploy's DynamicTRTResize and TRTBicubicInterpolate (V3 and V2).
"""
import math
import warnings

import torch

import twinops
from twinops.library.resize import plugin_host as rph

RESIZE = [  # twinops.resize (ONNX) cases: V3 with sizes as a shape input
    dict(sizes=[1, 2, 17, 6], mode="cubic", coordinate_transformation_mode="half_pixel_symmetric"),
    dict(scales=[1.0, 1.0, 0.5, 2.0], mode="linear", antialias=1),
    dict(sizes=[1, 2, 40, 3], mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5),
    dict(sizes=[1, 2, 17, 6], mode="nearest", nearest_mode="ceil", coordinate_transformation_mode="asymmetric"),
    dict(roi=[0, 0, -0.3, 0.2, 1, 1, 1.4, 0.7], sizes=[1, 2, 17, 6], mode="cubic",
         coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=3.0),
]
INTERPOLATE = [  # twinops.interpolate cases, also through the legacy V2 plugin (scales > 0)
    dict(scale_factor=2.0, mode="bilinear"), dict(scale_factor=0.5, mode="bicubic", antialias=True),
    dict(scale_factor=(0.13, 3.1), mode="nearest"), dict(scale_factor=1.5, mode="nearest-exact"),
    dict(size=(37, 5), mode="bicubic", align_corners=True), dict(size=(9, 70), mode="area"),
]


def node_of(shape, module: torch.nn.Module):
    """The TwinopsResize node of ``module`` (twinops.Resize / Interpolate) exported at ``shape``,
    and its output sizes."""
    from onnx import numpy_helper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = twinops.export_onnx(module, (torch.zeros(shape),), dynamo=False)
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node if n.op_type == "Constant"}
    consts.update({i.name: numpy_helper.to_array(i) for i in model.graph.initializer})
    (node,) = [n for n in model.graph.node if n.op_type == "TwinopsResize"]
    return node, [int(v) for v in consts[node.input[1]]]


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs resize's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    x = torch.randn(1, 2, 21, 30, device=g.device, dtype=dtype, generator=g)
    for kw in RESIZE:
        node, sizes = node_of(x.shape, twinops.Resize(**kw))
        check(f"resize {kw} {dtype}", rph.run_resize(x, node, sizes), twinops.resize(x, **kw))
    for kw in INTERPOLATE:
        node, sizes = node_of(x.shape, twinops.Interpolate(**kw))
        want = twinops.interpolate(x, **kw)
        check(f"interpolate {kw} {dtype}", rph.run_resize(x, node, sizes), want)
        scales = [a for a in node.attribute if a.name == "scales"][0].floats
        v2_shape = [math.floor(i * s) for i, s in zip(x.shape[2:], scales)]  # float32 attribute
        if min(scales) > 0 and v2_shape == list(want.shape[2:]):  # else the exporter warned: narrowed
            check(f"interpolate v2 {kw} {dtype}", rph.run_resize(x, node, sizes, interface="v2"), want)
    for iface in ("v3", "v2"):
        for ac in (0, 1):
            want = twinops.dynamic_resize(x, torch.empty(1, 1, 13, 44, device=g.device), align_corners=bool(ac))
            check(f"DynamicTRTResize {iface} ac={ac} {dtype}",
                  rph.run_resize(x, {"align_corners": ac}, (13, 44), plugin="DynamicTRTResize", interface=iface),
                  want)
            want = twinops.interpolate(x, scale_factor=(1.5, 0.5), mode="bicubic", align_corners=bool(ac))
            check(f"TRTBicubicInterpolate {iface} ac={ac} {dtype}",
                  rph.run_resize(x, {"scale_factor": [1.5, 0.5], "align_corners": ac},
                                plugin="TRTBicubicInterpolate", interface=iface), want)
