// Shared by the CPU and CUDA registrations of twinops::nms / batched_nms / batched_nms_padded:
// the argument checks (tensor metadata only, so the fake kernels run the same through
// twinops::_nms_check and twinops::_nms_padded_check) and the padded form in ATen operations.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <tuple>

#include "../../kernels/nms/nms.h"
#include "../frontend_util.h"

namespace twinops {
namespace nms {
namespace torch_op {

using ::twinops::torch_frontend::Desc;
using ::twinops::torch_frontend::desc_of;
using ::twinops::torch_frontend::floating;

// Fails unless `t` (the argument `name` of `who`) is a dense (strided) tensor.
void check_dense(const std::string& who, const char* name, const at::Tensor& t);

// Checks every argument; `classes` is null for nms. Returns the kernels' Params (strides left
// at the contiguous defaults: the registrations pass contiguous tensors).
Params check_nms(const std::string& who, const Desc& boxes, const Desc& scores, const Desc* classes,
                 double iou_threshold);

// The same for tensors, which must also be dense (strided); `classes` undefined for nms.
Params check_nms(const std::string& who, const at::Tensor& boxes, const at::Tensor& scores,
                 const at::Tensor& classes, double iou_threshold);

// batched_nms_padded's checks (nms_padded.cpp): dense tensors and every argument.
void check_padded_args(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                       double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k);

// num_detections, detection_boxes, detection_scores, detection_classes, detection_indices.
using PaddedOutputs = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

// batched_nms_padded in ATen operations around the nms ops, image by image (nms_padded.cpp): the
// CPU's implementation, and CUDA's where its device pass cannot run (nms_cuda.cpp).
PaddedOutputs padded_aten(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                          double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k, bool class_agnostic);

}  // namespace torch_op
}  // namespace nms
}  // namespace twinops
