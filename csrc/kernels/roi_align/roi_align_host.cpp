// Host-side part of the roi_align kernels (roi_align_attrs.h): attribute and shape validation
// into Params, shared by the torch frontend and the TensorRT plugins.
#include <cmath>
#include <limits>
#include <string>

#include "../../common/twinops_shapes.h"
#include "roi_align_attrs.h"

namespace twinops {
namespace roi_align {

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

std::string make_multi_params(int32_t levels, const int64_t* const* shapes, const int64_t* rois,
                              const MultiLevelAttrs& a, Params* out) {
  if (levels < 1 || levels > kMaxLevels)
    return "takes 1 to " + std::to_string(kMaxLevels) + " feature levels, got " + std::to_string(levels);
  if (static_cast<int64_t>(a.featmap_strides.size()) < levels)
    return "featmap_strides must have one stride per level (" + std::to_string(levels) + "), got " +
           std::to_string(a.featmap_strides.size());
  for (int32_t l = 0; l < levels; ++l)
    if (!std::isfinite(a.featmap_strides[l]) || !(a.featmap_strides[l] > 0.0))
      return "featmap_strides[" + std::to_string(l) + "] must be finite and greater than 0, got " +
             std::to_string(a.featmap_strides[l]);
  if (!std::isfinite(a.finest_scale) || !(a.finest_scale > 0.0))
    return "finest_scale must be finite and greater than 0, got " + std::to_string(a.finest_scale);
  if (!std::isfinite(a.roi_scale_factor) || !(a.roi_scale_factor > 0.0))
    return "roi_scale_factor must be finite and greater than 0, got " + std::to_string(a.roi_scale_factor);
  if (std::string e = attr::check_choice("level_rule", a.level_rule, choices::level_rule); !e.empty()) return e;
  // Level 0 as a single-level call checks the attributes the two ops share and the rois.
  RoiAlignAttrs one;
  one.output_height = a.output_height, one.output_width = a.output_width;
  one.spatial_scale = 1.0 / a.featmap_strides[0];
  one.sampling_ratio = a.sampling_ratio, one.aligned = a.aligned, one.pool_mode = a.pool_mode;
  Params p;
  if (std::string e = make_params(shapes[0], rois, 5, one, &p); !e.empty()) return e;
  for (int32_t l = 1; l < levels; ++l) {
    const int64_t* s = shapes[l];
    const std::string at = "level" + std::to_string(l);
    for (int d = 0; d < 2; ++d)
      if (s[d] >= 0 && shapes[0][d] >= 0 && s[d] != shapes[0][d])
        return at + " must have level0's " + (d == 0 ? "N" : "C") + " (" + std::to_string(shapes[0][d]) +
               "), got shape " + shape_str(4, s);
    constexpr int64_t kMaxSide = std::numeric_limits<int32_t>::max();
    if ((s[2] >= 0 && (s[2] < 1 || s[2] > kMaxSide)) || (s[3] >= 0 && (s[3] < 1 || s[3] > kMaxSide)))
      return at + "'s H and W must be in [1, 2^31 - 1], got shape " + shape_str(4, s);
    p.level[l].h = s[2], p.level[l].w = s[3];
    p.level[l].scale = 1.0 / a.featmap_strides[l];
    dense_strides(4, s, p.level[l].stride);
  }
  p.levels = levels;
  p.rule = static_cast<LevelRule>(attr::choice_value(choices::level_rule, a.level_rule));
  p.finest_scale = a.finest_scale;
  p.roi_scale_factor = a.roi_scale_factor;
  *out = p;
  return "";
}

}  // namespace roi_align
}  // namespace twinops
