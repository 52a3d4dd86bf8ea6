// Autograd of twinops::deform_conv2d, registered for every backend at the Autograd key (as
// ms_deform_attn's, csrc/torch/ms_deform_attn/ms_deform_attn_autograd.cpp). Its gradient is the
// op deform_conv2d_backward, called through the dispatcher so torch.compile sees it. Second
// derivatives are not provided: the backward op's own autograd raises, naming the op, instead of
// leaving a gradient silently absent.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>

#include "deform_conv2d_common.h"

namespace twinops {
namespace deform_conv2d {
namespace torch_op {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Mask = std::array<bool, 5>;
using Opt = std::optional<at::Tensor>;
// The schema's attribute arguments after the tensors, owned, kept for the backward's call.
using Attrs = TWIN_TORCH_OWNED_TUPLE(TWIN_DEFORM_CONV2D_ATTRS);
using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const Opt&,
                                    const Opt& TWIN_TORCH_TYPES(TWIN_DEFORM_CONV2D_ATTRS));
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;
using BackwardSignature = Grads(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const Opt&,
                                const Opt& TWIN_TORCH_TYPES(TWIN_DEFORM_CONV2D_ATTRS), Mask);

Opt opt(const at::Tensor& t) { return t.defined() ? Opt(t) : std::nullopt; }

at::Tensor call_forward(const at::Tensor& x, const at::Tensor& off, const at::Tensor& w, const at::Tensor& b,
                        const at::Tensor& m, const Attrs& a) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::deform_conv2d", "").typed<ForwardSignature>();
  return op.call(x, off, w, opt(b), opt(m), view(std::get<0>(a)), view(std::get<1>(a)), view(std::get<2>(a)));
}

Grads call_backward(const at::Tensor& g, const at::Tensor& x, const at::Tensor& off, const at::Tensor& w,
                    const at::Tensor& b, const at::Tensor& m, const Attrs& a, Mask mask) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("twinops::deform_conv2d_backward", "")
                             .typed<BackwardSignature>();
  return op.call(g, x, off, w, opt(b), opt(m), view(std::get<0>(a)), view(std::get<1>(a)), view(std::get<2>(a)),
                 mask);
}

void save_attrs(AutogradContext* ctx, const Attrs& a) { save_owned<DeformConv2dAttrs>(a, &ctx->saved_data); }
Attrs restore_attrs(AutogradContext* ctx) { return restore_owned<DeformConv2dAttrs, Attrs>(&ctx->saved_data); }

// Function::apply records every tensor argument's metadata, so an absent bias or mask travels as
// an empty placeholder with a flag (has[0]: bias, has[1]: mask) and is undefined again inside.
using Has = std::array<bool, 2>;

at::Tensor given(const at::Tensor& t, bool has) { return has ? t : at::Tensor(); }

struct DeformConv2dFunction : public torch::autograd::Function<DeformConv2dFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& off, const at::Tensor& w,
                            const at::Tensor& b, const at::Tensor& m, Has has, const Attrs& a) {
    ctx->save_for_backward({x, off, w, given(b, has[0]), given(m, has[1])});
    save_attrs(ctx, a);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(x, off, w, given(b, has[0]), given(m, has[1]), a);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    Mask mask{};
    for (int k = 0; k < 5; ++k) mask[k] = ctx->needs_input_grad(k) && s[k].defined();
    variable_list out(7);
    if (!grads[0].defined() || !(mask[0] || mask[1] || mask[2] || mask[3] || mask[4])) return out;
    auto [gi, go, gw, gb, gm] = call_backward(grads[0], s[0], s[1], s[2], s[3], s[4], restore_attrs(ctx), mask);
    const at::Tensor got[5] = {gi, go, gw, gb, gm};
    for (int k = 0; k < 5; ++k)
      if (mask[k]) out[k] = got[k];
    return out;
  }
};

struct DeformConv2dBackwardFunction : public torch::autograd::Function<DeformConv2dBackwardFunction> {
  static variable_list forward(AutogradContext*, const at::Tensor& g, const at::Tensor& x, const at::Tensor& off,
                               const at::Tensor& w, const at::Tensor& b, const at::Tensor& m, Has has, const Attrs& a,
                               Mask mask) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gi, go, gw, gb, gm] = call_backward(g, x, off, w, given(b, has[0]), given(m, has[1]), a, mask);
    return {gi, go, gw, gb, gm};
  }

  static variable_list backward(AutogradContext*, variable_list) {
    fail("twinops.deform_conv2d: second derivatives are not supported (differentiate once)");
  }
};

// The optional inputs: the tensors (undefined where absent), their flags, and whether either
// requires grad.
struct Optionals {
  at::Tensor b, m;
  Has has{};
  bool grad = false;
};

Optionals optionals(const Opt& b, const Opt& m) {
  Optionals o;
  o.has = {b.has_value() && b->defined(), m.has_value() && m->defined()};
  o.b = o.has[0] ? *b : at::Tensor();
  o.m = o.has[1] ? *m : at::Tensor();
  o.grad = (o.has[0] && any_requires_grad({&o.b})) || (o.has[1] && any_requires_grad({&o.m}));
  return o;
}

// An absent input as Function::apply takes it: an empty placeholder (allocated only for a graph node).
at::Tensor placeholder(const at::Tensor& t, const at::Tensor& x) {
  return t.defined() ? t : at::empty({0}, x.options());
}

at::Tensor deform_conv2d_autograd(const at::Tensor& x, const at::Tensor& off, const at::Tensor& w, const Opt& b,
                                  const Opt& m TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS)) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_DEFORM_CONV2D_ATTRS)};
  const Optionals o = optionals(b, m);
  if (!any_requires_grad({&x, &off, &w}) && !o.grad) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(x, off, w, o.b, o.m, a);
  }
  return DeformConv2dFunction::apply(x, off, w, placeholder(o.b, x), placeholder(o.m, x), o.has, a);
}

Grads deform_conv2d_backward_autograd(const at::Tensor& g, const at::Tensor& x, const at::Tensor& off,
                                      const at::Tensor& w, const Opt& b,
                                      const Opt& m TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS), Mask mask) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_DEFORM_CONV2D_ATTRS)};
  const Optionals o = optionals(b, m);
  if (!any_requires_grad({&g, &x, &off, &w}) && !o.grad) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(g, x, off, w, o.b, o.m, a, mask);
  }
  const variable_list r =
      DeformConv2dBackwardFunction::apply(g, x, off, w, placeholder(o.b, x), placeholder(o.m, x), o.has, a, mask);
  return {r[0], r[1], r[2], r[3], r[4]};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("deform_conv2d", TORCH_FN(deform_conv2d_autograd));
  m.impl("deform_conv2d_backward", TORCH_FN(deform_conv2d_backward_autograd));
}

}  // namespace torch_op
}  // namespace deform_conv2d
}  // namespace twinops
