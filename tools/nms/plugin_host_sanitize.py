"""nms's cases for tools/plugin_host_sanitize.py: the IPluginV3 creators TwinopsNMS and
TwinopsBatchedNMS (int64 and int32 classes) at box counts on either side of a 64-box word,
clustered boxes so that many suppress each other, tied scores; keep's length comes from the
plugin's size tensor.
"""
import torch

from twinops import plugin_host as ph


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs nms's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    for k in (1, 63, 64, 65, 300):
        xy = torch.rand(k, 2, device=g.device, generator=g) * 60
        wh = torch.rand(k, 2, device=g.device, generator=g) * 30 + 1
        boxes = torch.cat([xy, xy + wh], 1).to(dtype)
        scores = (torch.rand(k, device=g.device, generator=g) * 8).round().to(dtype)  # ties
        idxs = torch.randint(0, 4, (k,), device=g.device, generator=g)
        for threshold in (0.0, 0.5):
            attrs = {"iou_threshold": threshold}
            keep = ph.run_plugin(("TwinopsNMS", attrs), [boxes, scores])[0]
            check(f"TwinopsNMS K={k} iou={threshold} {dtype}", keep, torch.ops.twinops.nms(boxes, scores, threshold))
            want = torch.ops.twinops.batched_nms(boxes, scores, idxs, threshold)
            for classes in (idxs, idxs.int()):
                keep = ph.run_plugin(("TwinopsBatchedNMS", attrs), [boxes, scores, classes])[0]
                check(f"TwinopsBatchedNMS K={k} iou={threshold} {dtype} {classes.dtype}", keep, want)
