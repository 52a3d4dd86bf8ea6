// Autograd of twinops::resize / resize_backward, registered for every backend at the
// Autograd key (torchvision's pattern). torch.library.register_autograd would do the same in
// Python, but its per-call cost (~41 us more on a 2-core CI machine for a forward that
// requires grad, ~5 us more without; its fill_defaults rebuilds the 12-argument schema once
// per argument) is several times the whole op at small sizes. Each op's gradient is the other op: the
// resize is linear in its input, and resize_backward is its adjoint. Both go through the
// dispatcher, so double backward and torch.compile see the ops themselves.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <string>
#include <tuple>
#include <vector>

#include "resize_common.h"

namespace twinops {
namespace resize {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;


void save(AutogradContext* ctx, const at::Tensor& t, const OwnedAttrs& a) {
  ctx->saved_data["size"] = t.sym_sizes();  // the gradient's shape: the input's
  save_owned<resize::ResizeAttrs>(a, &ctx->saved_data);
}

OwnedAttrs restore(AutogradContext* ctx, std::vector<c10::SymInt>* size, size_t keep) {
  const c10::List<c10::IValue> s = ctx->saved_data["size"].toList();
  for (size_t k = s.size() - keep; k < s.size(); ++k) size->push_back(s.get(k).toSymInt());
  return restore_owned<resize::ResizeAttrs, OwnedAttrs>(&ctx->saved_data);
}

// Forward = one op, backward = the other on the incoming gradient, sized like the saved input
// (all of it for resize_backward's SymInt[4] input_size, H and W for resize's output_size).
template <bool ForwardIsResize>
struct LinearResize : public torch::autograd::Function<LinearResize<ForwardIsResize>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& src, c10::SymIntArrayRef size,
                            const OwnedAttrs& a) {
    save(ctx, src, a);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_resize(ForwardIsResize, src, size, a);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    std::vector<c10::SymInt> size;
    const OwnedAttrs a = restore(ctx, &size, ForwardIsResize ? 4 : 2);
    return {call_resize(!ForwardIsResize, grads[0], size, a), at::Tensor(), at::Tensor()};
  }
};

template <bool ForwardIsResize>
at::Tensor autograd_kernel(const at::Tensor& src, c10::SymIntArrayRef size TWIN_RESIZE_TORCH_PARAMS) {
  const OwnedAttrs a{TWIN_TORCH_OWN(TWIN_RESIZE_ATTRS)};
  if (!at::GradMode::is_enabled() || !src.requires_grad()) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_resize(ForwardIsResize, src, size, a);
  }
  return LinearResize<ForwardIsResize>::apply(src, size, a);
}

}  // namespace

at::Tensor call_resize(bool forward, const at::Tensor& t, c10::SymIntArrayRef size, const OwnedAttrs& a) {
  using OpSignature = at::Tensor(const at::Tensor&, c10::SymIntArrayRef TWIN_TORCH_TYPES(TWIN_RESIZE_ATTRS));
  static const auto resize_op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::resize", "").typed<OpSignature>();
  static const auto backward_op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::resize_backward", "").typed<OpSignature>();
  return std::apply([&](const auto&... v) { return (forward ? resize_op : backward_op).call(t, size, view(v)...); },
                    a);
}

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("resize", TORCH_FN(autograd_kernel<true>));
  m.impl("resize_backward", TORCH_FN(autograd_kernel<false>));
}

}  // namespace torch_op
}  // namespace resize
}  // namespace twinops
