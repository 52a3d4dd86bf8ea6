// CUDA registrations of twinops::nms / batched_nms: the checks of nms_common.h around the
// device pass of nms.cu. The kept count is read back once to size the output (its length
// depends on the data); the pass itself makes no host round trip. Every build compiles this
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

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("nms", &nms_cuda_impl);
  m.impl("batched_nms", &batched_nms_cuda_impl);
}

}  // namespace torch_op
}  // namespace nms
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
