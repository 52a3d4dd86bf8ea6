"""ms_deform_attn's bench: ``twinops.ms_deform_attn`` against the per-level F.grid_sample composite
(mmcv's ``multi_scale_deformable_attn_pytorch``), eager and under ``torch.compile``
(``python -m twinops.bench ms_deform_attn``; the method is the harness's, see ``harness.py``).

Shapes (M = 8 heads of D = 32 channels, P = 4 points):
* ``encoder``: Deformable DETR's encoder at 800 x 1333, levels 100x167, 50x84, 25x42, 13x21
  (S = Lq = 22,223), N = 1 and 4;
* ``decoder``: the same pyramid, Lq = 300 and 900 queries, N = 4;
* ``rtdetr``: RT-DETR at 640 x 640, levels 80x80, 40x40, 20x20 (S = 8,400), Lq = 300, N = 1.
Locations: per query a reference point uniform in [0, 1]^2, each head / level / point offset by
N(0, 0.02) (sampling near the query, as trained models do); weights a softmax over the L * P
points. Forward and backward (all three gradients); the composite's half rows are checked
against the composite in float32 (its own half grid_sample rounds the coordinates to half).
Bytes: every input and output read or written once (backward: grad_output, value, locations,
weights read; the three gradients written).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import torch

from ...bench.harness import BenchCase, Config, OpBench, Row, speedup_lines
from ...bench.timing import tensor_bytes

M, D, P = 8, 32, 4
ENCODER_LEVELS = ((100, 167), (50, 84), (25, 42), (13, 21))
RTDETR_LEVELS = ((80, 80), (40, 40), (20, 20))
# (label, levels, N, Lq or None for Lq = S)
SHAPES = (("encoder", ENCODER_LEVELS, 1, None), ("encoder", ENCODER_LEVELS, 4, None),
          ("decoder", ENCODER_LEVELS, 4, 300), ("decoder", ENCODER_LEVELS, 4, 900),
          ("rtdetr", RTDETR_LEVELS, 1, 300))


def composite(value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    """mmcv's ``multi_scale_deformable_attn_pytorch``: per level F.grid_sample (bilinear, zeros,
    align_corners=False) at ``2 * location - 1``, weighted and summed; (N, Lq, M * D)."""
    import torch.nn.functional as F
    n, _, m, d = value.shape
    _, lq, _, levels, points, _ = sampling_locations.shape
    shapes = [(int(h), int(w)) for h, w in spatial_shapes.tolist()]
    values = value.split([h * w for h, w in shapes], dim=1)
    grids = 2 * sampling_locations - 1
    samples = []
    for lvl, (h, w) in enumerate(shapes):
        v = values[lvl].flatten(2).transpose(1, 2).reshape(n * m, d, h, w)
        g = grids[:, :, :, lvl].transpose(1, 2).flatten(0, 1)
        samples.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
    weights = attention_weights.transpose(1, 2).reshape(n * m, 1, lq, levels * points)
    out = (torch.stack(samples, dim=-2).flatten(-2) * weights).sum(-1).view(n, m * d, lq)
    return out.transpose(1, 2).contiguous()


@functools.lru_cache(maxsize=None)
def _compiled():
    return torch.compile(composite, dynamic=False)


@dataclass(frozen=True)
class Case(BenchCase):
    shape: str
    levels: Tuple[Tuple[int, int], ...]
    n: int
    lq: int
    baseline_kind: str  # "eager" | "compiled"
    dtype: str
    direction: str
    differentiable: Tuple[int, ...] = (0, 3, 4)
    backward_op: str = "twinops::ms_deform_attn_backward"

    @property
    def s(self) -> int:
        return sum(h * w for h, w in self.levels)

    def labels(self) -> Tuple[str, ...]:
        return (self.shape, f"N={self.n} Lq={self.lq} S={self.s}", self.baseline_kind, self.dtype)

    def make_inputs(self, device, generator):
        n, lq, levels = self.n, self.lq, len(self.levels)
        value = torch.randn(n, self.s, M, D, generator=generator, device=device)
        ref = torch.rand(n, lq, 1, 1, 1, 2, generator=generator, device=device)
        loc = ref + 0.02 * torch.randn(n, lq, M, levels, P, 2, generator=generator, device=device)
        logits = torch.randn(n, lq, M, levels * P, generator=generator, device=device)
        weights = logits.softmax(-1).view(n, lq, M, levels, P)
        sizes = torch.tensor([h * w for h, w in self.levels], device=device)
        spatial = torch.tensor(self.levels, device=device, dtype=torch.int64)
        starts = torch.cumsum(sizes, 0) - sizes
        t = self.torch_dtype
        return value.to(t), spatial, starts, loc.to(t), weights.to(t)

    def baseline(self, *inputs):
        return (_compiled() if self.baseline_kind == "compiled" else composite)(*inputs)

    def expected(self, inputs, baseline_out):
        if self.torch_dtype in (torch.float32, torch.float64):
            return baseline_out
        v, s, i, loc, w = inputs
        return composite(v.float(), s, i, loc.float(), w.float()).to(self.torch_dtype)

    def candidate(self, *inputs):
        import twinops
        return twinops.ms_deform_attn(*inputs)

    def output_shapes(self):
        return ((self.n, self.lq, M * D),)

    def nbytes(self) -> int:
        levels = len(self.levels)
        value = (self.n, self.s, M, D)
        loc, weights, out = (self.n, self.lq, M, levels, P, 2), (self.n, self.lq, M, levels, P), self.output_shapes()[0]
        forward = tensor_bytes([value, loc, weights, out], self.torch_dtype)
        # backward: grad_output, value, locations, weights read; grad_value, grad_loc, grad_weight written
        if self.direction == "forward":
            return forward
        return forward + tensor_bytes([value, loc, weights], self.torch_dtype)


# The targets (issue text, docs/perf/ms_deform_attn-notes.md): forward at least 10x the eager
# composite at the encoder shape, the backward at least 10x the composite.
SPEEDUP = 10.0


def target_lines(rows: Sequence[Row]) -> List[str]:
    """Where the rows against the eager composite stand: at least SPEEDUP x, forward and backward."""
    return speedup_lines(rows, SPEEDUP, "the eager composite", keep=lambda r: r.case.baseline_kind == "eager")


def build_cases(cfg: Config) -> List[Case]:
    cases = []
    directions = ("forward", "backward") if cfg.backward else ("forward",)
    for dtype in cfg.dtypes:
        for shape, levels, n, lq in SHAPES:
            q = lq if lq is not None else sum(h * w for h, w in levels)
            for kind in ("eager", "compiled"):
                cases += [Case(shape=shape, levels=levels, n=n, lq=q, baseline_kind=kind, dtype=dtype, direction=d)
                          for d in directions]
    return cases


BENCH = OpBench(
    name="ms_deform_attn",
    summary="twinops ms_deform_attn against the per-level F.grid_sample composite (eager and torch.compile)",
    baseline_name="composite",
    baseline_short="comp",
    candidate_name="twinops.ms_deform_attn",
    columns=("shape", "sizes", "baseline", "dtype"),
    build_cases=build_cases,
    targets=target_lines,
)
