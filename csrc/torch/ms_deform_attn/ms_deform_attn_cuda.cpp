// CUDA registrations of twinops::ms_deform_attn / ms_deform_attn_backward: the checks and
// allocation of ms_deform_attn_common.h around the launchers of ms_deform_attn.cu. Every build
// compiles this file; without TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>

#include "../../kernels/ms_deform_attn/ms_deform_attn_cuda.h"
#include "../cuda_util.h"
#include "ms_deform_attn_common.h"

namespace twinops {
namespace ms_deform_attn {
namespace torch_op {

namespace {

// Calls fn(index type tag) for the level table's dtype (int32 or int64; the checks allow no other).
template <typename Fn>
void with_index(const at::Tensor& starts, const Fn& fn) {
  if (starts.scalar_type() == at::kInt)
    fn(int32_t{});
  else
    fn(int64_t{});
}

at::Tensor ms_deform_attn_cuda(const at::Tensor& value, const at::Tensor& spatial_shapes,
                               const at::Tensor& level_start_index, const at::Tensor& loc, const at::Tensor& weights) {
  const c10::cuda::CUDAGuard guard(value.device());
  Forward r = prepare_forward(Inputs{value, spatial_shapes, level_start_index, loc, weights});
  if (r.output.numel() == 0) return r.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  cudaError_t status = cudaSuccess;
  dispatch_floating(value.scalar_type(), false, [&](auto dtag) {
    using scalar_t = decltype(dtag);
    with_index(r.starts, [&](auto tag) {
      using I = decltype(tag);
      status = forward_cuda(r.params, cuda_ptr<scalar_t>(value), r.shapes.const_data_ptr<I>(),
                            r.starts.const_data_ptr<I>(), cuda_ptr<scalar_t>(loc), cuda_ptr<scalar_t>(weights),
                            cuda_mut_ptr<scalar_t>(r.output), stream);
    });
  });
  check_cuda(status, "torch.ops.twinops.ms_deform_attn");
  return r.output;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ms_deform_attn_backward_cuda(
    const at::Tensor& grad_output, const at::Tensor& value, const at::Tensor& spatial_shapes,
    const at::Tensor& level_start_index, const at::Tensor& loc, const at::Tensor& weights,
    std::array<bool, 3> output_mask) {
  const c10::cuda::CUDAGuard guard(value.device());
  const Inputs in{value, spatial_shapes, level_start_index, loc, weights};
  Backward r = prepare_backward(grad_output, in, output_mask);
  const bool gv = r.want[0] && r.grad_value.numel() > 0, gl = r.want[1] && r.grad_loc.numel() > 0,
             gw = r.want[2] && r.grad_weight.numel() > 0;
  if (!gv && !gl && !gw) return {r.grad_value, r.grad_loc, r.grad_weight};
  const at::Tensor &shapes = r.shapes, &starts = r.starts;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  at::Tensor ws;
  if (gv)
    ws = at::empty({static_cast<int64_t>(backward_workspace_bytes(r.params, true))}, value.options().dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  dispatch_floating(value.scalar_type(), false, [&](auto dtag) {
                                    using scalar_t = decltype(dtag);
                                    with_index(starts, [&](auto tag) {
                                      using I = decltype(tag);
                                      status = backward_cuda(
                                          r.params, cuda_ptr<scalar_t>(grad_output), cuda_ptr<scalar_t>(value),
                                          shapes.const_data_ptr<I>(), starts.const_data_ptr<I>(),
                                          cuda_ptr<scalar_t>(loc), cuda_ptr<scalar_t>(weights),
                                          gv ? cuda_mut_ptr<scalar_t>(r.grad_value) : nullptr,
                                          gl ? cuda_mut_ptr<scalar_t>(r.grad_loc) : nullptr,
                                          gw ? cuda_mut_ptr<scalar_t>(r.grad_weight) : nullptr,
                                          gv ? ws.data_ptr() : nullptr, stream);
                                    });
                                  });
  check_cuda(status, "torch.ops.twinops.ms_deform_attn_backward");
  return {r.grad_value, r.grad_loc, r.grad_weight};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("ms_deform_attn", &ms_deform_attn_cuda);
  m.impl("ms_deform_attn_backward", &ms_deform_attn_backward_cuda);
}

}  // namespace torch_op
}  // namespace ms_deform_attn
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
