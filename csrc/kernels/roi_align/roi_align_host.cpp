// Host-side part of the roi_align kernels (roi_align_attrs.h): attribute and shape validation
// into Params, shared by the torch frontend and the TensorRT plugins.
#include <cmath>
#include <limits>
#include <string>

#include "roi_align_attrs.h"

namespace twinops {
namespace roi_align {

namespace {

std::string shape_str(int rank, const int64_t* s) {
  std::string r = "(";
  for (int i = 0; i < rank; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace

void dense_strides(int rank, const int64_t* shape, int64_t* strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
}

std::string make_params(const int64_t* in, const int64_t* rois, int64_t roi_cols, const RoiAlignAttrs& a,
                        Params* out) {
  if (std::string e = a.check_choices(); !e.empty()) return e;
  constexpr int64_t kMaxBins = 1 << 20;
  if (a.output_height < 1 || a.output_width < 1 || a.output_height > kMaxBins || a.output_width > kMaxBins)
    return "output_height and output_width must be in [1, 2^20], got (" + std::to_string(a.output_height) + ", " +
           std::to_string(a.output_width) + ")";
  if (!std::isfinite(a.spatial_scale) || !(a.spatial_scale > 0.0))
    return "spatial_scale must be finite and greater than 0, got " + std::to_string(a.spatial_scale);
  if (a.sampling_ratio > std::numeric_limits<int32_t>::max() || a.sampling_ratio < std::numeric_limits<int32_t>::min())
    return "sampling_ratio must fit in int32, got " + std::to_string(a.sampling_ratio);
  if (rois[1] >= 0 && rois[1] != roi_cols)
    return "rois must be (K, " + std::to_string(roi_cols) + ")" +
           (roi_cols == 5 ? std::string(" as (batch index, x1, y1, x2, y2)") : std::string(" as (x1, y1, x2, y2)")) +
           ", got shape " + shape_str(2, rois);
  constexpr int64_t kMaxSide = std::numeric_limits<int32_t>::max();
  if ((in[2] >= 0 && (in[2] < 1 || in[2] > kMaxSide)) || (in[3] >= 0 && (in[3] < 1 || in[3] > kMaxSide)))
    return "input's H and W must be in [1, 2^31 - 1], got input of shape " + shape_str(4, in);
  Params p;
  p.n = in[0], p.c = in[1], p.k = rois[0];
  p.ph = a.output_height, p.pw = a.output_width;
  p.sampling_ratio = static_cast<int32_t>(a.sampling_ratio);
  p.aligned = static_cast<int32_t>(a.aligned);
  p.mode = static_cast<PoolMode>(attr::choice_value(choices::pool_mode, a.pool_mode));
  p.roi_cols = static_cast<int32_t>(roi_cols);
  p.levels = 1;
  p.level[0].h = in[2], p.level[0].w = in[3];
  p.level[0].scale = a.spatial_scale;
  dense_strides(4, in, p.level[0].stride);
  const int64_t roi_shape[2] = {rois[0], roi_cols};
  dense_strides(2, roi_shape, p.roi_stride);
  const int64_t out_shape[4] = {p.k, p.c, p.ph, p.pw};
  dense_strides(4, out_shape, p.out_stride);
  dense_strides(4, in, p.grad_input_stride);
  *out = p;
  return "";
}

}  // namespace roi_align
}  // namespace twinops
