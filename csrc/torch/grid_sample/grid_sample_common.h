// Shared by the CPU and CUDA registrations of twinops::grid_sample / grid_sample_backward:
// argument checks, result allocation and the translation of tensors and schema arguments into
// the kernels' grid_sample::Params (element strides of every tensor, so any layout runs
// without a copy).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>

#include <string>

#include "../../kernels/grid_sample/grid_sample_attrs.h"
#include "../op_attrs.h"

namespace twinops {
namespace grid_sample {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

using GridSampleArgs = TorchAttrs<grid_sample::GridSampleAttrs>;
#define TWIN_GRID_SAMPLE_TORCH_PARAMS TWIN_TORCH_PARAMS(TWIN_GRID_SAMPLE_ATTRS)
#define TWIN_GRID_SAMPLE_TORCH_ARGS                                            \
  ::twinops::torch_frontend::torch_attrs<::twinops::grid_sample::GridSampleAttrs>( \
      TWIN_TORCH_ARGS(TWIN_GRID_SAMPLE_ATTRS))

// The forward: validated params (strides of input, grid and the allocated output filled in)
// and the contiguous (N, C, [D_out,] H_out, W_out) output, as ATen's grid_sampler returns.
struct GridSampleForward {
  grid_sample::Params params;
  at::Tensor output;
};
// The backward: params (grad_output's strides in output_stride) and the requested results,
// contiguous like ATen's; a masked-out result is an empty (0,) tensor of input's dtype.
struct GridSampleBackward {
  grid_sample::Params params;
  at::Tensor grad_input, grad_grid;
  bool want_input = false, want_grid = false;
};

// Throw c10::Error with a message naming the argument on bad input ("torch.ops.twinops.
// grid_sample: ..."). For CUDA, call them under the device guard (they allocate).
GridSampleForward prepare_grid_sample(const at::Tensor& input, const at::Tensor& grid, const GridSampleArgs& a);
GridSampleBackward prepare_grid_sample_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                const at::Tensor& grid, const GridSampleArgs& a,
                                                std::array<bool, 2> output_mask);

}  // namespace torch_op
}  // namespace grid_sample
}  // namespace twinops
