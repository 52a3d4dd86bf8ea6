// The fused fixed-point backward of grid_sample (csrc/kernels/fixed_scatter.cuh): one thread
// per output point computes its taps once and, for every channel, reads grad_output once for
// both gradients: grad_grid summed over the channels in order (as the sorted path's
// grad_grid_kernel) and grad_input as grad_output * weight of each tap added into a 64-bit
// integer accumulator per input element with an atomic add. Integer addition is associative,
// so the result is bitwise the same whatever the schedule (deterministic, as the sorted
// gather of grid_sample.cu), without the sort.
//
// The scale of a plane (n, c) comes from a bound on what one element can receive: every
// contribution is at most max |grad_output| of the plane (|weight| <= 1 in every mode: the
// bilinear, trilinear and nearest weights, and the Keys cubic coefficients at A = -0.75,
// are at most 1), and an element receives at most points * taps contributions. Four passes:
// the plane maxima (plane_max_kernel), their fractional bits (frac_kernel), the fused pass
// (fused_kernel), and the conversion of every element to the output type (finish_kernel). A
// NaN grid point adds nothing (the sorted gather's rule); a non-finite grad_output reaches the
// element through the flags.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../fixed_scatter.cuh"
#include "grid_sample.cuh"
#include "grid_sample_device.cuh"

namespace twinops {
namespace grid_sample {

namespace fs = ::twinops::fixed_scatter;

namespace kernels {

// Byte offsets of the fixed-point workspace: accumulators and flags of every input element of
// every plane, each plane's max |grad_output| (as float bits, fs::max_of_bits) and its
// fractional bits.
struct FixedLayout {
  size_t acc, flags, planes, frac, zeroed, bytes;
};

FixedLayout fixed_layout(const Params& p) {
  const int64_t planes = p.n * p.c, elems = planes * elements_per_batch(p);
  WorkspaceOffsets w;
  FixedLayout L{};
  L.acc = w.take(sizeof(unsigned long long) * static_cast<size_t>(elems));
  L.flags = w.take(sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(elems)));
  L.planes = w.take(sizeof(uint32_t) * static_cast<size_t>(planes));
  L.zeroed = w.end;  // the arrays above start at zero; frac is written whole
  L.frac = w.take(sizeof(int32_t) * static_cast<size_t>(planes));
  L.bytes = w.end;
  return L;
}

// Planes per launch row range (gridDim.y).
constexpr int64_t kMaxRows = 65535;

// Each plane's max |grad_output| over its finite values, plane plane0 + blockIdx.y: the block's
// threads stride over the plane's points, the block reduces its max (warp shuffles, then
// shared memory) and raises the plane's with one atomic. One atomic per warp instead made the
// pass the slowest of the four: atomics on one address serialise at its L2 slice (112-150 us
// at 8x64x128x128 and 1x3x1080x1920 on an H100, docs/perf/grid_sample-notes.md).
template <typename T>
__global__ void __launch_bounds__(kThreads) plane_max_kernel(const Params p, const T* __restrict__ gout,
                                                             int64_t plane0, uint32_t* __restrict__ planes) {
  const int64_t P = points_per_batch(p), plane = plane0 + blockIdx.y, n = plane / p.c, c = plane - n * p.c;
  const int64_t* os = p.output_stride;
  const T* go = gout + n * os[0] + c * os[1];
  uint32_t bits = 0;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < P;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t od, oh, ow;
    split_point(p, q, &od, &oh, &ow);
    bits = max(bits, fs::abs_bits(static_cast<float>(load(go + od * os[2] + oh * os[3] + ow * os[4]))));
  }
  fs::block_max_into<kThreads>(bits, planes + plane);
}

// The fractional bits of every plane: its max |grad_output| times the contributions one
// element can receive (`most`).
__global__ void __launch_bounds__(kThreads) frac_kernel(const uint32_t* __restrict__ planes, double most,
                                                        int32_t* __restrict__ frac, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) frac[i] = fs::frac_bits(static_cast<double>(fs::max_of_bits(planes[i])) * most);
}

// One thread per output point g < count (all batches): its taps once, then every channel's
// grad_output into grad_grid (when ggrid is not null; grad_grid_point) and, through the hook,
// grad_output * weight of every in-range tap into the accumulators of its batch.
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads, grad_grid_min_blocks(M, false))
    fused_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ input,
                 const T* __restrict__ grid, int64_t count, const int32_t* __restrict__ frac,
                 unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, T* __restrict__ ggrid) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= count) return;
  const int64_t E = elements_per_batch(p);
  int64_t n, od, oh, ow;
  PT pt;
  const bool ok = point_of<M, DIMS>(p, grid, g, &n, &od, &oh, &ow, &pt);
  T* gg = nullptr;
  if (ggrid != nullptr) {
    const int64_t* gs = p.grad_grid_stride;
    gg = ggrid + n * gs[0] + od * gs[1] + oh * gs[2] + ow * gs[3];
  }
  if (!ok) {  // NaN grad_grid; a NaN point adds nothing to grad_input
    if (gg != nullptr)
      for (int k = 0; k < DIMS; ++k) gg[k * p.grad_grid_stride[4]] = store_as<T>(nan_of<Acc>());
    return;
  }
  int64_t e[PT::T];
  Acc w[PT::T];
  bool in_range[PT::T];
#pragma unroll
  for (int t = 0; t < PT::T; ++t) {
    in_range[t] = pt.valid(t);
    e[t] = (int64_t(pt.z.idx[PT::kz(t)]) * p.in[1] + pt.y.idx[PT::ky(t)]) * p.in[2] + pt.x.idx[PT::kx(t)];
    w[t] = pt.weight(t);
  }
  const int64_t base = n * p.c * E;  // element index of (n, 0, 0, 0, 0) in acc and flags
  const int32_t* fr = frac + n * p.c;
  const auto scatter = [&](int64_t c, Acc v) {
    const int f = fr[c];
    const int64_t at = base + c * E;
#pragma unroll
    for (int t = 0; t < PT::T; ++t)
      if (in_range[t]) fs::add(acc, flags, at + e[t], v * w[t], f);
  };
  const int64_t* os = p.output_stride;
  grad_grid_point<M, DIMS, T, Acc>(p, gout + n * os[0] + od * os[2] + oh * os[3] + ow * os[4],
                                   input + n * p.input_stride[0], pt, gg, scatter);
}

// Element k = blockIdx.x * blockDim.x + threadIdx.x of plane plane0 + blockIdx.y: its value into
// grad_input, at index plane * E + k when grad_input is contiguous, else through its strides.
template <typename T>
__global__ void __launch_bounds__(kThreads) finish_kernel(const Params p, const unsigned long long* __restrict__ acc,
                                                          const uint32_t* __restrict__ flags,
                                                          const int32_t* __restrict__ frac, int64_t plane0,
                                                          bool contiguous, T* __restrict__ ginput) {
  using Acc = typename OpMath<T>::type;
  const int64_t E = elements_per_batch(p), plane = plane0 + blockIdx.y;
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= E) return;
  const int64_t i = plane * E + k;
  const T v = store_as<T>(static_cast<Acc>(
      fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i), frac[plane])));
  if (contiguous) {
    ginput[i] = v;
    return;
  }
  const int64_t n = plane / p.c, c = plane - n * p.c;
  int64_t x, y, z;
  if (E < INT32_MAX) {  // 32-bit division is far cheaper
    const auto k32 = static_cast<uint32_t>(k), w = static_cast<uint32_t>(p.in[2]), h = static_cast<uint32_t>(p.in[1]);
    const uint32_t r = k32 / w;
    x = k32 - r * w;
    y = r % h;
    z = r / h;
  } else {
    x = k % p.in[2];
    y = (k / p.in[2]) % p.in[1];
    z = k / (p.in[2] * p.in[1]);
  }
  const int64_t* is = p.grad_input_stride;
  ginput[n * is[0] + c * is[1] + z * is[2] + y * is[3] + x * is[4]] = v;
}

// grad_input strides of a contiguous (N, C, [D,] H, W) tensor (the D stride is unused in 4-D).
bool grad_input_contiguous(const Params& p) {
  const int64_t* is = p.grad_input_stride;
  const int64_t hw = p.in[1] * p.in[2], E = elements_per_batch(p);
  return is[4] == 1 && is[3] == p.in[2] && (p.dims == 2 || is[2] == hw) && is[1] == E && is[0] == p.c * E;
}

template <Mode M, int DIMS, typename T>
cudaError_t backward_fixed_as(const Params& p, const T* gout, const T* input, const T* grid, T* ginput, T* ggrid,
                              void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  const FixedLayout L = fixed_layout(p);
  char* ws = static_cast<char*>(workspace);
  auto* acc = reinterpret_cast<unsigned long long*>(ws + L.acc);
  auto* flags = reinterpret_cast<uint32_t*>(ws + L.flags);
  auto* planes = reinterpret_cast<uint32_t*>(ws + L.planes);
  auto* frac = reinterpret_cast<int32_t*>(ws + L.frac);
  const int64_t P = points_per_batch(p), E = elements_per_batch(p), planes_n = p.n * p.c;
  const double most = static_cast<double>(P) * PointTaps<M, DIMS, Acc>::T;
  cudaError_t e;
  if ((e = cudaMemsetAsync(ws, 0, L.zeroed, stream)) != cudaSuccess) return e;
  const int64_t per_plane = std::max<int64_t>(1, kPlaneMaxBlocks / std::max<int64_t>(1, planes_n));
  for (int64_t r0 = 0; P > 0 && r0 < planes_n; r0 += kMaxRows) {
    const dim3 g(static_cast<unsigned>(std::min<int64_t>(blocks_for(P), per_plane)),
                 static_cast<unsigned>(std::min(planes_n - r0, kMaxRows)));
    plane_max_kernel<T><<<g, kThreads, 0, stream>>>(p, gout, r0, planes);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  frac_kernel<<<blocks_for(planes_n), kThreads, 0, stream>>>(planes, most, frac, planes_n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if (P > 0) {
    fused_kernel<M, DIMS, T><<<blocks_for(p.n * P), kThreads, 0, stream>>>(p, gout, input, grid, p.n * P, frac, acc,
                                                                          flags, ggrid);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  const bool contiguous = grad_input_contiguous(p);
  for (int64_t r0 = 0; E > 0 && r0 < planes_n; r0 += kMaxRows) {
    const dim3 g(blocks_for(E), static_cast<unsigned>(std::min(planes_n - r0, kMaxRows)));
    finish_kernel<T><<<g, kThreads, 0, stream>>>(p, acc, flags, frac, r0, contiguous, ginput);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace kernels

Scatter choose_scatter(const Params& p, int element_bytes) {
  if (element_bytes > 4) return kSortedGather;  // float64: the bound is sized for float opmath
  const char* v = std::getenv("TWINOPS_GRID_SAMPLE_SCATTER");
  if (v != nullptr && std::strcmp(v, "fixed") == 0) return kFixedPoint;
  if (v != nullptr && std::strcmp(v, "sort") == 0) return kSortedGather;
  return fixed_point_wins(p.mode, p.c) ? kFixedPoint : kSortedGather;
}

size_t fixed_workspace_bytes(const Params& p) { return kernels::fixed_layout(p).bytes; }

template <typename T>
cudaError_t backward_fixed(const Params& p, const T* gout, const T* input, const T* grid, T* ginput, T* ggrid,
                           void* workspace, cudaStream_t stream) {
  cudaError_t status = cudaSuccess;
  const bool compiled = dispatch_mode(p, [&](auto m, auto d) {
    status = kernels::backward_fixed_as<decltype(m)::value, decltype(d)::value, T>(p, gout, input, grid, ginput,
                                                                                  ggrid, workspace, stream);
  });
  return compiled ? status : cudaErrorInvalidValue;
}

#define TWIN_INSTANTIATE(T)                                                                                     \
  template cudaError_t backward_fixed<T>(const Params&, const T*, const T*, const T*, T*, T*, void*, cudaStream_t);
TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)
#undef TWIN_INSTANTIATE

}  // namespace grid_sample
}  // namespace twinops
