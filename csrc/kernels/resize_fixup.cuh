// The CUDA kernels' non-finite outputs, recomputed after their stores.
//
// Why here and not at the stores: an out-of-line reference call at each store (even one per
// group of stores) made ptxas take 26 minutes for resize.cu and gave the tuned kernels
// 848-1008 byte stack frames (docs/perf/resize-notes.md). So the hot loops only note what
// they store (`note`: one FMA per value, no branch), and a thread that noted a non-finite
// value recomputes its own outputs' non-finite ones once its loops are done (`fix_outputs`,
// one call per kernel, outside the loops). That covers every output the fast paths get wrong
// in the forward and every non-finite one in the backward (resize_nonfinite.cuh says why).
//
// The backward has one more case: the CUDA inverse rows hold the nonzero taps only (keeping
// the zero-weight ones widened the bilinear 2x backward's rows from 4 to 8 taps, +36% time),
// so an input that some output reads with weight 0 alone misses that output's 0 * inf = NaN,
// and its fast value may be finite. Those inputs are few (edge clamps, integral coordinates)
// and known from the reader ranges with and without zero-weight taps (Workspace.zlo / lo).
// The last block of the launch to finish (a ticket in the workspace's state words, which the
// table kernel zeroes) recomputes their rows and columns when any block noted a non-finite
// value, which every non-finite grad_output value causes: each one is read with a nonzero
// weight by some input, and a non-finite term keeps a sum non-finite.
#pragma once

#include "resize_nonfinite.cuh"

namespace twinops {
namespace resize {

// `bad` stays 0 while every noted value is finite and turns NaN at the first that is not
// (0 * +-inf and 0 * NaN are NaN, and NaN stays).
template <typename Acc>
__device__ __forceinline__ void note(Acc& bad, Acc v) {
  bad = fma(v, Acc(0), bad);
}
template <typename Acc>
__device__ __forceinline__ bool noted(Acc bad) {
  return bad != bad;
}

// Offset of element (n, c, y, x) of a dense tensor of C x H x W planes stored NCHW or NHWC.
__device__ inline int64_t dense_offset(int64_t n, int64_t c, int64_t y, int64_t x, int64_t C, int64_t H, int64_t W,
                                       bool channels_last) {
  return channels_last ? ((n * H + y) * W + x) * C + c : ((n * C + c) * H + y) * W + x;
}

// The reference's value of output (n, c, y, x), compiled once per element type. The kernels
// that call the fix-up functions below take their Gather as a __grid_constant__ parameter, so
// that passing it by reference copies nothing (a plain parameter's address is a copy of it in
// local memory).
template <typename T, typename Acc>
__device__ __noinline__ Acc reference_value(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t y, int64_t x) {
  return reference_element<T, Acc>(g, n, c, y, x);
}

// Output (n, c, y, x) at `o`: the reference's value where the stored one is not finite.
template <typename T, typename Acc>
__device__ void fix_element(const Gather<T, Acc>& g, T* o, int64_t n, int64_t c, int64_t y, int64_t x) {
  if (!finite_value(Convert<T>::template load<Acc>(*o))) *o = Convert<T>::template store<Acc>(reference_value(g, n, c, y, x));
}

// The outputs one thread of a plane-looping kernel stored: rows y0, y0 + ystep, ... below y1
// and columns [x0, x1), clipped to the OH x OW output, of the planes blockIdx.z,
// blockIdx.z + gridDim.z, ... below `planes` of the NCHW `dst`. Not inlined (the kernels'
// registers are not sized by it).
template <typename T, typename Acc>
__device__ __noinline__ void fix_outputs(const Gather<T, Acc>& g, int32_t C, int64_t planes, int32_t OH, int32_t OW,
                                         int32_t y0, int32_t y1, int32_t ystep, int32_t x0, int32_t x1, T* dst) {
  y1 = min(y1, OH);
  x1 = min(x1, OW);
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    T* out = dst + plane * OH * OW;
    for (int32_t y = y0; y < y1; y += ystep)
      for (int32_t x = x0; x < x1; ++x) fix_element(g, out + static_cast<int64_t>(y) * OW + x, plane / C, plane % C, y, x);
  }
}

// The per-element gather's outputs (dense element idx of dst, NCHW-indexed, stored NCHW or NHWC).
template <typename T, typename Acc>
__device__ __noinline__ void fix_dense(const Gather<T, Acc>& g, int64_t idx, int64_t C, int64_t H, int64_t W,
                                       bool channels_last, T* dst) {
  int64_t n, c, y, x;
  decompose<int64_t>(idx, C, H, W, channels_last, &n, &c, &y, &x);
  fix_element(g, dst + idx, n, c, y, x);
}

// Whether input i along axis k has readers its inverse row leaves out (zero-weight ones).
template <typename T, typename Acc>
__device__ bool zero_readers(const Gather<T, Acc>& g, int k, int64_t i) {
  const int32_t zl = g.zlo[k][i], zh = g.zhi[k][i], l = g.lo[k][i], h = g.hi[k][i];
  return zl <= zh && (l > h || zl < l || zh > h);
}

// Every element of grad_input (N x C x H x W, `dst`) in a row or column with zero_readers,
// recomputed by the whole block.
template <typename T, typename Acc>
__device__ __noinline__ void fix_zero_readers(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W,
                                              bool channels_last, T* dst) {
  for (int k = 0; k < 2; ++k) {
    const int64_t len = k == 0 ? H : W, other = k == 0 ? W : H;
    for (int64_t i = 0; i < len; ++i) {
      if (!zero_readers(g, k, i)) continue;
      for (int64_t e = threadIdx.x; e < N * C * other; e += blockDim.x) {
        const int64_t plane = e / other, j = e % other, n = plane / C, c = plane % C;
        const int64_t y = k == 0 ? i : j, x = k == 0 ? j : i;
        dst[dense_offset(n, c, y, x, C, H, W, channels_last)] =
            Convert<T>::template store<Acc>(reference_value(g, n, c, y, x));
      }
    }
  }
}

// The end of a backward gather kernel (every thread of the block calls it, after its own
// fix_outputs): see the top of this file. Nothing where g.state is null (forward, CPU).
template <typename T, typename Acc>
__device__ __forceinline__ void backward_epilogue(const Gather<T, Acc>& g, bool bad, int64_t N, int64_t C, int64_t H,
                                                  int64_t W, bool channels_last, T* dst) {
  if (g.state == nullptr) return;
  __shared__ unsigned s_fix;
  __threadfence();  // this thread's stores before the block's ticket
  const int any = __syncthreads_or(bad);
  if (threadIdx.x == 0) {
    if (any) atomicOr(g.state + 1, 1u);
    __threadfence();
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool last = atomicAdd(g.state, 1u) == blocks - 1;
    s_fix = last && atomicOr(g.state + 1, 0u) != 0u ? 1u : 0u;
  }
  __syncthreads();
  if (s_fix) {
    __threadfence();
    fix_zero_readers(g, N, C, H, W, channels_last, dst);
  }
}

}  // namespace resize
}  // namespace twinops
