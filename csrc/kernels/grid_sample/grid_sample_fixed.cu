// grad_input of grid_sample by the fixed-point scatter (csrc/kernels/fixed_scatter.cuh): one
// thread per output point computes its taps once and, for every channel, adds grad_output *
// weight of each tap into a 64-bit integer accumulator per input element with an atomic add.
// Integer addition is associative, so the result is bitwise the same whatever the schedule
// (deterministic, as the sorted gather of grid_sample.cu), without the sort.
//
// The scale of a plane (n, c) comes from a bound on what one element can receive: every
// contribution is at most max |grad_output| of the plane (|weight| <= 1 in every mode: the
// bilinear, trilinear and nearest weights, and the Keys cubic coefficients at A = -0.75,
// are at most 1), and an element receives at most points * taps contributions. Three passes:
// the plane maxima (plane_max_kernel), the scatter (scatter_kernel), and the conversion of
// every element to the output type (finish_kernel). A NaN grid point adds nothing (the
// sorted gather's rule); a non-finite grad_output reaches the element through the flags.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

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
// every plane, and each plane's max |grad_output| (as float bits, fs::max_of_bits).
struct FixedLayout {
  size_t acc, flags, planes, bytes;
};

FixedLayout fixed_layout(const Params& p) {
  const int64_t planes = p.n * p.c, elems = planes * elements_per_batch(p);
  WorkspaceOffsets w;
  FixedLayout L{};
  L.acc = w.take(sizeof(unsigned long long) * static_cast<size_t>(elems));
  L.flags = w.take(sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(elems)));
  L.planes = w.take(sizeof(uint32_t) * static_cast<size_t>(planes));
  L.bytes = w.end;
  return L;
}

// The fractional bits of plane `plane`: its max |grad_output| times the contributions one
// element can receive.
__device__ __forceinline__ int plane_frac(const uint32_t* planes, int64_t plane, double most) {
  return fs::frac_bits(static_cast<double>(fs::max_of_bits(planes[plane])) * most);
}

// Each plane's max |grad_output| over its finite values: per warp first, then one atomic.
// Block row y is batch n0 + y; threads past the batch's points take part in the shuffles with 0.
template <typename T>
__global__ void __launch_bounds__(kThreads) plane_max_kernel(const Params p, const T* __restrict__ gout, int64_t n0,
                                                             uint32_t* __restrict__ planes) {
  const int64_t P = points_per_batch(p), n = n0 + blockIdx.y;
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t od = 0, oh = 0, ow = 0;
  if (q < P) split_point(p, q, &od, &oh, &ow);
  const int64_t* os = p.output_stride;
  const T* go = gout + n * os[0] + od * os[2] + oh * os[3] + ow * os[4];
  for (int64_t c = 0; c < p.c; ++c) {
    uint32_t bits = 0;
    if (q < P) {
      const float a = fabsf(static_cast<float>(load(go + c * os[1])));
      if (a <= 3.402823466e38f) bits = __float_as_uint(a);  // finite (NaN fails the comparison)
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_xor_sync(0xffffffffu, bits, o));
    if ((threadIdx.x & 31) == 0 && bits != 0) atomicMax(planes + n * p.c + c, bits);
  }
}

// One thread per output point of batch n0 + blockIdx.y: its taps once, then every channel's
// contributions (grad_output * weight, in the opmath type) into the accumulators.
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads) scatter_kernel(const Params p, const T* __restrict__ gout,
                                                           const T* __restrict__ grid, int64_t n0,
                                                           const uint32_t* __restrict__ planes, double most,
                                                           unsigned long long* __restrict__ acc,
                                                           uint32_t* __restrict__ flags) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t P = points_per_batch(p), E = elements_per_batch(p), n = n0 + blockIdx.y;
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= P) return;
  int64_t od, oh, ow;
  split_point(p, q, &od, &oh, &ow);
  Acc gx, gy, gz;
  read_grid<DIMS>(p, grid, n, od, oh, ow, &gx, &gy, &gz);
  PT pt;
  if (!point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt)) return;  // a NaN point adds nothing
  int64_t e[PT::T];
  Acc w[PT::T];
  bool ok[PT::T];
#pragma unroll
  for (int t = 0; t < PT::T; ++t) {
    ok[t] = pt.valid(t);
    e[t] = (int64_t(pt.z.idx[PT::kz(t)]) * p.in[1] + pt.y.idx[PT::ky(t)]) * p.in[2] + pt.x.idx[PT::kx(t)];
    w[t] = pt.weight(t);
  }
  const int64_t* os = p.output_stride;
  const T* go = gout + n * os[0] + od * os[2] + oh * os[3] + ow * os[4];
  for (int64_t c = 0; c < p.c; ++c) {
    const int64_t plane = n * p.c + c;
    const int frac = plane_frac(planes, plane, most);
    const Acc g = load(go + c * os[1]);
#pragma unroll
    for (int t = 0; t < PT::T; ++t)
      if (ok[t]) fs::add(acc, flags, plane * E + e[t], g * w[t], frac);
  }
}

// One thread per input element of every plane: its value into grad_input (any strides).
template <typename T>
__global__ void __launch_bounds__(kThreads) finish_kernel(const Params p, const unsigned long long* __restrict__ acc,
                                                          const uint32_t* __restrict__ flags,
                                                          const uint32_t* __restrict__ planes, double most,
                                                          T* __restrict__ ginput, int64_t total) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t E = elements_per_batch(p), plane = i / E, k = i - plane * E;
  const int64_t n = plane / p.c, c = plane - n * p.c;
  const int64_t x = k % p.in[2], y = (k / p.in[2]) % p.in[1], z = k / (p.in[2] * p.in[1]);
  const double v = fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i),
                                   plane_frac(planes, plane, most));
  const int64_t* is = p.grad_input_stride;
  ginput[n * is[0] + c * is[1] + z * is[2] + y * is[3] + x * is[4]] = store_as<T>(static_cast<Acc>(v));
}

template <Mode M, int DIMS, typename T>
cudaError_t grad_input_fixed_as(const Params& p, const T* gout, const T* grid, T* ginput, void* workspace,
                                cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  const FixedLayout L = fixed_layout(p);
  char* ws = static_cast<char*>(workspace);
  auto* acc = reinterpret_cast<unsigned long long*>(ws + L.acc);
  auto* flags = reinterpret_cast<uint32_t*>(ws + L.flags);
  auto* planes = reinterpret_cast<uint32_t*>(ws + L.planes);
  const int64_t P = points_per_batch(p), total = p.n * p.c * elements_per_batch(p);
  const double most = static_cast<double>(P) * PointTaps<M, DIMS, Acc>::T;
  cudaError_t e;
  if ((e = cudaMemsetAsync(ws, 0, L.bytes, stream)) != cudaSuccess) return e;
  constexpr int64_t kMaxRows = 65535;  // gridDim.y
  for (int64_t n0 = 0; P > 0 && n0 < p.n; n0 += kMaxRows) {
    const dim3 g(blocks_for(P), static_cast<unsigned>(p.n - n0 < kMaxRows ? p.n - n0 : kMaxRows));
    plane_max_kernel<T><<<g, kThreads, 0, stream>>>(p, gout, n0, planes);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  for (int64_t n0 = 0; P > 0 && n0 < p.n; n0 += kMaxRows) {
    const dim3 g(blocks_for(P), static_cast<unsigned>(p.n - n0 < kMaxRows ? p.n - n0 : kMaxRows));
    scatter_kernel<M, DIMS, T><<<g, kThreads, 0, stream>>>(p, gout, grid, n0, planes, most, acc, flags);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  finish_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(p, acc, flags, planes, most, ginput, total);
  return cudaGetLastError();
}

}  // namespace kernels

bool fixed_scatter_enabled() {
  const char* v = std::getenv("TWINOPS_GRID_SAMPLE_SCATTER");
  return v != nullptr && std::strcmp(v, "fixed") == 0;
}

size_t fixed_workspace_bytes(const Params& p) { return kernels::fixed_layout(p).bytes; }

template <typename T>
cudaError_t grad_input_fixed(const Params& p, const T* gout, const T* grid, T* ginput, void* workspace,
                             cudaStream_t stream) {
  cudaError_t status = cudaSuccess;
  const bool compiled = dispatch_mode(p, [&](auto m, auto d) {
    status = kernels::grad_input_fixed_as<decltype(m)::value, decltype(d)::value, T>(p, gout, grid, ginput,
                                                                                    workspace, stream);
  });
  return compiled ? status : cudaErrorInvalidValue;
}

template cudaError_t grad_input_fixed<float>(const Params&, const float*, const float*, float*, void*, cudaStream_t);
template cudaError_t grad_input_fixed<__half>(const Params&, const __half*, const __half*, __half*, void*,
                                              cudaStream_t);
template cudaError_t grad_input_fixed<__nv_bfloat16>(const Params&, const __nv_bfloat16*, const __nv_bfloat16*,
                                                     __nv_bfloat16*, void*, cudaStream_t);

}  // namespace grid_sample
}  // namespace twinops
