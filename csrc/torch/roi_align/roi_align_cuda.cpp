// CUDA registrations of twinops::roi_align / roi_align_backward and multi_level_roi_align /
// multi_level_roi_align_backward: the checks and allocation of
// roi_align_common.h around the launchers of roi_align.cu. Every build compiles this file; without
// TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "../../kernels/roi_align/roi_align_cuda.h"
#include "../cuda_util.h"
#include "roi_align_common.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

namespace {

at::Tensor roi_align_cuda(const at::Tensor& input, const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  const c10::cuda::CUDAGuard guard(input.device());
  Forward r = prepare_forward(input, rois, TWIN_ROI_ALIGN_TORCH_ARGS);
  if (r.output.numel() == 0) return r.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  cudaError_t status = cudaSuccess;
  dispatch_floating(input.scalar_type(), false, [&](auto tag) {
    using S = decltype(tag);
    using T = typename CudaType<S>::type;
    LevelPtrs<const T> feats;
    feats.p[0] = cuda_ptr<S>(input);
    status = forward_cuda<T, int64_t>(r.params, feats, cuda_ptr<S>(rois), nullptr, cuda_mut_ptr<S>(r.output), stream);
  });
  check_cuda(status, "torch.ops.twinops.roi_align");
  return r.output;
}

at::Tensor roi_align_backward_cuda(const at::Tensor& grad_output, const at::Tensor& input,
                                   const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  const c10::cuda::CUDAGuard guard(input.device());
  Backward r = prepare_backward(grad_output, input, rois, TWIN_ROI_ALIGN_TORCH_ARGS);
  if (r.grad_input.numel() == 0) return r.grad_input;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  // The workspace lives on the op's stream like any other tensor.
  const at::Tensor ws = at::empty({static_cast<int64_t>(backward_workspace_bytes(r.params, 0))},
                                  input.options().dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  dispatch_floating(input.scalar_type(), false, [&](auto tag) {
    using S = decltype(tag);
    using T = typename CudaType<S>::type;
    status = backward_cuda<T, int64_t>(r.params, 0, cuda_ptr<S>(grad_output), cuda_ptr<S>(input), cuda_ptr<S>(rois),
                                       nullptr, cuda_mut_ptr<S>(r.grad_input), ws.data_ptr(), stream);
  });
  check_cuda(status, "torch.ops.twinops.roi_align_backward");
  return r.grad_input;
}

at::Tensor multi_level_roi_align_cuda(const at::Tensor& rois, TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const std::string who = "torch.ops.twinops.multi_level_roi_align";
  const c10::cuda::CUDAGuard guard(level0.device());
  const std::vector<at::Tensor> levels = given_levels(who, TWIN_ML_LEVEL_ARGS);
  MultiForward r = prepare_multi_forward(rois, levels, multi_level_attrs(TWIN_ML_ATTR_ARGS));
  if (r.output.numel() == 0) return r.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  cudaError_t status = cudaSuccess;
  dispatch_floating(level0.scalar_type(), false, [&](auto tag) {
    using S = decltype(tag);
    using T = typename CudaType<S>::type;
    LevelPtrs<const T> feats;
    for (size_t l = 0; l < levels.size(); ++l) feats.p[l] = cuda_ptr<S>(levels[l]);
    status = forward_cuda<T, int64_t>(r.params, feats, cuda_ptr<S>(rois), nullptr, cuda_mut_ptr<S>(r.output), stream);
  });
  check_cuda(status, who);
  return r.output;
}

std::vector<at::Tensor> multi_level_roi_align_backward_cuda(const at::Tensor& grad_output, const at::Tensor& rois,
                                                            TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const std::string who = "torch.ops.twinops.multi_level_roi_align_backward";
  const c10::cuda::CUDAGuard guard(level0.device());
  const std::vector<at::Tensor> levels = given_levels(who, TWIN_ML_LEVEL_ARGS);
  MultiBackward r = prepare_multi_backward(grad_output, rois, levels, multi_level_attrs(TWIN_ML_ATTR_ARGS));
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  for (size_t l = 0; l < levels.size(); ++l) {
    if (r.grads[l].numel() == 0) continue;
    Params p = r.params;
    for (int k = 0; k < 4; ++k) p.grad_input_stride[k] = r.grads[l].stride(k);
    const auto lvl = static_cast<int32_t>(l);
    const at::Tensor ws = at::empty({static_cast<int64_t>(backward_workspace_bytes(p, lvl))},
                                    level0.options().dtype(at::kByte));
    cudaError_t status = cudaSuccess;
    dispatch_floating(level0.scalar_type(), false, [&](auto tag) {
      using S = decltype(tag);
      using T = typename CudaType<S>::type;
      status = backward_cuda<T, int64_t>(p, lvl, cuda_ptr<S>(grad_output), cuda_ptr<S>(levels[l]), cuda_ptr<S>(rois),
                                         nullptr, cuda_mut_ptr<S>(r.grads[l]), ws.data_ptr(), stream);
    });
    check_cuda(status, who);
  }
  return r.grads;
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("roi_align", &roi_align_cuda);
  m.impl("roi_align_backward", &roi_align_backward_cuda);
  m.impl("multi_level_roi_align", &multi_level_roi_align_cuda);
  m.impl("multi_level_roi_align_backward", &multi_level_roi_align_backward_cuda);
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
#endif  // TWINOPS_WITH_CUDA
