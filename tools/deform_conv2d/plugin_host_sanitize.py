"""deform_conv2d's cases for tools/plugin_host_sanitize.py: its four creators (twinops'
TwinopsDeformConv2d, MMDeploy's MMCVModulatedDeformConv2d and MMCVDeformConv2d, ONNX's
DeformConv), V3 and V2, on a case with different H and W geometry.
"""
import torch

from twinops import plugin_host as ph
from twinops.library.deform_conv2d.declaration import _shapes


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs deform_conv2d's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    shapes, _ = _shapes(2, 4, 7, 9, 6, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2))
    x, off, w, b, m = [(torch.randn(s, device=g.device, generator=g) * (2 if i == 1 else 1)).to(dtype)
                       for i, s in enumerate(shapes)]
    geo = dict(stride=[2, 1], padding=[1, 0], dilation=[1, 2])
    want = torch.ops.twinops.deform_conv2d(x, off, w, b, m, **geo)
    want_v1 = torch.ops.twinops.deform_conv2d(x, off, w, None, None, **geo)
    mmcv = dict(geo, groups=1, deform_groups=1)
    onnx = dict(dilations=[1, 2], group=1, kernel_shape=[3, 2], offset_group=1, pads=[1, 0, 1, 0], strides=[2, 1])
    for iface in ("v3", "v2"):
        for node, inputs, expect in ((("TwinopsDeformConv2d", geo), [x, off, w, b, m], want),
                                     (("TwinopsDeformConv2d", geo), [x, off, w], want_v1),
                                     (("MMCVModulatedDeformConv2d", mmcv), [x, off, m, w, b], want),
                                     (("MMCVDeformConv2d", dict(mmcv, padding=[1, 1, 0, 0])), [x, off, w], want_v1),
                                     (("DeformConv", onnx), [x, w, off, b, m], want)):
            (y,) = ph.run_plugin(node, inputs, interface=iface)
            check(f"{node[0]} {iface} {len(inputs)} inputs {dtype}", y, expect)
