// The resize op's attribute list (ONNX node attributes == TensorRT PluginFields == torch schema
// arguments), its translation into resize::Params, and PyTorch's output-size rule. Shared by
// the torch frontend and the TensorRT plugins so each lives in one place.
//
// Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <string>

#include "../../common/twinops_attrs.h"
#include "resize.cuh"
#include "resize_choices.h"

namespace twinops {
namespace resize {

// The resize op's attributes, in torch schema order: A(kind, name, what, choices, default...)
// (see twinops_attrs.h); the choices (resize_choices.h) come from the declaration. Defaults are
// ONNX Resize-19's where it has one. scales: (H, W), <= 0 = not given (see Axis::scale); roi:
// tf_crop_and_resize's box.
#define TWIN_RESIZE_CHOICES_(name) ::twinops::resize::choices::name
#define TWIN_RESIZE_ATTRS(A)                                                                                       \
  A(::twinops::attr::Str, mode, "", TWIN_RESIZE_CHOICES_(mode), "nearest")                                         \
  A(::twinops::attr::Str, coordinate_transformation_mode, "", TWIN_RESIZE_CHOICES_(coordinate_transformation_mode), \
    "half_pixel")                                                                                                  \
  A(::twinops::attr::Str, nearest_mode, "", TWIN_RESIZE_CHOICES_(nearest_mode), "round_prefer_floor")              \
  A(::twinops::attr::Float, cubic_coeff_a, "", ::twinops::attr::kAny, -0.75)                                       \
  A(::twinops::attr::Int, exclude_outside, "", TWIN_RESIZE_CHOICES_(exclude_outside), 0)                           \
  A(::twinops::attr::Int, antialias, "", TWIN_RESIZE_CHOICES_(antialias), 0)                                       \
  A(::twinops::attr::Floats<2>, scales, "(H, W)", ::twinops::attr::kAny, 0.0, 0.0)                                 \
  A(::twinops::attr::Floats<4>, roi, "(h_start, w_start, h_end, w_end)", ::twinops::attr::kAny, 0.0, 0.0, 1.0, 1.0) \
  A(::twinops::attr::Float, extrapolation_value, "", ::twinops::attr::kAny, 0.0)                                   \
  A(::twinops::attr::Int, pytorch, "", TWIN_RESIZE_CHOICES_(pytorch), 0)

// The tables' values are the kernels' enums.
static_assert(attr::choice_value(choices::mode, "nearest") == kNearest &&
                  attr::choice_value(choices::mode, "linear") == kLinear &&
                  attr::choice_value(choices::mode, "cubic") == kCubic &&
                  attr::choice_value(choices::mode, "area") == kArea,
              "resize's mode table and Mode disagree");
static_assert(attr::choice_value(choices::coordinate_transformation_mode, "half_pixel") == kHalfPixel &&
                  attr::choice_value(choices::coordinate_transformation_mode, "pytorch_half_pixel") ==
                      kPytorchHalfPixel &&
                  attr::choice_value(choices::coordinate_transformation_mode, "align_corners") == kAlignCorners &&
                  attr::choice_value(choices::coordinate_transformation_mode, "asymmetric") == kAsymmetric &&
                  attr::choice_value(choices::coordinate_transformation_mode, "half_pixel_symmetric") ==
                      kHalfPixelSymmetric &&
                  attr::choice_value(choices::coordinate_transformation_mode, "tf_crop_and_resize") ==
                      kTfCropAndResize,
              "resize's coordinate_transformation_mode table and CoordMode disagree");
static_assert(attr::choice_value(choices::nearest_mode, "round_prefer_floor") == kRoundPreferFloor &&
                  attr::choice_value(choices::nearest_mode, "round_prefer_ceil") == kRoundPreferCeil &&
                  attr::choice_value(choices::nearest_mode, "floor") == kFloor &&
                  attr::choice_value(choices::nearest_mode, "ceil") == kCeil,
              "resize's nearest_mode table and NearestMode disagree");

struct ResizeAttrs {
  TWIN_ATTR_STRUCT(TWIN_RESIZE_ATTRS)
};

// The attributes of F.interpolate(mode="bicubic", align_corners=...) as twinops.interpolate
// maps it (Keys A = -0.75, F.interpolate's arithmetic): what MMDeploy's bicubic nodes and
// twinops::dynamic_resize compute.
ResizeAttrs interpolate_bicubic_attrs(bool align_corners);

// Validated Params for one input/output spatial size. Returns "" on success, else a message
// naming the offending attribute or size (without any "twinops..." prefix).
std::string make_params(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const ResizeAttrs& a,
                        Params* out);

// A positive finite scale as an exact fraction num / den with den a power of two (every
// float and double is one). Used to apply the size rule with integer arithmetic (TensorRT
// dimension expressions), so a float32 attribute never becomes a truncated float constant.
struct Ratio {
  int64_t num = 0;
  int64_t den = 1;
};
// False when `scale` is not positive and finite or does not fit (den or num > 2^62).
bool exact_ratio(double scale, Ratio* out);

// PyTorch's output size for scale_factor: floor(in * scale), which ATen computes in double.
// Computed exactly on the fraction (equal to ATen's double result for in < 2^29). Returns
// false (with *out untouched) when the scale is invalid or the result overflows int64.
bool scaled_length(int64_t in, double scale, int64_t* out);

}  // namespace resize
}  // namespace twinops
