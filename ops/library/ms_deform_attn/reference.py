"""float64 reference for ``twinops.ms_deform_attn`` and its per-dtype tolerances.

:func:`ms_deform_attn_reference` is mmcv's ``multi_scale_deformable_attn_pytorch`` in float64:
per level, ``F.grid_sample`` (bilinear, zeros, align_corners=False) of that level's values at
``2 * location - 1``, weighted by the attention weights and summed over levels and points, with
grid_sample's rule for non-finite locations (:func:`twinops.library.grid_sample.reference.grid_sample_reference`).
:func:`ms_deform_attn_reference_grad` is the same composite on F.grid_sample alone, differentiable,
for gradients at finite inputs. Neither calls the twinops kernels.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...testing.tolerances import TOLERANCES as _DEFAULT
from ..grid_sample.reference import grid_sample_reference

# float32: the kernel computes the coordinate as F.grid_sample does (2 * x - 1, unnormalised) in
# float32, so a few ulps of a coordinate up to the level's length times the data's slope, then a
# sum over L * P samples; the half types compute in float32 and round once.
TOLERANCES = {**_DEFAULT, torch.float32: (5e-5, 5e-5)}


def _levels(spatial_shapes: torch.Tensor, level_start_index: torch.Tensor):
    shapes = [(int(h), int(w)) for h, w in spatial_shapes.detach().cpu().long().tolist()]
    starts = [int(s) for s in level_start_index.detach().cpu().long().tolist()]
    return shapes, starts


def _composite(value, spatial_shapes, level_start_index, sampling_locations, attention_weights, sample):
    n, s, m, d = value.shape
    _, lq, _, levels, points, _ = sampling_locations.shape
    shapes, starts = _levels(spatial_shapes, level_start_index)
    out = []
    for lvl, ((h, w), start) in enumerate(zip(shapes, starts)):
        v = value[:, start:start + h * w].permute(0, 2, 3, 1).reshape(n * m, d, h, w)
        grid = 2 * sampling_locations[:, :, :, lvl] - 1  # (N, Lq, M, P, 2)
        grid = grid.permute(0, 2, 1, 3, 4).reshape(n * m, lq, points, 2)
        out.append(sample(v, grid))  # (N * M, D, Lq, P)
    sampled = torch.stack(out, dim=-2).flatten(-2)  # (N * M, D, Lq, L * P)
    weights = attention_weights.permute(0, 2, 1, 3, 4).reshape(n * m, 1, lq, levels * points)
    y = (sampled * weights).sum(-1)  # (N * M, D, Lq)
    return y.view(n, m * d, lq).transpose(1, 2).contiguous()


def ms_deform_attn_reference(value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    """What the kernels compute, in float64 on the inputs' device: ``(N, Lq, M * D)``.

    Per level l of shape (h, w) starting at ``level_start_index[l]``: ``F.grid_sample`` of
    ``value[:, start:start + h * w]`` as ``(N * M, D, h, w)`` at ``2 * sampling_locations[..., l, :, :] - 1``
    (bilinear, zeros, align_corners=False: pixel = x * w - 0.5), NaN locations NaN and infinite
    ones outside, as grid_sample's rule; then ``sum over (l, p)`` of the weights times the samples.
    Assumes consistent index inputs (the op checks them)."""
    if value.shape[0] == 0 or sampling_locations.shape[1] == 0:
        n, _, m, d = value.shape
        return value.new_zeros((n, sampling_locations.shape[1], m * d), dtype=torch.float64)
    return _composite(value.detach().double(), spatial_shapes, level_start_index,
                      sampling_locations.detach().double(), attention_weights.detach().double(),
                      lambda v, g: grid_sample_reference(v, g, "bilinear", "zeros", False))


def ms_deform_attn_reference_grad(value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    """The composite on ``F.grid_sample`` itself, differentiable in value, sampling_locations and
    attention_weights (run it on float64 leaves for reference gradients at finite inputs)."""
    return _composite(value, spatial_shapes, level_start_index, sampling_locations, attention_weights,
                      lambda v, g: F.grid_sample(v, g, mode="bilinear", padding_mode="zeros", align_corners=False))
