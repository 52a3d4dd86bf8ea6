// CUDA registrations of twinops::deform_conv2d / deform_conv2d_backward: the checks and
// allocation of deform_conv2d_common.h around the launchers of deform_conv2d.cu. Every build
// compiles this file; without TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>

#include "../../kernels/deform_conv2d/deform_conv2d_cuda.h"
#include "../cuda_util.h"
#include "deform_conv2d_common.h"

namespace twinops {
namespace deform_conv2d {
namespace torch_op {

namespace {

template <typename S>
using Dev = typename CudaType<S>::type;

at::Tensor deform_conv2d_cuda(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
                              const std::optional<at::Tensor>& bias,
                              const std::optional<at::Tensor>& mask TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS)) {
  const c10::cuda::CUDAGuard guard(input.device());
  Forward r = prepare_forward(input, offset, weight, bias, mask, Geo{stride, padding, dilation});
  if (r.output.numel() == 0) return r.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const at::Tensor ws = at::empty({static_cast<int64_t>(forward_workspace_bytes(r.params))},
                                  input.options().dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  dispatch_floating(input.scalar_type(), false, [&](auto tag) {
    using S = decltype(tag);
    const Inputs& in = r.in;
    status = forward_cuda(r.params, cuda_ptr<S>(in.input), cuda_ptr<S>(in.offset), data_or_null<S, Dev<S>>(in.mask),
                          cuda_ptr<S>(in.weight), data_or_null<S, Dev<S>>(in.bias), cuda_mut_ptr<S>(r.output),
                          ws.data_ptr(), stream);
  });
  check_cuda(status, "torch.ops.twinops.deform_conv2d");
  return r.output;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> deform_conv2d_backward_cuda(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
    const std::optional<at::Tensor>& bias,
    const std::optional<at::Tensor>& mask TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS), std::array<bool, 5> output_mask) {
  const c10::cuda::CUDAGuard guard(input.device());
  Backward r = prepare_backward(grad_output, input, offset, weight, bias, mask, Geo{stride, padding, dilation},
                                output_mask);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  Wanted want;
  want.input = computes(r, 0);
  want.offset = computes(r, 1);
  want.weight = computes(r, 2);
  want.bias = computes(r, 3);
  want.mask = computes(r, 4);
  if (want.input || want.offset || want.weight || want.bias || want.mask) {
    const at::Tensor ws = at::empty({static_cast<int64_t>(backward_workspace_bytes(r.params, want))},
                                    input.options().dtype(at::kByte));
    cudaError_t status = cudaSuccess;
    dispatch_floating(input.scalar_type(), false, [&](auto tag) {
      using S = decltype(tag);
      const Inputs& in = r.in;
      const auto grad = [&](int k) { return grad_or_null<S, Dev<S>>(r, k); };
      status = backward_cuda(r.params, cuda_ptr<S>(r.grad_output), cuda_ptr<S>(in.input), cuda_ptr<S>(in.offset),
                             data_or_null<S, Dev<S>>(in.mask), cuda_ptr<S>(in.weight), grad(0), grad(1), grad(4),
                             grad(2), grad(3), ws.data_ptr(), stream);
    });
    check_cuda(status, "torch.ops.twinops.deform_conv2d_backward");
  }
  return {r.grads[0], r.grads[1], r.grads[2], r.grads[3], r.grads[4]};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("deform_conv2d", &deform_conv2d_cuda);
  m.impl("deform_conv2d_backward", &deform_conv2d_backward_cuda);
}

}  // namespace torch_op
}  // namespace deform_conv2d
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
