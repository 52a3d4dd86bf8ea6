// The roi_align ops' attribute lists (ONNX node attributes == TensorRT PluginFields == torch
// schema arguments) and their translation into roi_align::Params. Shared by the torch frontend
// and the TensorRT plugins. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../common/twinops_attrs.h"
#include "roi_align.cuh"
#include "roi_align_choices.h"

namespace twinops {
namespace roi_align {

// TwinopsRoiAlign's attributes, in torch schema order: A(kind, name, what, choices, default...)
// (twinops_attrs.h). Defaults are ONNX RoiAlign's where it has the attribute.
#define TWIN_ROI_ALIGN_ATTRS(A)                                                                   \
  A(::twinops::attr::Int, output_height, "", ::twinops::attr::kAny, 1)                            \
  A(::twinops::attr::Int, output_width, "", ::twinops::attr::kAny, 1)                             \
  A(::twinops::attr::Float, spatial_scale, "", ::twinops::attr::kAny, 1.0)                        \
  A(::twinops::attr::Int, sampling_ratio, "", ::twinops::attr::kAny, 0)                           \
  A(::twinops::attr::Int, aligned, "", ::twinops::roi_align::choices::aligned, 0)                 \
  A(::twinops::attr::Str, pool_mode, "", ::twinops::roi_align::choices::pool_mode, "avg")

static_assert(attr::choice_value(choices::pool_mode, "avg") == kAvg &&
                  attr::choice_value(choices::pool_mode, "max") == kMax,
              "roi_align's pool_mode table and PoolMode disagree");

struct RoiAlignAttrs {
  TWIN_ATTR_STRUCT(TWIN_ROI_ALIGN_ATTRS)
};

// Validated Params (sizes, attributes and dense strides of every tensor; callers with other
// layouts overwrite the strides) for one level of shape (N, C, H, W) and rois of shape (K, cols)
// (cols 5: batch, x1, y1, x2, y2; or 4 with separate batch indices). A size below 0 stands for
// one not known yet (a dynamic dim when a plugin is built): it is compared with nothing. Returns
// "" or a message naming the attribute or input (without a "twinops..." prefix).
std::string make_params(const int64_t* input_shape, const int64_t* rois_shape, int64_t roi_cols,
                        const RoiAlignAttrs& a, Params* out);

// TwinopsMultiLevelRoiAlign's attributes, in torch schema order. featmap_strides is a list of
// any length (one stride per level at least), which the attribute X-macros do not express: the
// torch schema and the plugin fields of this struct are written out where they are read.
static_assert(attr::choice_value(choices::level_rule, "mmdet") == kMmdet &&
                  attr::choice_value(choices::level_rule, "torchvision") == kTorchvision,
              "roi_align's level_rule table and LevelRule disagree");

struct MultiLevelAttrs {
  int64_t output_height = 1, output_width = 1;
  std::vector<double> featmap_strides;
  int64_t sampling_ratio = 0, aligned = 1;
  std::string pool_mode = "avg";
  double finest_scale = 56.0, roi_scale_factor = 1.0;
  std::string level_rule = "mmdet";
};

// Validated Params for `levels` feature maps (level_shapes[l]: (N, C, H_l, W_l)) and rois (K, 5),
// dense strides as make_params. Sizes below 0 are unknown (compared with nothing). The first
// `levels` strides are used (MMDeploy's plugin allows more strides than levels).
std::string make_multi_params(int32_t levels, const int64_t* const* level_shapes, const int64_t* rois_shape,
                              const MultiLevelAttrs& a, Params* out);

}  // namespace roi_align
}  // namespace twinops
