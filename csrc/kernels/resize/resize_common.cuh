// Device helpers shared by the resize kernel families: the half/bfloat16 conversions (those
// of ../dtype_convert.cuh), packed elements, vector loads and stores, a table entry computed
// in a kernel, the plane walk.
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

#include "../dtype_convert.cuh"
#include "resize.cuh"

namespace twinops {
namespace resize {

// Convert (resize.cuh) casts; the half types take the intrinsics of DtypeConvert.
template <>
struct Convert<__half> : DtypeConvert<__half> {};
template <>
struct Convert<__nv_bfloat16> : DtypeConvert<__nv_bfloat16> {};

namespace kernels {

constexpr int kVec = 4;  // adjacent outputs (W first) or window columns (H first) per thread

// Elements of T in one 16-byte load (the pairs and halving kernels' loads).
template <typename T>
constexpr int kPairLoad = 16 / static_cast<int>(sizeof(T));

// Four adjacent outputs with one (double: two) vector stores; `o` is aligned. The explicit
// store intrinsics keep the compiler from splitting them (it did, with plain assignments),
// and the streaming hint keeps a large output from evicting the input rows from L2.
template <typename T, typename Acc>
__device__ void store4(T* o, const Acc* v) {
#pragma unroll
  for (int k = 0; k < 4; ++k) o[k] = Convert<T>::template store<Acc>(v[k]);
}
__device__ void store4(float* o, const float* v) {
  __stcs(reinterpret_cast<float4*>(o), make_float4(v[0], v[1], v[2], v[3]));
}
__device__ void store4(double* o, const double* v) {
  __stcs(reinterpret_cast<double2*>(o), make_double2(v[0], v[1]));
  __stcs(reinterpret_cast<double2*>(o) + 1, make_double2(v[2], v[3]));
}
template <typename P>
__device__ unsigned bits(P v) {
  return *reinterpret_cast<const unsigned*>(&v);
}
__device__ void store4(__half* o, const float* v) {
  __stcs(reinterpret_cast<uint2*>(o), make_uint2(bits(__floats2half2_rn(v[0], v[1])), bits(__floats2half2_rn(v[2], v[3]))));
}
__device__ void store4(__nv_bfloat16* o, const float* v) {
  __stcs(reinterpret_cast<uint2*>(o),
         make_uint2(bits(__floats2bfloat162_rn(v[0], v[1])), bits(__floats2bfloat162_rn(v[2], v[3]))));
}

template <typename V, int N>
struct alignas(sizeof(V) * N <= 16 ? sizeof(V) * N : 16) Pack {
  V v[N];
};

// One element into shared memory: asynchronously where cp.async can (4 and 8 bytes).
template <typename T>
__device__ void copy_element(T* dst, const T* src) {
  if constexpr (sizeof(T) >= 4) {
    __pipeline_memcpy_async(dst, src, sizeof(T));
  } else {
    *dst = __ldg(src);
  }
}

// The TY taps of one table entry from shared memory, with vector loads where the entry's
// bytes allow (entries are TY * sizeof(Acc) apart from a 16-byte aligned start).
template <int TY, typename Acc>
__device__ void load_taps(const Acc* w, Acc* out) {
  constexpr int bytes = TY * static_cast<int>(sizeof(Acc));
  constexpr int V = bytes % 16 == 0 ? 16 / static_cast<int>(sizeof(Acc)) : (bytes % 8 == 0 ? 8 / static_cast<int>(sizeof(Acc)) : 1);
#pragma unroll
  for (int a = 0; a < TY; a += V) {
    const Pack<Acc, V> p = *reinterpret_cast<const Pack<Acc, V>*>(w + a);
#pragma unroll
    for (int e = 0; e < V; ++e) out[a + e] = p.v[e];
  }
}

// One table entry of a staged tile (axis H when `row`, else W). Called, not inlined: the
// staged kernel variants share one copy, and their registers are not sized by it.
template <typename Acc>
__device__ __noinline__ void tile_entry(const Params& p, bool row, int32_t d, int32_t taps, int32_t* first, Acc* w) {
  axis_entry<Acc>(p, row ? p.h : p.w, d, taps, first, w);
}

// Calls body(src, plane) for the output planes blockIdx.z, blockIdx.z + gridDim.z, ... below
// `planes` (N * C), src pointing at plane (n, c) of the strided input (n and c are stepped,
// not divided, per plane). The pairs and ring kernels loop over planes so (one_tap_kernel
// writes the same walk out).
template <typename T, typename Acc, typename Body>
__device__ __forceinline__ void for_planes(const Gather<T, Acc>& g, int32_t C, int64_t planes, Body&& body) {
  const int64_t step = gridDim.z, step_n = step / C, step_c = step % C;
  int64_t n = blockIdx.z / C, c = blockIdx.z % C;
  for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
    body(g.src + n * g.stride[0] + c * g.stride[1], plane);
    n += step_n;
    c += step_c;
    if (c >= C) {
      c -= C;
      ++n;
    }
  }
}

// The type of one aligned load of kBytes (2, 4, 8 or 16) bytes.
template <size_t kBytes>
using RawLoad = std::conditional_t<
    kBytes == 16, uint4,
    std::conditional_t<kBytes == 8, uint2, std::conditional_t<kBytes == 4, unsigned, unsigned short>>>;

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
