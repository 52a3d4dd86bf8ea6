"""Host rules of the CUDA launchers, checked without a GPU (tests/resize/resize_host_rules.cpp, built with
the host compiler):

* nearest_ratio: which F.interpolate nearest resizes take replicate_kernel (forward
  upscales) and pick_kernel (backward of downscales). Both kernels assume output d reads
  input d / s, or d s + o; the check runs pytorch_nearest_index (the arithmetic of the
  tables and of ATen) over every output of many axes;
* ring_grid: the ring kernels' grid, one wave of blocks, as measured on the H200;
* large_upscaling_tiles: where the upscaling staged tiles take the larger tiles of two
  blocks per SM, as measured on the H200.
"""
import ctypes
import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC = 0, 2, 3  # nearest-exact, (not nearest), nearest


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("needs a C++ compiler (c++, g++ or clang++) to build tests/resize/resize_host_rules.cpp")
    out = str(tmp_path_factory.mktemp("host_rules") / "libhost_rules.so")
    subprocess.run([cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-I", os.path.join(ROOT, "csrc", "kernels"),
                    os.path.join(ROOT, "tests", "resize", "resize_host_rules.cpp"), "-o", out], check=True, capture_output=True,
                   text=True)
    lib = ctypes.CDLL(out)
    i64, dbl = ctypes.c_int64, ctypes.c_double
    lib.twin_nearest_ratio.restype = ctypes.c_int
    lib.twin_nearest_ratio.argtypes = [i64, i64, dbl, ctypes.c_int, ctypes.c_int]
    lib.twin_ratio_mismatches.restype = i64
    lib.twin_ratio_mismatches.argtypes = [i64, i64, dbl, ctypes.c_int, ctypes.c_int]
    lib.twin_ring_grid.restype = None
    lib.twin_ring_grid.argtypes = [i64, i64, i64, i64, ctypes.c_int, dbl, ctypes.c_int, ctypes.POINTER(i64)]
    lib.twin_large_upscaling_tiles.restype = ctypes.c_int
    lib.twin_large_upscaling_tiles.argtypes = [i64, i64, i64, i64, i64]
    return lib


@pytest.mark.parametrize("opmath", [0, 1], ids=["float", "double"])
@pytest.mark.parametrize("size_in, size_out, scale, coord, ratio", [
    (49, 98, 0.0, ASYMMETRIC, 2),  # a size: the step is in / out
    (49, 98, 2.0, ASYMMETRIC, 2),  # scale_factor=2
    (49, 98, 0.0, HALF_PIXEL, 2),
    (1, 8, 0.0, ASYMMETRIC, 8),
    (7, 7, 0.0, ASYMMETRIC, 1),
    (98, 49, 0.0, ASYMMETRIC, -2),
    (98, 49, 0.5, HALF_PIXEL, -2),
    (96, 12, 0.0, HALF_PIXEL, -8),
    (2 ** 21, 2 ** 22, 0.0, ASYMMETRIC, 2),
    (49, 147, 0.0, ASYMMETRIC, 0),  # 3x
    (96, 6, 0.0, ASYMMETRIC, 0),  # 1/16
    (49, 98, 2.0000001, ASYMMETRIC, 0),  # out = 2 in, but the step 1 / 2.0000001 rounds below 1/2
    (49, 98, 1.9, ASYMMETRIC, 0),  # a scale factor that is not out / in
    (49, 98, 0.0, ALIGN_CORNERS, 0),
    (2 ** 22, 2 ** 23, 0.0, ASYMMETRIC, 0),  # (d + 0.5) rf no longer exact
])
def test_nearest_ratio(lib, size_in, size_out, scale, coord, ratio, opmath):
    assert lib.twin_nearest_ratio(size_in, size_out, scale, coord, opmath) == ratio


def _axes(max_len=160):
    for s in (1, 2, 4, 8):
        for n in range(1, max_len):
            for coord in (HALF_PIXEL, ASYMMETRIC):
                yield n, s * n, 0.0, coord  # upscale, a size
                yield n, s * n, float(s), coord  # upscale, scale_factor=s
                yield s * n, n, 0.0, coord  # downscale, a size
                yield s * n, n, 1.0 / s, coord  # downscale, scale_factor=1/s


@pytest.mark.parametrize("opmath", [0, 1], ids=["float", "double"])
def test_nearest_ratio_holds_for_every_output(lib, opmath):
    # Every power-of-two axis up to 160 (and 8 x 160) long, both coordinate modes, sizes and
    # scale factors: the ratio is found, and no output's input differs from the kernels'.
    checked = 0
    for size_in, size_out, scale, coord in _axes():
        bad = lib.twin_ratio_mismatches(size_in, size_out, scale, coord, opmath)
        assert bad == 0, (size_in, size_out, scale, coord, bad)
        checked += 1
    assert checked == 4 * 159 * 2 * 4


@pytest.mark.parametrize("size_in, size_out, coord", [
    (2 ** 22 - 1, 2 ** 23 - 2, ASYMMETRIC), (2 ** 22 - 1, 2 ** 23 - 2, HALF_PIXEL),
    (8 * (2 ** 20 - 1), 2 ** 20 - 1, HALF_PIXEL), (2 ** 20 - 1, 8 * (2 ** 20 - 1), ASYMMETRIC),
])
def test_nearest_ratio_holds_at_the_length_limit(lib, size_in, size_out, coord):
    # The longest axes the rule accepts (below 2^23), every output.
    assert lib.twin_ratio_mismatches(size_in, size_out, 0.0, coord, 0) == 0


def ring_grid(lib, rows, gx, planes, resident, r_max, prologue, warps=8):
    out = (ctypes.c_int64 * 3)()
    lib.twin_ring_grid(rows, gx, planes, resident, r_max, prologue, warps, out)
    return tuple(out)


@pytest.mark.parametrize("args, grid", [
    # (8, 64, 256, 256): the grids before ring_grid (R = r_max, one wave looping over planes).
    ((128, 1, 512, 264, 16, 2.4), (16, 1, 264)),  # halving, bicubic-antialias float16 0.5x
    ((128, 2, 512, 396, 16, 0.0), (16, 1, 198)),  # halving, bilinear float32 0.5x
    # halving, bicubic-antialias float32 0.5x: blocks of 4 warps, 3 per SM (HalvingBlock).
    ((128, 2, 512, 396, 16, 2.4, 4), (11, 3, 66)),
    ((256, 2, 512, 264, 64, 0.8), (32, 1, 132)),  # doubling, bilinear float16 2x
    # (1, 3, 1080, 1920): measured 21.7 -> 16.3 us and 26.3 -> 24.0 us against the old grids.
    ((540, 8, 3, 264, 16, 2.4), (7, 10, 3)),  # halving, bicubic-antialias float16 0.5x
    ((1080, 15, 3, 264, 64, 0.8), (8, 17, 1)),  # doubling, bilinear float16 2x
    # No wave holds one plane's blocks: R = r_max, every block loops over the planes.
    ((4320, 60, 2, 264, 64, 0.8), (64, 9, 1)),
    # Fewer rows than a block's warps: R = 2.
    ((5, 1, 1, 264, 16, 0.0), (2, 1, 1)),
])
def test_ring_grid(lib, args, grid):
    assert ring_grid(lib, *args) == grid


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(1, 70000), gx=st.integers(1, 300), planes=st.integers(1, 200000),
       resident=st.integers(1, 2000), r_max=st.sampled_from([16, 64]), prologue=st.sampled_from([0.0, 0.8, 2.4]),
       warps=st.sampled_from([4, 8]))
def test_ring_grid_covers_every_row_in_one_wave(lib, rows, gx, planes, resident, r_max, prologue, warps):
    r, gy, gz = ring_grid(lib, rows, gx, planes, resident, r_max, prologue, warps)
    assert 2 <= r <= r_max and gy == -(-rows // (warps * r)) and gy * warps * r >= rows
    assert 1 <= gz <= min(planes, 65535)
    r_top = max(2, min(r_max, -(-rows // warps)))
    if gx * -(-rows // (warps * r_top)) <= resident:
        assert gx * gy * gz <= resident
    else:
        assert (r, gz) == (r_top, 1)


def _tiles(out_h, out_w, th):
    return -(-out_w // 128) * -(-out_h // th)


# Upscaling outputs (H, W) and planes with what the harness measured on the H200 (128x32
# tiles at 3 blocks per SM, 396 resident, against 128x64 tiles at 2, 264 resident).
@pytest.mark.parametrize("out_h, out_w, planes, large", [
    (2160, 3840, 3, True),  # bicubic float32 2x at (1, 3, 1080, 1920): 57.6 -> 47.1 us
    (4320, 7680, 3, True),  # at (1, 3, 2160, 3840): 193 -> 157
    (1080, 1920, 48, True),  # at (1, 48, 540, 960): 187 -> 153
    (2160, 3840, 12, True),  # at (4, 3, 1080, 1920): 161 -> 150
    (1440, 2560, 3, True),  # at (1, 3, 720, 1280): 31.7 -> 29.5
    (1620, 2880, 3, False),  # bilinear float32 1.5x at (1, 3, 1080, 1920): 36.0 -> 39.1, 3 waves either way
    (512, 512, 512, False),  # (8, 64, 256, 256): 64 tiles per plane, blocks get plane slots; 198 -> 203
    (256, 256, 64, False),  # (1, 64, 128, 128): 16.9 -> 18.2
])
def test_large_upscaling_tiles(lib, out_h, out_w, planes, large):
    small_tiles, large_tiles = _tiles(out_h, out_w, 32), _tiles(out_h, out_w, 64)
    assert lib.twin_large_upscaling_tiles(small_tiles, 396, large_tiles, 264, planes) == large


@settings(max_examples=300, deadline=None)
@given(small=st.integers(1, 10 ** 6), resident=st.integers(1, 2000), planes=st.integers(1, 10 ** 5))
def test_large_upscaling_tiles_only_when_a_plane_fills_the_device(lib, small, resident, planes):
    # With fewer tiles per plane than resident blocks, launch_staged gives blocks plane slots,
    # where the small tiles were faster: never the large ones there.
    large_tiles, resident_large = -(-small // 2), max(1, resident * 2 // 3)
    got = lib.twin_large_upscaling_tiles(small, resident, large_tiles, resident_large, planes)
    if small < resident:
        assert got == 0
    # Never more waves of the large tiles; as many only for one plane (a large tile's wave
    # then costs less than a small one's: one start per tile, where starts dominate).
    waves_small, waves_large = -(-small // resident), -(-large_tiles // resident_large)
    if got:
        assert waves_large < waves_small or (waves_large == waves_small and planes == 1)
