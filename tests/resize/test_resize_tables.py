"""The resize tables' contract: the host computes the workspace widths exactly (no margin), so
the device must build the very same tables. tests/resize/resize_tables_parity.cu builds one axis's table
with resize_axis_entry on the host and on the device (compiled here with nvcc, as the real
build compiles it); the tests check that

* the host's widths hold every window and inverse row, and are no wider than needed
  (runs wherever nvcc is, no GPU: CI);
* the device's tables are bitwise the host's (needs a GPU);
* that comparison can fail: with the products free to fuse into FMAs again
  (-DTWIN_TEST_CONTRACT) the tables differ (needs a GPU).
"""
import ctypes
import os
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import build_tools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WIDTHS = (1, 2, 4, 8, 10, 12, 16)  # pad_table_widths
NEAREST, LINEAR, CUBIC, AREA = range(4)
HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_CROP = 0, 2, 3, 5


def _arch():
    import torch

    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return "sm_90"


def _build(tmp_dir, contract):
    nvcc = build_tools.nvcc()
    if nvcc is None:
        pytest.skip("needs nvcc (set CUDA_HOME) to build tests/resize/resize_tables_parity.cu")
    out = os.path.join(tmp_dir, f"libtables_parity{'_contract' if contract else ''}.so")
    cmd = [nvcc, "-O3", "-std=c++17", "-shared", f"-arch={_arch()}", "-Xcompiler", "-fPIC,-ffp-contract=off",
           "-I", os.path.join(ROOT, "csrc", "kernels"), os.path.join(ROOT, "tests", "resize", "resize_tables_parity.cu"),
           os.path.join(ROOT, "csrc", "kernels", "resize", "resize_host.cpp"), "-o", out]
    if contract:
        cmd.insert(1, "-DTWIN_TEST_CONTRACT")
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    lib = ctypes.CDLL(out)
    lib.twin_tables.restype = ctypes.c_int
    lib.twin_tables.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.twin_widths.restype = ctypes.c_int
    lib.twin_widths.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    return lib


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return _build(str(tmp_path_factory.mktemp("tables")), contract=False)


class Table:
    """One axis's table: first[out] and weight[out, taps] (float32 or float64 opmath)."""

    def __init__(self, lib, cfg, taps, dbl, on_device):
        out = int(cfg[1])
        self.first = np.full(out, -7, np.int32)
        self.weight = np.full((out, taps), np.nan, np.float64 if dbl else np.float32)
        err = ctypes.create_string_buffer(256)
        c = np.asarray(cfg, np.float64)
        rc = lib.twin_tables(c.ctypes.data, taps, int(dbl), int(on_device), self.first.ctypes.data,
                             self.weight.ctypes.data, err, len(err))
        assert rc == 0, err.value.decode()

    def bits(self):
        return self.first.tobytes() + self.weight.tobytes()


def widths(lib, cfg, dbl):
    w = np.zeros(3, np.int32)
    assert lib.twin_widths(np.asarray(cfg, np.float64).ctypes.data, int(dbl), w.ctypes.data) == 0
    return int(w[0]), int(w[1]), int(w[2])


def pad(width):
    return next((w for w in WIDTHS if width <= w), width)


@st.composite
def axis_configs(draw, max_size=600):
    """[in, out, scale, roi_start, roi_end, mode, coord, nearest, cubic_a, exclude, antialias, pytorch]."""
    pytorch = draw(st.booleans())
    mode = draw(st.sampled_from([NEAREST, LINEAR, CUBIC, AREA]))
    antialias = mode in (LINEAR, CUBIC) and draw(st.booleans())
    coord = draw(st.sampled_from([HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC] if pytorch else range(6)))
    size_in = draw(st.integers(1, max_size))
    size_out = draw(st.integers(1, max_size))
    scale = draw(st.one_of(st.just(0.0), st.floats(0.05, 8.0)))
    roi = sorted(draw(st.lists(st.floats(0.0, 1.0, width=32), min_size=2, max_size=2))) if coord == TF_CROP else [0, 1]
    if draw(st.booleans()):
        roi = roi[::-1]  # a flipping crop
    cubic_a = draw(st.sampled_from([-0.75, -0.5])) if draw(st.booleans()) else draw(st.floats(-1.0, 0.0, width=32))
    return [size_in, size_out, scale, roi[0], roi[1], mode, coord, draw(st.integers(0, 3)), cubic_a,
            int(draw(st.booleans())), int(antialias), int(pytorch)]


# Axes the benchmark and the tests use most, where a wrong width would cost or break most.
COMMON = [[i, o, 0.0, 0, 1, m, c, 0, -0.5 if aa and p else -0.75, 0, aa, p]
          for i, o in [(256, 512), (256, 128), (1080, 2160), (1920, 960), (37, 301), (301, 37), (7, 5)]
          for m, aa in [(NEAREST, 0), (LINEAR, 0), (CUBIC, 0), (LINEAR, 1), (CUBIC, 1)]
          for p, c in [(1, HALF_PIXEL), (1, ALIGN_CORNERS), (0, HALF_PIXEL), (0, ASYMMETRIC)]]


def check_widths(lib, cfg):
    """The layout's widths hold the host table's windows and inverse rows, with no margin."""
    for dbl in (False, True):
        taps, inv_taps, bound = widths(lib, cfg, dbl)
        assert taps <= bound, f"forward width {taps} exceeds the formula bound {bound}"
        t = Table(lib, cfg, taps, dbl, on_device=False)
        assert not np.isnan(t.weight).any(), f"a window is wider than the forward width {taps}"
        size_in, size_out = int(cfg[0]), int(cfg[1])
        lo = np.full(size_in, size_out, np.int64)
        hi = np.full(size_in, -1, np.int64)
        for d in np.flatnonzero(t.first >= 0):
            idx = np.minimum(t.first[d] + np.flatnonzero(t.weight[d] != 0), size_in - 1)
            np.minimum.at(lo, idx, d)
            np.maximum.at(hi, idx, d)
        widest = int(np.max(np.where(hi >= lo, hi - lo + 1, 1)))
        assert widest <= inv_taps, f"an input is read by {widest} outputs, the inverse width is {inv_taps}"
        assert pad(widest) == inv_taps, f"inverse width {inv_taps} for rows of at most {widest}: a margin"


@pytest.mark.parametrize("cfg", COMMON, ids=lambda c: f"{c[0]}to{c[1]}-m{c[5]}-aa{c[10]}-pt{c[11]}-c{c[6]}")
def test_widths_are_exact_common(lib, cfg):
    check_widths(lib, cfg)


@settings(max_examples=150, deadline=None)
@given(cfg=axis_configs())
def test_widths_are_exact(lib, cfg):
    check_widths(lib, cfg)


def test_antialias_widths_are_the_windows(lib):
    # ATen's window bound ceil(support) * 2 + 3 is 7 taps for any upscale (padded to 8) and
    # 11 at 0.5x (padded to 12); the windows built have 4 and 8.
    for size_in, size_out, expect in [(256, 512, 4), (256, 128, 8), (1080, 2160, 4), (1920, 960, 8)]:
        cfg = [size_in, size_out, 0.0, 0, 1, CUBIC, HALF_PIXEL, 0, -0.5, 0, 1, 1]
        assert widths(lib, cfg, False)[0] == expect


def device_matches_host(lib, cfg):
    for dbl in (False, True):
        taps = widths(lib, cfg, dbl)[0]
        host = Table(lib, cfg, taps, dbl, on_device=False)
        dev = Table(lib, cfg, taps, dbl, on_device=True)
        if host.bits() != dev.bits():
            return False
    return True


@pytest.mark.cuda
@pytest.mark.parametrize("cfg", COMMON, ids=lambda c: f"{c[0]}to{c[1]}-m{c[5]}-aa{c[10]}-pt{c[11]}-c{c[6]}")
def test_device_tables_are_the_host_tables_common(lib, cfg):
    assert device_matches_host(lib, cfg)


@pytest.mark.cuda
@settings(max_examples=300, deadline=None)
@given(cfg=axis_configs(max_size=4000))
def test_device_tables_are_the_host_tables(lib, cfg):
    assert device_matches_host(lib, cfg)


@pytest.mark.cuda
def test_parity_check_sees_contraction(tmp_path):
    # The negative control: with mul_rn a plain product, nvcc fuses the table arithmetic into
    # FMAs, and some common bicubic / bilinear tables then differ from the host's.
    fused = _build(str(tmp_path), contract=True)
    differing = [c for c in COMMON if c[5] in (LINEAR, CUBIC) and not device_matches_host(fused, c)]
    assert differing, "no table changed with FMA contraction: the parity tests would not see it"
