// Autograd of twinops::ms_deform_attn, registered for every backend at the Autograd key (as
// grid_sample's, csrc/torch/grid_sample/grid_sample_autograd.cpp). Its gradient is the op
// ms_deform_attn_backward, called through the dispatcher so torch.compile sees it. The index
// inputs get no gradient. Second derivatives are not provided: the backward op's own autograd
// raises, naming the op, instead of leaving a gradient silently absent.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "../frontend_util.h"

namespace twinops {
namespace ms_deform_attn {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Mask = std::array<bool, 3>;
using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                    const at::Tensor&);
using BackwardSignature = std::tuple<at::Tensor, at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
    Mask);

at::Tensor call_forward(const at::Tensor& v, const at::Tensor& s, const at::Tensor& i, const at::Tensor& l,
                        const at::Tensor& w) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::ms_deform_attn", "").typed<ForwardSignature>();
  return op.call(v, s, i, l, w);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> call_backward(const at::Tensor& g, const at::Tensor& v,
                                                             const at::Tensor& s, const at::Tensor& i,
                                                             const at::Tensor& l, const at::Tensor& w, Mask mask) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("twinops::ms_deform_attn_backward", "")
                             .typed<BackwardSignature>();
  return op.call(g, v, s, i, l, w, mask);
}

struct MSDeformAttnFunction : public torch::autograd::Function<MSDeformAttnFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& v, const at::Tensor& s, const at::Tensor& i,
                            const at::Tensor& l, const at::Tensor& w) {
    ctx->save_for_backward({v, s, i, l, w});
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(v, s, i, l, w);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const Mask mask{ctx->needs_input_grad(0), ctx->needs_input_grad(3), ctx->needs_input_grad(4)};
    variable_list out(5);
    if (!grads[0].defined() || !(mask[0] || mask[1] || mask[2])) return out;
    auto [gv, gl, gw] = call_backward(grads[0], saved[0], saved[1], saved[2], saved[3], saved[4], mask);
    if (mask[0]) out[0] = gv;
    if (mask[1]) out[3] = gl;
    if (mask[2]) out[4] = gw;
    return out;
  }
};

struct MSDeformAttnBackwardFunction : public torch::autograd::Function<MSDeformAttnBackwardFunction> {
  static variable_list forward(AutogradContext*, const at::Tensor& g, const at::Tensor& v, const at::Tensor& s,
                               const at::Tensor& i, const at::Tensor& l, const at::Tensor& w, Mask mask) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gv, gl, gw] = call_backward(g, v, s, i, l, w, mask);
    return {gv, gl, gw};
  }

  static variable_list backward(AutogradContext*, variable_list) {
    fail("twinops.ms_deform_attn: second derivatives are not supported (differentiate once, or through the "
         "per-level F.grid_sample composite)");
  }
};

at::Tensor ms_deform_attn_autograd(const at::Tensor& v, const at::Tensor& s, const at::Tensor& i, const at::Tensor& l,
                                   const at::Tensor& w) {
  if (!any_requires_grad({&v, &l, &w})) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(v, s, i, l, w);
  }
  return MSDeformAttnFunction::apply(v, s, i, l, w);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ms_deform_attn_backward_autograd(const at::Tensor& g,
                                                                                const at::Tensor& v,
                                                                                const at::Tensor& s,
                                                                                const at::Tensor& i,
                                                                                const at::Tensor& l,
                                                                                const at::Tensor& w, Mask mask) {
  if (!any_requires_grad({&g, &v, &l, &w})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(g, v, s, i, l, w, mask);
  }
  const variable_list r = MSDeformAttnBackwardFunction::apply(g, v, s, i, l, w, mask);
  return {r[0], r[1], r[2]};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("ms_deform_attn", TORCH_FN(ms_deform_attn_autograd));
  m.impl("ms_deform_attn_backward", TORCH_FN(ms_deform_attn_backward_autograd));
}

}  // namespace torch_op
}  // namespace ms_deform_attn
}  // namespace twinops
