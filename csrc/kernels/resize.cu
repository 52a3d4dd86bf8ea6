// CUDA kernels of the resize op: table builders, forward gather, deterministic backward gather.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

#include "resize.cuh"

namespace twinops {
namespace resize {

template <>
struct Convert<__half> {
  template <typename Acc>
  static __host__ __device__ Acc load(__half v) {
    return static_cast<Acc>(__half2float(v));
  }
  template <typename Acc>
  static __host__ __device__ __half store(Acc v) {
    return __float2half_rn(static_cast<float>(v));
  }
};

template <>
struct Convert<__nv_bfloat16> {
  template <typename Acc>
  static __host__ __device__ Acc load(__nv_bfloat16 v) {
    return static_cast<Acc>(__bfloat162float(v));
  }
  template <typename Acc>
  static __host__ __device__ __nv_bfloat16 store(Acc v) {
    return __float2bfloat16_rn(static_cast<float>(v));
  }
};

namespace {

constexpr int kThreads = 256;

template <typename Acc>
__global__ void build_tables_kernel(Params p, Workspace L, char* ws) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int k = i < p.h.out ? 0 : 1;
  const Axis& a = k == 0 ? p.h : p.w;
  const int64_t d = k == 0 ? i : i - p.h.out;
  if (d >= a.out) return;
  resize_axis_entry<Acc>(p, a, d, L.taps[k], reinterpret_cast<int32_t*>(ws + L.first[k]),
                         reinterpret_cast<int32_t*>(ws + L.count[k]), reinterpret_cast<Acc*>(ws + L.weight[k]));
}

__global__ void invert_kernel(Params p, Workspace L, char* ws) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int k = i < p.h.out ? 0 : 1;
  const int64_t d = k == 0 ? i : i - p.h.out;
  if (d >= (k == 0 ? p.h.out : p.w.out)) return;
  const int32_t* first = reinterpret_cast<const int32_t*>(ws + L.first[k]);
  const int32_t* count = reinterpret_cast<const int32_t*>(ws + L.count[k]);
  int32_t* lo = reinterpret_cast<int32_t*>(ws + L.lo[k]);
  int32_t* hi = reinterpret_cast<int32_t*>(ws + L.hi[k]);
  // atomicMin/Max are order independent: the table (and so the backward) is deterministic.
  for (int32_t t = 0; t < count[d]; ++t) {
    atomicMin(lo + first[d] + t, static_cast<int32_t>(d));
    atomicMax(hi + first[d] + t, static_cast<int32_t>(d));
  }
}

template <typename T, typename Acc, typename I>
__global__ void forward_kernel(Geometry g, Tables<Acc> t, I OH, I OW, const T* __restrict__ in, T* __restrict__ out,
                               I total, bool channels_last, Acc extrapolation) {
  for (I idx = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<I>(gridDim.x) * blockDim.x) {
    I n, c, oy, ox;
    decompose<I>(idx, static_cast<I>(g.c), OH, OW, channels_last, &n, &c, &oy, &ox);
    out[idx] = Convert<T>::template store<Acc>(forward_element<T, Acc>(in, g, n, c, oy, ox, t.first[0], t.count[0], t.weight[0],
                                                      t.taps[0], t.first[1], t.count[1], t.weight[1], t.taps[1],
                                                      extrapolation));
  }
}

template <typename T, typename Acc, typename I>
__global__ void backward_kernel(Geometry g, Tables<Acc> t, I IH, I IW, const T* __restrict__ gout,
                                T* __restrict__ gin, I total, bool channels_last) {
  for (I idx = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<I>(gridDim.x) * blockDim.x) {
    I n, c, iy, ix;
    decompose<I>(idx, static_cast<I>(g.c), IH, IW, channels_last, &n, &c, &iy, &ix);
    gin[idx] = Convert<T>::template store<Acc>(backward_element<T, Acc>(gout, g, n, c, iy, ix, t.first[0], t.count[0], t.weight[0],
                                                       t.taps[0], t.lo[0], t.hi[0], t.first[1], t.count[1],
                                                       t.weight[1], t.taps[1], t.lo[1], t.hi[1]));
  }
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < (1 << 20) ? (b > 0 ? b : 1) : (1 << 20));
}

template <typename Acc>
cudaError_t build_tables(const Params& p, const Workspace& L, char* ws, bool backward, cudaStream_t stream) {
  const int64_t entries = p.h.out + p.w.out;
  build_tables_kernel<Acc><<<blocks_for(entries), kThreads, 0, stream>>>(p, L, ws);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (!backward) return cudaSuccess;
  for (int k = 0; k < 2; ++k) {
    const int64_t in = k == 0 ? p.h.in : p.w.in;
    if (cudaError_t e = cudaMemsetAsync(ws + L.lo[k], 0x7f, sizeof(int32_t) * in, stream); e != cudaSuccess) return e;
    if (cudaError_t e = cudaMemsetAsync(ws + L.hi[k], 0xff, sizeof(int32_t) * in, stream); e != cudaSuccess) return e;
  }
  invert_kernel<<<blocks_for(entries), kThreads, 0, stream>>>(p, L, ws);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
cudaError_t forward_cuda(const Params& p, const Geometry& g, const T* input, T* output, bool channels_last,
                         void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  const Workspace L = workspace_layout(p, sizeof(Acc), false);
  char* ws = static_cast<char*>(workspace);
  const int64_t total = g.n * g.c * p.h.out * p.w.out;
  if (total == 0) return cudaSuccess;
  if (cudaError_t e = build_tables<Acc>(p, L, ws, false, stream); e != cudaSuccess) return e;
  const Tables<Acc> t = tables_at<Acc>(L, ws);
  const Acc ex = static_cast<Acc>(p.extrapolation_value);
  if (total < INT32_MAX) {  // 32-bit index decomposition; offsets stay 64-bit
    forward_kernel<T, Acc, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        g, t, static_cast<int32_t>(p.h.out), static_cast<int32_t>(p.w.out), input, output,
        static_cast<int32_t>(total), channels_last, ex);
  } else {
    forward_kernel<T, Acc, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(g, t, p.h.out, p.w.out, input, output,
                                                                                total, channels_last, ex);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const Geometry& g, const T* grad_output, T* grad_input, bool channels_last,
                          void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  const Workspace L = workspace_layout(p, sizeof(Acc), true);
  char* ws = static_cast<char*>(workspace);
  const int64_t total = g.n * g.c * p.h.in * p.w.in;
  if (total == 0) return cudaSuccess;
  if (cudaError_t e = build_tables<Acc>(p, L, ws, true, stream); e != cudaSuccess) return e;
  const Tables<Acc> t = tables_at<Acc>(L, ws);
  if (total < INT32_MAX) {
    backward_kernel<T, Acc, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        g, t, static_cast<int32_t>(p.h.in), static_cast<int32_t>(p.w.in), grad_output, grad_input,
        static_cast<int32_t>(total), channels_last);
  } else {
    backward_kernel<T, Acc, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(g, t, p.h.in, p.w.in, grad_output,
                                                                                 grad_input, total, channels_last);
  }
  return cudaGetLastError();
}

#define TWIN_INSTANTIATE(T)                                                                                        \
  template cudaError_t forward_cuda<T>(const Params&, const Geometry&, const T*, T*, bool, void*, cudaStream_t); \
  template cudaError_t backward_cuda<T>(const Params&, const Geometry&, const T*, T*, bool, void*, cudaStream_t);

TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)

#undef TWIN_INSTANTIATE

}  // namespace resize
}  // namespace twinops
