// 2-D resize of the last two dims of an NCHW tensor: every mode of F.interpolate and of
// ONNX Resize-19, forward and deterministic backward.
//
// How it works: resize is separable, so each spatial axis is described by a small table
// that gives, for every output index d, the first input index `first[d]` (-1 =
// tf_crop_and_resize extrapolation) and a fixed number of tap weights, with taps that fall
// outside the input already clamped and merged (edge replication) or dropped
// (exclude_outside / antialias). `axis_entry` below is the only place where the resize
// semantics live; the CUDA kernels, the CPU loops and the TensorRT plugins all build their
// tables with it (the CUDA forward's tiles build the entries they read in shared memory)
// and then run the same gather (`gather_element`). The backward is the same gather over
// grad_output with the transposed tables, so it needs no atomics.
//
// Includes neither torch nor TensorRT headers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "../../common/twinops_common.h"
#include "resize_tuning.h"

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
#endif

namespace twinops {
namespace resize {

enum Mode : int32_t { kNearest = 0, kLinear = 1, kCubic = 2, kArea = 3 };

enum CoordMode : int32_t {
  kHalfPixel = 0,
  kPytorchHalfPixel = 1,
  kAlignCorners = 2,
  kAsymmetric = 3,
  kHalfPixelSymmetric = 4,
  kTfCropAndResize = 5,
};

enum NearestMode : int32_t { kRoundPreferFloor = 0, kRoundPreferCeil = 1, kFloor = 2, kCeil = 3 };

// One resized axis (H or W).
struct Axis {
  int64_t in = 0;   // input length
  int64_t out = 0;  // output length
  // pytorch == 1: ATen's optional scale factor (output/input); <= 0 means "not given",
  //               the kernel then uses input/output, exactly as area_pixel_compute_scale.
  // pytorch == 0: ONNX scale (output/input) as the ONNX reference uses it; <= 0 means
  //               "derive from sizes", i.e. out / in in double.
  double scale = 0.0;
  float roi_start = 0.f;  // tf_crop_and_resize only, normalised [0, 1] coordinates
  float roi_end = 1.f;
};

// Everything that defines the function computed (the TensorRT plugin serialises these
// fields). Sizes of N and C are runtime shape, not semantics, and live in Geometry.
struct Params {
  Axis h, w;
  int32_t mode = kNearest;
  int32_t coord = kHalfPixel;
  int32_t nearest = kRoundPreferFloor;
  float cubic_a = -0.75f;
  int32_t exclude_outside = 0;
  int32_t antialias = 0;
  // 1: F.interpolate arithmetic (float coordinates, multiply by input/output, ATen's
  //    antialias window); 0: ONNX Resize-19 arithmetic (double coordinates, divide by scale).
  int32_t pytorch = 0;
  float extrapolation_value = 0.f;
  // 1: the function of ATen's CUDA kernels where they differ from its CPU kernels (the
  // antialias windows' float arithmetic, pytorch_aa_window; the non-finite rules,
  // resize_nonfinite.cuh). Not an attribute: the CUDA launchers (torch op, plugins) set it.
  int32_t cuda = 0;
};

// Runtime shape and element strides of an NCHW-indexed tensor (any memory layout).
struct Geometry {
  int64_t n = 0, c = 0;
  int64_t in_stride[4] = {0, 0, 0, 0};   // input strides for (n, c, h, w)
  int64_t out_stride[4] = {0, 0, 0, 0};  // output (forward) / grad_output (backward) strides
};

// ---------------------------------------------------------------------------------------
// Host-side helpers (validation, table sizes, workspace layout)
// ---------------------------------------------------------------------------------------

// Returns nullptr when the params are valid, otherwise a message naming the offending field.
const char* check_params(const Params& p);

// Upper bound on the taps per output index along one axis, from the sizes and attributes
// alone (no pass over the axis): it also bounds nearby shapes, as a TensorRT profile needs.
// workspace_layout's widths are exact and never exceed it.
int32_t axis_taps(const Params& p, const Axis& a);

struct Workspace {
  // Byte offsets into one buffer, per axis k (0 = H, 1 = W):
  //   forward table   first[out] int32 (-1: extrapolate), weight[out * taps] opmath
  //   backward only   lo[in], hi[in] int32 (outputs reading input i), inverse table
  //                   ifirst[in] int32, iweight[in * inv_taps] opmath (the transposed resize)
  size_t first[2], weight[2], lo[2], hi[2], ifirst[2], iweight[2];
  int32_t taps[2], inv_taps[2];
  // 1: the inverse rows keep the windows' zero-weight taps (the CPU backward, whose
  // non-finite outputs are recomputed from them: resize_nonfinite.cuh); 0: nonzero taps only.
  int32_t zero_taps;
  // The backward without zero_taps (CUDA) only: per axis the range [zlo[i], zhi[i]] of the
  // outputs that read input i with a zero-weight window tap (int32 each; empty, INT32_MAX
  // and -1, where none does), for the fix-up (resize_fixup.cuh); 0 where absent.
  size_t zlo[2], zhi[2];
  size_t bytes;
};

// Pads the two axes' table widths as workspace_layout does (to the gather's unrolled widths,
// both axes alike while they are small); code that bounds the workspace itself (the TensorRT
// plugins, over a shape profile) pads with it too.
void pad_table_widths(int32_t taps[2]);

// `opmath_bytes` is sizeof(float) or sizeof(double). `backward` adds the inverse tables.
// The widths are the widest rows the tables will hold, found on the host where a formula
// would overshoot: ATen antialias windows by a pass over the outputs (O(out)), inverse rows
// by building the forward tables (O(out * taps)); remembered per axis. Exact, because the
// device builds the same tables bitwise (mul_rn, fma_rn). `zero_taps`: see Workspace.
Workspace workspace_layout(const Params& p, size_t opmath_bytes, bool backward, bool zero_taps = false);

// Whether axis `a` halves (in == 2 out) with windows on the input pairs: the table entry of
// every output d, `taps` wide with opmath `opmath_bytes`, starts at input 2 d (bilinear 0.5x
// with half-pixel coordinates; not align_corners, nor ONNX asymmetric, whose integral
// coordinates start at 2 d - 1). Built on the host exactly as the device builds it; O(out)
// on first use, then remembered per axis.
bool pairs_axis(const Params& p, const Axis& a, int32_t taps, size_t opmath_bytes);

// Whether axis `a` halves (in == 2 out) with every output's window centred on its input
// pair: the nonzero taps of output d lie in [2 d - h, 2 d - h + taps), h = taps / 2 - 1
// (bilinear, bicubic and their antialiased forms at 0.5x, in both coordinate conventions).
// Built and remembered as pairs_axis.
bool halving_axis(const Params& p, const Axis& a, int32_t taps, size_t opmath_bytes);

// Whether axis `a` doubles (out == 2 in) with every output's window around its input: the
// nonzero taps of output d lie in [d / 2 - nw / 2, d / 2 - nw / 2 + nw), nw 3 (bilinear) or 5
// (bicubic and its antialiased form at 2x, in both coordinate conventions). Built and
// remembered as pairs_axis.
bool doubling_axis(const Params& p, const Axis& a, int32_t taps, int32_t nw, size_t opmath_bytes);

// ---------------------------------------------------------------------------------------
// Per-element math (shared by CUDA kernels, CPU loops and plugins)
// ---------------------------------------------------------------------------------------

// Products and FMAs whose rounding is fixed (mul_rn, fma_rn: csrc/common/twinops_common.h).
// Table math rounds every product and sum explicitly with these two, so a table built on the
// device is bitwise the table built on the host: the host can then size the workspace exactly
// (forward_taps and the inverse widths in resize_host.cpp) with no margin for taps the device
// might move. F.interpolate's arithmetic is ATen's, which nvcc and ATen's CPU build contract
// (one rounding for scale * (d + 0.5) - 0.5 and for the cubic polynomials): fma_rn reproduces
// it; ONNX's is numpy's, which never fuses: mul_rn.
using ::twinops::fma_rn;
using ::twinops::mul_rn;

// Keys cubic convolution: ATen's cubic_convolution1 (|x| <= 1) and cubic_convolution2
// (1 < |x| < 2) with ATen's contractions (F.interpolate), and the same polynomials with every
// operation rounded (onnx.reference: numpy never fuses).
template <typename Acc>
TWIN_HD Acc cubic_convolution1(Acc x, Acc a) {
  return fma_rn(mul_rn(fma_rn(a + Acc(2), x, -(a + Acc(3))), x), x, Acc(1));
}
template <typename Acc>
TWIN_HD Acc cubic_convolution2(Acc x, Acc a) {
  return fma_rn(fma_rn(fma_rn(a, x, -mul_rn(Acc(5), a)), x, mul_rn(Acc(8), a)), x, -mul_rn(Acc(4), a));
}
template <bool kFused, typename Acc>
TWIN_HD Acc cubic_weight(Acc x, Acc a) {
  x = x < Acc(0) ? -x : x;
  if constexpr (kFused) {
    if (x <= Acc(1)) return cubic_convolution1(x, a);
    if (x < Acc(2)) return cubic_convolution2(x, a);
  } else {
    if (x <= Acc(1)) return mul_rn(mul_rn(mul_rn(a + Acc(2), x) - (a + Acc(3)), x), x) + Acc(1);
    if (x < Acc(2)) return mul_rn(mul_rn(mul_rn(a, x) - mul_rn(Acc(5), a), x) + mul_rn(Acc(8), a), x) - mul_rn(Acc(4), a);
  }
  return Acc(0);
}

// ATen's CUDA antialias filters (BilinearFilterFunctor, BicubicFilterFunctor, a = -0.5) with
// nvcc's contractions; its CPU kernels use cubic_convolution1 / 2 (cubic_weight<true>).
template <typename Acc>
TWIN_HD Acc aten_cuda_aa_filter(int32_t mode, Acc x, Acc a) {
  x = x < Acc(0) ? -x : x;
  if (mode != kCubic) return x < Acc(1) ? Acc(1) - x : Acc(0);
  if (x < Acc(1)) return fma_rn(mul_rn(fma_rn(a + Acc(2), x, -(a + Acc(3))), x), x, Acc(1));
  if (x < Acc(2)) return mul_rn(fma_rn(fma_rn(x - Acc(5), x, Acc(8)), x, Acc(-4)), a);
  return Acc(0);
}

template <typename Acc>
TWIN_HD Acc linear_weight(Acc x) {
  x = x < Acc(0) ? -x : x;
  return x < Acc(1) ? Acc(1) - x : Acc(0);
}

// Weight of tap k of F.interpolate's bilinear (k = 0, 1) or bicubic (k = 0 .. 3, taps
// floor(src) - 1 + k) at lambda = src - floor(src): ATen's expressions
// (get_cubic_upsample_coefficients), so that its roundings (1 - (1 - lambda) is not lambda,
// (1 - lambda) + 1 not 2 - lambda) are ours too.
template <typename Acc>
TWIN_HD Acc aten_tap_weight(int32_t mode, int32_t k, Acc lambda, Acc a) {
  if (mode != kCubic) return k == 0 ? Acc(1) - lambda : lambda;
  switch (k) {
    case 0: return cubic_convolution2(lambda + Acc(1), a);
    case 1: return cubic_convolution1(lambda, a);
    case 2: return cubic_convolution1(Acc(1) - lambda, a);
    default: return cubic_convolution2((Acc(1) - lambda) + Acc(1), a);
  }
}

// ATen's area_pixel_compute_scale for opmath type Acc.
template <typename Acc>
TWIN_HD Acc pytorch_step(const Axis& a, bool align_corners) {
  if (align_corners) {
    return a.out > 1 ? static_cast<Acc>(a.in - 1) / static_cast<Acc>(a.out - 1) : Acc(0);
  }
  return a.scale > 0.0 ? static_cast<Acc>(1.0 / a.scale)
                       : static_cast<Acc>(a.in) / static_cast<Acc>(a.out);
}

// ONNX source coordinate in double, operation for operation as onnx.reference computes it
// (roi arithmetic is float32 there because roi arrives as a float32 tensor).
// Sets *extrapolate for tf_crop_and_resize coordinates outside [0, in - 1].
TWIN_HD double onnx_coordinate(const Params& p, const Axis& a, int64_t d, bool* extrapolate) {
  const double scale = a.scale > 0.0 ? a.scale : static_cast<double>(a.out) / static_cast<double>(a.in);
  const double out_w = mul_rn(scale, static_cast<double>(a.in));
  const double y = static_cast<double>(d);
  const double in1 = static_cast<double>(a.in - 1);
  *extrapolate = false;
  switch (p.coord) {
    case kAlignCorners:
      return out_w == 1.0 ? 0.0 : y * in1 / (out_w - 1.0);
    case kAsymmetric:
      return y / scale;
    case kPytorchHalfPixel:
      return out_w == 1.0 ? -0.5 : (y + 0.5) / scale - 0.5;
    case kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / out_w;
      const double center = static_cast<double>(a.in) / 2.0;
      const double offset = mul_rn(center, 1.0 - adjustment);
      return offset + (y + 0.5) / scale - 0.5;
    }
    case kTfCropAndResize: {
      const float extent = a.roi_end - a.roi_start;
      double x;
      if (out_w == 1.0) {
        x = static_cast<double>(extent * static_cast<float>(a.in - 1) / 2.0f);
      } else {
        x = y * static_cast<double>(extent) * in1 / (out_w - 1.0);
      }
      x = x + static_cast<double>(mul_rn(a.roi_start, static_cast<float>(a.in - 1)));
      *extrapolate = x < 0.0 || x > in1;
      return x;
    }
    case kHalfPixel:
    default:
      return (y + 0.5) / scale - 0.5;
  }
}

// ATen's nearest (asymmetric) and nearest-exact (half-pixel) input index of output d, for
// step rf: pytorch_step in the opmath type, rounded to float (ATen computes nearest indices
// in float whatever the opmath type). axis_entry's nearest window, and the entries the
// one-tap kernel computes for itself (one_tap_kernel), so both are this arithmetic.
TWIN_HD int64_t pytorch_nearest_index(const Params& p, const Axis& a, float rf, int64_t d) {
  const float src = p.coord == kHalfPixel ? (static_cast<float>(d) + 0.5f) * rf : static_cast<float>(d) * rf;
  const int64_t idx = static_cast<int64_t>(floorf(src));
  return idx < a.in - 1 ? idx : a.in - 1;
}

// ATen's _compute_indices_min_size_weights_aa (PIL's window) for output d, step r =
// pytorch_step: the filter centre, the first input index and the window size (taps).
// Mixed float/double promotions as in ATen's CPU code.
// p.cuda: ATen's CUDA kernel (_compute_weights_span), every operation in Acc, with the
// multiply-adds nvcc fuses there: center +- support and xmin - center each round once
// (fitted bitwise to the weights ATen 2.11 computes on an H200, docs/perf/resize-notes.md).
// *center is then xmin - center, the filter's offset (window_weight).
template <typename Acc>
TWIN_HD void pytorch_aa_window(const Params& p, const Axis& a, Acc r, int64_t d, Acc* center, int64_t* first,
                               int64_t* size) {
  const Acc half_taps = p.mode == kCubic ? Acc(2) : Acc(1);
  const Acc ip = static_cast<Acc>(d) + Acc(0.5);
  const Acc c = p.cuda ? mul_rn(r, ip) : static_cast<Acc>(static_cast<double>(r) * (static_cast<double>(d) + 0.5));
  const Acc support = r >= Acc(1) ? mul_rn(half_taps, r) : half_taps;
  const int64_t max_size = static_cast<int64_t>(ceil(static_cast<double>(support))) * 2 + 1;
  int64_t lo = p.cuda ? static_cast<int64_t>(fma_rn(r, ip, -support) + Acc(0.5))
                      : static_cast<int64_t>(static_cast<double>(c - support) + 0.5);
  lo = lo > 0 ? lo : 0;
  int64_t hi = p.cuda ? static_cast<int64_t>(fma_rn(r, ip, support) + Acc(0.5))
                      : static_cast<int64_t>(static_cast<double>(c + support) + 0.5);
  hi = hi < a.in ? hi : a.in;
  *center = p.cuda ? fma_rn(-r, ip, static_cast<Acc>(lo)) : c;
  *first = lo;
  *size = clamp_index<int64_t>(hi - lo, 0, max_size);
}

// The window of output index d along axis `a`, before its taps are clamped and merged:
// raw taps [j0, j1] (indices may lie outside the input: edge replication clamps them), of
// which [jb, je] are weighted (exclude_outside drops the outside ones), and what
// window_weight needs to weigh tap j. `extrapolate`: tf_crop_and_resize outside the input.
template <typename Acc>
struct AxisWindow {
  int64_t j0 = 0, j1 = 0, jb = 0, je = 0;
  Acc x = Acc(0);             // source coordinate the filter is centred on (see pytorch_aa_window)
  Acc filter_scale = Acc(1);  // antialias stretch (1 when not antialiasing)
  Acc lambda = Acc(0);        // F.interpolate's bilinear / bicubic: src - floor(src)
  bool box = false;           // nearest / area: every tap has the same weight
  bool normalise = false;     // weights are divided by their total
  bool pytorch_aa = false;    // filter argument ((j - center) + 0.5) * invscale, as ATen
  bool aten_taps = false;     // weights from lambda (aten_tap_weight)
  bool extrapolate = false;
  int64_t base = 0;   // ONNX: the reference's window base (taps base + i) and its ratio in (0, 1]
  double ratio = 0.0;
};

template <typename Acc>
TWIN_HD AxisWindow<Acc> axis_window(const Params& p, const Axis& a, int64_t d) {
  AxisWindow<Acc> win;
  const int64_t last_index = a.in - 1;
  win.normalise = p.antialias != 0 || p.exclude_outside != 0;
  bool exclude = p.exclude_outside != 0;

  if (p.mode == kArea) {
    // adaptive_avg_pool2d's integer window.
    win.j0 = (d * a.in) / a.out;
    win.j1 = ((d + 1) * a.in + a.out - 1) / a.out - 1;
    win.box = true;
    win.normalise = true;
    exclude = true;
  } else if (p.pytorch) {
    const bool align = p.coord == kAlignCorners;
    const Acc r = pytorch_step<Acc>(a, align);
    if (p.mode == kNearest) {
      win.j0 = win.j1 = pytorch_nearest_index(p, a, static_cast<float>(r), d);
      win.box = true;
    } else if (p.antialias) {
      int64_t size = 0;
      pytorch_aa_window<Acc>(p, a, r, d, &win.x, &win.j0, &size);
      win.filter_scale = r >= Acc(1) ? static_cast<Acc>(1.0 / static_cast<double>(r)) : Acc(1);
      win.j1 = win.j0 + size - 1;
      win.pytorch_aa = true;
      exclude = true;
      win.normalise = true;
    } else {
      // area_pixel_compute_source_index, then the weights from lambda = src - floor(src)
      // as ATen's bilinear and bicubic kernels compute them (get_cubic_upsample_coefficients),
      // with ATen's contractions.
      Acc src = align ? mul_rn(r, static_cast<Acc>(d)) : fma_rn(r, static_cast<Acc>(d) + Acc(0.5), Acc(-0.5));
      if (p.mode == kLinear && src < Acc(0)) src = Acc(0);
      win.x = src;
      const int64_t base = static_cast<int64_t>(floor(static_cast<double>(src)));
      win.lambda = src - static_cast<Acc>(base);
      win.aten_taps = true;
      win.j0 = p.mode == kCubic ? base - 1 : base;
      win.j1 = p.mode == kCubic ? base + 2 : base + 1;
    }
  } else {
    const double xd = onnx_coordinate(p, a, d, &win.extrapolate);
    if (win.extrapolate) return win;
    const double fl = floor(xd);
    const bool integral = xd == fl;
    if (p.mode == kNearest) {
      int64_t idx = static_cast<int64_t>(fl);
      if (!integral) {
        const double frac = xd - fl;
        bool up = false;
        switch (p.nearest) {
          case kRoundPreferCeil: up = frac >= 0.5; break;
          case kFloor: up = false; break;
          case kCeil: up = true; break;
          case kRoundPreferFloor:
          default: up = frac > 0.5; break;
        }
        idx += up ? 1 : 0;
      }
      win.j0 = win.j1 = idx;
      win.box = true;
      win.normalise = false;
      exclude = false;
    } else {
      // The reference centres its window on base = floor(x), or x - 1 when x is integral
      // (ratio in (0, 1]); the taps are base + i, i in [start, 1 - start].
      const int64_t base = static_cast<int64_t>(fl) - (integral ? 1 : 0);
      win.base = base;
      win.ratio = integral ? 1.0 : xd - fl;
      win.x = static_cast<Acc>(xd);
      const double half_taps = p.mode == kCubic ? 2.0 : 1.0;
      double s = 1.0;
      if (p.antialias) {
        const double scale = a.scale > 0.0 ? a.scale : static_cast<double>(a.out) / static_cast<double>(a.in);
        s = scale < 1.0 ? scale : 1.0;
      }
      win.filter_scale = static_cast<Acc>(s);
      const int64_t start = static_cast<int64_t>(floor(-half_taps / s)) + 1;
      win.j0 = base + start;
      win.j1 = base + 1 - start;
      // ONNX normalises antialias weights over the whole window (outside taps read the edge).
    }
  }
  // Excluded taps outside the input contribute nothing: skip them without iterating.
  win.jb = exclude && win.j0 < 0 ? 0 : win.j0;
  win.je = exclude && win.j1 > last_index ? last_index : win.j1;
  return win;
}

// The weight of raw tap j of `win` (before normalisation).
template <typename Acc>
TWIN_HD Acc window_weight(const Params& p, const AxisWindow<Acc>& win, int64_t j) {
  if (win.box) return Acc(1);
  if (win.aten_taps) return aten_tap_weight<Acc>(p.mode, static_cast<int32_t>(j - win.j0), win.lambda, static_cast<Acc>(p.cubic_a));
  if (win.pytorch_aa && p.cuda) {
    // _compute_weights: (j + (xmin - center) + 0.5) * invscale, j counted from xmin; win.x
    // holds xmin - center.
    const Acc t = mul_rn((static_cast<Acc>(j - win.j0) + win.x) + Acc(0.5), win.filter_scale);
    return aten_cuda_aa_filter<Acc>(p.mode, t, static_cast<Acc>(p.cubic_a));
  }
  const Acc t = win.pytorch_aa ? static_cast<Acc>(mul_rn(static_cast<double>(static_cast<Acc>(j) - win.x) + 0.5,
                                                         static_cast<double>(win.filter_scale)))
                               : mul_rn(static_cast<Acc>(j) - win.x, win.filter_scale);
  return p.mode != kCubic ? linear_weight<Acc>(t)
         : win.pytorch_aa ? cubic_weight<true, Acc>(t, static_cast<Acc>(p.cubic_a))
                          : cubic_weight<false, Acc>(t, static_cast<Acc>(p.cubic_a));
}

// The table entry of output index d along axis `a`: *first (-1 when the sample is
// extrapolated) and w[0 .. taps), the merged weights of taps *first .. *first + taps - 1,
// zero padded. Tap indices past the input end are clamped by the readers (weight 0 there).
// `taps` is the table width: at least the widest window (workspace_layout's, padded).
// Merged and padded taps compute the reference's value for finite inputs; for the others
// see resize_nonfinite.cuh.
template <typename Acc>
TWIN_HD void axis_entry(const Params& p, const Axis& a, int64_t d, int32_t taps, int32_t* first, Acc* w) {
  for (int32_t k = 0; k < taps; ++k) w[k] = Acc(0);
  const int64_t last_index = a.in - 1;
  const AxisWindow<Acc> win = axis_window<Acc>(p, a, d);
  if (win.extrapolate) {
    *first = -1;
    return;
  }
  const int64_t c0 = clamp_index<int64_t>(win.j0, 0, last_index);
  const int64_t c1 = clamp_index<int64_t>(win.j1, 0, last_index);
  *first = static_cast<int32_t>(c0);
  const int32_t count = static_cast<int32_t>(c1 - c0 + 1);
  if (count > taps) {  // a table narrower than its window (a bug): NaN, never a silent drop
    for (int32_t k = 0; k < taps; ++k) w[k] = static_cast<Acc>(NAN);
    return;
  }
  Acc total = Acc(0);
  for (int64_t j = win.jb; j <= win.je; ++j) {
    const Acc wt = window_weight<Acc>(p, win, j);
    w[clamp_index<int64_t>(j, 0, last_index) - c0] += wt;
    total += wt;
  }
  if (win.normalise && total != Acc(0)) {
    for (int32_t k = 0; k < count; ++k) w[k] /= total;
  }
  // Padding taps weigh -0, the window's own taps never do (+ 0 turns -0 into +0): the
  // backward's ranges and the ring kernels' windows skip the padding but keep a window's
  // zero-weight taps, which the references multiply too (0 * inf is NaN there).
  for (int32_t k = 0; k < count; ++k) w[k] = w[k] + Acc(0);
  for (int32_t k = count; k < taps; ++k) w[k] = -Acc(0);
}

// Whether a table weight is a padding tap (-0, see axis_entry) rather than one of the
// window's own taps.
template <typename Acc>
TWIN_HD bool padding_weight(Acc w) {
  return w == Acc(0) && copysign(Acc(1), w) < Acc(0);
}

// axis_entry into a whole table: first[d] and weight[d * taps ...].
template <typename Acc>
TWIN_HD void resize_axis_entry(const Params& p, const Axis& a, int64_t d, int32_t taps, int32_t* first,
                               Acc* weight) {
  axis_entry<Acc>(p, a, d, taps, first + d, weight + d * taps);
}

// Backward tables. The gradient of a separable gather is the transposed gather: input i
// receives sum_d w(d -> i) * grad[d] over the outputs d whose taps read i. Those outputs
// form the range [lo[i], hi[i]] (min/max over a scatter: order independent, deterministic),
// and the inverse table stores w(lo[i] + k -> i), so the backward runs the forward gather.

// The input index read by tap t of an output whose window starts at `first`.
TWIN_HD int32_t tap_index(int32_t first, int32_t t, int32_t len) {
  const int32_t i = first + t;
  return i < len ? i : len - 1;
}

// `zero_taps`: the windows' zero-weight taps count (padding never does), see Workspace.
template <typename Acc>
TWIN_HD void scatter_range_host(const int32_t* first, const Acc* weight, int32_t taps, int32_t in_len, int64_t d,
                                int32_t* lo, int32_t* hi, bool zero_taps) {
  if (first[d] < 0) return;
  for (int32_t t = 0; t < taps; ++t) {
    const Acc w = weight[d * taps + t];
    if (zero_taps ? padding_weight(w) : w == Acc(0)) continue;
    const int32_t i = tap_index(first[d], t, in_len);
    const int32_t dd = static_cast<int32_t>(d);
    if (dd < lo[i]) lo[i] = dd;
    if (dd > hi[i]) hi[i] = dd;
  }
}

template <typename Acc>
TWIN_HD void inverse_entry(const int32_t* first, const Acc* weight, int32_t taps, int32_t out_len, int32_t in_len,
                           const int32_t* lo, const int32_t* hi, int64_t i, int32_t inv_taps, int32_t* ifirst,
                           Acc* iweight) {
  Acc* w = iweight + i * inv_taps;
  for (int32_t k = 0; k < inv_taps; ++k) w[k] = Acc(0);
  if (lo[i] > hi[i]) {  // no output reads input i: -1 makes the gather write 0
    ifirst[i] = -1;
    return;
  }
  ifirst[i] = lo[i];
  if (hi[i] - lo[i] >= inv_taps) {  // more outputs read i than the table holds (a bug): NaN, not a drop
    for (int32_t k = 0; k < inv_taps; ++k) w[k] = static_cast<Acc>(NAN);
    return;
  }
  for (int32_t k = 0; k < inv_taps; ++k) {
    const int32_t d = lo[i] + k;
    if (d > hi[i] || d >= out_len) break;
    if (first[d] < 0) continue;
    for (int32_t t = 0; t < taps; ++t) {
      if (tap_index(first[d], t, in_len) == i) w[k] += weight[static_cast<int64_t>(d) * taps + t];
    }
  }
}

// (n, c, y, x) of dense element `idx` of an NCHW-indexed tensor stored NCHW or NHWC.
// Templated on the index type so CUDA kernels can use 32-bit division when it fits.
template <typename I>
TWIN_HD void decompose(I idx, I C, I H, I W, bool channels_last, I* n, I* c, I* y, I* x) {
  if (channels_last) {
    *c = idx % C;
    idx /= C;
    *x = idx % W;
    idx /= W;
    *y = idx % H;
    *n = idx / H;
  } else {
    *x = idx % W;
    idx /= W;
    *y = idx % H;
    idx /= H;
    *c = idx % C;
    *n = idx / C;
  }
}

// Storage <-> accumulation conversions. Plain casts by default (float, double, c10 half
// types on the CPU); resize_common.cuh (compiled in resize.cu) specialises them for __half /
// __nv_bfloat16 with intrinsics, since torch builds CUDA code with __CUDA_NO_HALF_CONVERSIONS__.
template <typename T>
struct Convert {
  template <typename Acc>
  static TWIN_HD Acc load(T v) {
    return static_cast<Acc>(v);
  }
  template <typename Acc>
  static TWIN_HD T store(Acc v) {
    return static_cast<T>(v);
  }
};

// One separable gather: dst[n, c, y, x] = sum_a sum_b wy[y][a] wx[x][b] src[n, c, Y_a, X_b]
// with Y_a = min(fy[y] + a, src_h - 1), X_b likewise; `extrapolation` where fy or fx < 0.
// The forward runs it over the input with the forward tables, the backward over
// grad_output with the inverse tables.
template <typename T, typename Acc>
struct Gather {
  const T* src;
  int64_t stride[4];  // src strides (n, c, h, w) in elements
  int32_t src_h, src_w;
  const int32_t* fy;
  const Acc* wy;
  int32_t ty;
  const int32_t* fx;
  const Acc* wx;
  int32_t tx;
  Acc extrapolation;
  // What the gather computes, for the outputs that come out non-finite (resize_nonfinite.cuh
  // recomputes them with the reference's own terms): 1 forward, 2 backward (src is then
  // grad_output and fy / fx the inverse tables), 0 neither (tests' bare gathers).
  int32_t direction;
  Params params;
  // The CUDA gathers' fix-up flag (resize_fixup.cuh): one zeroed device word per stream; null
  // on the CPU and in bare gathers.
  unsigned* fixup = nullptr;
  // The CUDA backward's reader ranges (Workspace.zlo / zhi: the readers of input i with a
  // zero-weight window tap; lo / hi: the others); null elsewhere, where the inverse rows
  // themselves keep the zero-weight taps (Workspace.zero_taps).
  const int32_t* zlo[2] = {nullptr, nullptr};
  const int32_t* zhi[2] = {nullptr, nullptr};
  const int32_t* lo[2] = {nullptr, nullptr};
  const int32_t* hi[2] = {nullptr, nullptr};
};

// TY / TX > 0: compile-time tap counts (fully unrolled); 0: the runtime counts g.ty / g.tx.
template <int TY, int TX, typename T, typename Acc>
TWIN_HD Acc gather_element(const Gather<T, Acc>& g, int64_t n, int64_t c, int64_t y, int64_t x) {
  const int32_t y0 = g.fy[y], x0 = g.fx[x];
  if (y0 < 0 || x0 < 0) return g.extrapolation;
  const int32_t ny = TY > 0 ? TY : g.ty;
  const int32_t nx = TX > 0 ? TX : g.tx;
  const T* plane = g.src + n * g.stride[0] + c * g.stride[1];
  const Acc* wyr = g.wy + y * ny;
  const Acc* wxr = g.wx + x * nx;
  Acc acc = Acc(0);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int32_t a = 0; a < (TY > 0 ? TY : ny); ++a) {
    const T* row = plane + static_cast<int64_t>(tap_index(y0, a, g.src_h)) * g.stride[2];
    Acc racc = Acc(0);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int32_t b = 0; b < (TX > 0 ? TX : nx); ++b) {
      racc += wxr[b] * Convert<T>::template load<Acc>(row[static_cast<int64_t>(tap_index(x0, b, g.src_w)) * g.stride[3]]);
    }
    acc += wyr[a] * racc;
  }
  return acc;
}

template <typename Acc>
struct Tables {
  const int32_t* first[2];
  const Acc* weight[2];
  const int32_t* ifirst[2];
  const Acc* iweight[2];
  int32_t taps[2], inv_taps[2];
};

template <typename Acc>
TWIN_HD Tables<Acc> tables_at(const Workspace& L, const void* base) {
  const char* b = static_cast<const char*>(base);
  Tables<Acc> t{};
  for (int k = 0; k < 2; ++k) {
    t.first[k] = reinterpret_cast<const int32_t*>(b + L.first[k]);
    t.weight[k] = reinterpret_cast<const Acc*>(b + L.weight[k]);
    t.ifirst[k] = reinterpret_cast<const int32_t*>(b + L.ifirst[k]);
    t.iweight[k] = reinterpret_cast<const Acc*>(b + L.iweight[k]);
    t.taps[k] = L.taps[k];
    t.inv_taps[k] = L.inv_taps[k];
  }
  return t;
}

// Gather descriptions of the forward (over `input`) and the backward (over `grad_output`).
template <typename T, typename Acc>
TWIN_HD Gather<T, Acc> forward_gather(const Params& p, const Tables<Acc>& t, const T* input, const int64_t* stride) {
  return Gather<T, Acc>{input, {stride[0], stride[1], stride[2], stride[3]}, static_cast<int32_t>(p.h.in),
                        static_cast<int32_t>(p.w.in), t.first[0], t.weight[0], t.taps[0], t.first[1], t.weight[1],
                        t.taps[1], static_cast<Acc>(p.extrapolation_value), 1, p};
}

template <typename T, typename Acc>
TWIN_HD Gather<T, Acc> backward_gather(const Params& p, const Tables<Acc>& t, const T* grad_output,
                                       const int64_t* stride) {
  return Gather<T, Acc>{grad_output, {stride[0], stride[1], stride[2], stride[3]}, static_cast<int32_t>(p.h.out),
                        static_cast<int32_t>(p.w.out), t.ifirst[0], t.iweight[0], t.inv_taps[0], t.ifirst[1],
                        t.iweight[1], t.inv_taps[1], Acc(0), 2, p};
}

// F.interpolate's nearest along axis `a` when out / in or in / out is a power of two s up to
// 8 and the float step (pytorch_nearest_index's rf) is exactly in / out: d rf and
// (d + 0.5) rf are then exact (lengths below 2^23), so output d reads input d / s
// (upscaling) or d s + o (downscaling; o = s / 2 for nearest-exact's half-pixel
// coordinates, else 0). Returns s for out = s in (1: equal lengths), -s for in = s out, else 0.
template <typename Acc>
inline int nearest_ratio(const Params& p, const Axis& a) {
  if (!p.pytorch || p.mode != kNearest || p.coord == kAlignCorners || a.in <= 0 || a.out <= 0 ||
      (a.in > a.out ? a.in : a.out) >= (int64_t{1} << 23))
    return 0;
  const bool up = a.out >= a.in;
  const int64_t s = up ? a.out / a.in : a.in / a.out;
  if ((up ? a.out % a.in : a.in % a.out) != 0 || (s != 1 && s != 2 && s != 4 && s != 8)) return 0;
  const float rf = static_cast<float>(pytorch_step<Acc>(a, false));
  if (rf != (up ? 1.0f / static_cast<float>(s) : static_cast<float>(s))) return 0;
  return up ? static_cast<int>(s) : -static_cast<int>(s);
}

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
// CUDA launchers. `L` = workspace_layout(p, sizeof(opmath), backward); `workspace` holds
// L.bytes device bytes. Outputs are dense: NCHW, or NHWC when `channels_last`. They return
// the first failing CUDA status (launches are asynchronous on `stream`).
template <typename T>
cudaError_t forward_cuda(const Params& p, const Workspace& L, const Geometry& g, const T* input, T* output,
                         bool channels_last, void* workspace, cudaStream_t stream);
template <typename T>
cudaError_t backward_cuda(const Params& p, const Workspace& L, const Geometry& g, const T* grad_output,
                          T* grad_input, bool channels_last, void* workspace, cudaStream_t stream);
#endif

}  // namespace resize
}  // namespace twinops
