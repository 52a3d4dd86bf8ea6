// Conversions between a kernel's storage type T and the type it computes in (Acc, its opmath:
// float for __half and __nv_bfloat16, as ATen's): a cast for float and double, and for the
// half types the conversion intrinsics through float, rounding to nearest even, since torch
// builds CUDA code with __CUDA_NO_HALF_CONVERSIONS__ (no implicit or static_cast conversion).
// Host and device code; CUDA headers needed.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../common/twinops_common.h"

namespace twinops {

template <typename T>
struct DtypeConvert {
  template <typename Acc>
  static __host__ __device__ __forceinline__ Acc load(T v) {
    return static_cast<Acc>(v);
  }
  template <typename Acc>
  static __host__ __device__ __forceinline__ T store(Acc v) {
    return static_cast<T>(v);
  }
};

template <>
struct DtypeConvert<__half> {
  template <typename Acc>
  static __host__ __device__ __forceinline__ Acc load(__half v) {
    return static_cast<Acc>(__half2float(v));
  }
  template <typename Acc>
  static __host__ __device__ __forceinline__ __half store(Acc v) {
    return __float2half_rn(static_cast<float>(v));
  }
};

template <>
struct DtypeConvert<__nv_bfloat16> {
  template <typename Acc>
  static __host__ __device__ __forceinline__ Acc load(__nv_bfloat16 v) {
    return static_cast<Acc>(__bfloat162float(v));
  }
  template <typename Acc>
  static __host__ __device__ __forceinline__ __nv_bfloat16 store(Acc v) {
    return __float2bfloat16_rn(static_cast<float>(v));
  }
};

#if defined(__CUDACC__)
// An element of *p in its opmath type (OpMath, ../common/twinops_common.h), and an opmath value
// stored as T: the kernels' loads and stores.
template <typename T>
__device__ __forceinline__ typename OpMath<T>::type load(const T* p) {
  return DtypeConvert<T>::template load<typename OpMath<T>::type>(*p);
}

template <typename T, typename Acc>
__device__ __forceinline__ T store_as(Acc v) {
  return DtypeConvert<T>::template store<Acc>(v);
}
#endif

}  // namespace twinops
