"""ms_deform_attn: multi-scale deformable attention computed by the twinops kernels.

:func:`ms_deform_attn` and :class:`MSDeformAttn` call the torch op ``torch.ops.twinops.ms_deform_attn``
(CPU and CUDA); its gradient is the op ``twinops::ms_deform_attn_backward``, deterministic (the
shared fixed-point scatter for grad_value on CUDA). This module holds what the declaration
(``declaration.py``) cannot express: the checks that relate the inputs, and the fake kernels
(autograd is C++'s, the node's ``onnx.reference`` kernel is in ``export.py``).
docs/ops/ms_deform_attn.md has the semantics.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ... import _ext  # noqa: F401  (registers torch.ops.twinops)
from ..._ext import size_hints
from ...opdef import check_tensor, renamed
from .declaration import INPUTS

__all__ = ["ms_deform_attn", "MSDeformAttn"]

# The names of the dims each input's shape holds, for the messages that relate them.
_DIMS = {"value": ("N", "S", "M", "D"), "spatial_shapes": ("L", None), "level_start_index": ("L",),
         "sampling_locations": ("N", "Lq", "M", "L", "P", None), "attention_weights": ("N", "Lq", "M", "L", "P")}


def _check(tensors, who: str) -> None:
    """The API's checks, in order: each tensor (type, rank, dtype: the declaration's generic
    messages), then what relates them (the C++ op checks the same again, and on the CPU the
    index values)."""
    for arg, t in zip(INPUTS, tensors):
        check_tensor(arg, t, who)
    value, spatial_shapes, level_start_index, locations, weights = tensors
    if spatial_shapes.shape[-1] != 2:
        raise ValueError(f"{who}: spatial_shapes must be (L, 2) as (h, w), got shape {tuple(spatial_shapes.shape)}")
    if locations.shape[-1] != 2:
        raise ValueError(f"{who}: sampling_locations' last dim must be 2 (x, y), got shape "
                         f"{tuple(locations.shape)}")
    by_name = {arg.name: t for arg, t in zip(INPUTS, tensors)}
    seen = {}
    for arg, t in zip(INPUTS, tensors):
        for name, size in zip(_DIMS[arg.name], t.shape):
            if name is None or not isinstance(size, int):
                continue  # SymInts under torch.compile: the C++ check compares their hints
            if name in seen and seen[name][1] != size:
                first, first_size = seen[name]
                raise ValueError(f"{who}: {arg.name}'s {name} ({size}) must equal {first}'s ({first_size}); "
                                 f"shapes {tuple(t.shape)} and {tuple(by_name[first].shape)}")
            seen.setdefault(name, (arg.name, size))
    for arg, t in zip(INPUTS[1:], tensors[1:]):
        if t.device != value.device:
            raise ValueError(f"{who}: {arg.name} is on {t.device} but value is on {value.device}; all inputs must "
                             "be on one device")
    for arg, t in ((INPUTS[3], locations), (INPUTS[4], weights)):
        if t.dtype != value.dtype:
            raise TypeError(f"{who}: {arg.name} must have value's dtype ({str(value.dtype).replace('torch.', '')}), "
                            f"got {t.dtype}")


def ms_deform_attn(value: Tensor, spatial_shapes: Tensor, level_start_index: Tensor, sampling_locations: Tensor,
                   attention_weights: Tensor) -> Tensor:
    """Multi-scale deformable attention (mmcv's ``MultiScaleDeformableAttnFunction``).

    Args:
        value: (N, S, M, D) float32 / float64 / float16 / bfloat16, the L levels' features
            flattened level after level (S = sum of h * w), M heads of D channels; any strides.
        spatial_shapes: (L, 2) int64 or int32, each level's (h, w), both at least 1.
        level_start_index: (L,) int64 or int32, where each level starts in S (the exclusive
            cumulative sum of h * w).
        sampling_locations: (N, Lq, M, L, P, 2), value's dtype: each query's P points per head
            and level as (x, y) normalised to [0, 1] (pixel = x * w - 0.5: bilinear,
            align_corners=False, zero padding, as F.grid_sample). Outside [0, 1] reads zeros.
        attention_weights: (N, Lq, M, L, P), value's dtype: each point's weight (the caller
            applies the softmax).

    All on one device (CPU or CUDA). On the CPU the index values are checked (h, w >= 1, starts
    the cumulative sum, S = sum of h * w); on CUDA they are not read on the host, and a level
    whose (start, h, w) does not fit in S reads nothing and gives NaN (docs/ops/ms_deform_attn.md).

    Returns:
        (N, Lq, M * D) contiguous tensor of value's dtype: for each query and head, the sum over
        levels and points of the weight times the bilinear sample of that head's D channels.
        Differentiable in value, sampling_locations and attention_weights (deterministic backward).
    """
    return _ms_deform_attn((value, spatial_shapes, level_start_index, sampling_locations, attention_weights),
                           "twinops.ms_deform_attn")


def _ms_deform_attn(tensors, who: str) -> Tensor:
    _check(tensors, who)
    try:
        return torch.ops.twinops.ms_deform_attn(*tensors)
    except RuntimeError as e:
        raise renamed(e, who) from None


def heads_layout(value: Tensor, spatial_shapes: Tensor, level_start_index: Tensor, sampling_locations: Tensor,
                 attention_weights: Tensor) -> Tensor:
    """:func:`ms_deform_attn`'s result as (N, Lq, M, D): the output layout of TensorRT's
    ``MultiscaleDeformableAttnPlugin_TRT``, which twinops' drop-in of that name computes."""
    out = ms_deform_attn(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)
    return out.view(out.shape[0], out.shape[1], value.shape[2], value.shape[3])


class MSDeformAttn(torch.nn.Module):
    """Module form of :func:`ms_deform_attn` (no parameters): ``forward(value, spatial_shapes,
    level_start_index, sampling_locations, attention_weights)`` -> (N, Lq, M * D)."""

    def forward(self, value: Tensor, spatial_shapes: Tensor, level_start_index: Tensor, sampling_locations: Tensor,
                attention_weights: Tensor) -> Tensor:
        return _ms_deform_attn((value, spatial_shapes, level_start_index, sampling_locations, attention_weights),
                               "twinops.MSDeformAttn")


# ---------------------------------------------------------------------------------------
# torch.library: fake kernels
# ---------------------------------------------------------------------------------------

def _fake_check(op: str, tensors, grad_output=None) -> None:
    """The C++ op's checks under FakeTensorMode (twinops::_ms_deform_attn_check), on the shapes'
    hints, so meta and fake calls reject what the kernels reject, with the same message."""
    shapes = [size_hints(t.shape) for t in tensors]
    value, locations = shapes[0], shapes[3]
    go = grad_output if grad_output is not None else tensors[0]
    go_shape = size_hints(go.shape)
    if grad_output is not None and len(value) == 4 and len(locations) == 6 and len(go_shape) == 3:
        want = [value[0], locations[1], value[2] * value[3]]
        go_shape = [h if isinstance(v, int) else w for v, h, w in zip(grad_output.shape, go_shape, want)]
    torch.ops.twinops._ms_deform_attn_check(op, shapes, [t.dtype for t in tensors], [t.device for t in tensors],
                                            go_shape, go.dtype, go.device)


@torch.library.register_fake("twinops::ms_deform_attn")
def _ms_deform_attn_fake(value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
    tensors = (value, spatial_shapes, level_start_index, sampling_locations, attention_weights)
    _fake_check("ms_deform_attn", tensors)
    return value.new_empty((value.shape[0], sampling_locations.shape[1], value.shape[2] * value.shape[3]))


@torch.library.register_fake("twinops::ms_deform_attn_backward")
def _ms_deform_attn_backward_fake(grad_output, value, spatial_shapes, level_start_index, sampling_locations,
                                  attention_weights, output_mask):
    tensors = (value, spatial_shapes, level_start_index, sampling_locations, attention_weights)
    _fake_check("ms_deform_attn_backward", tensors, grad_output)
    # a result that was not asked for is an empty (0,) tensor; the others are contiguous
    return tuple(t.new_empty(t.shape) if want else value.new_empty((0,))
                 for t, want in zip((value, sampling_locations, attention_weights), output_mask))


# Autograd is registered in C++ at the Autograd key (csrc/torch/ms_deform_attn/ms_deform_attn_autograd.cpp).
