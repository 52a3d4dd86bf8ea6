"""float64 reference for ``twinops.roi_align`` and its per-dtype tolerances.

:func:`roi_align_reference` is torchvision's roi_align_kernel.cpp rules written in torch float64
ops (differentiable in ``input``, so it also gives reference gradients), with the rules twinops
adds where torchvision's result is undefined (docs/ops/roi_align.md): a roi with a batch index
outside (-1, N) or non-finite coordinates gives NaN, an empty sampling grid gives 0, and mmcv's
max mode (the largest sample of a bin; a sample outside the map is a 0). On finite inputs it
equals ``torchvision.ops.roi_align`` in float64 (tests/roi_align checks this). It does not call
the twinops kernels.
"""
from __future__ import annotations

import math
import torch

from ...testing.tolerances import TOLERANCES as _DEFAULT
from .api import output_hw, rois_of

# float32: the kernels compute sample coordinates in float32 (a few ulps of a coordinate up to
# the map's length, times the data's slope) and sum up to grid_h * grid_w samples; the half types
# compute in float32 and round once, as the default table assumes.
TOLERANCES = {**_DEFAULT, torch.float32: (5e-5, 5e-5)}


def _axis(start: float, bin_: float, bins: int, grid: float, size: int):
    """Per bin b of one axis: the candidate sample indices (the kernels' range: samples more than
    two spacings outside [-1, size] read 0 and are not visited), as (coordinates (bins, M),
    visited mask, count visited). Coordinates are the kernels' (start + b * bin) + (i + 0.5) * bin / grid."""
    los, his = [], []
    for b in range(bins):
        s, t = start + b * bin_, bin_ / grid
        lo, hi = 0.0, grid - 1.0
        if t != 0.0:
            u, v = (-1.0 - s) / t - 0.5, (size - s) / t - 0.5
            lo, hi = max(math.floor(min(u, v) - 2.0), 0.0), min(math.ceil(max(u, v) + 2.0), grid - 1.0)
        los.append(int(lo))
        his.append(int(hi) if lo <= hi else int(lo) - 1)
    m = max([h - lo + 1 for lo, h in zip(los, his)] + [1])
    idx = torch.arange(m, dtype=torch.float64)
    lo_t = torch.tensor(los, dtype=torch.float64)[:, None]
    i = lo_t + idx[None, :]
    visited = i <= torch.tensor(his, dtype=torch.float64)[:, None]
    b = torch.arange(bins, dtype=torch.float64)[:, None]
    coord = (start + b * bin_) + (i + 0.5) * bin_ / grid
    return coord, visited


def _taps(coord: torch.Tensor, size: int):
    """torchvision's bilinear_interpolate along one axis: (low, high, l, h, inside)."""
    inside = (coord >= -1.0) & (coord <= size)
    c = torch.where(inside, coord.clamp(min=0.0), torch.zeros_like(coord))
    low = c.floor().long()
    edge = low >= size - 1
    low = torch.where(edge, torch.full_like(low, size - 1), low)
    high = torch.where(edge, low, low + 1)
    c = torch.where(edge, low.double(), c)
    lw = c - low.double()
    return low, high, lw, 1.0 - lw, inside


def _one_roi(plane: torch.Tensor, box, ph: int, pw: int, scale: float, sampling_ratio: int, aligned: bool,
             mode: str) -> torch.Tensor:
    """(C, PH, PW) of one roi on its (C, H, W) plane (float64)."""
    c, h, w = plane.shape
    x1, y1, x2, y2 = box
    off = 0.5 if aligned else 0.0
    x0, y0 = x1 * scale - off, y1 * scale - off
    rw, rh = (x2 * scale - off) - x0, (y2 * scale - off) - y0
    if not aligned:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    gh = float(sampling_ratio) if sampling_ratio > 0 else float(math.ceil(rh / ph))
    gw = float(sampling_ratio) if sampling_ratio > 0 else float(math.ceil(rw / pw))
    if gh < 1 or gw < 1:
        return plane.new_zeros((c, ph, pw))
    ys, vy = _axis(y0, rh / ph, ph, gh, h)
    xs, vx = _axis(x0, rw / pw, pw, gw, w)
    yl, yh, ly, hy, iny = _taps(ys, h)
    xl, xh, lx, hx, inx = _taps(xs, w)
    # (PH, My, PW, Mx) sample grid
    e = (slice(None), slice(None), None, None)
    f = (None, None, slice(None), slice(None))
    flat = plane.reshape(c, h * w)

    def at(yi, xi):
        return flat[:, (yi[e] * w + xi[f]).reshape(-1)].reshape(c, *yi.shape, *xi.shape)

    v = ((hy[e] * hx[f]) * at(yl, xl) + (hy[e] * lx[f]) * at(yl, xh) + (ly[e] * hx[f]) * at(yh, xl)
         + (ly[e] * lx[f]) * at(yh, xh))
    reads = (vy & iny)[e] & (vx & inx)[f]
    v = torch.where(reads, v, torch.zeros_like(v))
    if mode == "avg":
        return v.sum(dim=(2, 4)) / (gh * gw)
    out = v.amax(dim=(2, 4))
    # Samples not visited or outside the map are 0s in the comparison.
    visited = (vy.sum(dim=1)[:, None] * vx.sum(dim=1)[None, :]).double()
    some_zero = (visited < gh * gw) | ~reads.all(dim=3).all(dim=1)
    return torch.where(some_zero, torch.maximum(out, torch.zeros_like(out)), out)


def roi_align_reference(input: torch.Tensor, boxes, output_size, spatial_scale: float = 1.0,
                        sampling_ratio: int = -1, aligned: bool = False, pool_mode: str = "avg") -> torch.Tensor:
    """What the kernels compute, in float64 (input cast; differentiable in input): (K, C, PH, PW)."""
    ph, pw = output_hw(output_size, "roi_align_reference")
    rois = rois_of(boxes, "roi_align_reference").detach().to(torch.float64).cpu()
    x = input.to(torch.float64)
    n, c = x.shape[0], x.shape[1]
    outs = []
    for row in rois.tolist():
        b, box = row[0], row[1:]
        scaled = [v * spatial_scale for v in box]
        if not (-1.0 < b < n) or not all(math.isfinite(v) for v in scaled):
            outs.append(x.new_full((c, ph, pw), float("nan")))
            continue
        outs.append(_one_roi(x[int(b)], box, ph, pw, float(spatial_scale), int(sampling_ratio), bool(aligned),
                             pool_mode))
    if not outs:
        return x.reshape(-1)[:0].reshape(0, c, ph, pw)  # connected to input's graph
    return torch.stack(outs)


def roi_level(box, strides, rule: str = "mmdet", finest_scale: float = 56.0) -> int:
    """The level of a box (x1, y1, x2, y2) by the kernels' rule, in double (roi_align.cuh, level_of)."""
    if len(strides) <= 1:
        return 0
    x1, y1, x2, y2 = box
    area = (x2 - x1) * (y2 - y1)
    if area < 0:
        return 0  # sqrt of a negative area: the finest level
    if rule == "mmdet":
        lvl = math.floor(math.log2(math.sqrt(area) / finest_scale + 1e-6)) if area > 0 else -1
    else:
        k_min = -round(math.log2(1.0 / strides[0]))
        lvl = (math.floor(4.0 + math.log2(math.sqrt(area) / 224.0) + 1e-6) if area > 0 else -1) - k_min
    return int(min(max(lvl, 0), len(strides) - 1))


def multi_level_roi_align_reference(rois, *levels, output_size, featmap_strides, sampling_ratio: int = 0,
                                    aligned: bool = True, pool_mode: str = "avg", finest_scale: float = 56.0,
                                    roi_scale_factor: float = 1.0, level_rule: str = "mmdet") -> torch.Tensor:
    """What the kernels compute, in float64: each roi's level by the rule (on the roi as given),
    the roi rescaled about its centre by roi_scale_factor, then :func:`roi_align_reference` on that
    level with spatial_scale 1 / stride. ``levels``: level0, level1, ... (None entries ignored)."""
    feats = [t.to(torch.float64) for t in levels if t is not None]
    ph, pw = output_hw(output_size, "multi_level_roi_align_reference")
    r = rois_of(rois, "multi_level_roi_align_reference").detach().to(torch.float64).cpu()
    n, c = feats[0].shape[0], feats[0].shape[1]
    outs = []
    for row in r.tolist():
        b, box = row[0], row[1:]
        if not (-1.0 < b < n) or not all(math.isfinite(v) for v in box):
            outs.append(feats[0].new_full((c, ph, pw), float("nan")))
            continue
        lvl = roi_level(box, featmap_strides[: len(feats)], level_rule, finest_scale)
        if roi_scale_factor != 1.0:
            cx, cy = (box[0] + box[2]) * 0.5, (box[1] + box[3]) * 0.5
            w, h = (box[2] - box[0]) * roi_scale_factor, (box[3] - box[1]) * roi_scale_factor
            box = [cx - w * 0.5, cy - h * 0.5, cx + w * 0.5, cy + h * 0.5]
        scale = 1.0 / featmap_strides[lvl]
        if not all(math.isfinite(v * scale) for v in box):
            outs.append(feats[0].new_full((c, ph, pw), float("nan")))
            continue
        outs.append(_one_roi(feats[lvl][int(b)], box, ph, pw, scale, int(sampling_ratio), bool(aligned), pool_mode))
    if not outs:
        return sum(f.reshape(-1)[:0].sum() for f in feats) + feats[0].new_zeros((0, c, ph, pw))
    return torch.stack(outs)
