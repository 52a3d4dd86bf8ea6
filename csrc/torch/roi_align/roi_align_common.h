// Shared by the CPU and CUDA registrations of twinops::roi_align / roi_align_backward: argument
// checks (tensor metadata only, so the fake kernels run the same through
// twinops::_roi_align_check), result allocation, and the translation of tensors and schema
// arguments into the kernels' Params (element strides of every tensor: any layout runs without a
// copy).
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "../../kernels/roi_align/roi_align_attrs.h"
#include "../frontend_util.h"
#include "../op_attrs.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

using RoiAlignArgs = TorchAttrs<RoiAlignAttrs>;
#define TWIN_ROI_ALIGN_TORCH_PARAMS TWIN_TORCH_PARAMS(TWIN_ROI_ALIGN_ATTRS)
#define TWIN_ROI_ALIGN_TORCH_ARGS \
  ::twinops::torch_frontend::torch_attrs<::twinops::roi_align::RoiAlignAttrs>(TWIN_TORCH_ARGS(TWIN_ROI_ALIGN_ATTRS))

struct Forward {
  Params params;
  at::Tensor output;  // contiguous (K, C, PH, PW)
};
struct Backward {
  Params params;
  at::Tensor grad_input;  // contiguous, input's shape
};

// Throw c10::Error with a message naming the argument ("torch.ops.twinops.roi_align: ...").
// For CUDA, call them under the device guard (they allocate).
Forward prepare_forward(const at::Tensor& input, const at::Tensor& rois, const RoiAlignArgs& a);
Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& rois,
                          const RoiAlignArgs& a);

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
    default: fail("twinops.roi_align: no kernel for " + std::string(c10::toString(dtype)));
  }
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
