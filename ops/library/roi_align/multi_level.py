"""multi_level_roi_align: each roi pooled by roi_align from the feature level its size selects, as one op.

:func:`multi_level_roi_align` (mmdet's ``SingleRoIExtractor`` with ``RoIAlign`` layers, or
torchvision's ``MultiScaleRoIAlign`` level rule) calls the torch op
``torch.ops.twinops.multi_level_roi_align``, whose inputs are MMDeploy's ``MMCVMultiLevelRoiAlign``
order: rois, then level0, level1, ... (at most five levels). Its gradient is the op
``twinops::multi_level_roi_align_backward`` (one gradient per level, deterministic).
:func:`multi_level_roi_align_nodes` and :class:`MultiLevelRoIAlignNodes` take the inputs in the
node's order (what the declaration, ``twinops check`` and the conformance tests call).
docs/ops/roi_align.md has the semantics.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_arg, check_tensor, renamed
from .api import BoxesArg, output_hw, rois_of
from .declaration import LEVELS, MAX_LEVELS, MULTI_LEVEL_ROI_ALIGN, ROIS

__all__ = ["multi_level_roi_align", "MultiLevelRoIAlign"]


def _strides(featmap_strides, levels: int, who: str):
    if not isinstance(featmap_strides, (list, tuple)) or not all(
            isinstance(s, (int, float)) and not isinstance(s, bool) for s in featmap_strides):
        raise TypeError(f"{who}: featmap_strides must be a sequence of numbers, got {featmap_strides!r}")
    if len(featmap_strides) != levels:
        raise ValueError(f"{who}: featmap_strides must have one stride per level ({levels}), got "
                         f"{len(featmap_strides)}")
    if not all(s > 0 and s != float("inf") for s in featmap_strides):
        raise ValueError(f"{who}: featmap_strides must be finite and greater than 0, got {tuple(featmap_strides)}")
    return [float(s) for s in featmap_strides]


def _call(rois: Tensor, levels: Sequence[Tensor], output_size, featmap_strides, sampling_ratio: int, aligned: bool,
          pool_mode: str, finest_scale: float, roi_scale_factor: float, level_rule: str, who: str) -> Tensor:
    if not isinstance(levels, (list, tuple)) or not levels:
        raise TypeError(f"{who}: features must be a non-empty list of (N, C, H, W) tensors, got {type(levels).__name__}")
    if len(levels) > MAX_LEVELS:
        raise ValueError(f"{who}: at most {MAX_LEVELS} feature levels, got {len(levels)}")
    for arg, t in zip(LEVELS, levels):
        check_tensor(arg, t, who)
    check_tensor(ROIS, rois, who)
    kw = dict(sampling_ratio=sampling_ratio, aligned=aligned, pool_mode=pool_mode, finest_scale=finest_scale,
              roi_scale_factor=roi_scale_factor, level_rule=level_rule)
    for a in MULTI_LEVEL_ROI_ALIGN.args:
        check_arg(a, kw[a.name], who)
    ph, pw = output_hw(output_size, who)
    strides = _strides(featmap_strides, len(levels), who)
    for name, v in (("finest_scale", finest_scale), ("roi_scale_factor", roi_scale_factor)):
        if not v > 0:
            raise ValueError(f"{who}: {name} must be greater than 0, got {v}")
    padded = list(levels) + [None] * (MAX_LEVELS - len(levels))
    try:
        return torch.ops.twinops.multi_level_roi_align(rois, *padded, ph, pw, strides, int(sampling_ratio),
                                                       int(aligned), pool_mode, float(finest_scale),
                                                       float(roi_scale_factor), level_rule)
    except RuntimeError as e:
        raise renamed(e, who) from None


def multi_level_roi_align(features: Sequence[Tensor], rois: BoxesArg, output_size, featmap_strides: Sequence[float],
                          sampling_ratio: int = 0, aligned: bool = True, pool_mode: str = "avg",
                          finest_scale: float = 56.0, roi_scale_factor: float = 1.0,
                          level_rule: str = "mmdet") -> Tensor:
    """Multi-level RoIAlign: each roi pooled from the level its size selects.

    Args:
        features: 1 to 5 feature maps (N, C, H_l, W_l), finest first, one dtype and device
            (float32 / float64 / float16 / bfloat16); any strides.
        rois: (K, 5) tensor (batch index, x1, y1, x2, y2) in image coordinates, the levels'
            dtype; or a list of N tensors (L_i, 4).
        output_size: an int or (PH, PW).
        featmap_strides: one stride per level (image units per map unit): level l is pooled with
            spatial_scale = 1 / featmap_strides[l].
        sampling_ratio: samples per bin and axis; <= 0 (default 0): adaptive.
        aligned: default True (mmdet's RoIAlign): the scaled roi is shifted by -0.5.
        pool_mode: "avg" (default) or "max" (mmcv).
        finest_scale: mmdet's rule, default 56: level = floor(log2(sqrt(area) / finest_scale + 1e-6)),
            clamped to the levels.
        roi_scale_factor: default 1.0; otherwise each roi is scaled about its centre (mmdet's
            roi_rescale) after its level is chosen.
        level_rule: "mmdet" (default) or "torchvision" (MultiScaleRoIAlign's LevelMapper:
            floor(4 + log2(sqrt(area) / 224) + 1e-6) clamped to [log2 of the first stride, log2 of
            the last], counted from the first).

    Returns:
        (K, C, PH, PW), the levels' dtype: roi k's roi_align on its level. Differentiable in the
        features (deterministic backward); the rois get no gradient.
    """
    return _call(rois_of(rois, "twinops.multi_level_roi_align", ROIS), features, output_size, featmap_strides,
                 sampling_ratio, aligned, pool_mode, finest_scale, roi_scale_factor, level_rule,
                 "twinops.multi_level_roi_align")


_DEFAULTS = dict(sampling_ratio=0, aligned=True, pool_mode="avg", finest_scale=56.0, roi_scale_factor=1.0,
                 level_rule="mmdet")
_NODES_WHO = "twinops.library.roi_align.multi_level.multi_level_roi_align_nodes"


def multi_level_roi_align_nodes(rois: Tensor, level0: Tensor, level1: Optional[Tensor] = None,
                                level2: Optional[Tensor] = None, level3: Optional[Tensor] = None,
                                level4: Optional[Tensor] = None, **kwargs) -> Tensor:
    """:func:`multi_level_roi_align` with the inputs in the node's order (rois, level0, level1, ...;
    the levels given first, None after), keyword arguments as :func:`multi_level_roi_align`'s."""
    levels = [t for t in (level0, level1, level2, level3, level4) if t is not None]
    args = {**_DEFAULTS, **kwargs}
    return _call(rois, levels, args.pop("output_size"), args.pop("featmap_strides"), who=_NODES_WHO, **args)


class MultiLevelRoIAlign(torch.nn.Module):
    """Module form of :func:`multi_level_roi_align`: ``forward(features, rois)`` -> (K, C, PH, PW)."""

    def __init__(self, output_size, featmap_strides: Sequence[float], sampling_ratio: int = 0, aligned: bool = True,
                 pool_mode: str = "avg", finest_scale: float = 56.0, roi_scale_factor: float = 1.0,
                 level_rule: str = "mmdet"):
        super().__init__()
        output_hw(output_size, "twinops.MultiLevelRoIAlign")
        self.kwargs = dict(output_size=output_size, featmap_strides=tuple(featmap_strides),
                           sampling_ratio=sampling_ratio, aligned=aligned, pool_mode=pool_mode,
                           finest_scale=finest_scale, roi_scale_factor=roi_scale_factor, level_rule=level_rule)

    def forward(self, features: Sequence[Tensor], rois: BoxesArg) -> Tensor:
        k = self.kwargs
        return _call(rois_of(rois, "twinops.MultiLevelRoIAlign", ROIS), features, k["output_size"], k["featmap_strides"],
                     k["sampling_ratio"], k["aligned"], k["pool_mode"], k["finest_scale"], k["roi_scale_factor"],
                     k["level_rule"], "twinops.MultiLevelRoIAlign")

    def extra_repr(self) -> str:
        return ", ".join(f"{n}={v!r}" for n, v in self.kwargs.items())


class MultiLevelRoIAlignNodes(MultiLevelRoIAlign):
    """:class:`MultiLevelRoIAlign` whose forward takes the node's inputs: ``forward(rois, level0,
    level1=None, ...)`` (what the declaration's exports and conformance tests run)."""

    def forward(self, rois: Tensor, level0: Tensor, level1: Optional[Tensor] = None,  # type: ignore[override]
                level2: Optional[Tensor] = None, level3: Optional[Tensor] = None,
                level4: Optional[Tensor] = None) -> Tensor:
        return super().forward([t for t in (level0, level1, level2, level3, level4) if t is not None], rois)


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels
# ---------------------------------------------------------------------------------------

def _fake_check(op: str, rois, levels, attrs, grad_output=None) -> None:
    given = [t for t in levels if t is not None]
    tensors = [rois] + given
    go = grad_output if grad_output is not None else given[0]
    go_shape = size_hints(go.shape)
    if grad_output is not None and len(go_shape) == 4 and rois.dim() == 2 and given[0].dim() == 4:
        want = [size_hints(rois.shape)[0], size_hints(given[0].shape)[1], attrs[0], attrs[1]]
        go_shape = [h if isinstance(v, int) else w for v, h, w in zip(grad_output.shape, go_shape, want)]
    torch.ops.twinops._multi_level_roi_align_check(op, [size_hints(t.shape) for t in tensors],
                                                   [t.dtype for t in tensors], [t.device for t in tensors],
                                                   go_shape, go.dtype, go.device, *attrs)


@torch.library.register_fake("twinops::multi_level_roi_align")
def _multi_level_fake(rois, level0, level1, level2, level3, level4, *attrs):
    _fake_check("multi_level_roi_align", rois, (level0, level1, level2, level3, level4), attrs)
    return level0.new_empty((rois.shape[0], level0.shape[1], attrs[0], attrs[1]))


@torch.library.register_fake("twinops::multi_level_roi_align_backward")
def _multi_level_backward_fake(grad_output, rois, level0, level1, level2, level3, level4, *attrs):
    levels = (level0, level1, level2, level3, level4)
    _fake_check("multi_level_roi_align_backward", rois, levels, attrs, grad_output)
    return [t.new_empty(t.shape) for t in levels if t is not None]


# Autograd is registered in C++ (csrc/torch/roi_align/multi_level_roi_align_autograd.cpp).
