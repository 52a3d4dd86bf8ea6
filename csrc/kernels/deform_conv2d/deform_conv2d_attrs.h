// The deform_conv2d node's attribute list (ONNX node attributes == TensorRT PluginFields == torch
// schema arguments), as (H, W) pairs in PyTorch's order, and its translation into the kernels'
// Geometry. groups and offset_groups are no attributes: they follow from the shapes, as
// torchvision infers them. Includes neither torch nor TensorRT headers.
#pragma once

#include "../../common/twinops_attrs.h"
#include "deform_conv2d_host.h"

namespace twinops {
namespace deform_conv2d {

#define TWIN_DEFORM_CONV2D_ATTRS(A)                                        \
  A(::twinops::attr::Ints<2>, stride, "(H, W)", ::twinops::attr::kAny, 1, 1)  \
  A(::twinops::attr::Ints<2>, padding, "(H, W)", ::twinops::attr::kAny, 0, 0) \
  A(::twinops::attr::Ints<2>, dilation, "(H, W)", ::twinops::attr::kAny, 1, 1)

struct DeformConv2dAttrs {
  TWIN_ATTR_STRUCT(TWIN_DEFORM_CONV2D_ATTRS)
};

inline Geometry geometry_of(const DeformConv2dAttrs& a) {
  Geometry g;
  for (int k = 0; k < 2; ++k) g.stride[k] = a.stride[k], g.padding[k] = a.padding[k], g.dilation[k] = a.dilation[k];
  return g;
}

}  // namespace deform_conv2d
}  // namespace twinops
