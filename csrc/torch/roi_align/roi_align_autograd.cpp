// Autograd of twinops::roi_align, registered for every backend at the Autograd key. Its gradient
// is the op roi_align_backward (deterministic), called through the dispatcher so torch.compile
// sees it. The rois get no gradient (torchvision's rule; docs/ops/roi_align.md). Second
// derivatives are not provided: the backward op's own autograd raises, naming the op, instead of
// leaving a gradient silently absent.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <tuple>

#include "roi_align_common.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The schema's attribute arguments after the tensors, owned, kept for the backward's call.
using Attrs = TWIN_TORCH_OWNED_TUPLE(TWIN_ROI_ALIGN_ATTRS);
using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor& TWIN_TORCH_TYPES(TWIN_ROI_ALIGN_ATTRS));
using BackwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&,
                                     const at::Tensor& TWIN_TORCH_TYPES(TWIN_ROI_ALIGN_ATTRS));

at::Tensor call_forward(const at::Tensor& input, const at::Tensor& rois, const Attrs& a) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::roi_align", "").typed<ForwardSignature>();
  return std::apply([&](const auto&... v) { return op.call(input, rois, view(v)...); }, a);
}

at::Tensor call_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& rois,
                         const Attrs& a) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::roi_align_backward", "").typed<BackwardSignature>();
  return std::apply([&](const auto&... v) { return op.call(grad_output, input, rois, view(v)...); }, a);
}

struct RoiAlignFunction : public torch::autograd::Function<RoiAlignFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& rois, const Attrs& a) {
    ctx->save_for_backward({input, rois});
    save_owned<RoiAlignAttrs>(a, &ctx->saved_data);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(input, rois, a);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    if (!grads[0].defined() || !ctx->needs_input_grad(0)) return {at::Tensor(), at::Tensor(), at::Tensor()};
    return {call_backward(grads[0], saved[0], saved[1], restore_owned<RoiAlignAttrs, Attrs>(&ctx->saved_data)),
            at::Tensor(), at::Tensor()};
  }
};

struct RoiAlignBackwardFunction : public torch::autograd::Function<RoiAlignBackwardFunction> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad_output, const at::Tensor& input,
                            const at::Tensor& rois, const Attrs& a) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(grad_output, input, rois, a);
  }

  static variable_list backward(AutogradContext*, variable_list) {
    fail("twinops.roi_align: second derivatives are not supported (differentiate once)");
  }
};

at::Tensor roi_align_autograd(const at::Tensor& input, const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_ROI_ALIGN_ATTRS)};
  if (!any_requires_grad({&input})) {  // nothing to record: skip the graph node (rois get no gradient)
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(input, rois, a);
  }
  return RoiAlignFunction::apply(input, rois, a);
}

at::Tensor roi_align_backward_autograd(const at::Tensor& grad_output, const at::Tensor& input,
                                       const at::Tensor& rois TWIN_ROI_ALIGN_TORCH_PARAMS) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_ROI_ALIGN_ATTRS)};
  if (!any_requires_grad({&grad_output, &input})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(grad_output, input, rois, a);
  }
  return RoiAlignBackwardFunction::apply(grad_output, input, rois, a);
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("roi_align", TORCH_FN(roi_align_autograd));
  m.impl("roi_align_backward", TORCH_FN(roi_align_backward_autograd));
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
