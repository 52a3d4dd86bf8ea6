"""deform_conv2d's cases for tools/sanitize.py: the forward and the deterministic backward.

Every CUDA dtype; with and without bias and mask; groups and offset_groups; non-square kernels
with asymmetric stride, padding and dilation; offsets far outside the image, NaN and infinite;
NaN and infinite inputs; an empty batch and no output channels; the half types' GEMMs on
mma.sync (the default) and on wmma (TWINOPS_DEFORM_CONV2D_GEMM=tiled) at shapes the mma GEMMs
take, with tails on every axis.
``quick``: one forward and backward (the GEMM tiles' shared memory and barriers, the fixed-point
scatter).
"""
import os
from unittest import mock

import torch

from twinops.library.deform_conv2d import deform_conv2d_op
from twinops.library.deform_conv2d.declaration import _shapes


def _inputs(g, shapes, dtype):
    xs = []
    for i, s in enumerate(shapes):
        if s is None:
            xs.append(None)
            continue
        t = torch.randn(s, device=g.device, generator=g)
        xs.append((t * 3 if i == 1 else t).to(dtype))
    return xs


def _run(xs, kwargs, g) -> None:
    """Forward, then every gradient through the op's backward."""
    leaves = [t.detach().clone().requires_grad_() if t is not None else None for t in xs]
    y = deform_conv2d_op(*leaves, **kwargs)
    if y.numel():
        y.backward(torch.randn(y.shape, device=g.device, generator=g).to(y.dtype))


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs deform_conv2d's cases on g's device (CUDA under the sanitizer); returns how many."""
    if quick:
        shapes, kw = _shapes(2, 4, 9, 11, 6, (3, 3), offset_groups=2, padding=(1, 1))
        _run(_inputs(g, shapes, torch.float32), kw, g)
        return 1
    n = 0
    geometries = (
        _shapes(2, 4, 9, 11, 6, (3, 3), offset_groups=2, padding=(1, 1)),
        _shapes(1, 6, 7, 8, 4, (3, 2), groups=2, offset_groups=3, stride=(2, 1), padding=(0, 2), dilation=(1, 2),
                bias=False),
        _shapes(2, 3, 5, 6, 70, (1, 1), mask=False),  # C_out over one tile
        _shapes(1, 2, 3, 40, 3, (2, 5), stride=(1, 3), padding=(1, 1), mask=False, bias=False),
    )
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for shapes, kw in geometries:
            xs = _inputs(g, shapes, dtype)
            xs[1].view(-1)[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e30], dtype=dtype)
            xs[0].view(-1)[5] = float("inf")
            _run(xs, kw, g)
            n += 1
    for shapes, kw in (_shapes(0, 2, 4, 5, 3, (3, 3), padding=(1, 1)), _shapes(1, 2, 3, 3, 0, (3, 3), padding=(1, 1))):
        _run(_inputs(g, shapes, torch.float32), kw, g)  # empty batch, no output channels
        n += 1
    # mma GEMMs: reductions of 72 and 144 (multiples of 8, not of its step), 2 * 96 = 192 columns
    # (not a multiple of its tile), 48 / 200 outputs (64-row tiles, tails), two groups; 200 outputs
    # over 2 * 80 * 80 columns give 200 blocks of 128-row tiles (the launcher takes those where
    # they fill the multiprocessors) and grad_weight two slices; 9 * 12 positions (not a multiple
    # of 8): the forward on mma, the backward on wmma.
    mma = (_shapes(2, 8, 8, 12, 48, (3, 3), padding=(1, 1)), _shapes(2, 8, 8, 12, 200, (3, 3), padding=(1, 1)),
           _shapes(2, 32, 8, 12, 192, (3, 3), groups=2, padding=(1, 1), bias=False),
           _shapes(2, 8, 80, 80, 200, (3, 3), padding=(1, 1)), _shapes(2, 8, 9, 12, 48, (3, 3), padding=(1, 1)))
    for gemm in ("mma", "tiled"):
        for dtype in (torch.float16, torch.bfloat16):
            for shapes, kw in mma:
                xs = _inputs(g, shapes, dtype)
                xs[0].view(-1)[5] = float("inf")
                with mock.patch.dict(os.environ, {"TWINOPS_DEFORM_CONV2D_GEMM": gemm}):
                    _run(xs, kw, g)
                n += 1
    return n
