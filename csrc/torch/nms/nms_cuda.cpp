// CUDA registrations of twinops::nms / batched_nms / batched_nms_padded: the checks of
// nms_common.h around the device passes of nms.cu and nms_padded.cu. nms and batched_nms read
// the kept count back once to size the output (its length depends on the data); the passes
// themselves, and batched_nms_padded whole, make no host round trip. Every build compiles this
// file; without TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <string>

#include "../cuda_util.h"
#include "nms_common.h"

namespace twinops {
namespace nms {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

at::Tensor run_cuda(const std::string& who, const at::Tensor& boxes, const at::Tensor& scores,
                    const at::Tensor& classes, double iou_threshold) {
  Params p = check_nms(who, boxes, scores, classes, iou_threshold);  // first: one input may be on the CPU
  const c10::cuda::CUDAGuard guard(boxes.device());
  at::Tensor keep = at::empty({p.count}, boxes.options().dtype(at::kLong));
  if (p.count == 0) return keep;
  const at::Tensor b = boxes.contiguous(), s = scores.contiguous();
  const at::Tensor c = classes.defined() ? classes.to(at::kLong).contiguous() : at::Tensor();
  at::Tensor kept = at::empty({1}, boxes.options().dtype(at::kLong));
  const size_t bytes = workspace_bytes(p, static_cast<int>(boxes.element_size()));
  at::Tensor ws = at::empty({static_cast<int64_t>(bytes)}, boxes.options().dtype(at::kByte));
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  cudaError_t status = cudaSuccess;
  const int64_t* cls = c.defined() ? c.const_data_ptr<int64_t>() : nullptr;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, boxes.scalar_type(), "twinops_nms_cuda", [&] {
    status = nms_cuda(p, cuda_ptr<scalar_t>(b), cuda_ptr<scalar_t>(s), cls, keep.mutable_data_ptr<int64_t>(),
                      kept.mutable_data_ptr<int64_t>(), ws.data_ptr(), bytes, stream);
  });
  check_cuda(status, who);
  return keep.narrow(0, 0, kept.item<int64_t>());
}

at::Tensor nms_cuda_impl(const at::Tensor& boxes, const at::Tensor& scores, double iou_threshold) {
  return run_cuda("torch.ops.twinops.nms", boxes, scores, at::Tensor(), iou_threshold);
}

at::Tensor batched_nms_cuda_impl(const at::Tensor& boxes, const at::Tensor& scores, const at::Tensor& idxs,
                                 double iou_threshold) {
  return run_cuda("torch.ops.twinops.batched_nms", boxes, scores, idxs, iou_threshold);
}

// The most workspace batched_nms_padded's device pass takes (its mask grows with B x the
// candidates per image squared); beyond it the ATen path runs, with masks of each image's
// actual candidates.
constexpr size_t kMaxPaddedWorkspace = size_t(1) << 30;

PaddedOutputs batched_nms_padded_cuda_impl(const at::Tensor& boxes, const at::Tensor& scores, double score_threshold,
                                           double iou_threshold, int64_t max_output_boxes, int64_t pre_nms_top_k,
                                           bool class_agnostic) {
  check_padded_args(boxes, scores, score_threshold, iou_threshold, max_output_boxes, pre_nms_top_k);
  PaddedParams p;
  p.batch = scores.size(0);
  p.boxes = scores.size(1);
  p.classes = scores.size(2);
  p.per_class_boxes = boxes.dim() == 4;
  p.class_agnostic = class_agnostic;
  p.score_threshold = score_threshold;
  p.iou_threshold = iou_threshold;
  p.max_output = max_output_boxes;
  p.pre_nms_top_k = pre_nms_top_k;
  const int score_bytes = static_cast<int>(scores.element_size());
  if (padded_unsupported(p) != nullptr || padded_workspace_bytes(p, score_bytes) > kMaxPaddedWorkspace)
    return padded_aten(boxes, scores, score_threshold, iou_threshold, max_output_boxes, pre_nms_top_k,
                       class_agnostic);
  const c10::cuda::CUDAGuard guard(boxes.device());
  const int64_t B = p.batch, K = max_output_boxes;
  const auto opts = boxes.options();
  at::Tensor num = at::empty({B, 1}, opts.dtype(at::kInt));
  at::Tensor out_boxes = at::empty({B, K, 4}, opts);
  at::Tensor out_scores = at::empty({B, K}, opts);
  at::Tensor out_classes = at::empty({B, K}, opts.dtype(at::kInt));
  at::Tensor out_indices = at::empty({B, K}, opts.dtype(at::kLong));
  if (B == 0) return {num, out_boxes, out_scores, out_classes, out_indices};
  const at::Tensor b = boxes.contiguous(), s = scores.contiguous();
  const size_t bytes = padded_workspace_bytes(p, score_bytes);
  at::Tensor ws = at::empty({static_cast<int64_t>(bytes)}, opts.dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, boxes.scalar_type(), "twinops_nms_padded_cuda", [&] {
    status = nms_padded_cuda(p, cuda_ptr<scalar_t>(b), cuda_ptr<scalar_t>(s), num.mutable_data_ptr<int32_t>(),
                             cuda_mut_ptr<scalar_t>(out_boxes), cuda_mut_ptr<scalar_t>(out_scores),
                             out_classes.mutable_data_ptr<int32_t>(), out_indices.mutable_data_ptr<int64_t>(),
                             ws.data_ptr(), bytes, c10::cuda::getCurrentCUDAStream());
  });
  check_cuda(status, "torch.ops.twinops.batched_nms_padded");
  return {num, out_boxes, out_scores, out_classes, out_indices};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("nms", &nms_cuda_impl);
  m.impl("batched_nms", &batched_nms_cuda_impl);
  m.impl("batched_nms_padded", &batched_nms_padded_cuda_impl);
}

}  // namespace torch_op
}  // namespace nms
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
