// The grid_sample computation behind every grid_sample plugin: one OpCore (op_core.h) that the
// generic IPluginV3 / IPluginV2DynamicExt classes wrap, and the creators plugin_creators.cpp
// registers.
//
// Plugins (name, fields; namespace ""; versions in plugin_library.cpp):
//   TwinopsGridSample  fields = the torch op's attributes (TWIN_GRID_SAMPLE_ATTRS): mode
//                      linear | nearest | cubic (GridSample-16's bilinear / bicubic read as
//                      linear / cubic), padding_mode zeros | border | reflection, align_corners 0 | 1
//   grid_sampler       MMDeploy's drop-in: ints interpolation_mode (0 bilinear, 1 nearest,
//                      2 bicubic), padding_mode (0 zeros, 1 border, 2 reflection), align_corners 0 | 1
//   GridSample         the ONNX standard node (GridSample-16 / -20 attributes mode, padding_mode,
//                      align_corners), for TensorRT parsers with OnnxParserFlag::kENABLE_PLUGIN_OVERRIDE;
//                      an attribute the node lacks takes ONNX's default (linear, zeros, 0)
// Inputs X (N, C, H, W) and grid (N, H_out, W_out, 2), or X (N, C, D, H, W) and grid
// (N, D_out, H_out, W_out, 3); output Y (N, C, [D_out,] H_out, W_out). cubic is 4-D only.
// I/O: float32, float16 (and bfloat16 on TensorRT >= 9), all three the same type, linear.
#pragma once

#include "../../kernels/grid_sample/grid_sample_attrs.h"
#include "../op_core.h"

namespace twinops {
namespace grid_sample {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// MMDeploy's grid_sampler fields (its creator's getFieldNames), A(kind, name, what, choices,
// default...); the codes are PyTorch's GridSamplerInterpolation / GridSamplerPadding enums, which
// the kernel's enums are, and spec_of checks them with the field's name in the message.
#define TWIN_GRID_SAMPLER_FIELDS(A)                                         \
  A(::twinops::attr::Int, interpolation_mode, "", ::twinops::attr::kAny, 0) \
  A(::twinops::attr::Int, padding_mode, "", ::twinops::attr::kAny, 0)       \
  A(::twinops::attr::Int, align_corners, "", ::twinops::attr::kAny, 0)

struct GridSamplerFields {
  TWIN_ATTR_STRUCT(TWIN_GRID_SAMPLER_FIELDS)
};

// The creators of the grid_sample plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_grid_sample_creator();
OpCreator grid_sampler_creator();
OpCreator onnx_grid_sample_creator();

}  // namespace plugin
}  // namespace grid_sample
}  // namespace twinops
