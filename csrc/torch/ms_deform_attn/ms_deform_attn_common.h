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

// Calls fn(S{}) with S the c10 storage type of `dtype`: float, c10::Half or c10::BFloat16, plus
// double when `with_double` (the CPU kernels; CUDA runs the first three).
template <typename Fn>
void dispatch_floating(at::ScalarType dtype, bool with_double, const Fn& fn) {
  switch (dtype) {
    case at::kFloat: return fn(float{});
    case at::kHalf: return fn(c10::Half{});
    case at::kBFloat16: return fn(c10::BFloat16{});
    case at::kDouble:
      if (with_double) return fn(double{});
      [[fallthrough]];
    default: fail("twinops.ms_deform_attn: no kernel for " + std::string(c10::toString(dtype)));
  }
}

}  // namespace torch_op
}  // namespace ms_deform_attn
}  // namespace twinops
