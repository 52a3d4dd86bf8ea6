"""Enqueue every resize and grid_sample plugin through the TensorRT-free plugin host, for compute-sanitizer.

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck --error-exitcode 1 \
        python tools/plugin_host_sanitize.py

Needs TWINOPS_TRT_PLUGIN_LIB / TWINOPS_TRT_HEADERS (see twinops.plugin_host) and a CUDA GPU.
Each case must also equal the torch op bitwise. Prints one line per failure and
'plugin host sanitize: N cases, M failures' at the end (exit status 1 on any failure).
"""
import math
import sys
import warnings

import torch

import twinops
from twinops import plugin_host as ph

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


class _Call(torch.nn.Module):
    def __init__(self, fn, kw):
        super().__init__()
        self.fn, self.kw = fn, kw

    def forward(self, x):
        return self.fn(x, **self.kw)


def node_of(shape, fn, kw):
    from onnx import numpy_helper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = twinops.export_onnx(_Call(fn, kw), (torch.zeros(shape),), dynamo=False)
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node if n.op_type == "Constant"}
    consts.update({i.name: numpy_helper.to_array(i) for i in model.graph.initializer})
    (node,) = [n for n in model.graph.node if n.op_type == "TwinopsResize"]
    return node, [int(v) for v in consts[node.input[1]]]


def main() -> int:
    reason = ph.unavailable_reason()
    if reason:
        print(f"plugin host sanitize: cannot run: {reason}")
        return 1
    g = torch.Generator("cuda").manual_seed(0)
    n = bad = 0

    def check(what, got, want):
        nonlocal n, bad
        n += 1
        if got.shape != want.shape or not torch.equal(got, want):
            bad += 1
            print(f"MISMATCH {what}: {tuple(got.shape)} vs {tuple(want.shape)}")

    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(1, 2, 21, 30, device="cuda", dtype=dtype, generator=g)
        for kw in RESIZE:
            node, sizes = node_of(x.shape, twinops.resize, kw)
            check(f"resize {kw} {dtype}", ph.run_resize(x, node, sizes), twinops.resize(x, **kw))
        for kw in INTERPOLATE:
            node, sizes = node_of(x.shape, twinops.interpolate, kw)
            want = twinops.interpolate(x, **kw)
            check(f"interpolate {kw} {dtype}", ph.run_resize(x, node, sizes), want)
            scales = [a for a in node.attribute if a.name == "scales"][0].floats
            v2_shape = [math.floor(i * s) for i, s in zip(x.shape[2:], scales)]  # float32 attribute
            if min(scales) > 0 and v2_shape == list(want.shape[2:]):  # else the exporter warned: narrowed
                check(f"interpolate v2 {kw} {dtype}", ph.run_resize(x, node, sizes, interface="v2"), want)
        for iface in ("v3", "v2"):
            for ac in (0, 1):
                want = twinops.dynamic_resize(x, torch.empty(1, 1, 13, 44, device="cuda"), align_corners=bool(ac))
                check(f"DynamicTRTResize {iface} ac={ac} {dtype}",
                      ph.run_resize(x, {"align_corners": ac}, (13, 44), plugin="DynamicTRTResize", interface=iface),
                      want)
                want = twinops.interpolate(x, scale_factor=(1.5, 0.5), mode="bicubic", align_corners=bool(ac))
                check(f"TRTBicubicInterpolate {iface} ac={ac} {dtype}",
                      ph.run_resize(x, {"scale_factor": [1.5, 0.5], "align_corners": ac},
                                    plugin="TRTBicubicInterpolate", interface=iface), want)
        # grid_sample: its three creators (twinops', MMDeploy's integer codes, ONNX GridSample), 4-D and 5-D
        for shape, gshape in (((2, 3, 9, 7), (2, 5, 11, 2)), ((2, 3, 4, 6, 5), (2, 3, 5, 4, 3))):
            x5 = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
            grid = (torch.rand(gshape, device="cuda", generator=g) * 2.4 - 1.2).to(dtype)
            modes = ("linear", "nearest", "cubic")[: 3 if len(shape) == 4 else 2]
            for m, mode in enumerate(modes):
                for p, pad in enumerate(("zeros", "border", "reflection")):
                    want = torch.ops.twinops.grid_sample(x5, grid, mode, pad, 1)
                    for iface in ("v3", "v2"):
                        for node in (("TwinopsGridSample", dict(mode=mode, padding_mode=pad, align_corners=1)),
                                     ("GridSample", dict(mode=mode, padding_mode=pad, align_corners=1)),
                                     ("grid_sampler", dict(interpolation_mode=m, padding_mode=p, align_corners=1))):
                            (y,) = ph.run_plugin(node, [x5, grid], interface=iface)
                            check(f"{node} {iface} {tuple(shape)} {dtype}", y, want)
    torch.cuda.synchronize()
    print(f"plugin host sanitize: {n} cases, {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
