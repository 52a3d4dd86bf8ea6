"""grid_sample's cases for tools/sanitize.py: the CUDA forward and both gradients.

Every mode, padding and align_corners on NCHW, channels_last and strided float32 / float16
inputs with grids reaching outside [-1, 1] and a NaN point; channels-last inputs read as
vectors over the channels; 5-D; bfloat16 and float64 (the 64-bit index path); a grid whose
points crowd onto a few input elements (gather runs longer than its register cache); many
channels over few elements (the gather's channel slices); several batches per sort; an empty
output. ``quick``: the users of shared memory and barriers, two backwards (CUB's radix sort)
and one channels-last forward (the vector kernel's staged output).
"""
import torch

import twinops

MODES_2D = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def _run(x: torch.Tensor, grid: torch.Tensor, g: torch.Generator, **kw) -> None:
    x = x.detach().requires_grad_()
    grid = grid.detach().requires_grad_()
    y = twinops.grid_sample(x, grid, **kw)
    y.backward(torch.randn(y.shape, device=y.device, generator=g).to(y.dtype))


def _grid(shape, g: torch.Generator, dtype, spread: float = 1.3) -> torch.Tensor:
    grid = (torch.rand(shape, device=g.device, generator=g) * 2 - 1) * spread
    grid.view(-1)[1] = float("nan")  # one NaN coordinate: its point reads, and gets, nothing
    return grid.to(dtype)


def cases(g: torch.Generator, quick: bool) -> int:
    """Runs grid_sample's cases on g's device (CUDA under the sanitizer; the CPU in tests); returns how many."""
    if quick:
        x = torch.randn(2, 3, 17, 23, device=g.device, generator=g)
        for mode in ("bilinear", "bicubic"):
            _run(x, _grid((2, 9, 31, 2), g, x.dtype), g, mode=mode, align_corners=False)
        # The vector forward stages its output through shared memory between barriers.
        xv = torch.randn(2, 8, 13, 19, device=g.device, generator=g).contiguous(memory_format=torch.channels_last)
        _run(xv, _grid((2, 11, 37, 2), g, xv.dtype), g, mode="bilinear", align_corners=False)
        return 3
    n = 0
    for dtype in (torch.float32, torch.float16):
        base = torch.randn(2, 3, 17, 23, device=g.device, dtype=dtype, generator=g)
        for x in (base, base.contiguous(memory_format=torch.channels_last), base[:, :, ::2, 1:]):
            grid = _grid((2, 9, 31, 2), g, dtype)
            for mode in MODES_2D:
                for padding in PADDINGS:
                    for align in (False, True):
                        _run(x, grid, g, mode=mode, padding_mode=padding, align_corners=align)
                        n += 1
    # Channels-last inputs whose channels fill 16-byte vectors (the vector forward): two vectors of
    # float32, and 72 float16 channels (two staged groups), every 4-D mode.
    for c, dtype in ((8, torch.float32), (72, torch.float16)):
        x = torch.randn(2, c, 13, 19, device=g.device, dtype=dtype, generator=g)
        x = x.contiguous(memory_format=torch.channels_last)
        for mode in MODES_2D:
            _run(x, _grid((2, 11, 37, 2), g, dtype), g, mode=mode, padding_mode="border", align_corners=False)
            n += 1
    x5 = torch.randn(2, 3, 5, 7, 9, device=g.device, generator=g)
    for mode in ("bilinear", "nearest"):
        for padding in PADDINGS:
            _run(x5, _grid((2, 4, 6, 8, 3), g, x5.dtype), g, mode=mode, padding_mode=padding, align_corners=False)
            n += 1
    for dtype in (torch.bfloat16, torch.float64):
        x = torch.randn(1, 2, 11, 13, device=g.device, generator=g).to(dtype)
        for mode in MODES_2D:
            _run(x, _grid((1, 7, 9, 2), g, dtype), g, mode=mode, align_corners=False)
            n += 1
    # Crowded: 4096 points within one input cell, and clamped far outside with border padding.
    x = torch.randn(1, 2, 8, 8, device=g.device, generator=g)
    crowded = _grid((1, 64, 64, 2), g, torch.float32, spread=0.05)
    for mode in MODES_2D:
        _run(x, crowded, g, mode=mode, align_corners=False)
        _run(x, crowded * 40, g, mode=mode, padding_mode="border", align_corners=True)
        n += 2
    # Many channels over few elements: the gather splits the channels over blockIdx.y.
    _run(torch.randn(1, 512, 4, 4, device=g.device, generator=g), _grid((1, 5, 5, 2), g, torch.float32), g)
    # Several batches per sort (the key's batch field), and an empty output.
    _run(torch.randn(5, 2, 9, 10, device=g.device, generator=g), _grid((5, 6, 7, 2), g, torch.float32), g)
    _run(torch.randn(2, 3, 9, 10, device=g.device, generator=g), torch.zeros(2, 0, 7, 2, device=g.device), g)
    return n + 3
