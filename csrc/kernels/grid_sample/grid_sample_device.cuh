// Device helpers of the grid_sample kernels (grid_sample.cu, grid_sample_fixed.cu): element
// loads and stores in the opmath type, and a point's output coordinates and grid values.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <limits>
#include <type_traits>

#include "../dtype_convert.cuh"
#include "../workspace.h"
#include "grid_sample.cuh"
#include "grid_sample_tuning.h"

namespace twinops {
namespace grid_sample {

// Named, not anonymous: with the device runtime (-ewp) an anonymous namespace's kernels get
// unreadable names in profiles.
namespace kernels {

// Element loads and stores: load and store_as of ../dtype_convert.cuh.

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

// The prologue of the per-point backward kernels: output point g (all batches) -> its batch n,
// output coordinates and taps; false for a NaN point (point_taps).
template <Mode M, int DIMS, typename T, typename Acc>
__device__ __forceinline__ bool point_of(const Params& p, const T* __restrict__ grid, int64_t g, int64_t* n,
                                         int64_t* od, int64_t* oh, int64_t* ow, PointTaps<M, DIMS, Acc>* pt) {
  const int64_t P = points_per_batch(p);
  *n = g / P;
  split_point(p, g - *n * P, od, oh, ow);
  Acc gx, gy, gz;
  read_grid<DIMS>(p, grid, *n, *od, *oh, *ow, &gx, &gy, &gz);
  return point_taps<M, DIMS, Acc>(p, gx, gy, gz, pt);
}

// A point's taps as input offsets (strides N, C, D, H, W; batch and channel excluded) in index
// type I (int64_t always safe; int32_t when the input's per-batch span fits), kept per axis:
// tap t reads at(t) when ok(t).
template <Mode M, int DIMS, typename Acc, typename I>
struct OffsetsI {
  using PT = PointTaps<M, DIMS, Acc>;
  I ox[PT::K], oy[PT::K], oz[PT::KZ];
  bool okx[PT::K], oky[PT::K], okz[PT::KZ];
  __device__ __forceinline__ OffsetsI(const PT& pt, const int64_t* s) {
#pragma unroll
    for (int k = 0; k < PT::K; ++k) {
      okx[k] = pt.x.idx[k] >= 0;
      oky[k] = pt.y.idx[k] >= 0;
      ox[k] = okx[k] ? static_cast<I>(pt.x.idx[k]) * static_cast<I>(s[4]) : I(0);
      oy[k] = oky[k] ? static_cast<I>(pt.y.idx[k]) * static_cast<I>(s[3]) : I(0);
    }
#pragma unroll
    for (int k = 0; k < PT::KZ; ++k) {
      okz[k] = pt.z.idx[k] >= 0;
      oz[k] = okz[k] ? static_cast<I>(pt.z.idx[k]) * static_cast<I>(s[2]) : I(0);
    }
  }
  __device__ __forceinline__ bool ok(int t) const { return okz[PT::kz(t)] && oky[PT::ky(t)] && okx[PT::kx(t)]; }
  __device__ __forceinline__ I at(int t) const { return oz[PT::kz(t)] + oy[PT::ky(t)] + ox[PT::kx(t)]; }
};
template <Mode M, int DIMS, typename Acc>
using Offsets = OffsetsI<M, DIMS, Acc, int64_t>;

// The address of a tap: with 32-bit offsets the offsets are summed first (one 32-bit add and
// one widening address computation per load); 64-bit ones are added to the pointer in turn.
template <typename T, typename I>
__device__ __forceinline__ const T* tap_ptr(const T* in, I cu, I at) {
  if constexpr (sizeof(I) == 4) {
    return in + (cu + at);
  } else {
    return in + cu + at;
  }
}

// The forward's channel loop of one point (taps pt, not NaN) over channels [c0, c1): out[c * so]
// = the sum over taps of input[c * sc + tap] * weight, U channels' loads in flight at once, the
// last step's missing channels skipped (uniform per thread), so a thread with 3 channels still
// has all their loads in flight. With 32-bit offsets (I = int32_t) the channel offsets are
// running offsets (+= stride per channel), with 64-bit ones products (c + u) * stride: the two
// pairings measured best (docs/perf/grid_sample-notes.md, "Forward variants").
template <Mode M, int DIMS, typename T, int U, typename I>
__device__ __forceinline__ void gather_channels(const Params& p, const T* __restrict__ in,
                                                const PointTaps<M, DIMS, typename OpMath<T>::type>& pt,
                                                T* __restrict__ out, I c0, I c1) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  constexpr bool PTR = sizeof(I) == 4;
  // Offsets per axis (a tap's offset is the sum of its axes'), weights per tap.
  const OffsetsI<M, DIMS, Acc, I> o(pt, p.input_stride);
  Acc w[PT::T];
#pragma unroll
  for (int t = 0; t < PT::T; ++t) w[t] = pt.weight(t);
  const I sc = static_cast<I>(p.input_stride[1]), so = static_cast<I>(p.output_stride[1]);
  I ci = c0 * sc, co = c0 * so;  // PTR: running input / output offsets of channel c
  for (I c = c0; c < c1; c += U) {
    Acc v[U][PT::T];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const I cu = PTR ? ci + static_cast<I>(u) * sc : (c + u) * sc;
#pragma unroll
      for (int t = 0; t < PT::T; ++t) v[u][t] = (c + u < c1 && o.ok(t)) ? load(tap_ptr(in, cu, o.at(t))) : Acc(0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (c + u >= c1) break;
      Acc s = Acc(0);
#pragma unroll
      for (int t = 0; t < PT::T; ++t) s += v[u][t] * w[t];
      out[PTR ? co + static_cast<I>(u) * so : (c + u) * so] = store_as<T>(s);
    }
    if constexpr (PTR) {
      ci += U * sc;
      co += U * so;
    }
  }
}

// What grad_grid_point calls with every channel's grad_output value when the caller has
// nothing to do there (the sorted path).
struct NoChannelHook {
  template <typename Acc>
  __device__ __forceinline__ void operator()(int64_t, Acc) const {}
};

// grad_grid of one point whose taps are `pt` (not NaN), summed over the channels in order, into
// gg (nothing when gg is null). `each(c, g)` sees every channel's grad_output value g on the
// way: the fused fixed-point backward (grid_sample_fixed.cu) scatters grad_input there, so one
// pass reads the point's taps and grad_output once for both gradients.
template <Mode M, int DIMS, typename T, typename Acc, typename Hook = NoChannelHook>
__device__ __forceinline__ void grad_grid_point(const Params& p, const T* __restrict__ go,
                                                const T* __restrict__ in, const PointTaps<M, DIMS, Acc>& pt,
                                                T* __restrict__ gg, Hook each = {}) {
  using PT = PointTaps<M, DIMS, Acc>;
  constexpr bool kHook = !std::is_same_v<Hook, NoChannelHook>;
  const int64_t gs = p.grad_grid_stride[4], sc = p.input_stride[1], gsc = p.output_stride[1];
  // Nearest is piecewise constant: ATen's gradient is 0 whatever the input holds. The sums are
  // spelled with fma_rn so that every kernel that sums grad_grid (the sorted path's and the
  // fused one) rounds alike: left to the compiler, the two kernels' results differed in the
  // last bit.
  if (M == kNearest || gg == nullptr) {
    if (gg != nullptr)
      for (int k = 0; k < DIMS; ++k) gg[k * gs] = store_as<T>(Acc(0));
    if constexpr (kHook)
      for (int64_t c = 0; c < p.c; ++c) each(c, load(go + c * gsc));
    return;
  }
  if constexpr (M != kNearest) {
    const Offsets<M, DIMS, Acc> o(pt, p.input_stride);
    Acc dx[PT::T], dy[PT::T], dz[PT::T];
#pragma unroll
    for (int t = 0; t < PT::T; ++t) {
      dx[t] = pt.dweight_x(t);
      dy[t] = pt.dweight_y(t);
      dz[t] = pt.dweight_z(t);
    }
    Acc sx = Acc(0), sy = Acc(0), sz = Acc(0);
    // Two channels' loads in flight (bilinear 8 taps + 2 grad_output values per step).
#pragma unroll 2
    for (int64_t c = 0; c < p.c; ++c) {
      Acc tx = Acc(0), ty = Acc(0), tz = Acc(0);
#pragma unroll
      for (int t = 0; t < PT::T; ++t) {
        const Acc v = o.ok(t) ? load(in + c * sc + o.at(t)) : Acc(0);
        tx = fma_rn(v, dx[t], tx);
        ty = fma_rn(v, dy[t], ty);
        if (DIMS == 3) tz = fma_rn(v, dz[t], tz);
      }
      const Acc g = load(go + c * gsc);
      if constexpr (kHook) each(c, g);
      sx = fma_rn(tx, g, sx);
      sy = fma_rn(ty, g, sy);
      if (DIMS == 3) sz = fma_rn(tz, g, sz);
    }
    gg[0] = store_as<T>(sx * pt.x.mult);
    gg[gs] = store_as<T>(sy * pt.y.mult);
    if (DIMS == 3) gg[2 * gs] = store_as<T>(sz * pt.z.mult);
  }
}

// Input elements per batch (D * H * W).
TWIN_HD int64_t elements_per_batch(const Params& p) { return p.in[0] * p.in[1] * p.in[2]; }

// Blocks of kThreads for `threads` threads.
inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

using ::twinops::WorkspaceOffsets;

}  // namespace kernels

// Both gradients by the fused fixed-point pass (grid_sample_fixed.cu; float, __half,
// __nv_bfloat16): grad_input (not null) deterministic like the sorted gather, grad_grid (may be
// null) as grad_grid_kernel computes it, with a workspace of fixed_workspace_bytes(p).
size_t fixed_workspace_bytes(const Params& p);
template <typename T>
cudaError_t backward_fixed(const Params& p, const T* gout, const T* input, const T* grid, T* ginput, T* ggrid,
                           void* workspace, cudaStream_t stream);

// The 4-D forward of a channels-last input by 16-byte vectors over the channels
// (grid_sample_vec.cu; float, __half, __nv_bfloat16; every mode), where use_vec_forward holds
// (its caller asks only for those float-opmath types): 4-D, 32-bit offsets (fits_int32),
// channels adjacent (input stride 1), the channel count and the batch, row and column strides
// multiples of the vector's lanes, a 16-byte aligned input, and at most 65535 batches.
bool use_vec_forward(const Params& p, const void* input, int element_bytes, bool fits_int32);
template <typename T>
cudaError_t forward_vec_cuda(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream);

}  // namespace grid_sample
}  // namespace twinops
