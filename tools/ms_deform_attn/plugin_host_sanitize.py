"""ms_deform_attn's cases for tools/plugin_host_sanitize.py: its three creators (twinops'
TwinopsMSDeformAttn, MMDeploy's MMCVMultiScaleDeformableAttention, TensorRT's
MultiscaleDeformableAttnPlugin_TRT layout), V3 and V2, int32 and int64 level tables.
"""
import torch

from twinops import plugin_host as ph


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs ms_deform_attn's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    shapes = [(6, 7), (3, 4), (1, 1)]
    sizes = torch.tensor([h * w for h, w in shapes])
    n, s, m, d, lq, p = 2, int(sizes.sum()), 2, 8, 9, 3
    value = torch.randn(n, s, m, d, device=g.device, generator=g).to(dtype)
    loc = (torch.rand(n, lq, m, len(shapes), p, 2, device=g.device, generator=g) * 1.2 - 0.1).to(dtype)
    weights = torch.rand(n, lq, m, len(shapes), p, device=g.device, generator=g).to(dtype)
    for index_dtype in (torch.int64, torch.int32):
        spatial = torch.tensor(shapes, device=g.device, dtype=index_dtype)
        starts = (torch.cumsum(sizes, 0) - sizes).to(device=g.device, dtype=index_dtype)
        inputs = [value, spatial, starts, loc, weights]
        want = torch.ops.twinops.ms_deform_attn(*inputs)
        for iface in ("v3", "v2"):
            for node, expect in ((("TwinopsMSDeformAttn", {}), want),
                                 (("MMCVMultiScaleDeformableAttention", {}), want),
                                 (("MultiscaleDeformableAttnPlugin_TRT", {"plugin_namespace": "twinops"}),
                                  want.view(n, lq, m, d))):
                (y,) = ph.run_plugin(node, inputs, interface=iface)
                check(f"{node[0]} {iface} {index_dtype} {dtype}", y, expect)
