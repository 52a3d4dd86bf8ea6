// twinops::batched_nms_padded: NMS per image into fixed-shape outputs (EfficientNMS_TRT's layout),
// for engines that need static output shapes. Schema, argument checks, and the implementation in
// ATen operations (the CPU's, and CUDA's where the device pass of nms_cuda.cpp cannot run): per
// image, the candidates above the score threshold in score order (ties: lower flat index
// n * C + c first), at most pre_nms_top_k of them, then twinops::nms or twinops::batched_nms (its
// classes) on them, the first max_output_boxes kept written out.
// The rules are docs/ops/nms.md's ("batched_nms_padded"). The fake kernel lives in Python
// (ops/library/nms/api.py) and runs the same checks through twinops::_nms_padded_check.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "../frontend_util.h"
#include "nms_common.h"

namespace twinops {
namespace nms {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

namespace {

const std::string kPadded = "torch.ops.twinops.batched_nms_padded";

// The checks, on tensor metadata only (the fake kernel passes the same).
void check_padded(const std::string& who, const Desc& boxes, const Desc& scores, double score_threshold,
                  double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k) {
  const auto& b = boxes.shape;
  if (!((b.size() == 3 || b.size() == 4) && b.back() == 4))
    fail(who + ": boxes must be a 3-D (B, N, 4) or 4-D (B, N, C, 4) tensor of (x1, y1, x2, y2), got shape " +
         shape_str(b));
  if (!floating(boxes.dtype))
    fail(who + ": boxes must be float32, float64, float16 or bfloat16, got " + c10::toString(boxes.dtype));
  const auto& s = scores.shape;
  const bool same = s.size() == 3 && s[0] == b[0] && s[1] == b[1] && (b.size() == 3 || s[2] == b[2]);
  if (!same)
    fail(who + ": scores must be a 3-D (B, N, C) tensor with boxes' B and N" +
         (b.size() == 4 ? std::string(" and C") : std::string()) + " (boxes: " + shape_str(b) + "), got shape " +
         shape_str(s));
  if (scores.dtype != boxes.dtype)
    fail(who + ": scores must have boxes' dtype (" + c10::toString(boxes.dtype) + "), got " +
         c10::toString(scores.dtype));
  if (scores.device != boxes.device)
    fail(who + ": scores must be on boxes' device (" + boxes.device.str() + "), got " + scores.device.str());
  if (!std::isfinite(score_threshold))
    fail(who + ": score_threshold must be finite, got " + double_str(score_threshold));
  if (!(iou_threshold >= 0.0 && iou_threshold <= 1.0))  // NaN fails too
    fail(who + ": iou_threshold must be in [0, 1], got " + double_str(iou_threshold));
  if (max_output_boxes < 1)
    fail(who + ": max_output_boxes must be at least 1, got " + std::to_string(max_output_boxes));
  if (pre_nms_top_k != -1 && pre_nms_top_k < 1)
    fail(who + ": pre_nms_top_k must be -1 (every candidate) or at least 1, got " + std::to_string(pre_nms_top_k));
}

}  // namespace

void check_padded_args(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                       double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k) {
  check_dense(kPadded, "boxes", boxes);
  check_dense(kPadded, "scores", scores);
  check_padded(kPadded, desc_of(boxes), desc_of(scores), score_threshold, iou_threshold, max_output_boxes,
               pre_nms_top_k);
}

PaddedOutputs padded_aten(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                          double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k, bool class_agnostic) {
  const std::string& who = kPadded;
  check_padded_args(boxes, scores, score_threshold, iou_threshold, max_output_boxes, pre_nms_top_k);
  const int64_t B = scores.size(0), N = scores.size(1), C = scores.size(2), K = max_output_boxes;
  const bool per_class = boxes.dim() == 4;
  const auto opts = boxes.options();
  at::Tensor num = at::zeros({B, 1}, opts.dtype(at::kInt));
  at::Tensor out_boxes = at::zeros({B, K, 4}, opts);
  at::Tensor out_scores = at::zeros({B, K}, opts);
  at::Tensor out_classes = at::zeros({B, K}, opts.dtype(at::kInt));
  at::Tensor out_indices = at::full({B, K}, -1, opts.dtype(at::kLong));
  static const auto nms_op = c10::Dispatcher::singleton().findSchemaOrThrow("twinops::nms", "").typed<
      at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  static const auto batched_op = c10::Dispatcher::singleton().findSchemaOrThrow("twinops::batched_nms", "").typed<
      at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double)>();
  for (int64_t b = 0; b < B; ++b) {
    const at::Tensor flat_scores = scores.select(0, b).reshape({N * C});
    // In double, as the IoU threshold is compared: every score widens exactly.
    const at::Tensor s = flat_scores.to(at::kDouble);
    // Ascending flat indices n * C + c; NaN scores never pass.
    const at::Tensor cand = at::nonzero(s > score_threshold).squeeze(1);
    if (cand.numel() == 0) continue;
    // + 0: -0 sorts as +0. A stable descending sort keeps equal scores in flat-index order.
    const at::Tensor rank = std::get<1>(at::sort(s.index_select(0, cand) + 0.0, /*stable=*/true, /*dim=*/0,
                                                 /*descending=*/true));
    const int64_t top = pre_nms_top_k == -1 ? rank.numel() : std::min<int64_t>(pre_nms_top_k, rank.numel());
    if (boxes.is_cuda() && top > kMaxCudaBoxes)
      fail(who + ": image " + std::to_string(b) + " has " + std::to_string(top) + " candidates, more than the " +
           std::to_string(kMaxCudaBoxes) + " NMS takes on CUDA: raise score_threshold or set pre_nms_top_k");
    const at::Tensor picked = cand.index_select(0, rank.narrow(0, 0, top));  // flat indices, in rank order
    const at::Tensor box_index = at::div(picked, C, "floor");
    const at::Tensor cls = at::remainder(picked, C);
    const at::Tensor bx = per_class ? boxes.select(0, b).reshape({N * C, 4}).index_select(0, picked)
                                    : boxes.select(0, b).index_select(0, box_index);
    const at::Tensor sc = flat_scores.index_select(0, picked);
    // The op's own stable sort keeps this order: its keys rank these scores the same way.
    at::Tensor keep = class_agnostic ? nms_op.call(bx, sc, iou_threshold) : batched_op.call(bx, sc, cls, iou_threshold);
    const int64_t m = std::min<int64_t>(keep.numel(), K);
    keep = keep.narrow(0, 0, m);
    num.select(0, b).fill_(m);
    out_boxes.select(0, b).narrow(0, 0, m).copy_(bx.index_select(0, keep));
    out_scores.select(0, b).narrow(0, 0, m).copy_(sc.index_select(0, keep));
    out_classes.select(0, b).narrow(0, 0, m).copy_(cls.index_select(0, keep));
    out_indices.select(0, b).narrow(0, 0, m).copy_(box_index.index_select(0, keep));
  }
  return {num, out_boxes, out_scores, out_classes, out_indices};
}

namespace {

void padded_check(at::IntArrayRef boxes_shape, at::ScalarType boxes_dtype, c10::Device boxes_device,
                  at::IntArrayRef scores_shape, at::ScalarType scores_dtype, c10::Device scores_device,
                  double score_threshold, double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k) {
  check_padded(kPadded, Desc{boxes_shape, boxes_dtype, boxes_device}, Desc{scores_shape, scores_dtype, scores_device},
               score_threshold, iou_threshold, max_output_boxes, pre_nms_top_k);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  m.def("batched_nms_padded(Tensor boxes, Tensor scores, float score_threshold, float iou_threshold, "
        "int max_output_boxes, int pre_nms_top_k=-1, bool class_agnostic=False) -> "
        "(Tensor num_detections, Tensor detection_boxes, Tensor detection_scores, Tensor detection_classes, "
        "Tensor detection_indices)");
  // The fake kernel's checks (twinops.library.nms.api), called with meta tensors' metadata.
  m.def("_nms_padded_check(int[] boxes_shape, ScalarType boxes_dtype, Device boxes_device, int[] scores_shape, "
        "ScalarType scores_dtype, Device scores_device, float score_threshold, float iou_threshold, "
        "int max_output_boxes, int pre_nms_top_k) -> ()",
        &padded_check);
}

// The CPU's implementation; CUDA's is registered by nms_cuda.cpp.
TORCH_LIBRARY_IMPL(twinops, CPU, m) { m.impl("batched_nms_padded", &padded_aten); }

}  // namespace torch_op
}  // namespace nms
}  // namespace twinops
