// The one creator list of libtwinops_trt.so: one line per plugin name. plugin_library.cpp serves
// each as IPluginV3 "1" (TensorRT >= 10) or IPluginV2DynamicExt "1" (8.6), plus
// IPluginV2DynamicExt "legacy", through every registration path (getCreators,
// getPluginCreators, registration at load time); a creator marked v3_only as IPluginV3 "1" alone.
#include "deform_conv2d/deform_conv2d_core.h"
#include "grid_sample/grid_sample_core.h"
#include "ms_deform_attn/ms_deform_attn_core.h"
#include "nms/nms_core.h"
#include "op_core.h"
#include "resize/resize_core.h"
#include "roi_align/roi_align_core.h"

namespace twinops {
namespace trt {

const std::vector<OpCreator>& op_creators() {
  // Never destroyed: TensorRT may hold creator pointers (which copy these) until process exit.
  static const std::vector<OpCreator>* list = new std::vector<OpCreator>{
      resize::plugin::twinops_resize_creator(),            // the torch op's attributes
      resize::plugin::dynamic_trt_resize_creator(),        // MMDeploy drop-in
      resize::plugin::trt_bicubic_interpolate_creator(),   // MMDeploy drop-in
      grid_sample::plugin::twinops_grid_sample_creator(),  // the torch op's attributes
      grid_sample::plugin::grid_sampler_creator(),         // MMDeploy drop-in
      grid_sample::plugin::onnx_grid_sample_creator(),     // the ONNX standard node (parser plugin override)
      nms::plugin::twinops_batched_nms_padded_creator(),  // fixed shapes: every version
      nms::plugin::efficient_nms_creator(),               // TensorRT's node, namespace "twinops"
      nms::plugin::trt_batched_nms_creator(),             // MMDeploy drop-in
      ms_deform_attn::plugin::twinops_ms_deform_attn_creator(),  // twinops' node
      ms_deform_attn::plugin::mmcv_ms_deform_attn_creator(),     // MMDeploy drop-in
      ms_deform_attn::plugin::trt_ms_deform_attn_creator(),      // TensorRT's layout, namespace "twinops"
      deform_conv2d::plugin::twinops_deform_conv2d_creator(),         // twinops' node
      deform_conv2d::plugin::mmcv_modulated_deform_conv2d_creator(),  // MMDeploy drop-in (DCNv2)
      deform_conv2d::plugin::mmcv_deform_conv2d_creator(),            // MMDeploy drop-in (DCNv1)
      deform_conv2d::plugin::onnx_deform_conv_creator(),              // ONNX DeformConv (parser override)
      roi_align::plugin::twinops_roi_align_creator(),            // twinops' node
      roi_align::plugin::mmcv_roi_align_creator(),               // MMDeploy drop-in (domain mmcv)
      roi_align::plugin::onnx_roi_align_creator(),               // the ONNX standard node (parser plugin override)
      roi_align::plugin::twinops_multi_level_roi_align_creator(),  // twinops' node
      roi_align::plugin::mmcv_multi_level_roi_align_creator(),     // MMDeploy drop-in
#if TWIN_TRT_HAS_V3
      nms::plugin::twinops_nms_creator(),          // data-dependent output: IPluginV3 only
      nms::plugin::twinops_batched_nms_creator(),  // data-dependent output: IPluginV3 only
#endif
  };
  return *list;
}

}  // namespace trt
}  // namespace twinops
