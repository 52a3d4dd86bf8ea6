"""roi_align: torchvision.ops.roi_align (plus mmcv's max mode) computed by the twinops kernels.

:func:`roi_align` and :class:`RoIAlign` call the torch op ``torch.ops.twinops.roi_align`` (CPU and
CUDA); its gradient is the op ``twinops::roi_align_backward``, deterministic (the shared
fixed-point scatter on CUDA, a fixed order on the CPU). This module holds what the declaration
(``declaration.py``) cannot express: the boxes' two forms, output_size, devices, and the fake
kernels (autograd is C++'s, the node's ``onnx.reference`` kernel is in ``export.py``).
docs/ops/roi_align.md has the semantics.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple, Union

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_arg, check_tensor, renamed
from .declaration import BOXES, INPUT, ROI_ALIGN

__all__ = ["roi_align", "RoIAlign"]

BoxesArg = Union[Tensor, Sequence[Tensor]]


def output_hw(output_size, who: str) -> Tuple[int, int]:
    """``output_size`` (an int or a pair of ints, torchvision's forms) as (PH, PW), each >= 1."""
    size = (output_size, output_size) if isinstance(output_size, int) and not isinstance(output_size, bool) \
        else output_size
    if not (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(s, int) and not isinstance(s, bool) for s in size)):
        raise TypeError(f"{who}: output_size must be an int or a pair of ints (height, width), got {output_size!r}")
    if size[0] < 1 or size[1] < 1:
        raise ValueError(f"{who}: output_size must be at least 1 in each dim, got {tuple(size)}")
    return int(size[0]), int(size[1])


def rois_of(boxes: BoxesArg, who: str, arg=BOXES) -> Tensor:
    """torchvision's two forms of boxes as one (K, 5) tensor: a (K, 5) tensor as it is, or a list of
    (L_i, 4) tensors (image i's boxes) with the batch index i put in front of each row."""
    if isinstance(boxes, Tensor):
        return boxes
    if not isinstance(boxes, (list, tuple)) or not all(isinstance(b, Tensor) for b in boxes):
        check_tensor(arg, boxes, who)  # the generic "<name> must be a torch.Tensor" message
    if len(boxes) == 0:
        raise ValueError(f"{who}: boxes is an empty list: give a (0, 5) tensor for no rois")
    for i, b in enumerate(boxes):
        if b.dim() != 2 or b.shape[1] != 4:
            raise ValueError(f"{who}: boxes[{i}] must be (L_{i}, 4) as (x1, y1, x2, y2), got shape {tuple(b.shape)}")
        if b.dtype != boxes[0].dtype or b.device != boxes[0].device:
            raise ValueError(f"{who}: boxes[{i}] must have boxes[0]'s dtype and device ({boxes[0].dtype}, "
                             f"{boxes[0].device}), got {b.dtype}, {b.device}")
    cat = torch.cat(list(boxes), dim=0)
    index = torch.cat([torch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return torch.cat([index, cat], dim=1)


def _check(input: Tensor, rois: Tensor, who: str, **kwargs) -> None:
    check_tensor(INPUT, input, who)
    check_tensor(BOXES, rois, who)
    for a in ROI_ALIGN.args:
        check_arg(a, kwargs[a.name], who)
    if isinstance(rois.shape[1], int) and rois.shape[1] != 5:
        raise ValueError(f"{who}: boxes must be (K, 5) as (batch index, x1, y1, x2, y2), got shape "
                         f"{tuple(rois.shape)}")
    if rois.device != input.device:
        raise ValueError(f"{who}: boxes is on {rois.device} but input is on {input.device}; both must be on one device")
    if rois.dtype != input.dtype:
        raise TypeError(f"{who}: boxes must have input's dtype ({str(input.dtype).replace('torch.', '')}), "
                        f"got {rois.dtype}")
    if not kwargs["spatial_scale"] > 0:
        raise ValueError(f"{who}: spatial_scale must be greater than 0, got {kwargs['spatial_scale']}")


def _roi_align(input: Tensor, boxes: BoxesArg, output_size, spatial_scale: float, sampling_ratio: int,
               aligned: bool, pool_mode: str, who: str) -> Tensor:
    rois = rois_of(boxes, who)
    ph, pw = output_hw(output_size, who)
    _check(input, rois, who, spatial_scale=spatial_scale, sampling_ratio=sampling_ratio, aligned=aligned,
           pool_mode=pool_mode)
    try:
        return torch.ops.twinops.roi_align(input, rois, ph, pw, float(spatial_scale), int(sampling_ratio),
                                           int(aligned), pool_mode)
    except RuntimeError as e:
        raise renamed(e, who) from None


def roi_align(input: Tensor, boxes: BoxesArg, output_size: Union[int, Tuple[int, int], List[int]],
              spatial_scale: float = 1.0, sampling_ratio: int = -1, aligned: bool = False,
              pool_mode: str = "avg") -> Tensor:
    """RoIAlign (``torchvision.ops.roi_align``'s signature and results, plus mmcv's max mode).

    Args:
        input: (N, C, H, W) float32 / float64 / float16 / bfloat16 feature map; any strides.
        boxes: (K, 5) tensor of rois (batch index, x1, y1, x2, y2) in image coordinates, input's
            dtype, or a list of N tensors (L_i, 4) of image i's boxes (x1, y1, x2, y2).
        output_size: PH, PW: an int (square) or a pair (height, width), each at least 1.
        spatial_scale: feature-map units per image unit (1 / the map's stride), finite and > 0.
            Default 1.0.
        sampling_ratio: samples per bin and axis; <= 0 (default -1): adaptive,
            ceil(roi height / PH) by ceil(roi width / PW).
        aligned: False (default): the roi is scaled and each side is at least 1; True: the scaled
            roi is shifted by -0.5 (pixel centres), no minimum size.
        pool_mode: "avg" (default; torchvision) the mean of a bin's samples, or "max" (mmcv) the
            largest.

    A roi whose batch index is not in (-1, N) (it is truncated toward 0) or whose coordinates
    are not finite gives NaN outputs and no gradient (torchvision reads out of bounds there).

    Returns:
        (K, C, PH, PW) contiguous tensor of input's dtype. Differentiable in input (deterministic
        backward); the rois get no gradient.
    """
    return _roi_align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned, pool_mode,
                      "twinops.roi_align")


class RoIAlign(torch.nn.Module):
    """Module form of :func:`roi_align` (torchvision.ops.RoIAlign's arguments, plus ``pool_mode``):
    ``forward(input, rois)`` -> (K, C, PH, PW)."""

    def __init__(self, output_size, spatial_scale: float = 1.0, sampling_ratio: int = -1, aligned: bool = False,
                 pool_mode: str = "avg"):
        super().__init__()
        output_hw(output_size, "twinops.RoIAlign")
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned
        self.pool_mode = pool_mode

    def forward(self, input: Tensor, rois: BoxesArg) -> Tensor:
        return _roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned,
                          self.pool_mode, "twinops.RoIAlign")

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned}, pool_mode={self.pool_mode!r}")


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels
# ---------------------------------------------------------------------------------------

def _fake_check(op: str, input, rois, attrs, grad_output=None) -> None:
    """The C++ op's checks under FakeTensorMode (twinops::_roi_align_check), on the shapes' hints."""
    go = grad_output if grad_output is not None else input
    go_shape = size_hints(go.shape)
    if grad_output is not None and len(go_shape) == 4 and rois.dim() == 2 and input.dim() == 4:
        want = [size_hints(rois.shape)[0], size_hints(input.shape)[1], attrs[0], attrs[1]]
        go_shape = [h if isinstance(v, int) else w for v, h, w in zip(grad_output.shape, go_shape, want)]
    torch.ops.twinops._roi_align_check(op, size_hints(input.shape), input.dtype, input.device,
                                       size_hints(rois.shape), rois.dtype, rois.device, go_shape, go.dtype,
                                       go.device, *attrs)


@torch.library.register_fake("twinops::roi_align")
def _roi_align_fake(input, rois, output_height, output_width, spatial_scale, sampling_ratio, aligned, pool_mode):
    attrs = (output_height, output_width, spatial_scale, sampling_ratio, aligned, pool_mode)
    _fake_check("roi_align", input, rois, attrs)
    return input.new_empty((rois.shape[0], input.shape[1], output_height, output_width))


@torch.library.register_fake("twinops::roi_align_backward")
def _roi_align_backward_fake(grad_output, input, rois, output_height, output_width, spatial_scale, sampling_ratio,
                             aligned, pool_mode):
    attrs = (output_height, output_width, spatial_scale, sampling_ratio, aligned, pool_mode)
    _fake_check("roi_align_backward", input, rois, attrs, grad_output)
    return input.new_empty(input.shape)


# Autograd is registered in C++ at the Autograd key (csrc/torch/roi_align/roi_align_autograd.cpp).
