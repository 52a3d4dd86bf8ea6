"""float64 reference for ``twinops.deform_conv2d`` and its per-dtype tolerances.

:func:`deform_conv2d_reference` is ``torchvision.ops.deform_conv2d`` in float64 on the CPU (its
CPU kernel; torchvision's wheels register it only with a torch of the matching build). Where
torchvision is missing, :func:`deform_conv2d_composite` (bilinear sampling by index arithmetic,
then a matmul, float64, differentiable) stands in; the tests check that both agree.
"""
from __future__ import annotations

from typing import Optional

import torch

from ...testing.tolerances import TOLERANCES as _DEFAULT

# float32: each output sums C_in / groups * kh * kw products of samples whose coordinates carry
# the offsets' float32 rounding times the data's slope; the half types compute in float32 (on
# CUDA's tensor cores a sampled column enters as two values of the type, hi + lo, which keeps
# float32's precision) and round once.
TOLERANCES = {**_DEFAULT, torch.float32: (1e-4, 1e-4)}


def torchvision_ops():
    """``torchvision.ops`` when torchvision is installed and registers its CPU kernels, else None."""
    try:
        import torchvision.ops as tvo

        x = torch.zeros(1, 1, 1, 1, dtype=torch.float64)
        tvo.deform_conv2d(x, torch.zeros(1, 2, 1, 1, dtype=torch.float64), torch.zeros(1, 1, 1, 1, dtype=torch.float64))
        return tvo
    except Exception:  # noqa: BLE001  (not installed, or no kernels for this torch)
        return None


def _pairs(stride, padding, dilation):
    two = lambda v: (int(v), int(v)) if not isinstance(v, (list, tuple)) else (int(v[0]), int(v[1]))  # noqa: E731
    return two(stride), two(padding), two(dilation)


def deform_conv2d_reference(input, offset, weight, bias=None, mask=None, stride=1, padding=0, dilation=1):
    """What the kernels compute, in float64 on the CPU: (N, C_out, H_out, W_out), by torchvision's
    CPU kernel (the composite where torchvision is missing). Arguments as
    :func:`twinops.library.deform_conv2d.deform_conv2d_op`."""
    args = [t.detach().cpu().double() if t is not None else None for t in (input, offset, weight, bias, mask)]
    s, p, d = _pairs(stride, padding, dilation)
    tvo = torchvision_ops()
    if tvo is None:
        return deform_conv2d_composite(*args, stride=s, padding=p, dilation=d)
    x, off, w, b, m = args
    if x.shape[0] == 0:  # torchvision refuses an empty batch
        return x.new_zeros((0, w.shape[0], off.shape[2], off.shape[3]))
    return tvo.deform_conv2d(x, off, w, b, stride=s, padding=p, dilation=d, mask=m)


def _bilinear(plane: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """torchvision's bilinear sample of (N, C, H, W) ``plane`` at (N, C, ...) coordinates: 0 at
    or beyond -1 and the size, corners outside counted as 0, NaN for a NaN coordinate."""
    n, c, h, w = plane.shape
    flat = plane.reshape(n, c, h * w)
    y0, x0 = torch.floor(y), torch.floor(x)
    out = torch.zeros_like(y)
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            wy = 1 - (y - yy).abs()
            wx = 1 - (x - xx).abs()
            inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            idx = (yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1)).nan_to_num(0).long()
            v = torch.gather(flat, 2, idx.reshape(n, c, -1)).reshape(y.shape)
            out = out + torch.where(inside, wy * wx * v, torch.zeros_like(v))
    valid = (y > -1) & (y < h) & (x > -1) & (x < w)
    out = torch.where(valid, out, torch.zeros_like(out))
    return torch.where(y.isnan() | x.isnan(), torch.full_like(out, float("nan")), out)


def deform_conv2d_composite(input, offset, weight, bias: Optional[torch.Tensor] = None,
                            mask: Optional[torch.Tensor] = None, stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    """deform_conv2d from torch ops alone (differentiable; no twinops kernel): the columns by
    :func:`_bilinear`, then a grouped matmul."""
    (sh, sw), (ph, pw), (dh, dw) = _pairs(stride, padding, dilation)
    n, c_in, h, w = input.shape
    c_out, cg, kh, kw = weight.shape
    if n == 0 or c_out == 0:
        return input.new_zeros((n, c_out, offset.shape[2], offset.shape[3]))
    groups, kk = c_in // cg, kh * kw
    ho, wo = offset.shape[2], offset.shape[3]
    og = offset.shape[1] // (2 * kk)
    off = offset.reshape(n, og, kk, 2, ho, wo)
    ii = torch.arange(kh, dtype=input.dtype).repeat_interleave(kw).reshape(kk, 1, 1)
    jj = torch.arange(kw, dtype=input.dtype).repeat(kh).reshape(kk, 1, 1)
    oy = torch.arange(ho, dtype=input.dtype).reshape(1, ho, 1)
    ox = torch.arange(wo, dtype=input.dtype).reshape(1, 1, wo)
    y = (oy * sh - ph + ii * dh) + off[:, :, :, 0]  # (N, og, kk, ho, wo)
    x = (ox * sw - pw + jj * dw) + off[:, :, :, 1]
    per = c_in // og
    y = y.repeat_interleave(per, dim=1)  # (N, C_in, kk, ho, wo)
    x = x.repeat_interleave(per, dim=1)
    cols = _bilinear(input, y.reshape(n, c_in, -1), x.reshape(n, c_in, -1)).reshape(n, c_in, kk, ho, wo)
    if mask is not None:
        cols = cols * mask.reshape(n, og, kk, ho, wo).repeat_interleave(per, dim=1)
    cols = cols.reshape(n, groups, cg * kk, ho * wo)
    out = torch.matmul(weight.reshape(groups, c_out // groups, cg * kk), cols)  # (N, groups, C_out/g, P)
    out = out.reshape(n, c_out, ho, wo)
    return out + bias.reshape(1, -1, 1, 1) if bias is not None else out
