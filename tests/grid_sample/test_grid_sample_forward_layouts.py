"""The layouts of the 4-D CUDA forward (grid_sample_tuning.h, ForwardLayout): blocks of
consecutive output points (forward_kernel, TWINOPS_GRID_SAMPLE_FORWARD=rows), blocks of point
tiles (forward_tiles_kernel, =tiles) and channels-last vectors (grid_sample_vec.cu, =vectors)
give the same bits: every mode each covers, every padding and align_corners, float32 / float16 /
bfloat16, smooth and random grids, sizes that are not multiples of a block, several channel
slices or staged groups, NaN and infinite grid values, strided and misaligned inputs and grids
(which fall back where a layout does not apply); and match the float64 reference. CUDA only."""
import pytest
import torch

import twinops
from twinops.library.grid_sample.bench import make_grid
from twinops.library.grid_sample.reference import TOLERANCES, grid_sample_reference
from twinops.library.grid_sample.strategies import PADDING_MODES
from twinops.testing import random_input

pytestmark = pytest.mark.cuda

DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _forward_as(x, g, layout, monkeypatch, **kw):
    monkeypatch.setenv("TWINOPS_GRID_SAMPLE_FORWARD", layout)
    return twinops.grid_sample(x, g, **kw)


def _forward(x, g, rows, monkeypatch, **kw):
    return _forward_as(x, g, "rows" if rows else "tiles", monkeypatch, **kw)


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


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", PADDING_MODES)
@pytest.mark.parametrize("channels", [8, 16, 72, 6])
def test_channel_vectors_equal_rows(dtype, mode, padding_mode, channels, monkeypatch):
    """A channels-last input read as 16-byte vectors over the channels (grid_sample_vec.cu) against
    the row kernel: the same bits. 72 channels: two staged groups (64 + 8); 6 channels fit no
    vector (4 float32 or 8 half lanes), so that case takes the other kernels and must still agree."""
    x = random_input((2, channels, 23, 35), dtype, "cuda", seed=11).contiguous(memory_format=torch.channels_last)
    g = _grid(2, 19, 41, "smooth", seed=12).to(dtype)
    g[0, 0, 0, 0] = float("nan")
    g[1, 5, 7, 1] = float("inf")
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=False)
    got = _forward_as(x, g, "vectors", monkeypatch, **kw)
    want = _forward_as(x, g, "rows", monkeypatch, **kw)
    assert got.is_contiguous()  # the output keeps F.grid_sample's layout
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.nan_to_num(), want.nan_to_num())


@pytest.mark.parametrize("case", ["offset", "sliced_channels", "random_grid", "one_point"])
def test_channel_vectors_layouts(case, monkeypatch):
    """Inputs the vector kernel must refuse (a storage offset that misaligns the vectors, channels
    that are not adjacent) or take at its edges (a random grid, a one-point output)."""
    x = random_input((3, 32, 20, 30), torch.float16, "cuda", seed=13).contiguous(memory_format=torch.channels_last)
    g = _grid(3, 17, 29, "smooth", seed=14).half()
    if case == "offset":
        flat = torch.cat([torch.zeros(1, device="cuda", dtype=x.dtype), x.permute(0, 2, 3, 1).flatten()])
        x = flat[1:].view(3, 20, 30, 32).permute(0, 3, 1, 2)
    elif case == "sliced_channels":
        x = x[:, ::2]
    elif case == "random_grid":
        g = _grid(3, 17, 29, "random", seed=14).half()
    else:
        g = g[:, :1, :1]
    kw = dict(mode="bilinear", padding_mode="border", align_corners=True)
    got = _forward_as(x, g, "vectors", monkeypatch, **kw)
    want = _forward_as(x, g, "rows", monkeypatch, **kw)
    assert torch.equal(got, want)
    rtol, atol = TOLERANCES[torch.float16]
    torch.testing.assert_close(got.cpu().double(), grid_sample_reference(x.cpu(), g.cpu(), **kw), rtol=rtol, atol=atol)
