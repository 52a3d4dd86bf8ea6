"""roi_align's cases for tools/sanitize.py: the forward and the deterministic backward.

Every CUDA dtype, both pool modes, aligned or not, adaptive and fixed sampling; rois inside,
partly outside, tiny, huge (10^6 times the map), on borders, zero-size and inverted; batch indices
out of range and NaN or infinite coordinates (NaN outputs, no read); NaN and infinite features;
non-contiguous input; no rois; multi_level_roi_align over four levels, both level rules; avg
mode's per-roi tables over several channel chunks and where they do not fit. ``quick``: one forward and backward (the channel-max kernel's
shared memory and barriers).
"""
import numpy as np
import torch

import twinops
from twinops.library.roi_align.strategies import random_rois


def _inputs(g, n, c, h, w, k, scale, dtype):
    x = torch.randn(n, c, h, w, device=g.device, generator=g).to(dtype)
    rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,), generator=g, device=g.device).item()))
    rois = torch.from_numpy(random_rois(k, n, h, w, scale, rng)).to(g.device, dtype)
    return x, rois


def _run(x, rois, g, **kw) -> None:
    """Forward, then the input's gradient through the op's backward."""
    leaf = x.detach().clone().requires_grad_()
    y = twinops.roi_align(leaf, rois, **kw)
    y.backward(torch.randn(y.shape, device=g.device, generator=g).to(y.dtype))


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs roi_align's cases on g's device (CUDA under the sanitizer); returns how many."""
    if quick:
        _run(*_inputs(g, 2, 4, 13, 17, 20, 0.5, torch.float32), g, output_size=7, spatial_scale=0.5, sampling_ratio=2,
             aligned=True)
        return 1
    n = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x, rois = _inputs(g, 2, 3, 11, 9, 24, 0.25, dtype)
        x.view(-1)[5] = float("inf")
        x.view(-1)[40] = float("nan")
        bad = torch.tensor([[2.0, 1, 1, 9, 9], [-1.0, 1, 1, 9, 9], [0.0, float("nan"), 1, 9, 9],
                            [1.0, 1, 1, float("inf"), 9], [0.0, -3e6, -2e6, 4e6, 5e6]], device=g.device).to(dtype)
        rois = torch.cat([rois, bad])
        for mode in ("avg", "max"):
            for aligned in (False, True):
                for sr in (-1, 0, 2):
                    _run(x, rois, g, output_size=(3, 4), spatial_scale=0.25, sampling_ratio=sr, aligned=aligned,
                         pool_mode=mode)
                    n += 1
        _run(x.transpose(2, 3), rois, g, output_size=2, spatial_scale=0.25)  # non-contiguous
        _run(x, rois[:0], g, output_size=2)  # no rois
        n += 2
        # multi-level: four levels, both rules, the same bad rois
        levels = [torch.randn(2, 3, 32 >> l, 28 >> l, device=g.device, generator=g).to(dtype).requires_grad_()
                  for l in range(4)]
        for rule, mode in (("mmdet", "max"), ("torchvision", "max"), ("mmdet", "avg")):
            y = twinops.multi_level_roi_align(levels, rois, (3, 2), (4.0, 8.0, 16.0, 32.0), pool_mode=mode,
                                              finest_scale=8.0, roi_scale_factor=1.5, level_rule=rule)
            y.backward(torch.randn(y.shape, device=g.device, generator=g).to(dtype))
            n += 1
        # avg mode's per-roi tables: several channel chunks, and rois whose tables do not fit (a
        # roi across a wide map, adaptive; more than 64 bins per axis) on the per-element path
        x, rois = _inputs(g, 1, 45, 6, 300, 8, 1.0, dtype)
        rois = torch.cat([rois, torch.tensor([[0.0, -5, 0, 299, 5]], device=g.device).to(dtype)])
        for size in ((7, 7), (70, 2)):
            _run(x, rois, g, output_size=size, sampling_ratio=0, aligned=True)
            n += 1
    return n
