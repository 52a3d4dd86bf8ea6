// twinops::dynamic_resize (MMDeploy's DynamicTRTResize contract): bicubic resize of `input` to
// size_tensor's last two dims, of which only the shape is read. Its schema, a kernel for every
// backend that calls twinops::resize, and its autograd at the Autograd key, whose gradient is
// twinops::resize_backward. Its fake kernel is Python's (ops/library/resize/api.py).
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "../frontend_util.h"
#include "resize_common.h"

namespace twinops {
namespace resize {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const std::string kDynamic = "torch.ops.twinops.dynamic_resize";
const std::string kResizePrefix = "torch.ops.twinops.resize: ";

// F.interpolate(mode="bicubic", align_corners=...) as twinops.interpolate maps it.
OwnedAttrs dynamic_attrs(int64_t align_corners) {
  return owned_tuple<resize::ResizeAttrs, OwnedAttrs>(resize::interpolate_bicubic_attrs(align_corners != 0));
}

// Messages of twinops::resize name this op instead.
template <class F>
at::Tensor renamed(F&& f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    const std::string m = e.what_without_backtrace();
    if (m.compare(0, kResizePrefix.size(), kResizePrefix) != 0) throw;
    fail(kDynamic + ": " + m.substr(kResizePrefix.size()));
  }
}

at::Tensor dynamic_resize(const at::Tensor& input, const at::Tensor& size_tensor, int64_t align_corners) {
  if (input.dim() != 4)
    fail(kDynamic + ": input must be a 4-D (N, C, H, W) tensor, got " + std::to_string(input.dim()) +
         "-D with shape " + shape_str(input.sizes()));
  if (size_tensor.dim() < 2)
    fail(kDynamic + ": size_tensor must have at least 2 dims (its last two are the output H, W), got shape " +
         shape_str(size_tensor.sizes()));
  if (align_corners != 0 && align_corners != 1)
    fail(kDynamic + ": align_corners must be 0 or 1, got " + std::to_string(align_corners));
  const c10::SymIntArrayRef size = size_tensor.sym_sizes().slice(size_tensor.dim() - 2);
  return renamed([&] { return call_resize(true, input, size, dynamic_attrs(align_corners)); });
}

// twinops::dynamic_resize through the dispatcher (below autograd, under the caller's guard).
at::Tensor call_dynamic(const at::Tensor& input, const at::Tensor& size_tensor, int64_t align_corners) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("twinops::dynamic_resize", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t)>();
  return op.call(input, size_tensor, align_corners);
}

struct DynamicResizeFunction : public torch::autograd::Function<DynamicResizeFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& size_tensor,
                            int64_t align_corners) {
    ctx->saved_data["size"] = input.sym_sizes();  // the gradient's shape: the input's
    ctx->saved_data["align_corners"] = align_corners;
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_dynamic(input, size_tensor, align_corners);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    std::vector<c10::SymInt> size;
    for (const c10::IValue& v : ctx->saved_data["size"].toList()) size.push_back(v.toSymInt());
    const int64_t align_corners = ctx->saved_data["align_corners"].toInt();
    return {call_resize(false, grads[0], size, dynamic_attrs(align_corners)), at::Tensor(), at::Tensor()};
  }
};

at::Tensor dynamic_resize_autograd(const at::Tensor& input, const at::Tensor& size_tensor, int64_t align_corners) {
  if (!at::GradMode::is_enabled() || !input.requires_grad()) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_dynamic(input, size_tensor, align_corners);
  }
  return DynamicResizeFunction::apply(input, size_tensor, align_corners);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  m.def("dynamic_resize(Tensor input, Tensor size_tensor, int align_corners) -> Tensor");
}

TORCH_LIBRARY_IMPL(twinops, CompositeExplicitAutograd, m) { m.impl("dynamic_resize", &dynamic_resize); }

TORCH_LIBRARY_IMPL(twinops, Autograd, m) { m.impl("dynamic_resize", TORCH_FN(dynamic_resize_autograd)); }

}  // namespace torch_op
}  // namespace resize
}  // namespace twinops
