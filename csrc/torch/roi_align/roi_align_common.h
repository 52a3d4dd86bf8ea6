// Shared by the CPU and CUDA registrations of twinops::roi_align / roi_align_backward: argument
// checks (tensor metadata only, so the fake kernels run the same through
// twinops::_roi_align_check), result allocation, and the translation of tensors and schema
// arguments into the kernels' Params (element strides of every tensor: any layout runs without a
// copy).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "../../kernels/roi_align/roi_align_attrs.h"
#include "../frontend_util.h"
#include "../op_attrs.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

using RoiAlignArgs = TorchAttrs<RoiAlignAttrs>;
#define TWIN_ROI_ALIGN_TORCH_PARAMS TWIN_TORCH_PARAMS(TWIN_ROI_ALIGN_ATTRS)
#define TWIN_ROI_ALIGN_TORCH_ARGS \
  ::twinops::torch_frontend::torch_attrs<::twinops::roi_align::RoiAlignAttrs>(TWIN_TORCH_ARGS(TWIN_ROI_ALIGN_ATTRS))

struct Forward {
  Params params;
  at::Tensor output;  // contiguous (K, C, PH, PW)
};
struct Backward {
  Params params;
  at::Tensor grad_input;  // contiguous, input's shape
};

// The element strides of t's first R dims.
template <size_t R>
void strides_of(const at::Tensor& t, int64_t* out) {
  for (size_t k = 0; k < R; ++k) out[k] = t.stride(static_cast<int64_t>(k));
}

// The backward's grad_output: `like`'s dtype and device (`like_name` in messages), shape
// (K, C, PH, PW) of p.
void check_grad_output(const std::string& who, const Desc& grad_output, const Desc& like, const std::string& like_name,
                       const Params& p);

// Throw c10::Error with a message naming the argument ("torch.ops.twinops.roi_align: ...").
// For CUDA, call them under the device guard (they allocate).
Forward prepare_forward(const at::Tensor& input, const at::Tensor& rois, const RoiAlignArgs& a);
Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& rois,
                          const RoiAlignArgs& a);

// multi_level_roi_align: the schema's level inputs (level0, then the optional ones; the given
// ones must come first) and attribute arguments, written out (featmap_strides has any length).
constexpr int kSchemaLevels = 5;
#define TWIN_ML_LEVEL_PARAMS                                                                               \
  const at::Tensor &level0, const std::optional<at::Tensor>&level1, const std::optional<at::Tensor>&level2, \
      const std::optional<at::Tensor>&level3, const std::optional<at::Tensor>&level4
#define TWIN_ML_LEVEL_ARGS level0, level1, level2, level3, level4
#define TWIN_ML_ATTR_PARAMS                                                                                     \
  int64_t output_height, int64_t output_width, c10::ArrayRef<double> featmap_strides, int64_t sampling_ratio, \
      int64_t aligned, c10::string_view pool_mode, double finest_scale, double roi_scale_factor,              \
      c10::string_view level_rule
#define TWIN_ML_ATTR_ARGS                                                                                   \
  output_height, output_width, featmap_strides, sampling_ratio, aligned, pool_mode, finest_scale, roi_scale_factor, \
      level_rule
#define TWIN_ML_ATTR_TYPES                                                                                       \
  int64_t, int64_t, c10::ArrayRef<double>, int64_t, int64_t, c10::string_view, double, double, c10::string_view
inline const char* multi_level_attr_schema() {
  return "int output_height, int output_width, float[] featmap_strides, int sampling_ratio, int aligned, "
         "str pool_mode, float finest_scale, float roi_scale_factor, str level_rule";
}

inline MultiLevelAttrs multi_level_attrs(TWIN_ML_ATTR_PARAMS) {
  MultiLevelAttrs a;
  a.output_height = output_height, a.output_width = output_width;
  a.featmap_strides.assign(featmap_strides.begin(), featmap_strides.end());
  a.sampling_ratio = sampling_ratio, a.aligned = aligned, a.pool_mode = std::string(pool_mode);
  a.finest_scale = finest_scale, a.roi_scale_factor = roi_scale_factor, a.level_rule = std::string(level_rule);
  return a;
}

// The given levels (level0 and the optional ones up to the first absent one); throws when a
// level is given after an absent one.
std::vector<at::Tensor> given_levels(const std::string& who, TWIN_ML_LEVEL_PARAMS);

struct MultiForward {
  Params params;
  at::Tensor output;  // contiguous (K, C, PH, PW)
};
struct MultiBackward {
  Params params;
  std::vector<at::Tensor> grads;  // one per given level, contiguous
};
MultiForward prepare_multi_forward(const at::Tensor& rois, const std::vector<at::Tensor>& levels,
                                   const MultiLevelAttrs& a);
MultiBackward prepare_multi_backward(const at::Tensor& grad_output, const at::Tensor& rois,
                                     const std::vector<at::Tensor>& levels, const MultiLevelAttrs& a);

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
