// CUDA kernels of roi_align (the math is roi_align.cuh's, as the CPU loops).
//
// Forward: one thread per output element (k, c, ph, pw), pw fastest, reading 4 taps per sample.
// Backward, deterministic: each output element adds grad_output * tap weight (/ count for avg)
// into a 64-bit fixed-point accumulator per input element (../fixed_scatter.cuh: integer addition
// is associative, so the sum is bitwise the same whatever the schedule). The scale of channel c's
// planes comes from a bound on what one element can receive: every output element of channel c
// adds at most |grad_output| in all (its samples' tap weights sum to at most count), so max
// |grad_output| over the channel times K * PH * PW (times 2 for the weights' roundings) bounds
// it. Passes: the channel maxima, their fractional bits, the scatter, the conversion to the
// input's dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "../dtype_convert.cuh"
#include "../fixed_scatter.cuh"
#include "../workspace.h"
#include "roi_align.cuh"
#include "roi_align_cuda.h"

namespace twinops {
namespace roi_align {

namespace fs = ::twinops::fixed_scatter;

namespace kernels {

constexpr int kThreads = 256;
constexpr int64_t kMaxRows = 65535;  // gridDim.y

inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

template <typename T, typename I>
__device__ __forceinline__ Roi<typename OpMath<T>::type> roi_at(const Params& p, const T* rois, const I* batch,
                                                                  int64_t k) {
  using Acc = typename OpMath<T>::type;
  return roi_of<Acc>(p, [&](int64_t off) { return static_cast<Acc>(load(rois + off)); }, batch, k);
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const Params p, LevelPtrs<const T> feats, const T* __restrict__ rois, const I* __restrict__ batch,
                   T* __restrict__ out, int64_t count) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t pw = i % p.pw, ph = (i / p.pw) % p.ph, c = (i / (p.pw * p.ph)) % p.c, k = i / (p.pw * p.ph * p.c);
  const Roi<Acc> r = roi_at(p, rois, batch, k);
  const Level& L = p.level[r.level];
  const T* plane = feats.at(r.level) + (r.ok ? r.batch * L.stride[0] + c * L.stride[1] : 0);
  const Acc v = bin_value(p, r, ph, pw, [&](int64_t off) { return static_cast<Acc>(load(plane + off)); });
  const int64_t* os = p.out_stride;
  out[k * os[0] + c * os[1] + ph * os[2] + pw * os[3]] = store_as<T>(v);
}

// Byte offsets of the backward's workspace: accumulators and flags of every element of the
// level's input, each channel's max |grad_output| (float bits) and its fractional bits.
struct FixedLayout {
  size_t acc, flags, planes, frac, zeroed, bytes;
};

FixedLayout fixed_layout(const Params& p, int32_t lvl) {
  const int64_t elems = p.n * p.c * p.level[lvl].h * p.level[lvl].w;
  WorkspaceOffsets w;
  FixedLayout L{};
  L.acc = w.take(sizeof(unsigned long long) * static_cast<size_t>(elems));
  L.flags = w.take(sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(elems)));
  L.planes = w.take(sizeof(uint32_t) * static_cast<size_t>(p.c));
  L.zeroed = w.end;
  L.frac = w.take(sizeof(int32_t) * static_cast<size_t>(p.c));
  L.bytes = w.end;
  return L;
}

// Channel c0 + blockIdx.y's max |grad_output| over its finite values (one atomic per block).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    channel_max_kernel(const Params p, const T* __restrict__ gout, int64_t c0, uint32_t* __restrict__ planes) {
  const int64_t c = c0 + blockIdx.y, bins = p.ph * p.pw, per = p.k * bins;
  const int64_t* os = p.out_stride;
  uint32_t bits = 0;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < per;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = q / bins, b = q % bins;
    bits = max(bits, fs::abs_bits(static_cast<float>(load(gout + k * os[0] + c * os[1] + (b / p.pw) * os[2] +
                                                           (b % p.pw) * os[3]))));
  }
  fs::block_max_into<kThreads>(bits, planes + c);
}

__global__ void __launch_bounds__(kThreads)
    frac_kernel(const uint32_t* __restrict__ planes, double most, int32_t* __restrict__ frac, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) frac[i] = fs::frac_bits(static_cast<double>(fs::max_of_bits(planes[i])) * most);
}

// One thread per output element (k, c, ph, pw) of a roi on level lvl: its contributions into the
// accumulators of plane (batch, c). q: p with the level's tap offsets dense (y * W + x).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const Params q, int32_t lvl, const T* __restrict__ gout, const T* __restrict__ feat,
                   const T* __restrict__ rois, const I* __restrict__ batch, const int32_t* __restrict__ frac,
                   unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, int64_t count,
                   int64_t in_stride_y, int64_t in_stride_x) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t pw = i % q.pw, ph = (i / q.pw) % q.ph, c = (i / (q.pw * q.ph)) % q.c, k = i / (q.pw * q.ph * q.c);
  const Roi<Acc> r = roi_at(q, rois, batch, k);
  if (!r.ok || r.level != lvl) return;
  const Level& L = q.level[lvl];
  const int64_t* os = q.out_stride;
  const Acc g = static_cast<Acc>(load(gout + k * os[0] + c * os[1] + ph * os[2] + pw * os[3]));
  const T* src = feat + r.batch * L.stride[0] + c * L.stride[1];
  const int64_t base = (r.batch * q.c + c) * L.h * L.w;
  const int f = frac[c];
  bin_grad(q, r, ph, pw, g,
           [&](int64_t off) {  // max mode re-reads the input: dense offset -> its strides
             const int64_t y = off / L.w, x = off - y * L.w;
             return static_cast<Acc>(load(src + y * in_stride_y + x * in_stride_x));
           },
           [&](int64_t off, Acc v) { fs::add(acc, flags, base + off, static_cast<float>(v), f); });
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    finish_kernel(const Params p, int32_t lvl, const unsigned long long* __restrict__ acc,
                  const uint32_t* __restrict__ flags, const int32_t* __restrict__ frac, int64_t count,
                  T* __restrict__ grad) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const Level& L = p.level[lvl];
  const int64_t x = i % L.w, y = (i / L.w) % L.h, c = (i / (L.w * L.h)) % p.c, n = i / (L.w * L.h * p.c);
  const T v = store_as<T>(static_cast<Acc>(fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i),
                                                           frac[c])));
  const int64_t* gs = p.grad_input_stride;
  grad[n * gs[0] + c * gs[1] + y * gs[2] + x * gs[3]] = v;
}

}  // namespace kernels

template <typename T, typename I>
cudaError_t forward_cuda(const Params& p, LevelPtrs<const T> feats, const T* rois, const I* batch, T* out,
                         cudaStream_t stream) {
  const int64_t count = p.k * p.c * p.ph * p.pw;
  if (count == 0) return cudaSuccess;
  kernels::forward_kernel<T, I><<<kernels::blocks_for(count), kernels::kThreads, 0, stream>>>(p, feats, rois, batch,
                                                                                           out, count);
  return cudaGetLastError();
}

size_t backward_workspace_bytes(const Params& p, int32_t lvl) { return kernels::fixed_layout(p, lvl).bytes; }

template <typename T, typename I>
cudaError_t backward_cuda(const Params& p, int32_t lvl, const T* gout, const T* feat, const T* rois, const I* batch,
                          T* grad, void* workspace, cudaStream_t stream) {
  using namespace kernels;
  const Level& L = p.level[lvl];
  const int64_t elems = p.n * p.c * L.h * L.w;
  if (elems == 0) return cudaSuccess;
  const FixedLayout W = fixed_layout(p, lvl);
  char* ws = static_cast<char*>(workspace);
  auto* acc = reinterpret_cast<unsigned long long*>(ws + W.acc);
  auto* flags = reinterpret_cast<uint32_t*>(ws + W.flags);
  auto* planes = reinterpret_cast<uint32_t*>(ws + W.planes);
  auto* frac = reinterpret_cast<int32_t*>(ws + W.frac);
  cudaError_t e;
  if ((e = cudaMemsetAsync(ws, 0, W.zeroed, stream)) != cudaSuccess) return e;
  const int64_t outs = p.k * p.c * p.ph * p.pw;
  if (outs > 0) {
    const int64_t per = p.k * p.ph * p.pw;
    const unsigned bx = static_cast<unsigned>(std::min<int64_t>(blocks_for(per), 64));
    for (int64_t c0 = 0; c0 < p.c; c0 += kMaxRows) {
      const dim3 grid(bx, static_cast<unsigned>(std::min<int64_t>(p.c - c0, kMaxRows)));
      channel_max_kernel<T><<<grid, kThreads, 0, stream>>>(p, gout, c0, planes);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
  }
  frac_kernel<<<blocks_for(p.c), kThreads, 0, stream>>>(planes, 2.0 * static_cast<double>(p.k * p.ph * p.pw), frac,
                                                        p.c);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if (outs > 0) {
    Params q = p;
    q.level[lvl].stride[2] = L.w;
    q.level[lvl].stride[3] = 1;
    scatter_kernel<T, I><<<blocks_for(outs), kThreads, 0, stream>>>(q, lvl, gout, feat, rois, batch, frac, acc, flags,
                                                                    outs, L.stride[2], L.stride[3]);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  finish_kernel<T><<<blocks_for(elems), kThreads, 0, stream>>>(p, lvl, acc, flags, frac, elems, grad);
  return cudaGetLastError();
}

#define TWIN_ROI_ALIGN_INSTANTIATE(T, I)                                                                         \
  template cudaError_t forward_cuda<T, I>(const Params&, LevelPtrs<const T>, const T*, const I*, T*, cudaStream_t); \
  template cudaError_t backward_cuda<T, I>(const Params&, int32_t, const T*, const T*, const T*, const I*, T*, void*, \
                                           cudaStream_t);
TWIN_ROI_ALIGN_INSTANTIATE(float, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(float, int64_t)
TWIN_ROI_ALIGN_INSTANTIATE(__half, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(__half, int64_t)
TWIN_ROI_ALIGN_INSTANTIATE(__nv_bfloat16, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(__nv_bfloat16, int64_t)
#undef TWIN_ROI_ALIGN_INSTANTIATE

}  // namespace roi_align
}  // namespace twinops
