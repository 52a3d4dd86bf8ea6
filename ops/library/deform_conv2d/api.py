"""deform_conv2d: deformable convolution (DCNv1 / DCNv2) computed by the twinops kernels.

:func:`deform_conv2d` and :class:`DeformConv2d` have torchvision.ops' signatures and results;
:func:`deform_conv2d_op` and :class:`DeformConv2dOp` are the same op with the tensors first (the
node's input order), which the toolkit's generic checks, exporters and plugin tests call. All call
the torch op ``torch.ops.twinops.deform_conv2d`` (CPU and CUDA); its gradient is the op
``twinops::deform_conv2d_backward``, deterministic. This module holds what the declaration
(``declaration.py``) cannot express: the (H, W) pair arguments, the checks that relate the inputs,
the drop-in layouts and the fake kernels (autograd is C++'s, the node's ``onnx.reference`` kernel
is in ``export.py``). docs/ops/deform_conv2d.md has the semantics.
"""
from __future__ import annotations

import math
import numbers
from typing import Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_tensor, renamed, type_name
from .declaration import INPUTS

__all__ = ["deform_conv2d", "DeformConv2d", "deform_conv2d_op", "DeformConv2dOp"]

Pair = Union[int, Tuple[int, int], Sequence[int]]


def _pair(value, name: str, who: str) -> list:
    """An int or an (H, W) pair of ints as ``[h, w]``; TypeError / ValueError naming ``name``."""
    if isinstance(value, (numbers.Integral, torch.SymInt)) and not isinstance(value, bool):
        return [value, value]
    if isinstance(value, (tuple, list, torch.Size)):
        if len(value) != 2:
            raise ValueError(f"{who}: {name} must be an int or an (H, W) pair, got {len(value)} values {tuple(value)}")
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (numbers.Integral, torch.SymInt)):
                raise TypeError(f"{who}: {name} must hold ints, got {type_name(v)} in {tuple(value)}")
        return [value[0], value[1]]
    raise TypeError(f"{who}: {name} must be an int or an (H, W) pair of ints, got {type_name(value)}")


def _check(tensors, who: str) -> None:
    """The API's checks, in order: each tensor given (type, rank, dtype: the declaration's generic
    messages), then one device and one dtype (the C++ op checks the shapes)."""
    for arg, t in zip(INPUTS, tensors):
        if t is not None or not arg.optional:
            check_tensor(arg, t, who)
    x = tensors[0]
    for arg, t in zip(INPUTS[1:], tensors[1:]):
        if t is None:
            continue
        if t.device != x.device:
            raise ValueError(f"{who}: {arg.name} is on {t.device} but input is on {x.device}; all inputs must be on "
                             "one device")
        if t.dtype != x.dtype:
            raise TypeError(f"{who}: {arg.name} must have input's dtype ({str(x.dtype).replace('torch.', '')}), got "
                            f"{t.dtype}")


def _call(tensors, stride, padding, dilation, who: str) -> Tensor:
    _check(tensors, who)
    if tensors[3] is None and tensors[4] is not None:
        # A node lists inputs up to its last one given: a mask without a bias gets a zero bias
        # (the same sums: x + 0 is x), so every exported graph has a spelling TensorRT reads.
        tensors = (*tensors[:3], tensors[2].new_zeros(tensors[2].shape[0]), tensors[4])
    args = (_pair(stride, "stride", who), _pair(padding, "padding", who), _pair(dilation, "dilation", who))
    try:
        return torch.ops.twinops.deform_conv2d(*tensors, *args)
    except RuntimeError as e:
        raise renamed(e, who) from None


def deform_conv2d(input: Tensor, offset: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Pair = 1,
                  padding: Pair = 0, dilation: Pair = 1, mask: Optional[Tensor] = None) -> Tensor:
    """Deformable convolution: ``torchvision.ops.deform_conv2d``'s signature and results.

    Args:
        input: (N, C_in, H, W) float32 / float64 / float16 / bfloat16 (float64 on the CPU only);
            any strides (a non-contiguous tensor is copied).
        offset: (N, 2 * offset_groups * kh * kw, H_out, W_out), input's dtype: for each offset
            group and kernel tap (i, j) (row-major), the (dy, dx) added to the sampling point
            (oy * stride_h - pad_h + i * dil_h, ox * stride_w - pad_w + j * dil_w).
        weight: (C_out, C_in / groups, kh, kw), input's dtype; groups = C_in / weight.shape[1].
        bias: (C_out,) or None (default).
        stride, padding, dilation: an int or an (H, W) pair (defaults 1, 0, 1); padding adds zeros
            on both sides. H_out and W_out follow the convolution arithmetic and must be offset's.
        mask: (N, offset_groups * kh * kw, H_out, W_out), input's dtype: each sample's modulation
            (DCNv2), or None (default; DCNv1).

    Samples are bilinear with zeros outside (torchvision's rule: a point at or beyond -1 or the
    size reads nothing); offset_groups = offset.shape[1] / (2 * kh * kw) divides C_in.

    Returns:
        (N, C_out, H_out, W_out) contiguous, input's dtype; sums in float32 (float64 for float64).
        Differentiable in input, offset, weight, bias and mask (deterministic backward).
    """
    return _call((input, offset, weight, bias, mask), stride, padding, dilation, "twinops.deform_conv2d")


def deform_conv2d_op(input: Tensor, offset: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     mask: Optional[Tensor] = None, stride: Pair = 1, padding: Pair = 0, dilation: Pair = 1) -> Tensor:
    """:func:`deform_conv2d` with the tensors first, in the node's input order (input, offset,
    weight, bias, mask); the same defaults and result."""
    return _call((input, offset, weight, bias, mask), stride, padding, dilation,
                 "twinops.library.deform_conv2d.deform_conv2d_op")


def mmcv_modulated_layout(input: Tensor, offset: Tensor, mask: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                          **kwargs) -> Tensor:
    """What MMDeploy's ``MMCVModulatedDeformConv2d`` node computes from its inputs (input, offset,
    mask, weight, bias?): :func:`deform_conv2d` (the drop-in plugin of that name)."""
    return deform_conv2d(input, offset, weight, bias, mask=mask, **kwargs)


def onnx_layout(input: Tensor, weight: Tensor, offset: Tensor, bias: Optional[Tensor] = None,
                mask: Optional[Tensor] = None, **kwargs) -> Tensor:
    """What an ONNX ``DeformConv`` node computes from its inputs (X, W, offset, B?, mask?):
    :func:`deform_conv2d` (the ``DeformConv`` plugin creator)."""
    return deform_conv2d(input, offset, weight, bias, mask=mask, **kwargs)


class DeformConv2d(torch.nn.Module):
    """``torchvision.ops.DeformConv2d``: a deformable convolution holding its weight and bias.

    ``DeformConv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
    groups=1, bias=True)``; ``forward(input, offset, mask=None)`` ->
    :func:`deform_conv2d` (N, out_channels, H_out, W_out). Parameters are initialised as
    torchvision's (Kaiming-uniform weight, uniform bias).
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Pair, stride: Pair = 1, padding: Pair = 0,
                 dilation: Pair = 1, groups: int = 1, bias: bool = True):
        super().__init__()
        who = "twinops.DeformConv2d"
        if in_channels % groups != 0:
            raise ValueError(f"{who}: in_channels ({in_channels}) must be a multiple of groups ({groups})")
        if out_channels % groups != 0:
            raise ValueError(f"{who}: out_channels ({out_channels}) must be a multiple of groups ({groups})")
        kh, kw = _pair(kernel_size, "kernel_size", who)
        self.stride, self.padding = _pair(stride, "stride", who), _pair(padding, "padding", who)
        self.dilation, self.groups = _pair(dilation, "dilation", who), groups
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, (kh, kw)
        self.weight = torch.nn.Parameter(torch.empty(out_channels, in_channels // groups, kh, kw))
        self.bias = torch.nn.Parameter(torch.empty(out_channels)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * self.weight.shape[2] * self.weight.shape[3]
            bound = 1 / math.sqrt(fan_in)
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor, offset: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        return _call((input, offset, self.weight, self.bias, mask), self.stride, self.padding, self.dilation,
                     "twinops.DeformConv2d")


class DeformConv2dOp(torch.nn.Module):
    """Module form of :func:`deform_conv2d_op` (no parameters): ``DeformConv2dOp(stride=1,
    padding=0, dilation=1)``, ``forward(input, offset, weight, bias=None, mask=None)``."""

    def __init__(self, stride: Pair = 1, padding: Pair = 0, dilation: Pair = 1):
        super().__init__()
        self.stride, self.padding, self.dilation = stride, padding, dilation

    def forward(self, input: Tensor, offset: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                mask: Optional[Tensor] = None) -> Tensor:
        return _call((input, offset, weight, bias, mask), self.stride, self.padding, self.dilation,
                     "twinops.library.deform_conv2d.DeformConv2dOp")


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels
# ---------------------------------------------------------------------------------------

def _fake_check(op: str, tensors, stride, padding, dilation, grad_output=None) -> None:
    """The C++ op's checks under FakeTensorMode (twinops::_deform_conv2d_check), on the shapes'
    hints, so meta and fake calls reject what the kernels reject, with the same message."""
    x = tensors[0]
    present = [t is not None for t in tensors]
    shapes = [size_hints(t.shape) if t is not None else [] for t in tensors]
    dtypes = [t.dtype if t is not None else x.dtype for t in tensors]
    devices = [t.device if t is not None else x.device for t in tensors]
    go = grad_output if grad_output is not None else x
    torch.ops.twinops._deform_conv2d_check(op, shapes, dtypes, devices, present, size_hints(stride),
                                           size_hints(padding), size_hints(dilation), size_hints(go.shape), go.dtype,
                                           go.device)


@torch.library.register_fake("twinops::deform_conv2d")
def _deform_conv2d_fake(input, offset, weight, bias, mask, stride, padding, dilation):
    _fake_check("deform_conv2d", (input, offset, weight, bias, mask), stride, padding, dilation)
    return input.new_empty((input.shape[0], weight.shape[0], offset.shape[2], offset.shape[3]))


@torch.library.register_fake("twinops::deform_conv2d_backward")
def _deform_conv2d_backward_fake(grad_output, input, offset, weight, bias, mask, stride, padding, dilation,
                                 output_mask):
    tensors = (input, offset, weight, bias, mask)
    _fake_check("deform_conv2d_backward", tensors, stride, padding, dilation, grad_output)
    # a result that was not asked for (or of an absent input) is an empty (0,) tensor
    return tuple(t.new_empty(t.shape) if want and t is not None else input.new_empty((0,))
                 for t, want in zip(tensors, output_mask))


# Autograd is registered in C++ at the Autograd key (csrc/torch/deform_conv2d/deform_conv2d_autograd.cpp).
