// The resize computation behind every resize plugin: one OpCore (op_core.h) that the generic
// IPluginV3 / IPluginV2DynamicExt classes wrap, and the creators plugin_creators.cpp registers.
//
// Plugins (name, fields; namespace ""; versions in plugin_library.cpp):
//   TwinopsResize         inputs X [, sizes]  fields = the torch op's attributes (TWIN_RESIZE_ATTRS)
//   DynamicTRTResize      inputs input, size_tensor   field align_corners (MMDeploy)
//   TRTBicubicInterpolate input                       fields scale_factor, align_corners (MMDeploy)
// Output (N, C, H_out, W_out), where (H_out, W_out) is, in this order of preference:
//   (c) the values of the 1-D int shape input `sizes` (IPluginV3 only: the exported node's
//       tensorrt_plugin_shape_input_indices=[1] makes the parser pass it as a shape input),
//   (b) the last two dims of size_tensor's shape (DynamicTRTResize),
//   (a) floor(in * scale) per axis from `scales` / `scale_factor` (PyTorch's rule, evaluated
//       exactly on the scale's binary fraction with integer dimension expressions).
// A V2 plugin cannot read the values of `sizes`: TwinopsResize takes its output size from
// `scales` (> 0 on both axes) there, DynamicTRTResize from size_tensor's shape.
// I/O: float32, float16 (and bfloat16 on TensorRT >= 9) linear NCHW, output type = input type.
#pragma once

#include "../../kernels/resize/resize_attrs.h"
#include "../op_core.h"

namespace twinops {
namespace resize {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// MMDeploy's resize plugins' fields (their creators' getFieldNames), A(kind, name, what,
// choices, default...); mmdeploy_spec checks their values with the field's name in the message.
#define TWIN_DYNAMIC_TRT_RESIZE_FIELDS(A) A(::twinops::attr::Int, align_corners, "", ::twinops::attr::kAny, 0)
#define TWIN_TRT_BICUBIC_INTERPOLATE_FIELDS(A)                                          \
  A(::twinops::attr::Floats<2>, scale_factor, "(H, W)", ::twinops::attr::kAny, 0.0, 0.0) \
  A(::twinops::attr::Int, align_corners, "", ::twinops::attr::kAny, 0)

struct DynamicTRTResizeFields {
  TWIN_ATTR_STRUCT(TWIN_DYNAMIC_TRT_RESIZE_FIELDS)
};
struct TRTBicubicInterpolateFields {
  TWIN_ATTR_STRUCT(TWIN_TRT_BICUBIC_INTERPOLATE_FIELDS)
};

// The creators of the resize plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_resize_creator();
OpCreator dynamic_trt_resize_creator();
OpCreator trt_bicubic_interpolate_creator();

}  // namespace plugin
}  // namespace resize
}  // namespace twinops
