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
#include <vector>

#include "resize_common.h"

namespace twinops {
namespace torch_frontend {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The schema's attribute arguments after (tensor, size), kept for the other op's call.
struct Attrs {
  std::string mode, coordinate_transformation_mode, nearest_mode;
  double cubic_coeff_a;
  int64_t exclude_outside, antialias;
  std::vector<double> scales, roi;
  double extrapolation_value;
  int64_t pytorch;
};

using OpSignature = at::Tensor(const at::Tensor&, c10::SymIntArrayRef, c10::string_view, c10::string_view,
                               c10::string_view, double, int64_t, int64_t, at::ArrayRef<double>,
                               at::ArrayRef<double>, double, int64_t);

// Calls twinops::resize (resize = true) or twinops::resize_backward through the dispatcher.
at::Tensor call(bool resize, const at::Tensor& t, c10::SymIntArrayRef size, const Attrs& a) {
  static const auto resize_op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::resize", "").typed<OpSignature>();
  static const auto backward_op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::resize_backward", "").typed<OpSignature>();
  return (resize ? resize_op : backward_op)
      .call(t, size, a.mode, a.coordinate_transformation_mode, a.nearest_mode, a.cubic_coeff_a, a.exclude_outside,
            a.antialias, a.scales, a.roi, a.extrapolation_value, a.pytorch);
}

void save(AutogradContext* ctx, const at::Tensor& t, const Attrs& a) {
  ctx->saved_data["size"] = t.sym_sizes();  // the gradient's shape: the input's
  ctx->saved_data["mode"] = a.mode;
  ctx->saved_data["ctm"] = a.coordinate_transformation_mode;
  ctx->saved_data["nearest"] = a.nearest_mode;
  ctx->saved_data["cubic_a"] = a.cubic_coeff_a;
  ctx->saved_data["exclude"] = a.exclude_outside;
  ctx->saved_data["antialias"] = a.antialias;
  ctx->saved_data["scales"] = a.scales;
  ctx->saved_data["roi"] = a.roi;
  ctx->saved_data["extrapolation"] = a.extrapolation_value;
  ctx->saved_data["pytorch"] = a.pytorch;
}

Attrs restore(AutogradContext* ctx, std::vector<c10::SymInt>* size, size_t keep) {
  const c10::List<c10::IValue> s = ctx->saved_data["size"].toList();
  for (size_t k = s.size() - keep; k < s.size(); ++k) size->push_back(s.get(k).toSymInt());
  auto& d = ctx->saved_data;
  return Attrs{d["mode"].toStringRef(),       d["ctm"].toStringRef(),       d["nearest"].toStringRef(),
               d["cubic_a"].toDouble(),       d["exclude"].toInt(),         d["antialias"].toInt(),
               d["scales"].toDoubleVector(),  d["roi"].toDoubleVector(),    d["extrapolation"].toDouble(),
               d["pytorch"].toInt()};
}

// Forward = one op, backward = the other on the incoming gradient, sized like the saved input
// (all of it for resize_backward's SymInt[4] input_size, H and W for resize's output_size).
template <bool ForwardIsResize>
struct LinearResize : public torch::autograd::Function<LinearResize<ForwardIsResize>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& src, c10::SymIntArrayRef size, const Attrs& a) {
    save(ctx, src, a);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call(ForwardIsResize, src, size, a);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    std::vector<c10::SymInt> size;
    const Attrs a = restore(ctx, &size, ForwardIsResize ? 4 : 2);
    return {call(!ForwardIsResize, grads[0], size, a), at::Tensor(), at::Tensor()};
  }
};

template <bool ForwardIsResize>
at::Tensor autograd_kernel(const at::Tensor& src, c10::SymIntArrayRef size, c10::string_view mode,
                           c10::string_view coordinate_transformation_mode, c10::string_view nearest_mode,
                           double cubic_coeff_a, int64_t exclude_outside, int64_t antialias,
                           at::ArrayRef<double> scales, at::ArrayRef<double> roi, double extrapolation_value,
                           int64_t pytorch) {
  const Attrs a{std::string(mode), std::string(coordinate_transformation_mode), std::string(nearest_mode),
                cubic_coeff_a,     exclude_outside,
                antialias,         scales.vec(),
                roi.vec(),         extrapolation_value,
                pytorch};
  if (!at::GradMode::is_enabled() || !src.requires_grad()) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call(ForwardIsResize, src, size, a);
  }
  return LinearResize<ForwardIsResize>::apply(src, size, a);
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("resize", TORCH_FN(autograd_kernel<true>));
  m.impl("resize_backward", TORCH_FN(autograd_kernel<false>));
}

}  // namespace torch_frontend
}  // namespace twinops
