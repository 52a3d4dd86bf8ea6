// The nms computation behind the nms plugins: OpCores (op_core.h) that the generic plugin
// classes wrap, and the creators plugin_creators.cpp registers.
//
// Plugins (name, fields; namespace ""):
//   TwinopsNMS         field iou_threshold (float, in [0, 1]); inputs boxes (K, 4) as
//                      (x1, y1, x2, y2) and scores (K)
//   TwinopsBatchedNMS  the same field; inputs boxes, scores and idxs (K) int64 or int32, the
//                      class of each box
//   Both: IPluginV3 version "1" only, so TensorRT >= 10 (a data-dependent extent needs a size
//   tensor, which IPluginV2DynamicExt cannot declare). Outputs keep (M) int64, the kept boxes'
//   indices by decreasing score (equal scores: lower index first), and M itself, a 0-D int64
//   size tensor (upper bound K, the builder's opt K / 2). The ONNX nodes name only keep;
//   TensorRT's parser leaves the plugin's extra output unnamed.
//   TwinopsBatchedNMSPadded  fields score_threshold, iou_threshold (float), max_output_boxes,
//                      pre_nms_top_k (-1 or >= 1), class_agnostic (0 | 1); inputs boxes (B, N, 4)
//                      or (B, N, C, 4) and scores (B, N, C); outputs num_detections (B, 1) int32,
//                      detection_boxes (B, K, 4), detection_scores (B, K), detection_classes (B, K)
//                      int32 and detection_indices (B, K) int64 (int32 on TensorRT 8.6), with
//                      K = max_output_boxes. Fixed shapes, so IPluginV3 "1" and
//                      IPluginV2DynamicExt "1" / "legacy" (TensorRT 8.6 too). The profile's
//                      largest shapes must pass padded_unsupported (kernels/nms/nms.h): at most
//                      360,448 candidates per image.
//   EfficientNMS_TRT   TensorRT's node of that name (its fields, defaults and outputs: the first
//                      four of TwinopsBatchedNMSPadded's, boxes written as corners), by its rules
//                      (csrc/trt/nms/README.md; ties fixed as twinops' are), on the same device
//                      pass; optional third input anchors (1 or B, N, 4). Registered in plugin
//                      namespace "twinops" alone, so that libnvinfer_plugin's own creator of that
//                      name in "" stays usable: a node selects this one with
//                      plugin_namespace="twinops". IPluginV3 "1" and IPluginV2DynamicExt.
//   TRTBatchedNMS      MMDeploy's node (its fields; inputs boxes (N, P, C or 1, 4), scores (N, P,
//                      num_classes); outputs dets (N, keep_topk, 5), labels int32 and with
//                      return_index an int32 index (N, keep_topk)) by the rules of
//                      trt_batched_nms_reference, on the per-class padded pass. Namespaces "" and
//                      "mmdeploy" (no TensorRT plugin has that name). IPluginV3 and
//                      IPluginV2DynamicExt.
// boxes and scores: float32, float16 (and bfloat16 on TensorRT >= 9), one type; linear.
#pragma once

#include <string>

#include "../../common/twinops_attrs.h"
#include "../../kernels/workspace.h"
#include "../core_util.h"
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

// TwinopsBatchedNMSPadded's attributes (the torch op's, class_agnostic an INT as in ONNX).
#define TWIN_NMS_PADDED_FIELDS(A)                                            \
  A(::twinops::attr::Float, score_threshold, "", ::twinops::attr::kAny, 0.0) \
  A(::twinops::attr::Float, iou_threshold, "", ::twinops::attr::kAny, 0.5)   \
  A(::twinops::attr::Int, max_output_boxes, "", ::twinops::attr::kAny, 1)    \
  A(::twinops::attr::Int, pre_nms_top_k, "", ::twinops::attr::kAny, -1)      \
  A(::twinops::attr::Int, class_agnostic, "", ::twinops::attr::kAny, 0)

struct PaddedFields {
  TWIN_ATTR_STRUCT(TWIN_NMS_PADDED_FIELDS)
};

// EfficientNMS_TRT's fields (its drop-in), with that plugin's defaults for absent attributes.
#define TWIN_EFFICIENT_NMS_FIELDS(A)                                         \
  A(::twinops::attr::Float, score_threshold, "", ::twinops::attr::kAny, 0.5) \
  A(::twinops::attr::Float, iou_threshold, "", ::twinops::attr::kAny, 0.5)   \
  A(::twinops::attr::Int, max_output_boxes, "", ::twinops::attr::kAny, 100)  \
  A(::twinops::attr::Int, background_class, "", ::twinops::attr::kAny, -1)   \
  A(::twinops::attr::Int, score_activation, "", ::twinops::attr::kAny, 0)    \
  A(::twinops::attr::Int, class_agnostic, "", ::twinops::attr::kAny, 0)      \
  A(::twinops::attr::Int, box_coding, "", ::twinops::attr::kAny, 0)

struct EfficientFields {
  TWIN_ATTR_STRUCT(TWIN_EFFICIENT_NMS_FIELDS)
};

// MMDeploy's TRTBatchedNMS fields (its drop-in); absent ones take these defaults (MMDeploy's own
// for clip_boxes and return_index; num_classes 0: the scores' class count; keep_topk 0 builds no
// engine; is_normalized is read and changes nothing, as in MMDeploy).
#define TWIN_TRT_BATCHED_NMS_FIELDS(A)                                          \
  A(::twinops::attr::Int, background_label_id, "", ::twinops::attr::kAny, -1)  \
  A(::twinops::attr::Int, num_classes, "", ::twinops::attr::kAny, 0)            \
  A(::twinops::attr::Int, topk, "", ::twinops::attr::kAny, -1)                  \
  A(::twinops::attr::Int, keep_topk, "", ::twinops::attr::kAny, 0)              \
  A(::twinops::attr::Float, score_threshold, "", ::twinops::attr::kAny, 0.0)    \
  A(::twinops::attr::Float, iou_threshold, "", ::twinops::attr::kAny, 0.5)      \
  A(::twinops::attr::Int, is_normalized, "", ::twinops::attr::kAny, 1)          \
  A(::twinops::attr::Int, clip_boxes, "", ::twinops::attr::kAny, 1)             \
  A(::twinops::attr::Int, return_index, "", ::twinops::attr::kAny, 0)

struct TrtBatchedFields {
  TWIN_ATTR_STRUCT(TWIN_TRT_BATCHED_NMS_FIELDS)
};

// Why a node of `want` outputs cannot take `got`.
inline std::string outputs_message(int32_t want, int32_t got) {
  return "has " + std::to_string(want) + " outputs, got " + std::to_string(got);
}

// Every nms node's first two inputs: "" or why boxes and scores cannot run (a float type, one type).
inline std::string box_score_types(nvinfer1::DataType boxes, nvinfer1::DataType scores) {
  if (!is_float_type(boxes)) return std::string("boxes must be ") + kFloatTypes + ", got " + type_name(boxes);
  if (scores != boxes) return "scores must have the boxes' type (" + type_name(boxes) + "), got " + type_name(scores);
  return "";
}

// Where an array a plugin keeps after the kernels' `kernel_bytes` of workspace starts: aligned
// as the kernels' own arrays are.
inline size_t after_kernels(size_t kernel_bytes) {
  WorkspaceOffsets w;
  w.take(kernel_bytes);
  return w.end;
}

// The creators of the nms plugins (each registered by one line of plugin_creators.cpp).
OpCreator twinops_nms_creator();
OpCreator twinops_batched_nms_creator();
OpCreator twinops_batched_nms_padded_creator();
OpCreator efficient_nms_creator();
OpCreator trt_batched_nms_creator();

}  // namespace plugin
}  // namespace nms
}  // namespace twinops
