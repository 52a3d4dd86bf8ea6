// The tuning of the grid_sample CUDA kernels in one place, each rule written in terms of the
// device property it stands for. The measurements behind them go to
// docs/perf/grid_sample-notes.md (section named per item); values without a section are first
// choices not yet measured on the H200. The host rule (channel_slice) is a pure function of a
// DeviceProps (../device_props.h); the rules only choose among launches that compute the same
// results.
#pragma once

#include <cstdint>

#include "../device_props.h"

namespace twinops {
namespace grid_sample {

// Threads per block of every grid_sample kernel (8 warps).
constexpr int kThreads = 256;

// Loads a forward thread has in flight: it issues the taps of kLoadsInFlight / taps channels
// (bilinear 4, nearest 16, trilinear 2, bicubic 1) before summing any, where ATen's forward
// waits on each channel's taps in turn. More costs registers (occupancy) for little.
constexpr int kLoadsInFlight = 16;
constexpr int forward_unroll(int taps) { return taps >= kLoadsInFlight ? 1 : kLoadsInFlight / taps; }

// Blocks per SM the forward's registers are sized for (__launch_bounds__, which takes at most
// the blocks an SM of the compiled architecture holds: arch_min_blocks), read off ptxas -v
// on sm_90: float opmath fits 80 registers (3 blocks of kThreads) without spilling, but
// bicubic, whose per-tap padding leaves it near 140 registers unbounded, fits 128 (2 blocks);
// double opmath keeps 2 blocks (80 registers spill there).
constexpr int forward_min_blocks(int mode, int opmath_bytes) {
  return mode == 2 /* kCubic */ || opmath_bytes > 4 ? 2 : 3;
}

// Linear and nearest with float opmath and 32-bit index math (the inputs whose per-batch
// offsets fit): 6 blocks of kThreads per SM (40 registers) with half of forward_unroll's
// channels per step, so nothing spills. Of ten variants timed on the H200 it has the best
// geometric mean over nine cases (1.03x ATen), fastest in 4 and within 18% of the fastest in
// the others (docs/perf/grid_sample-notes.md, "Forward variants").
constexpr int kForwardMinBlocks32 = 6;

// How the 4-D forward maps output points to blocks (all give the same bits):
// - kChannelVectors (forward_vec_kernel, grid_sample_vec.cu): a channels-last input whose
//   channels form 16-byte aligned vectors (use_vec_forward), every mode, float opmath: a block of
//   kVecPoints points reads each tap as vectors over the channels and writes the output through
//   shared memory, kVecChannels channels at a time;
// - kPointTiles (forward_tiles_kernel): linear and nearest in float opmath with 32-bit offsets,
//   blocks of kPointTileW x kPointTileH points, whose taps fall in a compact input box;
// - kPointRows (forward_kernel): every other case, blocks of kThreads consecutive points.
// The environment variable TWINOPS_GRID_SAMPLE_FORWARD = "rows", "tiles" or "vectors" forces one
// where it applies (read per call; "rows" everywhere); unset, the first that applies. Measured in
// the op against each other and F.grid_sample (docs/perf/grid_sample-notes.md, "The forward in
// point tiles and channels-last vectors"): the point tiles are faster than the rows in every
// smooth row they take (by 7-18%) and within 2% on random grids; the vectors 4-10x F.grid_sample
// on channels-last inputs of 64 channels.
enum ForwardLayout : int { kForwardAuto = -1, kPointRows = 0, kPointTiles = 1, kChannelVectors = 2 };
constexpr int kPointTileW = 32;
constexpr int kPointTileH = 8;
constexpr int kVecPoints = 32;
constexpr int kVecChannels = 64;
static_assert(kPointTileW * kPointTileH == kThreads, "a point tile is one block of kThreads");

// Waves of the device's resident threads (SMs x threads per SM, DeviceProps) the forward aims
// to fill: when the output points alone give fewer threads than `kFillFactor` waves, the
// channels are split across blockIdx.y, each part recomputing the point's taps (cheap next to
// its loads). Counted in the device's own waves, so every device takes these factors.
constexpr int64_t kFillFactor = 2;
// The same for the grad_input gather, whose threads reload their pair list per slice: one wave.
constexpr int64_t kGatherFillFactor = 1;

// Channels per thread of a launch of `items` threads per slice over `c` channels: all of them,
// unless `items` threads alone leave `d` short of `fill` waves of its resident threads; then
// halved, not below the unroll width nor so far that the slices outnumber blockIdx.y's range
// (65535).
inline int64_t channel_slice(int64_t items, int64_t c, int unroll, int64_t fill, const DeviceProps& d) {
  const int64_t want = fill * d.sm_count * d.max_threads_per_sm;
  const int64_t min_slice = (c + 65534) / 65535;
  const int64_t floor_slice = unroll > min_slice ? unroll : min_slice;
  int64_t slice = c;
  while (slice > floor_slice && items * ((c + slice - 1) / slice) < want) {
    const int64_t half = (slice / 2 + unroll - 1) / unroll * unroll;
    const int64_t next = half > floor_slice ? half : floor_slice;
    if (next >= slice) break;
    slice = next;
  }
  return slice > 1 ? slice : 1;
}

// The grad_input gather keeps up to this many (point, tap) pairs of its input element in
// registers and loops over the channels with them; longer lists (many points sampling one
// element) stream their pairs from memory per channel.
constexpr int kGatherCache = 8;

// Blocks per SM the grad_grid kernel (grid_sample.cu, grad_grid_kernel) is sized for: two
// blocks of kThreads for bilinear and nearest (30..118 registers); bicubic (16 taps'
// derivative weights in registers: 162..198) and float64 (opmath double) keep one, so that
// nothing spills (ptxas -v, sm_90, CUDA 13.0). Not yet measured on the H200.
constexpr int grad_grid_min_blocks(int mode, bool double_opmath) {
  return mode == 2 || double_opmath ? 1 : 2;  // 2: Mode kCubic
}

// Blocks of kThreads the plane-maxima pass of the fixed-point backward (grid_sample_fixed.cu)
// launches in all (at least one per plane): a few waves of an H100 or H200, each block
// striding over its plane's points and raising the plane's max with one atomic.
constexpr int64_t kPlaneMaxBlocks = 4096;

// Whether the fused fixed-point backward (grid_sample_fixed.cu) beats the sorted gather for
// grad_input (choose_scatter; float opmath only). The sorted gather's cost is per (point, tap)
// pair whatever the channels (sort, runs), the fixed point's per input element and channel
// (zero fill, conversion) and per pair and channel (64-bit atomics): the fixed point wins
// where few channels share each pair (C <= 4: 1080p images) and for bicubic (16 taps, long
// runs in the gather), and loses elsewhere (docs/perf/grid_sample-notes.md, "Fixed-point
// grad_input", measured on an H100).
constexpr bool fixed_point_wins(int mode, int64_t channels) {
  return channels <= 4 || mode == 2;  // 2: Mode kCubic
}

// Limits of one sort of the backward: (point, tap) pairs per sort (CUB's item count is an
// int) and input elements per sort (keys are 32-bit with one value kept for "no element").
constexpr int64_t kMaxPairsPerSort = int64_t(1) << 30;
constexpr int64_t kMaxElementsPerSort = (int64_t(1) << 31) - 2;
}  // namespace grid_sample
}  // namespace twinops
