"""roi_align's cases for tools/plugin_host_sanitize.py: its two creators (twinops' TwinopsRoiAlign,
MMDeploy's MMCVRoiAlign), V3 and V2, both pool modes, rois of every kind and out of range.
"""
import numpy as np
import torch

from twinops import plugin_host as ph
from twinops.library.roi_align.strategies import random_rois


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs roi_align's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    n, c, h, w, k = 2, 5, 13, 11, 30
    x = torch.randn(n, c, h, w, device=g.device, generator=g).to(dtype)
    rois = torch.from_numpy(random_rois(k, n, h, w, 0.5, np.random.default_rng(7)))
    rois = torch.cat([rois, torch.tensor([[5.0, 1, 1, 4, 4], [0.0, float("nan"), 1, 4, 4]], dtype=torch.float64)])
    rois = rois.to(g.device, dtype)
    for mode in ("avg", "max"):
        for aligned in (0, 1):
            want = torch.ops.twinops.roi_align(x, rois, 3, 4, 0.5, 2, aligned, mode)
            twin = {"output_height": 3, "output_width": 4, "spatial_scale": 0.5, "sampling_ratio": 2,
                    "aligned": aligned, "pool_mode": mode}
            mmcv = {**{a: twin[a] for a in ("output_height", "output_width", "spatial_scale", "sampling_ratio",
                                            "aligned")}, "mode": mode}
            for iface in ("v3", "v2"):
                for node in (("TwinopsRoiAlign", twin), ("MMCVRoiAlign", mmcv)):
                    (y,) = ph.run_plugin(node, [x, rois], interface=iface)
                    check(f"{node[0]} {iface} {mode} aligned={aligned} {dtype}", y, want)
