// The tuning of the grid_sample CUDA kernels in one place, each rule written in terms of the
// device property it stands for. The measurements behind them go to
// docs/perf/grid_sample-notes.md (section named per item); values without a section are first
// choices not yet measured on the H200.
#pragma once

#include <cstdint>

namespace twinops {
namespace grid_sample {

// Threads per block of every grid_sample kernel (8 warps).
constexpr int kThreads = 256;

// Channels a forward thread has in flight at once (loads of every tap of that many channels
// issued before their sums): ATen's forward does one channel at a time and waits on each.
// Cubic reads 16 taps per channel, so fewer channels keep its registers in budget.
constexpr int kForwardUnroll = 4;
constexpr int kForwardUnrollCubic = 2;

// Resident threads per SM the forward aims to fill (2048 on sm_80 .. sm_90): when the output
// points alone give fewer threads than `kFillFactor` waves of that, the channels are split
// across blockIdx.y, each part recomputing the point's taps (cheap next to its loads).
constexpr int64_t kFillFactor = 2;

// The grad_input gather keeps up to this many (point, tap) pairs of its input element in
// registers and loops over the channels with them; longer lists (many points sampling one
// element) stream their pairs from memory per channel.
constexpr int kGatherCache = 8;

// Limits of one sort of the backward: (point, tap) pairs per sort (CUB's item count is an
// int) and input elements per sort (keys are 32-bit with one value kept for "no element").
constexpr int64_t kMaxPairsPerSort = int64_t(1) << 30;
constexpr int64_t kMaxElementsPerSort = (int64_t(1) << 31) - 2;

}  // namespace grid_sample
}  // namespace twinops
