"""grid_sample's cases for tools/plugin_host_sanitize.py: its three creators (twinops'
TwinopsGridSample, MMDeploy's grid_sampler with integer codes, ONNX's GridSample), V3 and
V2, 4-D (every mode) and 5-D (linear, nearest), every padding.
"""
import torch

from twinops import plugin_host as ph


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs grid_sample's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    for shape, gshape in (((2, 3, 9, 7), (2, 5, 11, 2)), ((2, 3, 4, 6, 5), (2, 3, 5, 4, 3))):
        x = torch.randn(shape, device=g.device, dtype=dtype, generator=g)
        grid = (torch.rand(gshape, device=g.device, generator=g) * 2.4 - 1.2).to(dtype)
        modes = ("linear", "nearest", "cubic")[: 3 if len(shape) == 4 else 2]
        for m, mode in enumerate(modes):
            for p, pad in enumerate(("zeros", "border", "reflection")):
                want = torch.ops.twinops.grid_sample(x, grid, mode, pad, 1)
                for iface in ("v3", "v2"):
                    for node in (("TwinopsGridSample", dict(mode=mode, padding_mode=pad, align_corners=1)),
                                 ("GridSample", dict(mode=mode, padding_mode=pad, align_corners=1)),
                                 ("grid_sampler", dict(interpolation_mode=m, padding_mode=p, align_corners=1))):
                        (y,) = ph.run_plugin(node, [x, grid], interface=iface)
                        check(f"{node} {iface} {tuple(shape)} {dtype}", y, want)
