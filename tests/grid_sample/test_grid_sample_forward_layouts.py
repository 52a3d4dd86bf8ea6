"""The two layouts of the 4-D CUDA forward (csrc/kernels/grid_sample/grid_sample.cu): blocks of
consecutive output points (forward_kernel, TWINOPS_GRID_SAMPLE_FORWARD=rows) and blocks of point
tiles (forward_tiles_kernel, =tiles) give the same bits for linear and nearest, every padding and
align_corners, float32 / float16 / bfloat16, smooth and random grids, sizes that are not
multiples of the tile, several channel slices, NaN and infinite grid values, strided inputs and
grids (the grid's scalar loads where its pairs are not adjacent); and match the float64
reference. CUDA only."""
import pytest
import torch

import twinops
from twinops.library.grid_sample.bench import make_grid
from twinops.library.grid_sample.reference import TOLERANCES, grid_sample_reference
from twinops.library.grid_sample.strategies import PADDING_MODES
from twinops.testing import random_input

pytestmark = pytest.mark.cuda

DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _forward(x, g, rows, monkeypatch, **kw):
    monkeypatch.setenv("TWINOPS_GRID_SAMPLE_FORWARD", "rows" if rows else "tiles")
    return twinops.grid_sample(x, g, **kw)


def _grid(n, h, w, kind, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return make_grid((n, h, w, 2), kind, gen, "cuda")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("kind", ["smooth", "random"])
def test_tiles_equal_rows(dtype, mode, padding_mode, align_corners, kind, monkeypatch):
    # 37 x 70 outputs: partial tiles in both axes.
    x = random_input((2, 7, 41, 67), dtype, "cuda", seed=1)
    g = _grid(2, 37, 70, kind, seed=2).to(dtype)
    g[0, 3, 5, 0] = float("nan")
    g[1, 10, 40, 1] = float("inf")
    g[1, 20, 33, 0] = -float("inf")
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    got = _forward(x, g, False, monkeypatch, **kw)
    want = _forward(x, g, True, monkeypatch, **kw)
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.nan_to_num(), want.nan_to_num()), (got - want).abs().nan_to_num().max()
    if mode == "nearest":
        return  # a float32 coordinate near a half may round to the other neighbour than float64's
    rtol, atol = TOLERANCES[dtype]
    torch.testing.assert_close(got.cpu().double(), grid_sample_reference(x.cpu(), g.cpu(), **kw), equal_nan=True,
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("layout", ["channels_last", "sliced", "grid_transposed", "grid_planar", "grid_offset"])
def test_tiles_strides(layout, monkeypatch):
    x = random_input((3, 12, 50, 60), torch.float32, "cuda", seed=3)
    g = _grid(3, 45, 64, "smooth", seed=4)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "sliced":
        x = random_input((3, 24, 50, 120), torch.float32, "cuda", seed=3)[:, ::2, :, ::2]
    elif layout == "grid_transposed":
        g = g.transpose(1, 2).contiguous().transpose(1, 2)
    elif layout == "grid_planar":  # x and y in separate planes: stride 45 * 64 between them
        g = g.permute(0, 3, 1, 2).contiguous().permute(0, 2, 3, 1)
    else:  # the pairs start at an odd element: misaligned for one vector load
        g = torch.cat([torch.zeros(1, device="cuda"), g.flatten()])[1:].view(g.shape)
    got = _forward(x, g, False, monkeypatch, mode="bilinear", padding_mode="border", align_corners=False)
    want = _forward(x, g, True, monkeypatch, mode="bilinear", padding_mode="border", align_corners=False)
    assert torch.equal(got, want)


def test_tiles_many_channels(monkeypatch):
    """256 channels (several channel slices), a zoomed-out grid and a first row of tiles that reads
    nothing."""
    x = random_input((1, 256, 96, 96), torch.float16, "cuda", seed=5)
    g = _grid(1, 80, 80, "smooth", seed=6)
    g[:, :, 40:] *= 3.0
    g[:, :8] = 5.0
    for mode in ("bilinear", "nearest"):
        got = _forward(x, g.half(), False, monkeypatch, mode=mode, padding_mode="zeros", align_corners=False)
        want = _forward(x, g.half(), True, monkeypatch, mode=mode, padding_mode="zeros", align_corners=False)
        assert torch.equal(got, want)
        assert (got[:, :, :8] == 0).all()
