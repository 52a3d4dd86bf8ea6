"""ms_deform_attn's cases for tools/sanitize.py: the forward and the deterministic backward.

Every CUDA dtype and both index dtypes; levels of 1x1 and 1 x w; locations outside [0, 1],
exactly on 0 and 1, NaN and infinite; NaN and infinite values and weights; channel counts for
both the one-warp-per-head and the vector layouts (TWINOPS_MS_DEFORM_ATTN_FORWARD=vectors: the
cases are too small for the default to pick it); an empty query set;
and level tables that do not fit value (a start past S, a level larger than S, a negative size),
which the kernels must answer with NaN without reading outside value. ``quick``: one forward and
backward (the plane-max kernel's shared memory and barriers).
"""
import os
from unittest import mock

import torch

import twinops


def _inputs(g, n, shapes, m, d, lq, p, dtype, index_dtype):
    s = sum(h * w for h, w in shapes)
    sizes = torch.tensor([h * w for h, w in shapes])
    value = torch.randn(n, s, m, d, device=g.device, generator=g).to(dtype)
    spatial = torch.tensor(shapes, device=g.device, dtype=index_dtype)
    starts = (torch.cumsum(sizes, 0) - sizes).to(device=g.device, dtype=index_dtype)
    loc = (torch.rand(n, lq, m, len(shapes), p, 2, device=g.device, generator=g) * 1.4 - 0.2).to(dtype)
    weights = torch.rand(n, lq, m, len(shapes), p, device=g.device, generator=g).to(dtype)
    return value, spatial, starts, loc, weights


def _run(value, spatial, starts, loc, weights, g, forward=None) -> None:
    """Forward (in layout ``forward``, a value of TWINOPS_MS_DEFORM_ATTN_FORWARD; None: as the
    environment says), then every gradient through the op's backward."""
    leaves = [t.detach().clone().requires_grad_() for t in (value, loc, weights)]
    with mock.patch.dict(os.environ, {"TWINOPS_MS_DEFORM_ATTN_FORWARD": forward} if forward else {}):
        y = twinops.ms_deform_attn(leaves[0], spatial, starts, leaves[1], leaves[2])
    y.backward(torch.randn(y.shape, device=g.device, generator=g).to(y.dtype))


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs ms_deform_attn's cases on g's device (CUDA under the sanitizer); returns how many."""
    if quick:
        _run(*_inputs(g, 2, [(6, 7), (3, 4), (1, 1)], 2, 8, 9, 3, torch.float32, torch.int64), g)
        return 1
    n = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for index_dtype in (torch.int64, torch.int32):
            # D = 5 takes the one-warp-per-head kernels, 8 and 40 the vector forward
            for shapes, d in (([(6, 7), (3, 4), (1, 1)], 5), ([(1, 9)], 8), ([(5, 1), (2, 2)], 40)):
                xs = _inputs(g, 2, shapes, 3, d, 7, 2, dtype, index_dtype)
                xs[3].view(-1)[:8] = torch.tensor([0.0, 1.0, 1.0, 0.0, float("nan"), 0.5, float("inf"), -float("inf")],
                                                  dtype=dtype)
                xs[0].view(-1)[3] = float("inf")
                xs[4].view(-1)[5] = float("nan")
                _run(*xs, g, forward="vectors" if d % 8 == 0 else None)
                n += 1
    value, spatial, starts, loc, weights = _inputs(g, 1, [(4, 4), (2, 2)], 2, 4, 0, 2, torch.float32, torch.int64)
    _run(value, spatial, starts, loc, weights, g)  # no queries
    if g.device.type != "cuda":
        return n + 1  # the CPU checks the table's values and refuses these
    # Level tables that do not fit value (no host check on CUDA): NaN outputs, no read outside.
    value, spatial, starts, loc, weights = _inputs(g, 1, [(4, 4), (2, 2)], 2, 4, 3, 2, torch.float32, torch.int64)
    for bad_shapes, bad_starts in (([[4, 4], [2, 2]], [0, 19]), ([[4, 4], [9, 9]], [0, 16]),
                                   ([[4, -4], [2, 2]], [0, 16]), ([[4, 4], [2, 2]], [-3, 16])):
        s = torch.tensor(bad_shapes, device=g.device)
        i = torch.tensor(bad_starts, device=g.device)
        with torch.no_grad():
            torch.ops.twinops.ms_deform_attn(value, s, i, loc, weights)
        torch.ops.twinops.ms_deform_attn_backward(torch.ones(1, 3, 8, device=g.device), value, s, i, loc, weights,
                                                  [True, True, True])
        n += 2
    return n + 1
