// Host-side helpers of the resize kernels: validation, tap bounds, workspace layout.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "resize.cuh"

namespace twinops {
namespace resize {

namespace {

bool finite(double v) { return std::isfinite(v); }

const char* check_axis(const Axis& a, const char* in_msg, const char* out_msg, const char* scale_msg) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (a.in < 1 || a.in > kMax) return in_msg;
  if (a.out < 1 || a.out > kMax) return out_msg;
  if (!finite(a.scale) || !finite(a.roi_start) || !finite(a.roi_end)) return scale_msg;
  return nullptr;
}

size_t align_up(size_t v) { return (v + 15) & ~static_cast<size_t>(15); }

}  // namespace

const char* check_params(const Params& p) {
  if (const char* m = check_axis(p.h, "input height must be in [1, 2^31 - 1]",
                                 "output height must be in [1, 2^31 - 1]",
                                 "scales / roi for the height axis must be finite"))
    return m;
  if (const char* m = check_axis(p.w, "input width must be in [1, 2^31 - 1]",
                                 "output width must be in [1, 2^31 - 1]",
                                 "scales / roi for the width axis must be finite"))
    return m;
  if (p.mode < kNearest || p.mode > kArea) return "mode must be one of nearest, linear, cubic, area";
  if (p.coord < kHalfPixel || p.coord > kTfCropAndResize)
    return "coordinate_transformation_mode must be one of half_pixel, pytorch_half_pixel, align_corners, "
           "asymmetric, half_pixel_symmetric, tf_crop_and_resize";
  if (p.nearest < kRoundPreferFloor || p.nearest > kCeil)
    return "nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil";
  if (p.antialias != 0 && p.antialias != 1) return "antialias must be 0 or 1";
  if (p.exclude_outside != 0 && p.exclude_outside != 1) return "exclude_outside must be 0 or 1";
  if (p.pytorch != 0 && p.pytorch != 1) return "pytorch must be 0 or 1";
  if (p.antialias && p.mode != kLinear && p.mode != kCubic)
    return "antialias is only defined for linear and cubic modes";
  if (!std::isfinite(p.cubic_a)) return "cubic_coeff_a must be finite";
  if (p.pytorch && p.coord != kHalfPixel && p.coord != kAlignCorners && p.coord != kAsymmetric)
    return "pytorch arithmetic supports only half_pixel, align_corners and asymmetric coordinates";
  // ATen's optional scale: 0 stands for "not given"; a negative one is no scale at all, and
  // must not quietly fall back to in/out as 0 does.
  if (p.pytorch && (p.h.scale < 0.0 || p.w.scale < 0.0))
    return "scales must be >= 0 with pytorch=1 (0: not given, the kernel uses input/output)";
  if (!p.pytorch && p.mode != kArea) {
    // ONNX divides by the scale: it must be positive once derived.
    if (p.h.scale < 0.0 || p.w.scale < 0.0) return "scales must be positive";
    // ONNX antialias stretches the filter by 1/scale and reads edge values for every tap of
    // it: bound the window so a tiny scale is an error rather than a near-endless loop.
    if (p.antialias && !p.exclude_outside) {
      const Axis* axes[2] = {&p.h, &p.w};
      for (const Axis* a : axes) {
        const double scale = a->scale > 0.0 ? a->scale : static_cast<double>(a->out) / static_cast<double>(a->in);
        if (scale < 1.0 && (p.mode == kCubic ? 4.0 : 2.0) / scale > static_cast<double>(1 << 24))
          return "antialias with exclude_outside=0 needs scales >= 2^-22 (the filter window would exceed 2^24 taps)";
      }
    }
  }
  return nullptr;
}

int32_t axis_taps(const Params& p, const Axis& a) {
  int64_t taps = 1;
  const double half_taps = p.mode == kCubic ? 2.0 : 1.0;
  if (p.mode == kArea) {
    taps = (a.in + a.out - 1) / a.out + 1;
  } else if (p.mode == kNearest) {
    taps = 1;
  } else if (p.antialias && p.pytorch) {
    const double r = pytorch_step<double>(a, p.coord == kAlignCorners);
    const double support = r >= 1.0 ? half_taps * r : half_taps;
    taps = static_cast<int64_t>(std::ceil(support)) * 2 + 3;  // +2: float vs double support
  } else if (p.antialias) {
    const double scale = a.scale > 0.0 ? a.scale : static_cast<double>(a.out) / static_cast<double>(a.in);
    const double s = scale < 1.0 ? scale : 1.0;
    taps = 2 - 2 * (static_cast<int64_t>(std::floor(-half_taps / s)) + 1);
  } else {
    taps = p.mode == kCubic ? 4 : 2;
  }
  // Taps are clamped into [0, in - 1] and merged, so there are never more than `in`.
  return static_cast<int32_t>(taps < a.in ? taps : a.in);
}

namespace {

// Widest ATen antialias window along `a` (opmath Acc), as the device builds it: bitwise,
// since the window arithmetic has no contractible multiply-add (see mul_rn).
template <typename Acc>
int32_t widest_aa_window(const Params& p, const Axis& a) {
  const Acc r = pytorch_step<Acc>(a, p.coord == kAlignCorners);
  int64_t widest = 1;
  for (int64_t d = 0; d < a.out; ++d) {
    Acc center;
    int64_t first, size;
    pytorch_aa_window<Acc>(p, a, r, d, &center, &first, &size);
    widest = std::max(widest, size);
  }
  return static_cast<int32_t>(widest);
}

// Widest inverse row (outputs reading one input) found by building the forward table on
// the host with the same function and precision as the device. Exact, with no margin:
// mul_rn keeps the device from contracting the table arithmetic, so its table is bitwise
// this one (tests/resize/test_resize_tables.py checks it; inverse_entry writes NaN, not a silently
// truncated row, if it ever were not).
template <typename Acc>
int32_t inverse_taps(const Params& p, const Axis& a, int32_t taps, bool zero_taps) {
  std::vector<int32_t> first(static_cast<size_t>(a.out));
  std::vector<Acc> weight(static_cast<size_t>(a.out) * taps);
  std::vector<int32_t> lo(static_cast<size_t>(a.in), std::numeric_limits<int32_t>::max());
  std::vector<int32_t> hi(static_cast<size_t>(a.in), -1);
  for (int64_t d = 0; d < a.out; ++d) resize_axis_entry<Acc>(p, a, d, taps, first.data(), weight.data());
  for (int64_t d = 0; d < a.out; ++d)
    scatter_range_host<Acc>(first.data(), weight.data(), taps, static_cast<int32_t>(a.in), d, lo.data(), hi.data(),
                            zero_taps);
  int64_t widest = 1;
  for (int64_t i = 0; i < a.in; ++i) widest = std::max<int64_t>(widest, static_cast<int64_t>(hi[i]) - lo[i] + 1);
  return static_cast<int32_t>(std::min<int64_t>(widest, a.out));
}

// 1 when every output d of axis `a` starts its `taps`-wide window at input 2 d (see
// pairs_axis), else 0.
template <typename Acc>
int32_t starts_at_pairs(const Params& p, const Axis& a, int32_t taps) {
  if (a.in != 2 * a.out) return 0;
  std::vector<Acc> w(static_cast<size_t>(taps));
  for (int64_t d = 0; d < a.out; ++d) {
    int32_t first = 0;
    axis_entry<Acc>(p, a, d, taps, &first, w.data());
    if (first != 2 * d) return 0;
  }
  return 1;
}

// 1 when axis `a` resamples by in / out = num / den (2 / 1 halves, 1 / 2 doubles) with
// every output's nonzero taps inside its window [d num / den - h, d num / den - h + nw) (see
// halving_axis and doubling_axis), else 0. `taps` is the table width.
template <typename Acc>
int32_t taps_in_windows(const Params& p, const Axis& a, int32_t taps, int64_t num, int64_t den, int64_t h,
                        int32_t nw) {
  if (a.in * den != a.out * num) return 0;
  std::vector<Acc> w(static_cast<size_t>(taps));
  for (int64_t d = 0; d < a.out; ++d) {
    int32_t first = 0;
    axis_entry<Acc>(p, a, d, taps, &first, w.data());
    if (first < 0) return 0;
    for (int32_t t = 0; t < taps; ++t) {
      const int64_t k = first + t - (d * num / den - h);
      if (w[t] != Acc(0) && (k < 0 || k >= nw)) return 0;
    }
  }
  return 1;
}

template <typename F>
uint64_t bits_of(F v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(F));
  return b;
}

// Facts that take a pass over an axis on the host: inverse_taps builds a whole forward
// table (about 0.15 ms for a 1080p bicubic 2x backward on a CI core), widest_aa_window and
// starts_at_pairs one entry per output. Training calls the op with the same shapes every
// step, so the facts of recent axes are remembered. The key is every input of axis_entry
// (floating-point fields by their bits), the question, the forward width (`taps`) and the
// opmath size.
enum class AxisQuery : int32_t {
  kWidestAaWindow,  // widest_aa_window (taps unused)
  kInverseWidth,    // inverse_taps
  kInverseWidthZeros,  // inverse_taps keeping the windows' zero-weight taps
  kPairs,           // starts_at_pairs
  kHalving,         // taps_in_windows, 2 / 1
  kDoubling3,       // taps_in_windows, 1 / 2, windows of 3
  kDoubling5,       // taps_in_windows, 1 / 2, windows of 5
};
int32_t cached_axis(const Params& p, const Axis& a, AxisQuery q, int32_t taps, size_t opmath_bytes) {
  using Key = std::tuple<int64_t, int64_t, uint64_t, uint64_t, uint64_t, int32_t, int32_t, int32_t, uint64_t, int32_t,
                         int32_t, int32_t, int32_t, int32_t, int32_t, size_t>;
  static std::mutex mutex;
  static std::map<Key, int32_t> cache;
  const Key key{a.in,    a.out,           bits_of(a.scale), bits_of(a.roi_start),  bits_of(a.roi_end),
                p.mode,  p.coord,         p.nearest,        bits_of(p.cubic_a),    p.exclude_outside,
                p.antialias, p.pytorch,   p.cuda,           static_cast<int32_t>(q), taps, opmath_bytes};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const bool dbl = opmath_bytes == sizeof(double);
  int32_t fact = 0;
  switch (q) {
    case AxisQuery::kWidestAaWindow:
      fact = dbl ? widest_aa_window<double>(p, a) : widest_aa_window<float>(p, a);
      break;
    case AxisQuery::kInverseWidth:
    case AxisQuery::kInverseWidthZeros: {
      const bool zeros = q == AxisQuery::kInverseWidthZeros;
      fact = dbl ? inverse_taps<double>(p, a, taps, zeros) : inverse_taps<float>(p, a, taps, zeros);
      break;
    }
    case AxisQuery::kPairs:
      fact = dbl ? starts_at_pairs<double>(p, a, taps) : starts_at_pairs<float>(p, a, taps);
      break;
    case AxisQuery::kHalving:
    case AxisQuery::kDoubling3:
    case AxisQuery::kDoubling5: {
      // Window widths and offsets as halving_kernel and doubling_kernel index their entries.
      const bool halving = q == AxisQuery::kHalving;
      const int32_t nw = halving ? taps : q == AxisQuery::kDoubling3 ? 3 : 5;
      const int64_t num = halving ? 2 : 1, den = halving ? 1 : 2, h = halving ? taps / 2 - 1 : nw / 2;
      fact = dbl ? taps_in_windows<double>(p, a, taps, num, den, h, nw)
                 : taps_in_windows<float>(p, a, taps, num, den, h, nw);
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 256) cache.clear();  // bounded; shapes rarely vary that much
  cache.emplace(key, fact);
  return fact;
}

// The forward table width of one axis: axis_taps, except for ATen's antialias window, whose
// bound (ceil(support) * 2 + 3) is up to twice the widest window actually built (a 2x
// upscale bound of 7 taps, padded to 8, for windows of 4).
int32_t forward_taps(const Params& p, const Axis& a, size_t opmath_bytes) {
  const int32_t bound = axis_taps(p, a);
  if (!p.antialias || !p.pytorch || p.mode == kArea || p.mode == kNearest || a.out < 1) return bound;
  return std::min(bound, cached_axis(p, a, AxisQuery::kWidestAaWindow, 0, opmath_bytes));
}

}  // namespace

bool pairs_axis(const Params& p, const Axis& a, int32_t taps, size_t opmath_bytes) {
  return cached_axis(p, a, AxisQuery::kPairs, taps, opmath_bytes) != 0;
}

bool halving_axis(const Params& p, const Axis& a, int32_t taps, size_t opmath_bytes) {
  return cached_axis(p, a, AxisQuery::kHalving, taps, opmath_bytes) != 0;
}

bool doubling_axis(const Params& p, const Axis& a, int32_t taps, int32_t nw, size_t opmath_bytes) {
  if (nw != 3 && nw != 5) return false;
  return cached_axis(p, a, nw == 3 ? AxisQuery::kDoubling3 : AxisQuery::kDoubling5, taps, opmath_bytes) != 0;
}

// Table widths are padded up to the widths the CUDA gather unrolls, the same on both axes
// while they are small: the padding taps weigh 0, and a fully unrolled gather over a few zero
// taps is much faster than a runtime-length loop.
void pad_table_widths(int32_t taps[2]) {
  const int32_t widest = std::max(taps[0], taps[1]);
  for (int32_t w : {1, 2, 4, 8, 10, 12, 16}) {
    if (widest <= w) {
      taps[0] = taps[1] = w;
      return;
    }
  }
}

Workspace workspace_layout(const Params& p, size_t opmath_bytes, bool backward, bool zero_taps) {
  Workspace ws{};
  ws.zero_taps = backward && zero_taps ? 1 : 0;
  const AxisQuery inverse = ws.zero_taps ? AxisQuery::kInverseWidthZeros : AxisQuery::kInverseWidth;
  const Axis* axes[2] = {&p.h, &p.w};
  for (int k = 0; k < 2; ++k) ws.taps[k] = forward_taps(p, *axes[k], opmath_bytes);
  pad_table_widths(ws.taps);
  for (int k = 0; k < 2; ++k)
    ws.inv_taps[k] = backward ? cached_axis(p, *axes[k], inverse, ws.taps[k], opmath_bytes) : 0;
  if (backward) pad_table_widths(ws.inv_taps);
  size_t off = 0;
  for (int k = 0; k < 2; ++k) {
    const Axis& a = *axes[k];
    ws.first[k] = off;
    off = align_up(off + sizeof(int32_t) * a.out);
    ws.weight[k] = off;
    off = align_up(off + opmath_bytes * a.out * ws.taps[k]);
    if (backward) {
      ws.lo[k] = off;
      off = align_up(off + sizeof(int32_t) * a.in);
      ws.hi[k] = off;
      off = align_up(off + sizeof(int32_t) * a.in);
      ws.ifirst[k] = off;
      off = align_up(off + sizeof(int32_t) * a.in);
      ws.iweight[k] = off;
      off = align_up(off + opmath_bytes * a.in * ws.inv_taps[k]);
    } else {
      ws.lo[k] = ws.hi[k] = ws.ifirst[k] = ws.iweight[k] = 0;
    }
    ws.zlo[k] = ws.zhi[k] = 0;
    if (backward && !ws.zero_taps) {
      ws.zlo[k] = off;
      off = align_up(off + sizeof(int32_t) * a.in);
      ws.zhi[k] = off;
      off = align_up(off + sizeof(int32_t) * a.in);
    }
  }
  ws.bytes = off;
  return ws;
}

}  // namespace resize
}  // namespace twinops
