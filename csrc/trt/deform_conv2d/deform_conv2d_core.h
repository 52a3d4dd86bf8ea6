// The deform_conv2d computation behind every deformable-convolution plugin: one OpCore (op_core.h)
// that the generic IPluginV3 / IPluginV2DynamicExt classes wrap, and the creators
// plugin_creators.cpp registers. The weights are inputs, never fields.
//
// Plugins (name; namespaces; inputs; fields):
//   TwinopsDeformConv2d        ""; input, offset, weight, bias?, mask?; stride, padding, dilation
//                              as (H, W) pairs (the node the exporters write)
//   MMCVModulatedDeformConv2d  "" and "mmdeploy"; input, offset, mask, weight, bias?; stride,
//                              padding, dilation (H, W), groups, deform_groups (MMDeploy's DCNv2 node)
//   MMCVDeformConv2d           "" and "mmdeploy"; input, offset, weight; stride, dilation (H, W),
//                              padding as MMDeploy writes it (pad_h, pad_h, pad_w, pad_w), groups,
//                              deform_groups (MMDeploy's DCNv1 node)
//   DeformConv                 ""; X, W, offset, B?, mask?; ONNX DeformConv-19's dilations, group,
//                              kernel_shape, offset_group, pads (h_begin, w_begin, h_end, w_end),
//                              strides, each at ONNX's default when the node lacks it
// Every pair is read in PyTorch's (H, W) order. groups and offset_groups follow from the shapes;
// a node's own group fields must agree with them. Types: every tensor float32 / float16 (and
// bfloat16 on TensorRT >= 9), one type; linear.
#pragma once

#include "../op_core.h"

namespace twinops {
namespace deform_conv2d {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// The creators of the deform_conv2d plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_deform_conv2d_creator();
OpCreator mmcv_modulated_deform_conv2d_creator();
OpCreator mmcv_deform_conv2d_creator();
OpCreator onnx_deform_conv_creator();

}  // namespace plugin
}  // namespace deform_conv2d
}  // namespace twinops
