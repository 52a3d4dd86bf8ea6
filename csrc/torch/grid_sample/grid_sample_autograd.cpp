// Autograd of twinops::grid_sample / grid_sample_backward, registered for every backend at the
// Autograd key (as resize's, csrc/torch/resize/resize_autograd.cpp: a fraction of Python
// register_autograd's per-call cost). grid_sample's gradient is the op grid_sample_backward,
// called through the dispatcher, so its own autograd (below) and torch.compile see it.
//
// Second derivatives are ATen's (grid_sampler_{2,3}d_double_backward, through autograd of ATen's
// backward op on detached copies of the saved tensors): the twinops kernels give first
// derivatives only, and a double backward (gradient penalties) is rare enough to borrow ATen's
// rather than carry a third kernel. They are therefore neither deterministic on CUDA nor bound to
// the NaN-grid rule (docs/ops/grid_sample.md, "Gradients").
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>
#include <torch/version.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "../frontend_util.h"
#include "grid_sample_common.h"

namespace twinops {
namespace grid_sample {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The schema's attribute arguments after the tensors, owned, kept for the backward's call.
using Attrs = TWIN_TORCH_OWNED_TUPLE(TWIN_GRID_SAMPLE_ATTRS);
using Mask = std::array<bool, 2>;
using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor& TWIN_TORCH_TYPES(TWIN_GRID_SAMPLE_ATTRS));
using BackwardSignature = std::tuple<at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor& TWIN_TORCH_TYPES(TWIN_GRID_SAMPLE_ATTRS), Mask);

at::Tensor call_forward(const at::Tensor& input, const at::Tensor& grid, const Attrs& a) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::grid_sample", "").typed<ForwardSignature>();
  return std::apply([&](const auto&... v) { return op.call(input, grid, view(v)...); }, a);
}

std::tuple<at::Tensor, at::Tensor> call_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                 const at::Tensor& grid, const Attrs& a, Mask mask) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("twinops::grid_sample_backward", "").typed<BackwardSignature>();
  return std::apply([&](const auto&... v) { return op.call(grad_output, input, grid, view(v)..., mask); }, a);
}

void save_attrs(AutogradContext* ctx, const Attrs& a) { save_owned<grid_sample::GridSampleAttrs>(a, &ctx->saved_data); }
Attrs restore_attrs(AutogradContext* ctx) {
  return restore_owned<grid_sample::GridSampleAttrs, Attrs>(&ctx->saved_data);
}

struct GridSampleFunction : public torch::autograd::Function<GridSampleFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, const at::Tensor& grid, const Attrs& a) {
    ctx->save_for_backward({input, grid});
    save_attrs(ctx, a);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(input, grid, a);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const Mask mask{ctx->needs_input_grad(0), ctx->needs_input_grad(1)};
    if (!grads[0].defined() || !(mask[0] || mask[1])) return {at::Tensor(), at::Tensor(), at::Tensor()};
    auto [gi, gg] = call_backward(grads[0], saved[0], saved[1], restore_attrs(ctx), mask);
    return {mask[0] ? gi : at::Tensor(), mask[1] ? gg : at::Tensor(), at::Tensor()};
  }
};

// ATen's grid sampler backward of a 4-D or 5-D input; its mode and padding codes are the
// kernel's enums (../../kernels/sampling.cuh), which the choice tables give.
std::tuple<at::Tensor, at::Tensor> aten_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                 const at::Tensor& grid, const Attrs& a) {
  const auto mode = attr::choice_value(choices::mode, std::get<0>(a));
  const auto padding = attr::choice_value(choices::padding_mode, std::get<1>(a));
  const bool align = std::get<2>(a) != 0;
  return input.dim() == 4 ? at::grid_sampler_2d_backward(grad_output, input, grid, mode, padding, align, {true, true})
                          : at::grid_sampler_3d_backward(grad_output, input, grid, mode, padding, align, {true, true});
}

struct GridSampleBackwardFunction : public torch::autograd::Function<GridSampleBackwardFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& grad_output, const at::Tensor& input,
                               const at::Tensor& grid, const Attrs& a, Mask mask) {
    ctx->save_for_backward({grad_output, input, grid});
    save_attrs(ctx, a);
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [gi, gg] = call_backward(grad_output, input, grid, a, mask);
    return {gi, gg};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list none(5);
    const variable_list saved = ctx->get_saved_variables();
    const std::array<bool, 3> wanted{ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    if (!(wanted[0] || wanted[1] || wanted[2])) return none;
    // create_graph=True here asks for a third derivative: the partial derivatives below are taken
    // on detached copies (the saved tensors' own history must not be differentiated through), so
    // a graph built from them would silently miss terms.
    if (at::GradMode::is_enabled())
      fail("twinops.grid_sample: derivatives beyond the second are not supported (the second derivative is "
           "ATen's grid sampler double backward; call the second backward without create_graph=True)");
    at::AutoGradMode enable(true);
    variable_list leaves(3);
    for (int k = 0; k < 3; ++k) leaves[k] = saved[k].detach().requires_grad_(wanted[k]);
    auto [ag_input, ag_grid] = aten_backward(leaves[0], leaves[1], leaves[2], restore_attrs(ctx));
    variable_list outputs, grad_outputs, asked;
    const std::array<at::Tensor, 2> outs{ag_input, ag_grid};
    for (int k = 0; k < 2; ++k) {
      if (grads[k].defined() && grads[k].numel() > 0) outputs.push_back(outs[k]), grad_outputs.push_back(grads[k]);
    }
    if (outputs.empty()) return none;
    for (int k = 0; k < 3; ++k)
      if (wanted[k]) asked.push_back(leaves[k]);
    variable_list got;
    try {
      got = torch::autograd::grad(outputs, asked, grad_outputs, /*retain_graph=*/false, /*create_graph=*/false,
                                  /*allow_unused=*/true);
    } catch (const c10::Error& e) {
      // PyTorch releases without the double backward say "derivative for
      // aten::grid_sampler_2d_backward is not implemented".
      if (std::string(e.what_without_backtrace()).find("not implemented") == std::string::npos) throw;
      fail("twinops.grid_sample: second derivatives are ATen's grid sampler double backward, which this PyTorch (" +
           std::string(TORCH_VERSION) + ") does not define (F.grid_sample has none either)");
    }
    variable_list out = none;
    for (int k = 0, i = 0; k < 3; ++k)
      if (wanted[k]) out[k] = got[i++];
    return out;
  }
};

at::Tensor grid_sample_autograd(const at::Tensor& input, const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_GRID_SAMPLE_ATTRS)};
  if (!any_requires_grad({&input, &grid})) {  // nothing to record: skip the graph node
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(input, grid, a);
  }
  return GridSampleFunction::apply(input, grid, a);
}

std::tuple<at::Tensor, at::Tensor> grid_sample_backward_autograd(const at::Tensor& grad_output, const at::Tensor& input,
                                                                 const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS,
                                                                 Mask output_mask) {
  const Attrs a{TWIN_TORCH_OWN(TWIN_GRID_SAMPLE_ATTRS)};
  if (!any_requires_grad({&grad_output, &input, &grid})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(grad_output, input, grid, a, output_mask);
  }
  const variable_list r = GridSampleBackwardFunction::apply(grad_output, input, grid, a, output_mask);
  return {r[0], r[1]};
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("grid_sample", TORCH_FN(grid_sample_autograd));
  m.impl("grid_sample_backward", TORCH_FN(grid_sample_backward_autograd));
}

}  // namespace torch_op
}  // namespace grid_sample
}  // namespace twinops
