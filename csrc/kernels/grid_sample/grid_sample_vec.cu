// The 4-D forward of grid_sample for a channels-last input (channels adjacent in memory, in
// 16-byte aligned vectors): ATen's and forward_kernel's per-point channel loop turns every
// warp-wide load of such an input into 32 separate lines. Here a block takes kVecPoints
// consecutive output points of one batch:
//   1. kVecPoints threads compute the points' taps and weights into shared memory;
//   2. each thread sums the taps of one 16-byte vector of channels of one point (the vectors of
//      a point are adjacent threads: their loads are one contiguous run per tap) and stages the
//      results per channel in shared memory;
//   3. the block writes the staged channels in rows of kVecPoints points, in the output's own
//      strides (contiguous NCHW from the torch op: a row is one contiguous run).
// Each output is the sum forward_kernel computes, over the same taps in the same order: the
// same bits. float, __half, __nv_bfloat16; every mode and padding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../vector_io.cuh"
#include "grid_sample.cuh"
#include "grid_sample_device.cuh"
#include "grid_sample_tuning.h"

namespace twinops {
namespace grid_sample {
namespace kernels {

template <Mode M, typename T>
__global__ void __launch_bounds__(kThreads) forward_vec_kernel(const Params p, const T* __restrict__ input,
                                                                const T* __restrict__ grid, T* __restrict__ output) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, 2, Acc>;
  using V = Vec16<T>;
  constexpr int P = kVecPoints, L = V::kLanes;
  __shared__ int s_at[P][PT::T];  // a tap's element offset within the batch, -1: not read
  __shared__ Acc s_w[P][PT::T];
  __shared__ int s_state[P];  // 0: past the batch's points, 1: a point, 2: a NaN point
  __shared__ int s_out[P];    // the point's output offset within the batch (channel 0)
  __shared__ T s_val[kVecChannels][P + 1];  // +1: the stores of step 2 spread over the banks
  const int n = static_cast<int>(blockIdx.y);
  const int64_t points = points_per_batch(p);
  const T* in = input + n * p.input_stride[0];
  T* out = output + n * p.output_stride[0];
  if (threadIdx.x < P) {
    const int j = static_cast<int>(threadIdx.x);
    const int64_t q = static_cast<int64_t>(blockIdx.x) * P + j;
    int state = 0;
    if (q < points) {
      const int oh = static_cast<int>(q / p.out[2]), ow = static_cast<int>(q - oh * p.out[2]);
      Acc gx, gy, gz;
      read_grid<2>(p, grid, n, 0, oh, ow, &gx, &gy, &gz);
      PT pt;
      state = point_taps<M, 2, Acc>(p, gx, gy, gz, &pt) ? 1 : 2;
      s_out[j] = oh * static_cast<int>(p.output_stride[3]) + ow * static_cast<int>(p.output_stride[4]);
#pragma unroll
      for (int t = 0; t < PT::T; ++t) {
        const int x = pt.x.idx[PT::kx(t)], y = pt.y.idx[PT::ky(t)];
        s_at[j][t] = state == 1 && x >= 0 && y >= 0 ? y * static_cast<int>(p.input_stride[3]) +
                                                          x * static_cast<int>(p.input_stride[4])
                                                    : -1;
        s_w[j][t] = state == 1 ? pt.weight(t) : Acc(0);
      }
    }
    s_state[j] = state;
  }
  __syncthreads();
  const int C = static_cast<int>(p.c), so = static_cast<int>(p.output_stride[1]);
  for (int cs = 0; cs < C; cs += kVecChannels) {
    const int kc = min(kVecChannels, C - cs), nv = kc / L;  // C is a multiple of L (use_vec_forward)
    for (int i = static_cast<int>(threadIdx.x); i < P * nv; i += kThreads) {
      const int j = i / nv, v = i - j * nv;
      if (s_state[j] == 0) continue;
      Acc acc[L];
#pragma unroll
      for (int k = 0; k < L; ++k) acc[k] = Acc(0);
      const T* at = in + cs + v * L;
#pragma unroll
      for (int t = 0; t < PT::T; ++t) {
        const int a = s_at[j][t];
        V::load_or_zero(at + (a >= 0 ? a : 0), a >= 0).accumulate(acc, s_w[j][t]);
      }
      const bool nan_point = s_state[j] == 2;
#pragma unroll
      for (int k = 0; k < L; ++k) s_val[v * L + k][j] = store_as<T>(nan_point ? nan_of<Acc>() : acc[k]);
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < kc * P; i += kThreads) {
      const int c = i / P, j = i - c * P;
      if (s_state[j] != 0) out[(cs + c) * so + s_out[j]] = s_val[c][j];
    }
    __syncthreads();
  }
}

}  // namespace kernels

bool use_vec_forward(const Params& p, const void* input, int element_bytes, bool fits_int32) {
  const int64_t lanes = 16 / element_bytes;
  const int64_t* s = p.input_stride;
  return p.dims == 2 && fits_int32 && s[1] == 1 && p.c % lanes == 0 && s[0] % lanes == 0 &&
         s[3] % lanes == 0 && s[4] % lanes == 0 && reinterpret_cast<uintptr_t>(input) % 16 == 0 && p.n <= 65535 &&
         (points_per_batch(p) + kVecPoints - 1) / kVecPoints <= INT32_MAX;
}

template <typename T>
cudaError_t forward_vec_cuda(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream) {
  const dim3 blocks(static_cast<unsigned>((points_per_batch(p) + kVecPoints - 1) / kVecPoints),
                    static_cast<unsigned>(p.n));
  if (p.mode == kLinear)
    kernels::forward_vec_kernel<kLinear, T><<<blocks, kThreads, 0, stream>>>(p, input, grid, output);
  else if (p.mode == kNearest)
    kernels::forward_vec_kernel<kNearest, T><<<blocks, kThreads, 0, stream>>>(p, input, grid, output);
  else if (p.mode == kCubic)
    kernels::forward_vec_kernel<kCubic, T><<<blocks, kThreads, 0, stream>>>(p, input, grid, output);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

#define TWIN_INSTANTIATE(T) \
  template cudaError_t forward_vec_cuda<T>(const Params&, const T*, const T*, T*, cudaStream_t);
TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)
#undef TWIN_INSTANTIATE

}  // namespace grid_sample
}  // namespace twinops
