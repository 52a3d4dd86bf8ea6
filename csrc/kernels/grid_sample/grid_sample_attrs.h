// The grid_sample op's attribute list (ONNX node attributes == TensorRT PluginFields == torch
// schema arguments) and its translation into grid_sample::Params. Shared by the torch frontend
// and the TensorRT plugins so each lives in one place.
//
// Includes neither torch nor TensorRT headers.
#pragma once

#include <cstdint>
#include <string>

#include "../../common/twinops_attrs.h"
#include "grid_sample.cuh"
#include "grid_sample_choices.h"

namespace twinops {
namespace grid_sample {

// The op's attributes, in torch schema order: A(kind, name, what, choices, default...) (see
// twinops_attrs.h). Names and defaults are ONNX GridSample-20's; the choices
// (grid_sample_choices.h) come from the declaration, GridSample-16's bilinear and bicubic read as
// linear and cubic.
#define TWIN_GRID_SAMPLE_ATTRS(A)                                                                 \
  A(::twinops::attr::Str, mode, "", ::twinops::grid_sample::choices::mode, "linear")              \
  A(::twinops::attr::Str, padding_mode, "", ::twinops::grid_sample::choices::padding_mode, "zeros") \
  A(::twinops::attr::Int, align_corners, "", ::twinops::grid_sample::choices::align_corners, 0)

// The tables' values are the kernels' enums.
static_assert(attr::choice_value(choices::mode, "linear") == kLinear &&
                  attr::choice_value(choices::mode, "bilinear") == kLinear &&
                  attr::choice_value(choices::mode, "nearest") == kNearest &&
                  attr::choice_value(choices::mode, "cubic") == kCubic &&
                  attr::choice_value(choices::mode, "bicubic") == kCubic,
              "grid_sample's mode table and Mode disagree");
static_assert(attr::choice_value(choices::padding_mode, "zeros") == kZeros &&
                  attr::choice_value(choices::padding_mode, "border") == kBorder &&
                  attr::choice_value(choices::padding_mode, "reflection") == kReflection,
              "grid_sample's padding_mode table and Padding disagree");

struct GridSampleAttrs {
  TWIN_ATTR_STRUCT(TWIN_GRID_SAMPLE_ATTRS)
};

// Validated Params for an input of shape (N, C, [D,] H, W) and a grid of shape
// (N, [D_out,] H_out, W_out, dims) (`rank` = 4 or 5 entries in input_shape; the grid has the
// same rank), with dense (contiguous) strides for every tensor; callers with other layouts
// overwrite the strides afterwards. Returns "" on success, else a message naming the offending
// attribute or shape (without any "twinops..." prefix).
std::string make_params(int rank, const int64_t* input_shape, const int64_t* grid_shape, const GridSampleAttrs& a,
                        Params* out);

}  // namespace grid_sample
}  // namespace twinops
