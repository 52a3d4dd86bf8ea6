// The ms_deform_attn computation behind every multi-scale deformable attention plugin: one
// OpCore (op_core.h) that the generic IPluginV3 / IPluginV2DynamicExt classes wrap, and the
// creators plugin_creators.cpp registers. None has fields.
//
// Plugins (name; namespace; output):
//   TwinopsMSDeformAttn                 ""; (N, Lq, M * D), the node the exporters write
//   MMCVMultiScaleDeformableAttention   "" and "mmdeploy"; (N, Lq, M * D), MMDeploy's node (its
//                                       im2col_step attribute, a CUDA batching knob, is ignored)
//   MultiscaleDeformableAttnPlugin_TRT  "twinops" only; (N, Lq, M, D), TensorRT's plugin layout:
//                                       libnvinfer_plugin registers this name in "" itself, so a
//                                       node selects twinops' with plugin_namespace = "twinops"
// Inputs: value (N, S, M, D), spatial_shapes (L, 2) as (h, w), level_start_index (L,),
// sampling_locations (N, Lq, M, L, P, 2), attention_weights (N, Lq, M, L, P). I/O: value, the
// locations, the weights and the output of one type, float32 / float16 (and bfloat16 on
// TensorRT >= 9); the level table int32 (or int64 on TensorRT >= 10), both the same; linear.
// The level table is data: the kernels never read outside value for any table, and a level that
// does not fit gives NaN (docs/ops/ms_deform_attn.md).
#pragma once

#include <string>

#include "../op_core.h"

namespace twinops {
namespace ms_deform_attn {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// The creators of the ms_deform_attn plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_ms_deform_attn_creator();
OpCreator mmcv_ms_deform_attn_creator();
OpCreator trt_ms_deform_attn_creator();

}  // namespace plugin
}  // namespace ms_deform_attn
}  // namespace twinops
