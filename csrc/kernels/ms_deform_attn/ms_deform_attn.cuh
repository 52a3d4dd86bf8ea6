// Multi-scale deformable attention (mmcv's MultiScaleDeformableAttnFunction): for each query q,
// head m and channel d of value (N, S, M, D),
//   out[n, q, m * D + d] = sum over levels l, points p of
//       attention_weights[n, q, m, l, p] * bilinear(value level l, head m, channel d, at loc[n, q, m, l, p])
// where level l is value[:, start_l : start_l + h_l * w_l] read as (h_l, w_l) and the location
// (x, y) in [0, 1] is the grid value 2 * loc - 1 of F.grid_sample (bilinear, zeros padding,
// align_corners=False: pixel = x * w - 0.5), by the shared sampling piece (../sampling.cuh) and
// its rules (a NaN coordinate makes the sample NaN; an infinite one is outside).
//
// The level table (spatial_shapes (L, 2) as (h, w), level_start_index (L,)) is data: int32 or
// int64, read where the kernels run. A level whose (start, h, w) does not fit in S (h or w below
// 1, start below 0, start + h * w above S) reads nothing: its samples are NaN, so the outputs of
// every query of the batch are NaN and no value gradient is added. The frontends check the table
// where its values are on the host. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <math.h>

#include "../../common/twinops_common.h"
#include "../sampling.cuh"

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
#endif

namespace twinops {
namespace ms_deform_attn {

struct Params {
  int64_t n = 0, s = 0, m = 0, d = 0;      // value (N, S, M, D)
  int64_t lq = 0, levels = 0, points = 0;  // queries, levels, points per level
  // Element strides.
  int64_t value_stride[4] = {};       // N, S, M, D
  int64_t loc_stride[6] = {};         // N, Lq, M, L, P, coordinate (x, y)
  int64_t weight_stride[5] = {};      // N, Lq, M, L, P
  int64_t out_stride[3] = {};         // N, Lq, M * D: the forward's output, the backward's grad_output
  int64_t grad_value_stride[4] = {};  // backward only, as value
  int64_t grad_loc_stride[6] = {};    // backward only, as the locations
  int64_t grad_weight_stride[5] = {};  // backward only, as the weights
};

// Level l's rows of value: (h, w) and where it starts in S, from a contiguous table; false when
// they do not fit in S (then the level reads nothing). 64-bit throughout: h * w <= 2^62.
template <typename I>
TWIN_HD bool level_of(const I* shapes, const I* starts, int64_t l, int64_t s, int64_t* h, int64_t* w,
                      int64_t* start) {
  *h = static_cast<int64_t>(shapes[2 * l]);
  *w = static_cast<int64_t>(shapes[2 * l + 1]);
  *start = static_cast<int64_t>(starts[l]);
  constexpr int64_t kMaxSide = 2147483647;  // the sampling piece's axis lengths fit int32
  return *h >= 1 && *w >= 1 && *h <= kMaxSide && *w <= kMaxSide && *start >= 0 && *start <= s &&
         *h * *w <= s - *start;
}

// The two axes' taps of location (x, y) on an (h, w) level: F.grid_sample's at grid value
// 2 * loc - 1 (bilinear, zeros, align_corners=False). False for a NaN point.
template <typename Acc>
TWIN_HD bool location_taps(Acc x, Acc y, int64_t h, int64_t w, sampling::AxisTaps<2, Acc>* ax,
                           sampling::AxisTaps<2, Acc>* ay) {
  const bool okx = sampling::axis_taps<sampling::kLinear, Acc>(Acc(2) * x - Acc(1), w, sampling::kZeros, false, ax);
  const bool oky = sampling::axis_taps<sampling::kLinear, Acc>(Acc(2) * y - Acc(1), h, sampling::kZeros, false, ay);
  return okx && oky;
}

// d location / d grid value: the grid value is 2 * loc - 1.
constexpr double kLocScale = 2.0;

// The four taps of a sample in x-fastest order (as ATen's nw, ne, sw, se): row offset within
// the level (-1 where outside), weight, and the weight's derivatives wrt the pixel coordinates.
template <typename Acc>
struct SampleTaps {
  int64_t row[4];
  Acc w[4], dwx[4], dwy[4];
  Acc mult_x, mult_y;  // d pixel / d location, per axis

  TWIN_HD SampleTaps() {  // a NaN sample's: no taps
    for (int t = 0; t < 4; ++t) row[t] = -1, w[t] = dwx[t] = dwy[t] = Acc(0);
    mult_x = mult_y = Acc(0);
  }

  TWIN_HD void fill(const sampling::AxisTaps<2, Acc>& ax, const sampling::AxisTaps<2, Acc>& ay, int64_t w_level) {
    for (int t = 0; t < 4; ++t) {
      const int kx = t & 1, ky = t >> 1;
      row[t] = ax.idx[kx] >= 0 && ay.idx[ky] >= 0 ? int64_t(ay.idx[ky]) * w_level + ax.idx[kx] : -1;
      w[t] = ax.w[kx] * ay.w[ky];
      dwx[t] = ax.dw[kx] * ay.w[ky];
      dwy[t] = ax.w[kx] * ay.dw[ky];
    }
    mult_x = ax.mult * Acc(kLocScale);
    mult_y = ay.mult * Acc(kLocScale);
  }
};

// Sample (n, q, m, l, k)'s gradients written where asked (gweight, gloc not null): its weight's
// ga, and its location's from gx, gy (the sums wrt the pixel coordinates; a NaN sample's are NaN
// already) times d pixel / d location. store(Acc) -> T converts.
template <typename T, typename Acc, typename Store>
TWIN_HD void store_sample_grads(const Params& p, int64_t n, int64_t q, int64_t m, int64_t l, int64_t k, bool ok,
                                const SampleTaps<Acc>& st, Acc ga, Acc gx, Acc gy, T* gloc, T* gweight,
                                const Store& store) {
  if (gweight != nullptr) {
    const int64_t* s = p.grad_weight_stride;
    gweight[n * s[0] + q * s[1] + m * s[2] + l * s[3] + k * s[4]] = store(ga);
  }
  if (gloc != nullptr) {
    const int64_t* s = p.grad_loc_stride;
    T* gl = gloc + n * s[0] + q * s[1] + m * s[2] + l * s[3] + k * s[4];
    gl[0] = store(ok ? gx * st.mult_x : gx);
    gl[s[5]] = store(ok ? gy * st.mult_y : gy);
  }
}

template <typename Acc>
TWIN_HD Acc quiet_nan() {
  return Acc(NAN);
}

}  // namespace ms_deform_attn
}  // namespace twinops
