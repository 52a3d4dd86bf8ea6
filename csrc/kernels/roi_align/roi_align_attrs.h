// The roi_align ops' attribute lists (ONNX node attributes == TensorRT PluginFields == torch
// schema arguments) and their translation into roi_align::Params. Shared by the torch frontend
// and the TensorRT plugins. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <string>

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

// Contiguous strides of a dense tensor of `rank` dims.
void dense_strides(int rank, const int64_t* shape, int64_t* strides);

}  // namespace roi_align
}  // namespace twinops
