// Schema fragment of twinops::nms / batched_nms, argument checks and CPU kernels. The fake
// kernels (data-dependent output length) live in Python next to the op (ops/library/nms/api.py)
// and run the same checks through twinops::_nms_check.
#include <torch/library.h>

#include <cmath>
#include <string>
#include <vector>

#include "../frontend_util.h"
#include "nms_common.h"

namespace twinops {
namespace nms {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

void check_dense(const std::string& who, const char* name, const at::Tensor& t) {
  if (t.layout() != at::kStrided)
    fail(who + ": " + name + " must be a dense (strided) tensor, got layout " + layout_str(t.layout()) +
         " (call .to_dense() first)");
}

Params check_nms(const std::string& who, const Desc& boxes, const Desc& scores, const Desc* classes,
                 double iou_threshold) {
  if (boxes.shape.size() != 2 || boxes.shape[1] != 4)
    fail(who + ": boxes must be a 2-D (K, 4) tensor of (x1, y1, x2, y2), got shape " + shape_str(boxes.shape));
  if (!floating(boxes.dtype))
    fail(who + ": boxes must be float32, float64, float16 or bfloat16, got " + c10::toString(boxes.dtype));
  const int64_t K = boxes.shape[0];
  if (scores.shape.size() != 1 || scores.shape[0] != K)
    fail(who + ": scores must be a 1-D (K) tensor with one score per box (K = " + std::to_string(K) +
         "), got shape " + shape_str(scores.shape));
  if (scores.dtype != boxes.dtype)
    fail(who + ": scores must have boxes' dtype (" + c10::toString(boxes.dtype) + "), got " +
         c10::toString(scores.dtype));
  if (scores.device != boxes.device)
    fail(who + ": scores must be on boxes' device (" + boxes.device.str() + "), got " + scores.device.str());
  if (classes != nullptr) {
    if (classes->shape.size() != 1 || classes->shape[0] != K)
      fail(who + ": idxs must be a 1-D (K) tensor with one class per box (K = " + std::to_string(K) +
           "), got shape " + shape_str(classes->shape));
    if (classes->dtype != at::kLong && classes->dtype != at::kInt)
      fail(who + ": idxs must be int64 or int32, got " + c10::toString(classes->dtype));
    if (classes->device != boxes.device)
      fail(who + ": idxs must be on boxes' device (" + boxes.device.str() + "), got " + classes->device.str());
  }
  if (!(iou_threshold >= 0.0 && iou_threshold <= 1.0))  // NaN fails too
    fail(who + ": iou_threshold must be in [0, 1], got " + double_str(iou_threshold));
  if (boxes.device.is_cuda() && K > kMaxCudaBoxes)
    fail(who + ": at most " + std::to_string(kMaxCudaBoxes) + " boxes on CUDA, got " + std::to_string(K));
  Params p;
  p.count = K;
  p.iou_threshold = iou_threshold;
  return p;
}

Params check_nms(const std::string& who, const at::Tensor& boxes, const at::Tensor& scores,
                 const at::Tensor& classes, double iou_threshold) {
  check_dense(who, "boxes", boxes);
  check_dense(who, "scores", scores);
  if (classes.defined()) check_dense(who, "idxs", classes);
  const Desc c = classes.defined() ? desc_of(classes) : Desc{{}, at::kLong, boxes.device()};
  return check_nms(who, desc_of(boxes), desc_of(scores), classes.defined() ? &c : nullptr, iou_threshold);
}

namespace {

const std::string kNms = "torch.ops.twinops.nms";
const std::string kBatched = "torch.ops.twinops.batched_nms";

at::Tensor run_cpu(const std::string& who, const at::Tensor& boxes, const at::Tensor& scores,
                   const at::Tensor& classes, double iou_threshold) {
  const Params p = check_nms(who, boxes, scores, classes, iou_threshold);
  // float16 and bfloat16 compute their IoU in float32, as on CUDA (exact conversions).
  const at::ScalarType acc = boxes.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor b = boxes.to(acc).contiguous(), s = scores.to(acc).contiguous();
  const at::Tensor c = classes.defined() ? classes.to(at::kLong).contiguous() : at::Tensor();
  at::Tensor keep = at::empty({p.count}, boxes.options().dtype(at::kLong));
  int64_t kept = 0;
  const int64_t* cls = c.defined() ? c.const_data_ptr<int64_t>() : nullptr;
  if (acc == at::kDouble)
    kept = nms_cpu<double>(p, b.const_data_ptr<double>(), s.const_data_ptr<double>(), cls,
                           keep.mutable_data_ptr<int64_t>());
  else
    kept = nms_cpu<float>(p, b.const_data_ptr<float>(), s.const_data_ptr<float>(), cls,
                          keep.mutable_data_ptr<int64_t>());
  return keep.narrow(0, 0, kept);
}

at::Tensor nms_impl(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold) {
  return run_cpu(kNms, boxes, scores, at::Tensor(), iou_threshold);
}

at::Tensor batched_nms_impl(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& idxs,
                            double iou_threshold) {
  return run_cpu(kBatched, boxes, scores, idxs, iou_threshold);
}

// The fake kernels' checks: tensor-free, so it runs under FakeTensorMode too.
void nms_check(c10::string_view op, at::IntArrayRef boxes_shape, at::ScalarType boxes_dtype,
               c10::Device boxes_device, at::IntArrayRef scores_shape, at::ScalarType scores_dtype,
               c10::Device scores_device, at::OptionalIntArrayRef idxs_shape, c10::optional<at::ScalarType> idxs_dtype,
               c10::optional<c10::Device> idxs_device, double iou_threshold) {
  if (op != "nms" && op != "batched_nms")
    fail("torch.ops.twinops._nms_check: op must be 'nms' or 'batched_nms', got '" + std::string(op) + "'");
  if (idxs_shape.has_value() != (op == "batched_nms"))
    fail("torch.ops.twinops._nms_check: idxs_shape is given for batched_nms only");
  const Desc c = idxs_shape.has_value() ? Desc{*idxs_shape, idxs_dtype.value_or(at::kLong),
                                               idxs_device.value_or(boxes_device)}
                                        : Desc{{}, at::kLong, boxes_device};
  check_nms("torch.ops.twinops." + std::string(op), Desc{boxes_shape, boxes_dtype, boxes_device},
            Desc{scores_shape, scores_dtype, scores_device}, idxs_shape.has_value() ? &c : nullptr, iou_threshold);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  m.def("nms(Tensor boxes, Tensor scores, float iou_threshold) -> Tensor");
  m.def("batched_nms(Tensor boxes, Tensor scores, Tensor idxs, float iou_threshold) -> Tensor");
  // The fake kernels' checks (twinops.library.nms.api), called with meta tensors.
  m.def("_nms_check(str op, int[] boxes_shape, ScalarType boxes_dtype, Device boxes_device, int[] scores_shape, "
        "ScalarType scores_dtype, Device scores_device, int[]? idxs_shape, ScalarType? idxs_dtype, "
        "Device? idxs_device, float iou_threshold) -> ()",
        &nms_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("nms", &nms_impl);
  m.impl("batched_nms", &batched_nms_impl);
}

}  // namespace torch_op
}  // namespace nms
}  // namespace twinops
