// Device helpers of the grid_sample kernels (grid_sample.cu, grid_sample_fixed.cu): element
// loads and stores in the opmath type, and a point's output coordinates and grid values.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>

#include "../dtype_convert.cuh"
#include "grid_sample.cuh"
#include "grid_sample_tuning.h"

namespace twinops {
namespace grid_sample {

// Named, not anonymous: with the device runtime (-ewp) an anonymous namespace's kernels get
// unreadable names in profiles.
namespace kernels {

// Element loads into the opmath type and stores from it (../dtype_convert.cuh).
template <typename T>
__device__ __forceinline__ typename OpMath<T>::type load(const T* p) {
  return DtypeConvert<T>::template load<typename OpMath<T>::type>(*p);
}

template <typename T, typename Acc>
__device__ __forceinline__ T store_as(Acc v) {
  return DtypeConvert<T>::template store<Acc>(v);
}

template <typename Acc>
__device__ __forceinline__ Acc nan_of() {
  return std::numeric_limits<Acc>::quiet_NaN();
}

// Output point q of a batch -> (od, oh, ow).
__device__ __forceinline__ void split_point(const Params& p, int64_t q, int64_t* od, int64_t* oh, int64_t* ow) {
  if (q < INT32_MAX && p.out[2] < INT32_MAX && p.out[1] < INT32_MAX) {  // 32-bit division is far cheaper
    const auto q32 = static_cast<uint32_t>(q), w = static_cast<uint32_t>(p.out[2]),
               h = static_cast<uint32_t>(p.out[1]);
    const uint32_t r = q32 / w;
    *ow = q32 - r * w;
    *oh = r % h;
    *od = r / h;
    return;
  }
  *ow = q % p.out[2];
  *oh = (q / p.out[2]) % p.out[1];
  *od = q / (p.out[2] * p.out[1]);
}

template <int DIMS, typename T, typename Acc>
__device__ __forceinline__ void read_grid(const Params& p, const T* __restrict__ grid, int64_t n, int64_t od,
                                          int64_t oh, int64_t ow, Acc* gx, Acc* gy, Acc* gz) {
  const int64_t* s = p.grid_stride;
  const T* g = grid + n * s[0] + od * s[1] + oh * s[2] + ow * s[3];
  *gx = load(g);
  *gy = load(g + s[4]);
  *gz = DIMS == 3 ? load(g + 2 * s[4]) : Acc(0);
}

// Input elements per batch (D * H * W).
TWIN_HD int64_t elements_per_batch(const Params& p) { return p.in[0] * p.in[1] * p.in[2]; }

// Blocks of kThreads for `threads` threads.
inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

// Hands out the byte offsets of consecutive workspace arrays, each start 256-byte aligned.
struct WorkspaceOffsets {
  size_t end = 0;  // bytes handed out so far, rounded up to the alignment
  size_t take(size_t bytes) {
    const size_t at = end;
    end = (end + bytes + 255) & ~static_cast<size_t>(255);
    return at;
  }
};

}  // namespace kernels

// grad_input by the fixed-point scatter (grid_sample_fixed.cu; float, __half, __nv_bfloat16):
// deterministic like the sorted gather, with a workspace of fixed_workspace_bytes(p). It runs
// where fixed_scatter_enabled(): the environment variable TWINOPS_GRID_SAMPLE_SCATTER is
// "fixed" (read per call; the sorted gather is the default until the bench decides per case,
// docs/perf/grid_sample-notes.md, "Fixed-point grad_input").
bool fixed_scatter_enabled();
size_t fixed_workspace_bytes(const Params& p);
template <typename T>
cudaError_t grad_input_fixed(const Params& p, const T* gout, const T* grid, T* ginput, void* workspace,
                             cudaStream_t stream);

}  // namespace grid_sample
}  // namespace twinops
