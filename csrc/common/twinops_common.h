// Tiny helpers shared by the kernels, the torch frontend and the TensorRT plugins.
// No torch and no TensorRT headers here: this file must compile with a plain C++17
// host compiler (CPU-only builds) as well as with nvcc.
#pragma once

#include <cmath>
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

// A product that is never fused with a neighbouring add into an FMA, and a fused multiply-add
// that always is, on the host and on the device alike. nvcc contracts a * b + c by default,
// and whether it does depends on the surrounding code; the host builds with
// -ffp-contract=off (setup.py, csrc/trt/build.py). Math whose result must be bitwise the
// same in two kernels, or on the host and the device, spells its products and FMAs with these.
template <typename F>
TWIN_HD F mul_rn(F a, F b) {
  static_assert(sizeof(F) == sizeof(float) || sizeof(F) == sizeof(double), "float or double");
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(F) == sizeof(float)) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

template <typename F>
TWIN_HD F fma_rn(F a, F b, F c) {
  static_assert(sizeof(F) == sizeof(float) || sizeof(F) == sizeof(double), "float or double");
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(F) == sizeof(float)) return __fmaf_rn(a, b, c);
  else return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

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
