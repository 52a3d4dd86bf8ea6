// 16-byte vectors of a kernel's storage type T (4 float, 8 __half or __nv_bfloat16 values): one
// load of the channels adjacent in memory (a channels-last tensor's pixel, a (..., D) value
// row), summed into opmath accumulators one lane at a time in the order a scalar loop would, so
// a vector kernel gives the same bits as its scalar twin. Device code; CUDA headers needed.
#pragma once

#include <cstdint>

#include "dtype_convert.cuh"

namespace twinops {

template <typename T>
struct Vec16 {
  static constexpr int kLanes = 16 / static_cast<int>(sizeof(T));
  uint4 raw;

  // The vector at p (16-byte aligned), or zeros when `valid` is false (nothing is read).
  static __device__ __forceinline__ Vec16 load_or_zero(const T* p, bool valid) {
    Vec16 v;
    v.raw = valid ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0u, 0u, 0u, 0u);
    return v;
  }
  __device__ __forceinline__ T lane(int k) const { return reinterpret_cast<const T*>(&raw)[k]; }

  // acc[k] += lane k * w for every lane, in opmath (`s += v * w`, as the scalar loops write it).
  template <typename Acc>
  __device__ __forceinline__ void accumulate(Acc (&acc)[kLanes], Acc w) const {
#pragma unroll
    for (int k = 0; k < kLanes; ++k) acc[k] += DtypeConvert<T>::template load<Acc>(lane(k)) * w;
  }
};

}  // namespace twinops
