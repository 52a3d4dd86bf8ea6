// The nms computation behind the data-dependent nms plugins: one OpCore (op_core.h) that the
// generic IPluginV3 class wraps, and the creators plugin_creators.cpp registers.
//
// Plugins (name, fields; namespace ""; IPluginV3 version "1" only, so TensorRT >= 10: a
// data-dependent extent needs a size tensor, which IPluginV2DynamicExt cannot declare):
//   TwinopsNMS         field iou_threshold (float, in [0, 1]); inputs boxes (K, 4) as
//                      (x1, y1, x2, y2) and scores (K)
//   TwinopsBatchedNMS  the same field; inputs boxes, scores and idxs (K) int64 or int32, the
//                      class of each box
// Outputs: keep (M) int64, the kept boxes' indices by decreasing score (equal scores: lower
// index first), and M itself, a 0-D int64 size tensor (upper bound K, the builder's opt K / 2).
// The ONNX nodes name only keep; TensorRT's parser leaves the plugin's extra output unnamed.
// boxes and scores: float32, float16 (and bfloat16 on TensorRT >= 9), one type; linear.
#pragma once

#include "../../common/twinops_attrs.h"
#include "../op_core.h"

namespace twinops {
namespace nms {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

// The nodes' one attribute, A(kind, name, what, choices, default...); the range is checked
// when a core is made.
#define TWIN_NMS_FIELDS(A) A(::twinops::attr::Float, iou_threshold, "", ::twinops::attr::kAny, 0.5)

struct NmsFields {
  TWIN_ATTR_STRUCT(TWIN_NMS_FIELDS)
};

// The creators of the nms plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_nms_creator();
OpCreator twinops_batched_nms_creator();

}  // namespace plugin
}  // namespace nms
}  // namespace twinops
