// Deterministic scatter-add in fixed point, for gradients that many threads add into one tensor
// (the backward of an op that samples its input at data-dependent points).
//
// Each contribution v to an element is rounded once to a multiple of 2^-frac (round half to
// even) and added to the element's 64-bit integer accumulator with an atomic add. Integer
// addition is associative, so the sum, and the value converted from it at the end, are bitwise
// the same whatever the order of the atomics: run to run, launch configuration to launch
// configuration, and against the host emulation below (fixed_round / fixed_value).
//
// The scale. A plane (the elements one bound covers) takes frac = 62 - ceil(log2(bound)), with
// `bound` >= the sum of |v| any element of the plane can receive (callers use max |v| over the
// plane's finite contributions times the most contributions one element can get). Then no
// accumulator passes 2^62 + (contributions) / 2 < 2^63: no overflow. An element that receives m
// contributions is off the exact sum of its contributions by at most m * 2^-(frac + 1) <= m *
// bound * 2^-62, before the one rounding to the output type. Next to float32 (2^-24 relative),
// that is below one rounding for every element whose magnitude is above m * bound * 2^-38; only
// elements smaller than that, in a plane whose bound is at least 2^38 times larger, keep less
// than float32's relative precision (they keep their absolute error bound).
//
// Non-finite contributions (a NaN or infinite gradient) do not touch the accumulator: they set
// the element's flags (+Inf seen, -Inf seen, NaN seen), and the element's value is then NaN
// where NaN or both infinities came, else the infinity that came: what a float sum gives in any
// order. Flags take 4 bits per element, 8 elements per 32-bit word.
#pragma once

#include <cstdint>

#include <cmath>

#include "../common/twinops_common.h"

namespace twinops {
namespace fixed_scatter {

// The flags of one element.
constexpr uint32_t kPosInf = 1, kNegInf = 2, kNaN = 4;
// Elements per flag word and the bits of each.
constexpr int kFlagsPerWord = 8, kFlagBits = 4;

// Flag words for `elements` elements.
TWIN_HD constexpr int64_t flag_words(int64_t elements) { return (elements + kFlagsPerWord - 1) / kFlagsPerWord; }

// A plane's fractional bits for a bound (>= 0, finite) on the sum of |v| any of its elements
// receives: 62 - ceil(log2(bound)), at most 1000 (2^frac stays a finite double), which is also
// the value for a bound of 0 (a plane that receives only zeros).
TWIN_HD int frac_bits(double bound) {
  constexpr int kMax = 1000;
  if (!(bound > 0.0)) return kMax;
  int e = 0;
  const double m = ::frexp(bound, &e);  // bound = m * 2^e with m in [0.5, 1)
  const int ceil_log2 = m == 0.5 ? e - 1 : e;
  const int frac = 62 - ceil_log2;
  return frac < kMax ? frac : kMax;
}

// v (finite, |v| <= bound) as a multiple of 2^-frac, the integer the accumulator adds: v * 2^frac
// is exact in double for a float v (and for a double v whose scaled value is below 2^62 with at
// most 53 significant bits), rounded half to even.
TWIN_HD int64_t fixed_round(double v, int frac) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(::ldexp(v, frac));
#else
  return std::llrint(::ldexp(v, frac));  // the default rounding mode: to nearest, ties to even
#endif
}

// The value of an element from its accumulator and its flags.
TWIN_HD double fixed_value(int64_t acc, uint32_t flags, int frac) {
  if (flags & kNaN || (flags & kPosInf && flags & kNegInf)) return NAN;
  if (flags & kPosInf) return INFINITY;
  if (flags & kNegInf) return -INFINITY;
  return ::ldexp(static_cast<double>(acc), -frac);
}

// The flag of a non-finite v (0 for a finite one).
TWIN_HD uint32_t flag_of(double v) {
  if (v != v) return kNaN;
  if (v == INFINITY) return kPosInf;
  if (v == -INFINITY) return kNegInf;
  return 0;
}

// One element's flags from its word.
TWIN_HD uint32_t element_flags(const uint32_t* flags, int64_t i) {
  return (flags[i / kFlagsPerWord] >> (kFlagBits * (i % kFlagsPerWord))) & 0xFu;
}

#if defined(__CUDACC__)
// Adds the float v to element i: acc (one int64 per element, zeroed before the first add) and
// flags (flag_words(elements) words, zeroed). The scaling and rounding are single precision:
// v * 2^frac is exact in float too (a power-of-two scaling that stays below 2^63, or falls below
// 2^-126 only where the integer is 0 anyway), so the integer is fixed_round's, the host
// emulation's.
__device__ __forceinline__ void add(unsigned long long* acc, uint32_t* flags, int64_t i, float v, int frac) {
  if (!isfinite(v)) {
    atomicOr(flags + i / kFlagsPerWord, flag_of(v) << (kFlagBits * (i % kFlagsPerWord)));
    return;
  }
  const long long q = __float2ll_rn(ldexpf(v, frac));
  if (q != 0) atomicAdd(acc + i, static_cast<unsigned long long>(q));  // two's complement: a signed add
}

// |v| as float bits for a plane's max (max_of_bits reads it back), 0 for a non-finite v: the
// bound covers the finite contributions, the flags the others.
__device__ __forceinline__ uint32_t abs_bits(float v) {
  const float a = fabsf(v);
  return a <= 3.402823466e38f ? __float_as_uint(a) : 0u;  // finite only (NaN fails the comparison)
}

// The block's max of `bits` (non-negative float bits, as abs_bits gives) raised into *slot with one
// atomic: warp shuffles, then shared memory. Every thread of the block (kThreads, a multiple of 32)
// calls it; it may be called twice in a row (it syncs before reusing its shared memory). One
// atomic per block: atomics on one address serialise at its L2 slice.
template <int kThreads>
__device__ __forceinline__ void block_max_into(uint32_t bits, uint32_t* slot) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_xor_sync(0xffffffffu, bits, o));
  __shared__ uint32_t warp_max[kThreads / 32];
  __syncthreads();
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = bits;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) bits = max(bits, warp_max[w]);
    if (bits != 0) atomicMax(slot, bits);
  }
}
#endif

// A plane's max |v| kept as float bits raised with an integer atomicMax (non-negative floats
// order as their bit patterns, so the integer max is the float max, in any order): the float
// they stand for (0 where nothing was noted).
TWIN_HD float max_of_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  static_assert(sizeof(f) == sizeof(bits), "float is 32-bit");
  __builtin_memcpy(&f, &bits, sizeof(f));
  return f;
#endif
}

}  // namespace fixed_scatter
}  // namespace twinops
