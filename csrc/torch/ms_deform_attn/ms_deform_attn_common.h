// Shared by the CPU and CUDA registrations of twinops::ms_deform_attn / ms_deform_attn_backward:
// argument checks (tensor metadata only, so the fake kernels run the same through
// twinops::_ms_deform_attn_check), result allocation, and the translation of tensors into the
// kernels' Params (element strides of every tensor, so any layout runs without a copy).
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <string>

#include "../../kernels/ms_deform_attn/ms_deform_attn.cuh"
#include "../frontend_util.h"

namespace twinops {
namespace ms_deform_attn {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

// The five inputs in the schema's order.
struct Inputs {
  const at::Tensor& value;
  const at::Tensor& spatial_shapes;
  const at::Tensor& level_start_index;
  const at::Tensor& loc;
  const at::Tensor& weights;
};

struct Forward {
  Params params;
  at::Tensor output;  // contiguous (N, Lq, M * D)
  at::Tensor shapes, starts;  // the level table as contiguous int64 (CPU) or as given (CUDA)
};

// The backward: a result that was not asked for is an empty (0,) tensor of value's dtype.
struct Backward {
  Params params;
  at::Tensor grad_value, grad_loc, grad_weight;
  std::array<bool, 3> want{};
  at::Tensor shapes, starts;  // as Forward's
};

// Throw c10::Error with a message naming the argument ("torch.ops.twinops.ms_deform_attn: ...").
// On the CPU they also check the level table's values (ms_deform_attn_host.h, check_levels). For
// CUDA, call them under the device guard (they allocate).
Forward prepare_forward(const Inputs& in);
Backward prepare_backward(const at::Tensor& grad_output, const Inputs& in, std::array<bool, 3> output_mask);

}  // namespace torch_op
}  // namespace ms_deform_attn
}  // namespace twinops
