"""roi_align's bench: ``twinops.roi_align`` against ``torchvision.ops.roi_align`` and
``twinops.multi_level_roi_align`` against a per-level torchvision loop (mmdet's rule)
(``python -m twinops.bench roi_align``; the method is the harness's, see ``harness.py``).

Shapes (an 800 x 1344 image, batch 2, C = 256):
* ``P2``: FPN P2 (2, 256, 200, 336), 1,000 rois, 7 x 7, sampling_ratio 2, aligned (the box head);
* ``mask``: the same map, 100 rois, 14 x 14 (Mask R-CNN's mask head);
* ``fpn``: P2-P5 (strides 4-32: 200x336, 100x168, 50x84, 25x42), 1,000 rois, 7 x 7,
  sampling_ratio 2, aligned, finest_scale 56, against one torchvision call per level.
Rois: centres uniform over the image, sides log-uniform in [16, 512], batch index 0 or 1.
Forward and backward (the features' gradient; torchvision's CUDA backward adds with atomics,
twinops' is deterministic). Half rows are checked against torchvision in float32 (its half
kernels compute the sample positions in half). Bytes: rois, the feature maps and the output read
or written once (backward: grad_output and rois read, the features' gradients written).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import torch

from ...bench.harness import BenchCase, Config, OpBench, Row, speedup_lines
from ...bench.timing import tensor_bytes

N, C, IMAGE = 2, 256, (800, 1344)
STRIDES = (4.0, 8.0, 16.0, 32.0)
# (label, levels (h, w), K, output size)
SHAPES = (("P2", ((200, 336),), 1000, 7), ("mask", ((200, 336),), 100, 14),
          ("fpn", ((200, 336), (100, 168), (50, 84), (25, 42)), 1000, 7))
SAMPLING_RATIO, FINEST_SCALE = 2, 56.0


def proposals(k: int, generator: torch.Generator, device) -> torch.Tensor:
    """(k, 5) float32 rois (batch index, x1, y1, x2, y2) on an IMAGE-sized image."""
    h, w = IMAGE
    c = torch.rand(k, 2, generator=generator, device=device) * torch.tensor([w, h], device=device)
    side = torch.exp(math.log(16) + torch.rand(k, 2, generator=generator, device=device) * math.log(32))
    b = torch.randint(0, N, (k, 1), generator=generator, device=device).float()
    return torch.cat([b, c - side / 2, c + side / 2], 1)


def torchvision_levels(rois, *levels, output_size):
    """mmdet's SingleRoIExtractor over torchvision.ops.roi_align: each roi's level by
    floor(log2(sqrt(area) / finest_scale + 1e-6)) clamped, one roi_align per level."""
    import torchvision
    scale = torch.sqrt((rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2]))
    lvls = torch.floor(torch.log2(scale / FINEST_SCALE + 1e-6)).clamp(0, len(levels) - 1).long()
    out = levels[0].new_zeros((rois.shape[0], levels[0].shape[1], output_size, output_size))
    for i, feat in enumerate(levels):
        idx = torch.nonzero(lvls == i).flatten()
        out[idx] = torchvision.ops.roi_align(feat, rois[idx], output_size, 1.0 / STRIDES[i], SAMPLING_RATIO, True)
    return out


@dataclass(frozen=True)
class Case(BenchCase):
    shape: str
    levels: Tuple[Tuple[int, int], ...]
    k: int
    size: int
    dtype: str
    direction: str
    differentiable: Tuple[int, ...] = (1,)
    backward_op: str = "twinops::roi_align_backward"

    def labels(self) -> Tuple[str, ...]:
        sizes = "+".join(f"{h}x{w}" for h, w in self.levels)
        return (self.shape, f"{N}x{C}x{sizes} K={self.k} {self.size}x{self.size}", self.dtype)

    @property
    def multi(self) -> bool:
        return len(self.levels) > 1

    def make_inputs(self, device, generator):
        rois = proposals(self.k, generator, device)
        feats = [torch.randn(N, C, h, w, generator=generator, device=device) for h, w in self.levels]
        t = self.torch_dtype
        return (rois.to(t), *(f.to(t) for f in feats))

    def baseline(self, rois, *levels):
        if self.multi:
            return torchvision_levels(rois, *levels, output_size=self.size)
        import torchvision
        return torchvision.ops.roi_align(levels[0], rois, self.size, 1.0 / STRIDES[0], SAMPLING_RATIO, True)

    def expected(self, inputs, baseline_out):
        if self.torch_dtype in (torch.float32, torch.float64):
            return baseline_out
        return self.baseline(*(x.float() for x in inputs)).to(self.torch_dtype)

    def candidate(self, rois, *levels):
        import twinops
        if self.multi:
            return twinops.multi_level_roi_align(list(levels), rois, self.size, STRIDES[: len(levels)],
                                                 sampling_ratio=SAMPLING_RATIO, aligned=True,
                                                 finest_scale=FINEST_SCALE)
        return twinops.roi_align(levels[0], rois, self.size, 1.0 / STRIDES[0], SAMPLING_RATIO, True)

    def output_shapes(self):
        return ((self.k, C, self.size, self.size),)

    def nbytes(self) -> int:
        feats = [(N, C, h, w) for h, w in self.levels]
        rois_out = tensor_bytes([(self.k, 5), self.output_shapes()[0]], self.torch_dtype)
        return rois_out + tensor_bytes(feats, self.torch_dtype)


# The targets (issue text, docs/perf/roi_align-notes.md): forward at least 2x torchvision, the
# deterministic backward at least 2x torchvision's atomic one.
SPEEDUP = 2.0


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where the rows stand against SPEEDUP x torchvision, forward and backward."""
    return speedup_lines(rows, SPEEDUP, "torchvision")


def build_cases(cfg: Config) -> List[Case]:
    cases = []
    directions = ("forward", "backward") if cfg.backward else ("forward",)
    for dtype in cfg.dtypes:
        for shape, levels, k, size in SHAPES:
            diff = tuple(range(1, len(levels) + 1))
            op = "twinops::multi_level_roi_align_backward" if len(levels) > 1 else "twinops::roi_align_backward"
            cases += [Case(shape=shape, levels=levels, k=k, size=size, dtype=dtype, direction=d, differentiable=diff,
                           backward_op=op) for d in directions]
    return cases


BENCH = OpBench(
    name="roi_align",
    summary="twinops roi_align / multi_level_roi_align against torchvision.ops.roi_align (per level for the FPN row)",
    baseline_name="torchvision",
    baseline_short="tv",
    candidate_name="twinops.roi_align",
    columns=("shape", "sizes", "dtype"),
    build_cases=build_cases,
    targets=target_lines,
)
