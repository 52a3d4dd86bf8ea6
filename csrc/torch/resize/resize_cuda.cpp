// CUDA registrations of twinops::resize / resize_backward. Every build compiles this file; without
// TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "../cuda_util.h"
#include "resize_common.h"

namespace twinops {
namespace resize {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

template <bool Backward>
at::Tensor run(const at::Tensor& src, at::IntArrayRef size, const ResizeArgs& args) {
  const c10::cuda::CUDAGuard guard(src.device());
  Prepared r = Backward ? prepare_backward(src, size, args) : prepare_forward(src, size, args);
  if (r.result.numel() == 0) return r.result;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  r.params.cuda = 1;  // ATen's CUDA arithmetic and rules where they differ from its CPU kernels'
  const size_t acc = src.scalar_type() == at::kDouble ? sizeof(double) : sizeof(float);
  const resize::Workspace L = resize::workspace_layout(r.params, acc, Backward);
  const at::Tensor ws = at::empty({static_cast<int64_t>(L.bytes)}, src.options().dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, src.scalar_type(), "twinops_resize_cuda", [&] {
    using T = typename CudaType<scalar_t>::type;
    const T* s = cuda_ptr<scalar_t>(src);
    T* d = cuda_mut_ptr<scalar_t>(r.result);
    status = Backward ? resize::backward_cuda<T>(r.params, L, r.geometry, s, d, r.channels_last, ws.data_ptr(), stream)
                      : resize::forward_cuda<T>(r.params, L, r.geometry, s, d, r.channels_last, ws.data_ptr(), stream);
  });
  check_cuda(status, Backward ? "twinops.resize_backward" : "twinops.resize");
  return r.result;
}

at::Tensor resize_cuda(const at::Tensor& input, at::IntArrayRef output_size TWIN_RESIZE_TORCH_PARAMS) {
  return run<false>(input, output_size, TWIN_RESIZE_TORCH_ARGS);
}

at::Tensor resize_backward_cuda(const at::Tensor& grad_output, at::IntArrayRef input_size TWIN_RESIZE_TORCH_PARAMS) {
  return run<true>(grad_output, input_size, TWIN_RESIZE_TORCH_ARGS);
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("resize", &resize_cuda);
  m.impl("resize_backward", &resize_backward_cuda);
}

}  // namespace torch_op
}  // namespace resize
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
