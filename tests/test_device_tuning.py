"""The kernels' host tuning rules as functions of the device's properties, checked without a GPU
(csrc/kernels/device_props.h and each op's <op>_tuning.h, built with the host compiler into a
small library driven through ctypes):

* on the device the constants were fitted on (the H200, ``kFittedDevice``) the rules give the
  values measured there: the staged tiles' caps and budgets, the larger upscaling tiles' cost
  model, the channel slices of the fill factors;
* on any other device the conservative rule: caps scaled to its shared memory and never above
  a block's share of it, the larger upscaling tiles never, the fill factors in its own waves;
* a failing attribute query is returned, not cached, and never aborts; with the CUDA runtime and
  no GPU the current device's query fails the same way;
* __launch_bounds__' minimum blocks (arch_min_blocks) per compiled architecture.
"""
import ctypes
import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import build_tools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(ROOT, "csrc")
KB = 1024

# DeviceProps' fields in order: compute capability major and minor, SMs, threads per SM,
# registers per SM, shared memory per SM, opt-in per block and reserved per block (bytes).
H200 = (9, 0, 132, 2048, 65536, 228 * KB, 227 * KB, 1 * KB)
H100_PCIE = (9, 0, 114, 2048, 65536, 228 * KB, 227 * KB, 1 * KB)  # the same SM, fewer of them
UNKNOWN = (8, 6, 84, 1536, 65536, 100 * KB, 99 * KB, 1 * KB)  # made up: an sm_86 part
NEXT = (10, 0, 148, 2048, 65536, 228 * KB, 227 * KB, 1 * KB)  # another architecture, the H200's shared memory
STATIC_SMEM = 64  # resize_staged.cuh's kStaticSmem, what launch_gather passes

RULES = r"""
#include <cstdint>

#include "kernels/device_props.h"
#include "kernels/grid_sample/grid_sample_tuning.h"
#include "kernels/resize/resize_tuning.h"

using twinops::DeviceProps;

namespace {
DeviceProps props(const int64_t* v) {
  DeviceProps d;
  d.major = static_cast<int>(v[0]);
  d.minor = static_cast<int>(v[1]);
  d.sm_count = v[2];
  d.max_threads_per_sm = v[3];
  d.registers_per_sm = v[4];
  d.smem_per_sm = v[5];
  d.smem_optin_per_block = v[6];
  d.smem_reserved_per_block = v[7];
  return d;
}
}  // namespace

extern "C" {
void twin_fitted_props(int64_t* out) {
  const DeviceProps& d = twinops::kFittedDevice;
  const int64_t v[8] = {d.major, d.minor, d.sm_count, d.max_threads_per_sm, d.registers_per_sm, d.smem_per_sm,
                        d.smem_optin_per_block, d.smem_reserved_per_block};
  for (int i = 0; i < 8; ++i) out[i] = v[i];
}
int twin_fitted_device(const int64_t* d) { return twinops::fitted_device(props(d)) ? 1 : 0; }
// {kUpscalingTileCapKb, kTwoBlockTileCapKb, kThreads, kRegistersPerSm, kFillFactor, kGatherFillFactor}
void twin_constants(int64_t* out) {
  out[0] = twinops::resize::kUpscalingTileCapKb;
  out[1] = twinops::resize::kTwoBlockTileCapKb;
  out[2] = twinops::resize::kThreads;
  out[3] = twinops::kRegistersPerSm;
  out[4] = twinops::grid_sample::kFillFactor;
  out[5] = twinops::grid_sample::kGatherFillFactor;
}
int64_t twin_register_blocks(const int64_t* d, int threads, int min_blocks) {
  return twinops::register_blocks(props(d), threads, min_blocks);
}
void twin_staged_tile_caps(const int64_t* d, int64_t* out) {
  const twinops::resize::TileCaps c = twinops::resize::staged_tile_caps(props(d));
  out[0] = c.upscaling;
  out[1] = c.two_block;
}
void twin_staged_budgets(const int64_t* d, int w_first, int min_blocks, int64_t static_bytes, int64_t* out) {
  const twinops::resize::StagedBudgets b = twinops::resize::staged_budgets(props(d), w_first != 0, min_blocks,
                                                                           static_bytes);
  out[0] = b.blocks;
  out[1] = b.tile;
  out[2] = b.large;
}
int twin_large_upscaling_tiles(const int64_t* d, int64_t small, int64_t resident_small, int64_t large,
                               int64_t resident_large, int64_t planes) {
  return twinops::resize::large_upscaling_tiles(small, resident_small, large, resident_large, planes, props(d)) ? 1
                                                                                                                : 0;
}
int twin_large_upscaling_tiles_fitted(int64_t small, int64_t resident_small, int64_t large, int64_t resident_large,
                                      int64_t planes) {
  return twinops::resize::large_upscaling_tiles(small, resident_small, large, resident_large, planes) ? 1 : 0;
}
int64_t twin_channel_slice(const int64_t* d, int64_t items, int64_t c, int unroll, int64_t fill) {
  return twinops::grid_sample::channel_slice(items, c, unroll, fill, props(d));
}
}
"""

QUERIES = r"""
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/device_props.h"

using twinops::DeviceProps;

namespace {
int g_fail_attr = -1;  // the attribute whose query fails, -1: none
cudaError_t g_fail_with = cudaSuccess;
int g_calls = 0;

// The H200's attributes.
cudaError_t fake_query(int* value, cudaDeviceAttr attr, int device) {
  ++g_calls;
  if (device != 0) return cudaErrorInvalidDevice;
  if (static_cast<int>(attr) == g_fail_attr) return g_fail_with;
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMultiProcessorCount: *value = 132; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = 2048; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = 65536; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = 228 * 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = 227 * 1024; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = 1024; break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

void put(const DeviceProps& d, int64_t* out) {
  const int64_t v[8] = {d.major, d.minor, d.sm_count, d.max_threads_per_sm, d.registers_per_sm, d.smem_per_sm,
                        d.smem_optin_per_block, d.smem_reserved_per_block};
  for (int i = 0; i < 8; ++i) out[i] = v[i];
}
}  // namespace

extern "C" {
// The attribute numbers the queries use (cudaDeviceAttr), in read order.
void twin_attrs(int* out) {
  const cudaDeviceAttr a[8] = {cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
                               cudaDevAttrMultiProcessorCount, cudaDevAttrMaxThreadsPerMultiProcessor,
                               cudaDevAttrMaxRegistersPerMultiprocessor, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                               cudaDevAttrMaxSharedMemoryPerBlockOptin, cudaDevAttrReservedSharedMemoryPerBlock};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<int>(a[i]);
}
int twin_error_code(int which) {
  return which == 0 ? static_cast<int>(cudaErrorNotSupported) : static_cast<int>(cudaErrorInvalidDevice);
}
// read_device_props through the fake query, failing at `fail_attr` with `fail_with`; *out is
// put only on success (the caller pre-fills it).
int twin_read(int device, int fail_attr, int fail_with, int64_t* out) {
  g_fail_attr = fail_attr;
  g_fail_with = static_cast<cudaError_t>(fail_with);
  DeviceProps d;
  d.major = -7;  // a sentinel: read_device_props must leave it on failure
  const cudaError_t e = twinops::read_device_props(device, &d, &fake_query);
  if (e == cudaSuccess || d.major != -7) put(d, out);
  return static_cast<int>(e);
}
// A DevicePropsCache over the fake query: a failing read (status[0]), the read after it
// (status[1], queries made in calls[0]) and a cached read (status[2], queries made in calls[1]).
void twin_cache(int fail_attr, int fail_with, int* status, int* calls, int64_t* out) {
  twinops::DevicePropsCache cache(&fake_query);
  DeviceProps d;
  g_fail_attr = fail_attr;
  g_fail_with = static_cast<cudaError_t>(fail_with);
  status[0] = static_cast<int>(cache.get(0, &d));
  g_fail_attr = -1;
  g_calls = 0;
  status[1] = static_cast<int>(cache.get(0, &d));
  calls[0] = g_calls;
  g_calls = 0;
  status[2] = static_cast<int>(cache.get(0, &d));
  calls[1] = g_calls;
  put(d, out);
}
// The real runtime: the current device's properties (twice: a failure is not kept), or its error.
int twin_current(int64_t* out) {
  DeviceProps d;
  cudaError_t e = twinops::current_device_props(&d);
  if (e != cudaSuccess) {
    const cudaError_t again = twinops::current_device_props(&d);
    return static_cast<int>(again == e ? e : cudaErrorUnknown);
  }
  put(d, out);
  return 0;
}
int twin_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}
}
"""


def _cxx():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def _cuda_home():
    nvcc = build_tools.nvcc()
    home = os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda"
    return home if os.path.exists(os.path.join(home, "include", "cuda_runtime_api.h")) else None


def _build(tmp, name, source, extra):
    cxx = _cxx()
    src = tmp / f"{name}.cpp"
    src.write_text(source)
    out = str(tmp / f"lib{name}.so")
    # -Wall -Wextra -Werror as the plugin library's host sources are built (csrc/trt/build.py).
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I", CSRC, str(src), "-o",
           out, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
    return ctypes.CDLL(out)


@pytest.fixture(scope="module")
def rules(tmp_path_factory):
    if _cxx() is None:
        pytest.skip("needs a C++ compiler (c++, g++ or clang++) to build the tuning rules")
    # No CUDA headers: the rules compile with a plain host compiler.
    lib = _build(tmp_path_factory.mktemp("rules"), "tuning_rules", RULES, [])
    i64, p64, cint = ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_int
    lib.twin_fitted_device.restype = cint
    lib.twin_register_blocks.restype = i64
    lib.twin_register_blocks.argtypes = [p64, cint, cint]
    lib.twin_staged_budgets.argtypes = [p64, cint, cint, i64, p64]
    lib.twin_large_upscaling_tiles.restype = cint
    lib.twin_large_upscaling_tiles.argtypes = [p64, i64, i64, i64, i64, i64]
    lib.twin_large_upscaling_tiles_fitted.restype = cint
    lib.twin_large_upscaling_tiles_fitted.argtypes = [i64, i64, i64, i64, i64]
    lib.twin_channel_slice.restype = i64
    lib.twin_channel_slice.argtypes = [p64, i64, i64, cint, i64]
    return lib


@pytest.fixture(scope="module")
def queries(tmp_path_factory):
    if _cxx() is None:
        pytest.skip("needs a C++ compiler (c++, g++ or clang++) to build the device queries")
    home = _cuda_home()
    if home is None:
        pytest.skip("needs the CUDA toolkit's headers (cuda_runtime_api.h; set CUDA_HOME)")
    static = os.path.join(home, "lib64", "libcudart_static.a")
    if not os.path.exists(static):
        pytest.skip(f"needs the static CUDA runtime ({static})")
    lib = _build(tmp_path_factory.mktemp("queries"), "device_queries", QUERIES,
                 ["-DTWIN_WITH_CUDA_RUNTIME", "-isystem", os.path.join(home, "include"), static, "-ldl", "-lpthread",
                  "-lrt"])
    p64, pint, cint = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int), ctypes.c_int
    lib.twin_read.restype = cint
    lib.twin_read.argtypes = [cint, cint, cint, p64]
    lib.twin_cache.argtypes = [cint, cint, pint, pint, p64]
    lib.twin_current.restype = cint
    lib.twin_current.argtypes = [p64]
    return lib


def _props(values):
    return (ctypes.c_int64 * 8)(*values)


def _out(n, fill=0):
    return (ctypes.c_int64 * n)(*([fill] * n))


def budgets(lib, dev, w_first, min_blocks):
    out = _out(3)
    lib.twin_staged_budgets(_props(dev), int(w_first), min_blocks, STATIC_SMEM, out)
    return tuple(out)


def caps(lib, dev):
    out = _out(2)
    lib.twin_staged_tile_caps(_props(dev), out)
    return tuple(out)


def slice_of(lib, dev, items, c, unroll, fill):
    return lib.twin_channel_slice(_props(dev), items, c, unroll, fill)


def _old_channel_slice(items, c, unroll, fill, resident_threads):
    """grid_sample.cu's channel_slice as it was written against its own attribute queries."""
    want = fill * resident_threads
    floor_slice = max(unroll, (c + 65534) // 65535)
    s = c
    while s > floor_slice and items * -(-c // s) < want:
        nxt = max(floor_slice, (s // 2 + unroll - 1) // unroll * unroll)
        if nxt >= s:
            break
        s = nxt
    return max(s, 1)


# ---- the fitted device: the values measured there


def test_the_fitted_device_is_the_h200(rules):
    out = _out(8)
    rules.twin_fitted_props(out)
    assert tuple(out) == H200
    assert rules.twin_fitted_device(_props(H200)) == 1
    assert rules.twin_fitted_device(_props(H100_PCIE)) == 1  # the SM count is not compared
    less_smem = (9, 0, 132, 2048, 65536, 164 * KB, 163 * KB, 1 * KB)
    fewer_threads = (9, 0, 132, 1536, 65536, 228 * KB, 227 * KB, 1 * KB)
    for other in (UNKNOWN, NEXT, less_smem, fewer_threads):
        assert rules.twin_fitted_device(_props(other)) == 0, other


def test_constants_are_unchanged(rules):
    out = _out(6)
    rules.twin_constants(out)
    assert tuple(out) == (72, 112, 256, 65536, 2, 1)


@pytest.mark.parametrize("dev", [H200, H100_PCIE], ids=["H200", "H100-PCIe"])
def test_fitted_tile_caps_and_budgets(rules, dev):
    assert caps(rules, dev) == (72 * KB, 112 * KB)
    per_sm, reserved = dev[5], dev[7]

    def old(blocks, cap_kb):  # the budget launch_gather computed from its own attribute queries
        return min(per_sm // blocks - reserved, cap_kb * KB)

    # upscaling float32 (3 blocks: the two-block alternative too), upscaling float64 (2 blocks),
    # downscaling (2 blocks)
    assert budgets(rules, dev, True, 3) == (3, old(3, 72), old(2, 112)) == (3, 72 * KB, 112 * KB)
    assert budgets(rules, dev, True, 2) == (2, old(2, 72), 0) == (2, 72 * KB, 0)
    assert budgets(rules, dev, False, 2) == (2, old(2, 112), 0) == (2, 112 * KB, 0)
    for threads, blocks in [(256, 3), (256, 2), (128, 3), (256, 6), (256, 1)]:
        assert rules.twin_register_blocks(_props(dev), threads, blocks) == blocks


def _tiles(out_h, out_w, th):
    return -(-out_w // 128) * -(-out_h // th)


# The cases tests/resize/test_resize_host_rules.py checks against the H200 measurements.
LARGE_CASES = [((2160, 3840, 3), True), ((4320, 7680, 3), True), ((1080, 1920, 48), True), ((2160, 3840, 12), True),
               ((1440, 2560, 3), True), ((1620, 2880, 3), False), ((512, 512, 512), False), ((256, 256, 64), False)]


@pytest.mark.parametrize("case, large", LARGE_CASES)
def test_large_upscaling_tiles_on_the_fitted_device(rules, case, large):
    out_h, out_w, planes = case
    args = (_tiles(out_h, out_w, 32), 396, _tiles(out_h, out_w, 64), 264, planes)
    assert rules.twin_large_upscaling_tiles(_props(H200), *args) == large
    assert rules.twin_large_upscaling_tiles_fitted(*args) == large


@pytest.mark.parametrize("items, c, unroll, fill, want", [
    (8 * 128 * 128, 64, 8, 2, 8),  # (8, 64, 128, 128) bilinear forward: split down to the unroll width
    (1080 * 1920, 3, 4, 2, 3),  # 1080p, C = 3: enough points, no split
    (64 * 64, 64, 1, 1, 1),  # a small gather: one channel per thread
    (10 ** 7, 64, 8, 2, 64),  # enough points for two waves
])
def test_fitted_channel_slice(rules, items, c, unroll, fill, want):
    assert slice_of(rules, H200, items, c, unroll, fill) == want
    assert want == _old_channel_slice(items, c, unroll, fill, 132 * 2048)


@settings(max_examples=300, deadline=None)
@given(items=st.integers(1, 10 ** 7), c=st.integers(1, 200000), unroll=st.sampled_from([1, 2, 4, 8, 16]),
       fill=st.sampled_from([1, 2]))
def test_channel_slice_is_the_fill_rule_in_the_devices_waves(rules, items, c, unroll, fill):
    for dev in (H200, UNKNOWN):
        got = slice_of(rules, dev, items, c, unroll, fill)
        assert got == _old_channel_slice(items, c, unroll, fill, dev[2] * dev[3])
        assert 1 <= got <= c and -(-c // got) <= 65535


# ---- another device: the conservative rules


def test_unknown_device_gets_the_conservative_rules(rules):
    per_sm, optin, reserved = UNKNOWN[5], UNKNOWN[6], UNKNOWN[7]
    assert rules.twin_fitted_device(_props(UNKNOWN)) == 0
    # The fitted caps' share of the H200's shared memory per SM, of this device's.
    up, two = caps(rules, UNKNOWN)
    assert (up, two) == (per_sm * 72 // 228, per_sm * 112 // 228) == (32336, 50301)
    for w_first, min_blocks in [(True, 3), (True, 2), (False, 2)]:
        blocks, tile, large = budgets(rules, UNKNOWN, w_first, min_blocks)
        assert blocks == min_blocks  # 65536 registers, 1536 threads: the blocks the registers are sized for fit
        assert large == 0  # the larger upscaling tiles never
        assert 0 < tile <= per_sm // blocks - reserved and tile <= optin - STATIC_SMEM
        assert blocks * (tile + reserved) <= per_sm
        assert tile == min(up if w_first else two, per_sm // blocks - reserved)
    for case, large in LARGE_CASES:
        out_h, out_w, planes = case
        args = (_tiles(out_h, out_w, 32), 396, _tiles(out_h, out_w, 64), 264, planes)
        assert rules.twin_large_upscaling_tiles(_props(UNKNOWN), *args) == 0
        assert rules.twin_large_upscaling_tiles(_props(NEXT), *args) == 0


def test_another_architecture_with_the_fitted_shared_memory(rules):
    # Not the fitted SM (sm_100): the same caps (the share of 228 KB), no larger upscaling tiles.
    assert caps(rules, NEXT) == (72 * KB, 112 * KB)
    assert budgets(rules, NEXT, True, 3) == (3, 72 * KB, 0)


def test_fewer_registers_or_threads_give_fewer_blocks(rules):
    small = (7, 5, 40, 1024, 32768, 64 * KB, 64 * KB, 0)
    assert rules.twin_register_blocks(_props(small), 256, 3) == 1  # 32768 / (256 x 85)
    assert rules.twin_register_blocks(_props(small), 256, 2) == 1
    few_threads = (7, 5, 40, 512, 65536, 64 * KB, 64 * KB, 0)
    assert rules.twin_register_blocks(_props(few_threads), 256, 3) == 2
    blocks, tile, _ = budgets(rules, small, True, 3)
    assert blocks == 1 and tile <= 64 * KB - STATIC_SMEM


@settings(max_examples=500, deadline=None)
@given(major=st.integers(5, 12), sms=st.integers(1, 200), threads=st.sampled_from([1024, 1536, 2048]),
       regs=st.sampled_from([32768, 65536]), per_sm_kb=st.integers(16, 256), optin_less_kb=st.integers(0, 64),
       reserved=st.sampled_from([0, 1024]), w_first=st.booleans(), min_blocks=st.sampled_from([2, 3]))
def test_a_budget_never_exceeds_the_devices_shared_memory(rules, major, sms, threads, regs, per_sm_kb, optin_less_kb,
                                                          reserved, w_first, min_blocks):
    per_sm = per_sm_kb * KB
    optin = max(per_sm - optin_less_kb * KB, 8 * KB)
    dev = (major, 0, sms, threads, regs, per_sm, optin, reserved)
    blocks, tile, large = budgets(rules, dev, w_first, min_blocks)
    assert 1 <= blocks <= min_blocks
    assert 0 <= tile <= max(per_sm // blocks - reserved, 0) and tile <= optin - STATIC_SMEM
    assert tile <= (72 if w_first else 112) * KB
    if rules.twin_fitted_device(_props(dev)):
        assert large == (112 * KB if w_first and min_blocks == 3 else 0)
    else:
        assert large == 0


# ---- the queries


ATTR_NAMES = ["major", "minor", "SMs", "threads per SM", "registers per SM", "shared memory per SM",
              "opt-in per block", "reserved per block"]


@pytest.mark.parametrize("which", range(8), ids=ATTR_NAMES)
def test_a_failing_query_is_returned(queries, which):
    attrs = (ctypes.c_int * 8)()
    queries.twin_attrs(attrs)
    not_supported = queries.twin_error_code(0)
    out = _out(8, -1)
    assert queries.twin_read(0, attrs[which], not_supported, out) == not_supported
    assert tuple(out) == (-1,) * 8  # nothing written
    assert queries.twin_read(0, -1, 0, out) == 0
    assert tuple(out) == H200
    # an unknown device: the query's own error
    assert queries.twin_read(3, -1, 0, _out(8)) == queries.twin_error_code(1)


def test_the_cache_keeps_only_what_it_read(queries):
    attrs = (ctypes.c_int * 8)()
    queries.twin_attrs(attrs)
    not_supported = queries.twin_error_code(0)
    status, calls, out = (ctypes.c_int * 3)(), (ctypes.c_int * 2)(), _out(8)
    queries.twin_cache(attrs[5], not_supported, status, calls, out)
    assert tuple(status) == (not_supported, 0, 0)
    assert tuple(calls) == (8, 0)  # the failure was not kept; the success was, once
    assert tuple(out) == H200


def test_the_current_device_query_fails_without_a_gpu(queries):
    out = _out(8)
    if queries.twin_device_count() > 0:
        assert queries.twin_current(out) == 0
        assert out[2] > 0 and out[3] > 0 and out[5] > 0
    else:
        rc = queries.twin_current(out)
        assert rc != 0, "no device, yet the query succeeded"


# ---- __launch_bounds__' minimum blocks per architecture


@pytest.mark.parametrize("arch, threads, blocks, want", [
    ("sm_90", 256, 6, 6), ("sm_90", 256, 8, 8), ("sm_90", 256, 9, 8),
    ("sm_86", 256, 6, 6), ("sm_86", 256, 8, 6),
    ("sm_75", 256, 6, 4), ("sm_75", 256, 3, 3),
    ("sm_120", 128, 12, 12), ("sm_120", 128, 16, 12),
])
def test_arch_min_blocks(tmp_path, arch, threads, blocks, want):
    nvcc = build_tools.nvcc()
    if nvcc is None:
        pytest.skip("needs nvcc (set CUDA_HOME)")
    src = tmp_path / "bounds.cu"
    src.write_text('#include "kernels/device_props.h"\n'
                   "#ifdef __CUDA_ARCH__\n"
                   f"static_assert(twinops::arch_min_blocks({threads}, {blocks}) == {want}, \"arch_min_blocks\");\n"
                   "#endif\n"
                   f"__global__ void __launch_bounds__({threads}, twinops::arch_min_blocks({threads}, {blocks}))\n"
                   "k() {}\n")
    cmd = [nvcc, "-std=c++17", f"-arch={arch}", "-cubin", "-I", CSRC, str(src), "-o", str(tmp_path / "bounds.cubin")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 and "Unsupported gpu architecture" in r.stderr:
        pytest.skip(f"this nvcc does not compile for {arch}")
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}{r.stderr}"
