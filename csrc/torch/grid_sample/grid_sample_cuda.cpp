// CUDA registrations of twinops::grid_sample / grid_sample_backward: the checks and allocation of
// grid_sample_common.h around the launchers of grid_sample.cu. Every build compiles this file;
// without TWINOPS_WITH_CUDA (the CPU-only build) it is empty.
#ifdef TWINOPS_WITH_CUDA
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>

#include "../cuda_util.h"
#include "grid_sample_common.h"

namespace twinops {
namespace grid_sample {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

at::Tensor grid_sample_cuda(const at::Tensor& input, const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS) {
  const c10::cuda::CUDAGuard guard(input.device());
  GridSampleForward r = prepare_grid_sample(input, grid, TWIN_GRID_SAMPLE_TORCH_ARGS);
  if (r.output.numel() == 0) return r.output;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  cudaError_t status = cudaSuccess;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_grid_sample_cuda", [&] {
    status = grid_sample::forward_cuda(r.params, cuda_ptr<scalar_t>(input), cuda_ptr<scalar_t>(grid),
                                       cuda_mut_ptr<scalar_t>(r.output), stream);
  });
  check_cuda(status, "torch.ops.twinops.grid_sample");
  return r.output;
}

std::tuple<at::Tensor, at::Tensor> grid_sample_backward_cuda(const at::Tensor& grad_output, const at::Tensor& input,
                                                             const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS,
                                                             std::array<bool, 2> output_mask) {
  const c10::cuda::CUDAGuard guard(input.device());
  GridSampleBackward r =
      prepare_grid_sample_backward(grad_output, input, grid, TWIN_GRID_SAMPLE_TORCH_ARGS, output_mask);
  const bool gi = r.want_input && r.grad_input.numel() > 0;
  const bool gg = r.want_grid && r.grad_grid.numel() > 0;
  if (!gi && !gg) return {r.grad_input, r.grad_grid};
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  // Only grad_input needs a workspace; it lives on the op's stream like any other tensor.
  if (gi) r.params.scatter = grid_sample::choose_scatter(r.params, static_cast<int>(input.element_size()));
  at::Tensor ws;
  if (gi) ws = at::empty({static_cast<int64_t>(grid_sample::backward_workspace_bytes(r.params))},
                         input.options().dtype(at::kByte));
  cudaError_t status = cudaSuccess;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_grid_sample_backward_cuda",
                                  [&] {
                                    status = grid_sample::backward_cuda(
                                        r.params, cuda_ptr<scalar_t>(grad_output), cuda_ptr<scalar_t>(input),
                                        cuda_ptr<scalar_t>(grid), gi ? cuda_mut_ptr<scalar_t>(r.grad_input) : nullptr,
                                        gg ? cuda_mut_ptr<scalar_t>(r.grad_grid) : nullptr,
                                        gi ? ws.data_ptr() : nullptr, stream);
                                  });
  check_cuda(status, "torch.ops.twinops.grid_sample_backward");
  return {r.grad_input, r.grad_grid};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("grid_sample", &grid_sample_cuda);
  m.impl("grid_sample_backward", &grid_sample_backward_cuda);
}

}  // namespace torch_op
}  // namespace grid_sample
}  // namespace twinops

#endif  // TWINOPS_WITH_CUDA
