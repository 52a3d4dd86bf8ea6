// RoIAlign (torchvision.ops.roi_align, plus mmcv's max pooling) over one feature map or several
// (multi-level: each roi pooled from the level its size selects). Per output element (roi k,
// channel c, bin (ph, pw)) the math is torchvision's roi_align_kernel.cpp:
//
//   x0 = x1 * scale - off, w = x2 * scale - off - x0 (off = 0.5 when aligned, else 0 and
//   w = max(w, 1)); the same for y; bin = w / PW; grid = sampling_ratio > 0 ? sampling_ratio
//   : ceil(w / PW); sample (iy, ix) at y = (y0 + ph * bin_h) + (iy + 0.5) * bin_h / grid_h;
//   a sample outside [-1, H] x [-1, W] reads 0, else it is clamped to [0, H - 1] and read
//   bilinearly from its 4 taps (all 4 read, also at weight 0); avg = sum / (grid_h * grid_w),
//   max = the largest sample (mmcv's "max" mode).
//
// Rules beyond torchvision's (which leaves these undefined; docs/ops/roi_align.md):
// - a roi whose batch index is not in (-1, N) (truncated toward 0, as torchvision's int cast) or
//   whose scaled coordinates are not finite pools nothing: its outputs are NaN, no gradient;
// - an empty grid (grid_h or grid_w <= 0: an inverted or zero-size roi with aligned and
//   adaptive sampling) gives 0;
// - samples more than two sample spacings outside [-1, H] (found in double) are not visited:
//   they read 0 anyway, and the work of a bin stays bounded by the map's size for any roi;
// - max mode: a NaN sample wins (the output is NaN); otherwise the first largest sample in
//   (iy, ix) order, a sample outside the map counting as 0. Its gradient goes to the winner's
//   taps (none when the winner lies outside).
// Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <math.h>

#include "../../common/twinops_common.h"

namespace twinops {
namespace roi_align {

enum PoolMode : int32_t { kAvg = 0, kMax = 1 };
// How a multi-level op maps a roi to a level: mmdet's SingleRoIExtractor.map_roi_levels, or
// torchvision's LevelMapper (canonical box 224 at level 4).
enum LevelRule : int32_t { kMmdet = 0, kTorchvision = 1 };

constexpr int kMaxLevels = 8;

// One feature map (N, C, H, W) with its element strides and the scale from roi coordinates.
struct Level {
  int64_t h = 0, w = 0;
  int64_t stride[4] = {};  // N, C, H, W
  double scale = 1.0;
};

struct Params {
  int64_t n = 0, c = 0;    // every level's N and C
  int64_t k = 0;           // rois
  int64_t ph = 1, pw = 1;  // output bins
  int32_t sampling_ratio = -1;
  int32_t aligned = 0;
  PoolMode mode = kAvg;
  // rois: (K, 5) rows (batch, x1, y1, x2, y2), or (K, 4) rows with the batch indices apart.
  int32_t roi_cols = 5;
  int64_t roi_stride[2] = {};
  int64_t out_stride[4] = {};         // K, C, PH, PW: the forward's output, the backward's grad_output
  int64_t grad_input_stride[4] = {};  // backward: grad of the level's input (N, C, H, W)
  // Levels: one for roi_align; multi-level picks one per roi.
  int32_t levels = 1;
  Level level[kMaxLevels];
  LevelRule rule = kMmdet;
  double finest_scale = 56.0;
  double roi_scale_factor = 1.0;
};

// Level data pointers, by value (a kernel argument).
template <typename T>
struct LevelPtrs {
  T* p[kMaxLevels] = {};

  // Level l's pointer by selects, not an indexed load: a kernel argument indexed by a run-time
  // value is copied to local memory first (64 bytes of stack per thread, ptxas -v).
  TWIN_HD T* at(int32_t l) const {
    T* r = p[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 1; i < kMaxLevels; ++i) r = i == l ? p[i] : r;
    return r;
  }
};

template <typename Acc>
TWIN_HD bool finite_of(Acc v) {
  return v - v == v - v;  // false for NaN and infinities
}

// Roi k's level (0 for one level): `x1..y2` its box in image coordinates.
template <typename Acc>
TWIN_HD int32_t level_of(const Params& p, Acc x1, Acc y1, Acc x2, Acc y2) {
  if (p.levels <= 1) return 0;
  const double area = (double(x2) - double(x1)) * (double(y2) - double(y1));
  double lvl;
  if (p.rule == kMmdet) {
    lvl = floor(log2(sqrt(area) / p.finest_scale + 1e-6));
  } else {
    // LevelMapper: floor(4 + log2(sqrt(area) / 224) + 1e-6), clamped to [k_min, k_max], minus k_min
    // (k_min = log2 of the first level's stride, from its scale).
    const double k_min = -round(log2(p.level[0].scale));
    lvl = floor(4.0 + log2(sqrt(area) / 224.0) + 1e-6) - k_min;
  }
  if (!(lvl >= 0.0)) return 0;  // also NaN (a negative area): the finest level, as clamp on -inf
  return lvl >= double(p.levels - 1) ? p.levels - 1 : static_cast<int32_t>(lvl);
}

// A roi's pooling frame on its level.
template <typename Acc>
struct Roi {
  bool ok = false;      // false: NaN outputs, no gradient
  int64_t batch = 0;
  int32_t level = 0;
  Acc y0 = 0, x0 = 0;     // the roi's start on the level
  Acc bin_h = 0, bin_w = 0;
  Acc grid_h = 0, grid_w = 0;  // samples per bin and axis (Acc: ceil of any finite size)
};

// Roi k from its row: rois (strided by p.roi_stride) and, for 4-column rows, batch[k].
template <typename Acc, typename Read, typename I>
TWIN_HD Roi<Acc> roi_of(const Params& p, const Read& read_roi, const I* batch, int64_t k) {
  Roi<Acc> r;
  const int64_t* rs = p.roi_stride;
  const int first = p.roi_cols == 5 ? 1 : 0;
  Acc b;
  if (p.roi_cols == 5) b = read_roi(k * rs[0]);
  else b = Acc(batch[k]);
  Acc x1 = read_roi(k * rs[0] + first * rs[1]), y1 = read_roi(k * rs[0] + (first + 1) * rs[1]);
  Acc x2 = read_roi(k * rs[0] + (first + 2) * rs[1]), y2 = read_roi(k * rs[0] + (first + 3) * rs[1]);
  if (!(b > Acc(-1) && b < Acc(p.n))) return r;
  r.batch = static_cast<int64_t>(b);
  if (!finite_of(x1) || !finite_of(y1) || !finite_of(x2) || !finite_of(y2)) return r;
  r.level = level_of(p, x1, y1, x2, y2);
  if (p.roi_scale_factor != 1.0) {  // mmdet's roi_rescale about the centre
    const Acc f = Acc(p.roi_scale_factor), half = Acc(0.5);
    const Acc cx = (x1 + x2) * half, cy = (y1 + y2) * half;
    const Acc nw = (x2 - x1) * f, nh = (y2 - y1) * f;
    x1 = cx - nw * half, x2 = cx + nw * half, y1 = cy - nh * half, y2 = cy + nh * half;
  }
  const Level& L = p.level[r.level];
  const Acc scale = Acc(L.scale), off = p.aligned ? Acc(0.5) : Acc(0);
  r.x0 = mul_rn(x1, scale) - off;
  r.y0 = mul_rn(y1, scale) - off;
  Acc rw = (mul_rn(x2, scale) - off) - r.x0, rh = (mul_rn(y2, scale) - off) - r.y0;
  if (!p.aligned) {
    rw = rw > Acc(1) ? rw : Acc(1);
    rh = rh > Acc(1) ? rh : Acc(1);
  }
  if (!finite_of(rw) || !finite_of(rh) || !finite_of(r.x0) || !finite_of(r.y0)) return r;
  r.bin_w = rw / Acc(p.pw);
  r.bin_h = rh / Acc(p.ph);
  r.grid_w = p.sampling_ratio > 0 ? Acc(p.sampling_ratio) : ceil(rw / Acc(p.pw));
  r.grid_h = p.sampling_ratio > 0 ? Acc(p.sampling_ratio) : ceil(rh / Acc(p.ph));
  r.ok = true;
  return r;
}

// Sample i's coordinate along an axis: (start + bin * b) + (i + 0.5) * bin / grid.
template <typename Acc>
TWIN_HD Acc sample_at(Acc start, Acc bin, int64_t b, Acc grid, int64_t i) {
  return (start + mul_rn(Acc(b), bin)) + mul_rn(Acc(i) + Acc(0.5), bin) / grid;
}

// The sample indices [lo, hi] of one bin and axis that may lie in [-1, size]: the others are
// more than two spacings outside (double arithmetic), so they read 0. Empty when lo > hi.
template <typename Acc>
TWIN_HD void axis_range(Acc start, Acc bin, int64_t b, Acc grid, int64_t size, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = -1;
  if (!(grid >= Acc(1))) return;
  const double g = double(grid), s = double(start) + double(b) * double(bin), t = double(bin) / g;
  double a = 0.0, z = g - 1.0;
  if (t != 0.0) {
    const double u = (-1.0 - s) / t - 0.5, v = (double(size) - s) / t - 0.5;
    a = (u < v ? u : v) - 2.0;
    z = (u < v ? v : u) + 2.0;
    a = a > 0.0 ? floor(a) : 0.0;
    z = z < g - 1.0 ? ceil(z) : g - 1.0;
  }
  if (!(a <= z)) return;
  *lo = static_cast<int64_t>(a);
  *hi = static_cast<int64_t>(z);
}

// The bilinear taps of one sample (torchvision's bilinear_interpolate): offsets y * W + x within
// the plane and weights, in (low, low), (low, high), (high, low), (high, high) order. False when
// the sample lies outside [-1, H] x [-1, W] (it reads 0).
template <typename Acc>
struct Taps {
  int64_t off[4];
  Acc w[4];
};

template <typename Acc>
TWIN_HD bool axis_tap(Acc v, int64_t size, int64_t* lo, int64_t* hi, Acc* l) {
  if (v < Acc(-1) || v > Acc(size)) return false;
  if (v <= Acc(0)) v = Acc(0);
  *lo = static_cast<int64_t>(v);
  if (*lo >= size - 1) {
    *lo = *hi = size - 1;
    v = Acc(*lo);
  } else {
    *hi = *lo + 1;
  }
  *l = v - Acc(*lo);
  return true;
}

template <typename Acc>
TWIN_HD bool taps_of(Acc y, Acc x, int64_t h, int64_t w, int64_t sy, int64_t sx, Taps<Acc>* t) {
  int64_t yl, yh, xl, xh;
  Acc ly, lx;
  if (!axis_tap(y, h, &yl, &yh, &ly) || !axis_tap(x, w, &xl, &xh, &lx)) return false;
  const Acc hy = Acc(1) - ly, hx = Acc(1) - lx;
  t->off[0] = yl * sy + xl * sx, t->off[1] = yl * sy + xh * sx;
  t->off[2] = yh * sy + xl * sx, t->off[3] = yh * sy + xh * sx;
  t->w[0] = mul_rn(hy, hx), t->w[1] = mul_rn(hy, lx), t->w[2] = mul_rn(ly, hx), t->w[3] = mul_rn(ly, lx);
  return true;
}

template <typename Acc>
TWIN_HD Acc nan_acc() {
  return Acc(NAN);
}

// One output element's bin: calls visit(taps, ordinal) for every sample that reads the map (in
// (iy, ix) order; ordinal = iy * grid_w + ix) and returns the ordinal of the first sample that
// reads nothing, visited or not (-1 when every sample reads the map): max mode's zero candidate.
// Ordinals are doubles: a grid may hold more samples than any integer type counts.
template <typename Acc, typename Visit>
TWIN_HD double each_sample(const Roi<Acc>& r, const Level& L, int64_t ph, int64_t pw, const Visit& visit) {
  int64_t ylo, yhi, xlo, xhi;
  axis_range(r.y0, r.bin_h, ph, r.grid_h, L.h, &ylo, &yhi);
  axis_range(r.x0, r.bin_w, pw, r.grid_w, L.w, &xlo, &xhi);
  const double gw = double(r.grid_w), gh = double(r.grid_h);
  // The first sample outside the visited ranges, as an ordinal (double: grids may be huge).
  double first_out = -1.0;
  if (gh >= 1.0 && gw >= 1.0) {
    if (ylo > yhi || xlo > xhi || ylo > 0 || xlo > 0) first_out = 0.0;
    else if (double(xhi) < gw - 1.0) first_out = double(xhi) + 1.0;
    else if (double(yhi) < gh - 1.0) first_out = (double(yhi) + 1.0) * gw;
  }
  for (int64_t iy = ylo; iy <= yhi; ++iy) {
    const Acc y = sample_at(r.y0, r.bin_h, ph, r.grid_h, iy);
    for (int64_t ix = xlo; ix <= xhi; ++ix) {
      const Acc x = sample_at(r.x0, r.bin_w, pw, r.grid_w, ix);
      Taps<Acc> t;
      const double ord = double(iy) * gw + double(ix);
      if (taps_of(y, x, L.h, L.w, L.stride[2], L.stride[3], &t)) {
        visit(t, ord);
      } else if (first_out < 0.0 || ord < first_out) {
        first_out = ord;
      }
    }
  }
  return first_out;
}

// The forward of one output element from the plane of its roi's batch and channel. read(off)
// gives the plane's element at `off` in Acc. For max mode, *arg receives the winner's taps
// (winner false when it reads nothing or the output is NaN from the roi itself).
template <typename Acc, typename Read>
TWIN_HD Acc bin_value(const Params& p, const Roi<Acc>& r, int64_t ph, int64_t pw, const Read& read,
                      Taps<Acc>* arg = nullptr, bool* winner = nullptr) {
  if (winner != nullptr) *winner = false;
  if (!r.ok) return nan_acc<Acc>();
  const Level& L = p.level[r.level];
  if (!(r.grid_h >= Acc(1) && r.grid_w >= Acc(1))) return Acc(0);
  const auto sample = [&](const Taps<Acc>& t) {
    return mul_rn(t.w[0], read(t.off[0])) + mul_rn(t.w[1], read(t.off[1])) + mul_rn(t.w[2], read(t.off[2])) +
           mul_rn(t.w[3], read(t.off[3]));
  };
  if (p.mode == kAvg) {
    Acc sum = Acc(0);
    each_sample(r, L, ph, pw, [&](const Taps<Acc>& t, double) { sum += sample(t); });
    return sum / (r.grid_h * r.grid_w);
  }
  Acc best = Acc(0);
  double best_ord = -1.0;
  bool nan_seen = false;
  Taps<Acc> best_taps{};
  const double first_out = each_sample(r, L, ph, pw, [&](const Taps<Acc>& t, double ord) {
    if (nan_seen) return;
    const Acc v = sample(t);
    if (!(v == v)) {
      nan_seen = true, best = v, best_ord = ord, best_taps = t;
    } else if (best_ord < 0.0 || v > best) {
      best = v, best_ord = ord, best_taps = t;
    }
  });
  // A sample that reads nothing is a 0 in the comparison: it wins when 0 is larger, or equal and
  // earlier.
  if (!nan_seen && first_out >= 0.0 && (best_ord < 0.0 || Acc(0) > best || (Acc(0) == best && first_out < best_ord)))
    return Acc(0);
  if (best_ord < 0.0) return Acc(0);
  if (arg != nullptr) *arg = best_taps;
  if (winner != nullptr) *winner = true;
  return best;
}

// The gradient contributions of one output element with gradient g: add(off, v) for every tap
// of every sample it read (avg: g * weight / count; max: g * weight at the winner's taps).
// read as bin_value's (max mode re-finds the winner).
template <typename Acc, typename Read, typename Add>
TWIN_HD void bin_grad(const Params& p, const Roi<Acc>& r, int64_t ph, int64_t pw, Acc g, const Read& read,
                      const Add& add) {
  if (!r.ok || !(r.grid_h >= Acc(1) && r.grid_w >= Acc(1))) return;
  const Level& L = p.level[r.level];
  if (p.mode == kAvg) {
    const Acc count = r.grid_h * r.grid_w;
    each_sample(r, L, ph, pw, [&](const Taps<Acc>& t, double) {
      for (int j = 0; j < 4; ++j) add(t.off[j], mul_rn(g, t.w[j]) / count);
    });
    return;
  }
  Taps<Acc> t;
  bool won = false;
  bin_value(p, r, ph, pw, read, &t, &won);
  if (won)
    for (int j = 0; j < 4; ++j) add(t.off[j], mul_rn(g, t.w[j]));
}

}  // namespace roi_align
}  // namespace twinops
