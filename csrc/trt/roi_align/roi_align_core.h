// The roi_align computation behind the RoIAlign plugins: one OpCore (op_core.h) that the generic
// IPluginV3 / IPluginV2DynamicExt classes wrap, and the creators plugin_creators.cpp registers.
//
// Plugins (name; namespace; fields):
//   TwinopsRoiAlign  ""; output_height, output_width, spatial_scale, sampling_ratio, aligned,
//                    pool_mode: the node the exporters write
//   MMCVRoiAlign     "" and "mmcv"; output_height, output_width, spatial_scale, sampling_ratio,
//                    mode ("avg" / "max"), aligned: MMDeploy's node (drop-in)
//   RoiAlign         ""; ONNX RoiAlign-16's attributes, ONNX's defaults for absent ones (a standard
//                    node through TensorRT's plugin override, kENABLE_PLUGIN_OVERRIDE); inputs X,
//                    rois (K, 4), batch_indices (K,) int32 or int64; mode max (ONNX's) refused
//   TwinopsMultiLevelRoiAlign  ""; output_height, output_width, featmap_strides, sampling_ratio,
//                    aligned, pool_mode, finest_scale, roi_scale_factor, level_rule
//   MMCVMultiLevelRoiAlign     "" and "mmdeploy"; output_height, output_width, pool_mode (0 max,
//                    1 avg), sampling_ratio, featmap_strides, roi_scale_factor, finest_scale (INT),
//                    aligned: MMDeploy's node (drop-in; level rule mmdet)
// Single level: inputs input (N, C, H, W), rois (K, 5) as (batch index, x1, y1, x2, y2); output (K, C,
// output_height, output_width). One type for all three: float32, float16 (and bfloat16 on
// TensorRT >= 9); linear. The rois are data: a roi whose batch index is outside (-1, N) or whose
// coordinates are not finite gives NaN outputs and no read (docs/ops/roi_align.md). Multi-level:
// inputs rois (K, 5), then 1 to 8 levels (N, C, H_l, W_l), all of one type; the first
// (inputs - 1) strides of featmap_strides are used.
#pragma once

#include "../op_core.h"

namespace twinops {
namespace roi_align {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// The creators of the roi_align plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_roi_align_creator();
OpCreator mmcv_roi_align_creator();
OpCreator onnx_roi_align_creator();
OpCreator twinops_multi_level_roi_align_creator();
OpCreator mmcv_multi_level_roi_align_creator();

}  // namespace plugin
}  // namespace roi_align
}  // namespace twinops
