// Tiny helpers shared by the kernels, the torch frontend and the TensorRT plugins.
// No torch and no TensorRT headers here: this file must compile with a plain C++17
// host compiler (CPU-only builds) as well as with nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TWIN_HD __host__ __device__ __forceinline__
#define TWIN_DEVICE_COMPILE 1
#else
#define TWIN_HD inline
#endif

namespace twinops {

// Accumulation ("opmath") type for a storage type: float for float/half/bfloat16,
// double for double. Specialised per storage type by the translation units that
// know the half types (CUDA headers or c10), so this header needs neither.
template <typename T>
struct OpMath {
  using type = float;
};
template <>
struct OpMath<double> {
  using type = double;
};

template <typename T>
TWIN_HD T clamp_index(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Floor division for a possibly negative numerator and a positive denominator.
TWIN_HD int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace twinops
