"""roi_align's cases for tools/plugin_host_sanitize.py: its four creators (twinops' TwinopsRoiAlign and
TwinopsMultiLevelRoiAlign, MMDeploy's MMCVRoiAlign and MMCVMultiLevelRoiAlign), V3 and V2, both pool
modes, rois of every kind and out of range, one to four levels.
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

    # Multi-level: rois first, then the levels (finest first).
    strides = (4.0, 8.0, 16.0, 32.0)
    levels = [torch.randn(n, c, 32 >> l, 28 >> l, device=g.device, generator=g).to(dtype) for l in range(4)]
    rois = torch.from_numpy(random_rois(k, n, 32, 28, 0.25, np.random.default_rng(8))).to(g.device, dtype)
    for count in (1, 4):
        given = levels[:count]
        for mode in ("avg", "max"):
            want = torch.ops.twinops.multi_level_roi_align(rois, *given, *[None] * (5 - count), 3, 2,
                                                           list(strides[:count]), 2, 1, mode, 8.0, 1.0, "mmdet")
            twin = {"output_height": 3, "output_width": 2, "featmap_strides": list(strides[:count]),
                    "sampling_ratio": 2, "aligned": 1, "pool_mode": mode, "finest_scale": 8.0,
                    "roi_scale_factor": 1.0, "level_rule": "mmdet"}
            mmcv = {**twin, "pool_mode": 0 if mode == "max" else 1, "finest_scale": 8}
            del mmcv["level_rule"]
            for iface in ("v3", "v2"):
                for node in (("TwinopsMultiLevelRoiAlign", twin), ("MMCVMultiLevelRoiAlign", mmcv)):
                    (y,) = ph.run_plugin(node, [rois, *given], interface=iface)
                    check(f"{node[0]} {iface} {mode} levels={count} {dtype}", y, want)
