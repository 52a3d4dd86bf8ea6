// Sampling a tensor at data-dependent points: the per-axis taps, weights and weight derivatives
// of nearest, linear and cubic interpolation at a normalised coordinate in [-1, 1], with zeros,
// border or reflection padding, by PyTorch's grid-sampler rules. Host and device code (TWIN_HD):
// an op's CPU loops and its CUDA kernels compute the same taps. Acc is the opmath type (float
// for float / half / bfloat16, double for double).
//
// Rules (PyTorch's where PyTorch defines one):
// - unnormalise, then pad the coordinate (linear, nearest) or each tap (cubic, as ATen does);
// - a NaN coordinate makes the whole point NaN (axis_taps returns false: the caller writes NaN
//   and adds no gradient);
// - an infinite value: zeros -> outside (0), border -> the edge, reflection -> NaN like a NaN
//   coordinate (a reflection of infinity has no limit). A finite value whose float coordinate
//   overflows is finite: zeros and border read it as infinite (the same taps), and reflection
//   takes points more than 4 axis lengths out in double;
// - every in-range tap is read, also when its weight is 0 (Inf * 0 = NaN as in ATen), and
//   out-of-range taps read nothing (zeros padding);
// - no float -> int conversion happens before the value is known to lie in [0, size - 1]:
//   coordinates may hold 1e30, Inf or NaN.
// Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <math.h>

#include <type_traits>

#include "../common/twinops_common.h"

namespace twinops {
namespace sampling {

enum Mode : int32_t { kLinear = 0, kNearest = 1, kCubic = 2 };  // PyTorch's GridSamplerInterpolation order
enum Padding : int32_t { kZeros = 0, kBorder = 1, kReflection = 2 };  // PyTorch's GridSamplerPadding order

TWIN_HD float gs_floor(float v) { return floorf(v); }
TWIN_HD double gs_floor(double v) { return floor(v); }
TWIN_HD float gs_fmod(float a, float b) { return fmodf(a, b); }
TWIN_HD double gs_fmod(double a, double b) { return fmod(a, b); }
// Round half to even in the default rounding mode, as ATen's nearbyint.
TWIN_HD float gs_rint(float v) { return rintf(v); }
TWIN_HD double gs_rint(double v) { return rint(v); }
// Written as comparisons so they mean the same in host and device code (no fast-math here).
template <typename Acc>
TWIN_HD bool gs_isnan(Acc v) {
  return !(v == v);
}
template <typename Acc>
TWIN_HD bool gs_isinf(Acc v) {
  return v == v && !(v - v == v - v);
}

// Taps per axis: nearest 1, linear 2, cubic 4.
TWIN_HD constexpr int axis_taps(Mode m) { return m == kNearest ? 1 : (m == kLinear ? 2 : 4); }

// The coefficient of cubic convolution (Keys, A = -0.75, as ATen's upsample_bicubic2d and
// grid sampler): the tap at distance 1 + t (cc2), t (cc1), 1 - t (cc1), 2 - t (cc2).
constexpr double kCubicA = -0.75;
template <typename Acc>
TWIN_HD Acc cc1(Acc x) {
  const Acc A = Acc(kCubicA);
  return ((A + Acc(2)) * x - (A + Acc(3))) * x * x + Acc(1);
}
template <typename Acc>
TWIN_HD Acc cc2(Acc x) {
  const Acc A = Acc(kCubicA);
  return ((A * x - Acc(5) * A) * x + Acc(8) * A) * x - Acc(4) * A;
}
// Their derivatives d cc / d x.
template <typename Acc>
TWIN_HD Acc dcc1(Acc x) {
  const Acc A = Acc(kCubicA);
  return (Acc(3) * (A + Acc(2)) * x - Acc(2) * (A + Acc(3))) * x;
}
template <typename Acc>
TWIN_HD Acc dcc2(Acc x) {
  const Acc A = Acc(kCubicA);
  return (Acc(3) * A * x - Acc(10) * A) * x + Acc(8) * A;
}

// Grid value in [-1, 1] -> pixel coordinate; `scale` receives d coordinate / d grid value.
template <typename Acc>
TWIN_HD Acc unnormalize(Acc g, int64_t size, bool align_corners, Acc* scale) {
  if (align_corners) {
    *scale = Acc(size - 1) / Acc(2);
    return ((g + Acc(1)) / Acc(2)) * Acc(size - 1);
  }
  *scale = Acc(size) / Acc(2);
  return ((g + Acc(1)) * Acc(size) - Acc(1)) / Acc(2);
}

// Clip to [0, size - 1]; `mult` = d result / d x, 0 on and beyond the borders (ATen counts
// the borders as out of bounds for the gradient).
template <typename Acc>
TWIN_HD Acc clip_coordinate(Acc x, int64_t size, Acc* mult) {
  const Acc hi = Acc(size - 1);
  if (x <= Acc(0)) {
    *mult = Acc(0);
    return Acc(0);
  }
  if (x >= hi) {
    *mult = Acc(0);
    return hi;
  }
  *mult = Acc(1);
  return x;
}

// Reflect x (finite) into [low, high], the bounds given doubled (so half-integers are ints);
// `mult` = d result / d x (+-1). The parity of the flips is taken in floating point: their
// count may exceed any integer type.
template <typename Acc>
TWIN_HD Acc reflect_coordinate(Acc x, int64_t twice_low, int64_t twice_high, Acc* mult) {
  if (twice_low == twice_high) {
    *mult = Acc(0);
    return Acc(0);
  }
  const Acc lo = Acc(twice_low) / Acc(2);
  const Acc span = Acc(twice_high - twice_low) / Acc(2);
  Acc v = x - lo;
  Acc sign = Acc(1);
  if (v < Acc(0)) {
    sign = Acc(-1);
    v = -v;
  }
  const Acc extra = gs_fmod(v, span);
  const Acc flips = gs_floor(v / span);
  const bool odd = gs_fmod(flips, Acc(2)) != Acc(0);
  *mult = odd ? -sign : sign;
  return odd ? span - extra + lo : extra + lo;
}

// Padding of a (finite) coordinate: border clips, reflection reflects then clips; zeros
// leaves it. `mult` = d result / d x.
template <typename Acc>
TWIN_HD Acc pad_coordinate(Acc x, int64_t size, Padding pad, bool align_corners, Acc* mult) {
  if (pad == kBorder) return clip_coordinate(x, size, mult);
  if (pad == kReflection) {
    Acc m1, m2;
    x = align_corners ? reflect_coordinate(x, 0, 2 * (size - 1), &m1) : reflect_coordinate(x, -1, 2 * size - 1, &m1);
    x = clip_coordinate(x, size, &m2);
    *mult = m1 * m2;
    return x;
  }
  *mult = Acc(1);
  return x;
}

// The index of integer-valued tap coordinate f (zeros padding), -1 when out of range. The
// range test comes first, so f may be huge; it is made in int64 after a float test that
// keeps the conversion defined (Acc(size - 1) rounds up in float for sizes above 2^24).
template <typename Acc>
TWIN_HD int32_t tap_index(Acc f, int64_t size) {
  if (!(f >= Acc(0) && f < Acc(size))) return -1;
  const auto i = static_cast<int64_t>(f);
  return i < size ? static_cast<int32_t>(i) : -1;
}

// The index of a padded coordinate f in [0, Acc(size - 1)] (border, reflection).
template <typename Acc>
TWIN_HD int32_t clipped_index(Acc f, int64_t size) {
  const auto i = static_cast<int64_t>(f);
  return static_cast<int32_t>(i < size - 1 ? i : size - 1);
}

// One axis of one point: K taps (input index or -1 = reads nothing), their weights and the
// weights' derivatives wrt the unnormalised coordinate, and `mult` = d coordinate / d grid
// value (unnormalisation and, for linear / nearest, padding; ATen treats the padded cubic taps
// as locally constant).
template <int K, typename Acc>
struct AxisTaps {
  int32_t idx[K];
  Acc w[K];
  Acc dw[K];
  Acc mult;
};

// Fills `a` for grid value g along an axis of `size` (<= 2^31 - 1) input elements. Returns
// false when the point is NaN (g NaN, or an infinite coordinate with reflection padding).
template <Mode M, typename Acc>
TWIN_HD bool axis_taps(Acc g, int64_t size, Padding pad, bool align_corners, AxisTaps<axis_taps(M), Acc>* a) {
  for (int k = 0; k < axis_taps(M); ++k) a->idx[k] = -1;  // what a NaN point leaves: no taps
  if (gs_isnan(g)) return false;
  Acc scale;
  Acc u = unnormalize(g, size, align_corners, &scale);
  // An infinite grid value is an infinite coordinate, also where it is scaled by size - 1 = 0
  // (align_corners on a length-1 axis: inf * 0 would make the point NaN).
  if (gs_isinf(g)) u = g;
  if constexpr (!std::is_same_v<Acc, double>) {
    // Reflection maps a point far outside back onto the axis with the absolute error of its
    // float coordinate (up to the whole axis; Inf where a finite g overflows): such a point
    // is taken in double, as the float64 reference takes it. Points within a few lengths of
    // the axis, the common case, stay in float.
    if (pad == kReflection && !gs_isinf(g) && !(u <= Acc(4) * Acc(size) && u >= -Acc(4) * Acc(size))) {
      AxisTaps<axis_taps(M), double> wide;
      axis_taps<M, double>(double(g), size, pad, align_corners, &wide);
      for (int k = 0; k < axis_taps(M); ++k) {
        a->idx[k] = wide.idx[k];
        a->w[k] = Acc(wide.w[k]);
        a->dw[k] = Acc(wide.dw[k]);
      }
      a->mult = Acc(wide.mult);
      return true;
    }
  }
  if (gs_isinf(u)) {
    if (pad == kReflection) return false;
    // Zeros: every tap outside; border: the edge. An integer far enough out gives both with
    // finite weights (t = 0), and the gradient 0 either way.
    if (pad == kZeros || M == kCubic) u = u < Acc(0) ? Acc(-8) : Acc(size + 8);
  }
  if constexpr (M == kCubic) {
    a->mult = scale;
    const Acc x0 = gs_floor(u);
    const Acc t = u - x0;
    a->w[0] = cc2(t + Acc(1));
    a->w[1] = cc1(t);
    a->w[2] = cc1(Acc(1) - t);
    a->w[3] = cc2(Acc(2) - t);
    a->dw[0] = dcc2(t + Acc(1));
    a->dw[1] = dcc1(t);
    a->dw[2] = -dcc1(Acc(1) - t);
    a->dw[3] = -dcc2(Acc(2) - t);
    for (int k = 0; k < axis_taps(M); ++k) {
      Acc f = x0 - Acc(1) + Acc(k);  // as ATen: the tap coordinate in floating point, then padded
      if (pad == kZeros) {
        a->idx[k] = tap_index(f, size);
      } else {
        Acc unused;
        f = pad_coordinate(f, size, pad, align_corners, &unused);
        a->idx[k] = clipped_index(f, size);
      }
    }
    return true;
  } else {
    Acc m;
    u = pad_coordinate(u, size, pad, align_corners, &m);
    a->mult = scale * m;
    if constexpr (M == kNearest) {
      a->idx[0] = tap_index(gs_rint(u), size);
      a->w[0] = Acc(1);
      a->dw[0] = Acc(0);
    } else {
      const Acc x0 = gs_floor(u);
      const Acc t = u - x0;
      a->w[0] = Acc(1) - t;
      a->w[1] = t;
      a->dw[0] = Acc(-1);
      a->dw[1] = Acc(1);
      a->idx[0] = tap_index(x0, size);
      a->idx[1] = tap_index(x0 + Acc(1), size);
    }
    return true;
  }
}

// Every tap of one point: K^dims taps in z, y, x order (x fastest), as ATen sums them.
template <Mode M, int DIMS, typename Acc>
struct PointTaps {
  static constexpr int K = axis_taps(M);
  static constexpr int KZ = DIMS == 3 ? K : 1;
  static constexpr int T = K * K * KZ;
  AxisTaps<K, Acc> x, y;
  AxisTaps<KZ, Acc> z;

  // Tap tap's axis indices (tap = (kz * K + ky) * K + kx).
  TWIN_HD static int kx(int tap) { return tap % K; }
  TWIN_HD static int ky(int tap) { return (tap / K) % K; }
  TWIN_HD static int kz(int tap) { return tap / (K * K); }
  TWIN_HD bool valid(int tap) const { return x.idx[kx(tap)] >= 0 && y.idx[ky(tap)] >= 0 && z.idx[kz(tap)] >= 0; }
  TWIN_HD Acc weight(int tap) const { return x.w[kx(tap)] * y.w[ky(tap)] * z.w[kz(tap)]; }
  // d weight / d unnormalised coordinate, per axis.
  TWIN_HD Acc dweight_x(int tap) const { return x.dw[kx(tap)] * y.w[ky(tap)] * z.w[kz(tap)]; }
  TWIN_HD Acc dweight_y(int tap) const { return x.w[kx(tap)] * y.dw[ky(tap)] * z.w[kz(tap)]; }
  TWIN_HD Acc dweight_z(int tap) const { return x.w[kx(tap)] * y.w[ky(tap)] * z.dw[kz(tap)]; }
};

}  // namespace sampling
}  // namespace twinops
