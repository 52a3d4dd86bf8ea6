"""nms's cases for tools/sanitize.py: nms and batched_nms on the CUDA kernels.

Every dtype; boxes with NaN and infinite coordinates and NaN scores; tied scores; one box; a
count that is not a multiple of 64 (the mask's last partial block); enough boxes that the
reduce block's removed bits leave shared memory (over 360,448 boxes is too many for a
sanitizer run, so that branch is the tests' and the bench's). ``quick``: two calls (the mask
kernel's and the reduce kernel's shared memory and barriers). batched_nms_padded's device pass
(nms_padded.cu): shared and per-class boxes, a top-k cut, class-agnostic calls, a run stopped at
max_output_boxes, an image without candidates.
"""
import torch

import twinops


def _boxes(k: int, g: torch.Generator, dtype, spread: float = 100.0) -> torch.Tensor:
    xy = torch.rand(k, 2, device=g.device, generator=g) * spread
    wh = torch.rand(k, 2, device=g.device, generator=g) * spread / 4
    return torch.cat([xy, xy + wh], 1).to(dtype)


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs nms's cases on g's device (CUDA under the sanitizer); returns how many."""
    if quick:
        b = _boxes(200, g, torch.float32)
        s = torch.rand(200, device=g.device, generator=g)
        twinops.nms(b, s, 0.5)
        twinops.batched_nms(b, s, (s * 7).long(), 0.5)
        return 2
    n = 0
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for k in (1, 63, 64, 65, 1000):
            b = _boxes(k, g, dtype)
            s = torch.rand(k, device=g.device, generator=g).to(dtype)
            if k > 3:
                b[1, 0] = float("nan")
                b[2, 2] = float("inf")
                s[3] = float("nan")
                s[k // 2:] = s[0]  # ties
            for thr in (0.0, 0.5, 1.0):
                twinops.nms(b, s, thr)
                twinops.batched_nms(b, s, torch.randint(0, 5, (k,), device=g.device, generator=g), thr)
                n += 2
        # the padded form: shared and per-class boxes, a top-k cut, class-agnostic
        for box_shape in ((2, 100, 4), (2, 100, 3, 4)):
            b = _boxes(2 * 100 * (box_shape[2] if len(box_shape) == 4 else 1), g, dtype).reshape(box_shape)
            s = torch.rand(2, 100, 3, device=g.device, generator=g).to(dtype)
            twinops.batched_nms_padded(b, s, 0.3, 0.5, 20, pre_nms_top_k=50)
            twinops.batched_nms_padded(b, s, 0.0, 0.5, 300, class_agnostic=True)
            twinops.batched_nms_padded(b, s, 0.1, 0.3, 2)
            s[1] = 0  # image 1: no candidate
            twinops.batched_nms_padded(b, s, 0.0, 0.5, 10, pre_nms_top_k=70)
            n += 4
    return n
