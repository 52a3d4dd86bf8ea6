// Shared by the CPU and CUDA registrations of twinops::deform_conv2d / deform_conv2d_backward:
// argument checks (tensor metadata only, so the fake kernels run the same through
// twinops::_deform_conv2d_check), the contiguous copies the kernels read, result allocation and
// the translation into the kernels' Params.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <optional>
#include <string>

#include "../../kernels/deform_conv2d/deform_conv2d_attrs.h"
#include "../frontend_util.h"
#include "../op_attrs.h"

namespace twinops {
namespace deform_conv2d {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

// The inputs in the schema's order, contiguous (bias and mask undefined where absent).
struct Inputs {
  at::Tensor input, offset, weight, bias, mask;
};

// The kernel parameters' attributes (stride, padding, dilation) as the schema passes them.
struct Geo {
  c10::ArrayRef<int64_t> stride, padding, dilation;
};

struct Forward {
  Params params;
  Inputs in;
  at::Tensor output;  // contiguous (N, C_out, h_out, w_out)
};

// The backward's results in the schema's order (input, offset, weight, bias, mask); one that was
// not asked for, or whose input is absent, is an empty (0,) tensor of input's dtype.
struct Backward {
  Params params;
  Inputs in;
  at::Tensor grad_output;  // contiguous
  std::array<at::Tensor, 5> grads;
  std::array<bool, 5> want{};
};

// Whether the backward computes gradient k: asked for, and not empty.
inline bool computes(const Backward& r, int k) { return r.want[k] && r.grads[k].numel() > 0; }

// t's elements as E (S's type in the kernels: S itself on the CPU, its CUDA type on the GPU),
// null where t is undefined (an absent bias or mask).
template <typename S, typename E = S>
const E* data_or_null(const at::Tensor& t) {
  return t.defined() ? reinterpret_cast<const E*>(t.const_data_ptr<S>()) : nullptr;
}

// Gradient k's elements as E, null where the backward does not compute it.
template <typename S, typename E = S>
E* grad_or_null(Backward& r, int k) {
  return computes(r, k) ? reinterpret_cast<E*>(r.grads[k].mutable_data_ptr<S>()) : nullptr;
}

// Throw c10::Error with a message naming the argument ("torch.ops.twinops.deform_conv2d: ...").
// For CUDA, call them under the device guard (they allocate).
Forward prepare_forward(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
                        const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& mask, const Geo& geo);
Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& offset,
                          const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& mask, const Geo& geo, std::array<bool, 5> output_mask);

}  // namespace torch_op
}  // namespace deform_conv2d
}  // namespace twinops
