// Autograd of twinops::multi_level_roi_align, registered for every backend at the Autograd key.
// Its gradient is the op multi_level_roi_align_backward (one gradient per given level,
// deterministic), called through the dispatcher so torch.compile sees it. The rois get no
// gradient; second derivatives raise, naming the op.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "roi_align_common.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Opt = std::optional<at::Tensor>;
using ForwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const Opt&, const Opt&, const Opt&,
                                    const Opt&, TWIN_ML_ATTR_TYPES);
using BackwardSignature = std::vector<at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                  const Opt&, const Opt&, const Opt&, const Opt&, TWIN_ML_ATTR_TYPES);

// The attribute arguments, owned (kept for the backward's call).
struct Owned {
  int64_t output_height, output_width;
  std::vector<double> featmap_strides;
  int64_t sampling_ratio, aligned;
  std::string pool_mode;
  double finest_scale, roi_scale_factor;
  std::string level_rule;
};
#define TWIN_ML_OWNED_ARGS(o)                                                                          \
  (o).output_height, (o).output_width, c10::ArrayRef<double>((o).featmap_strides), (o).sampling_ratio, \
      (o).aligned, c10::string_view((o).pool_mode), (o).finest_scale, (o).roi_scale_factor,            \
      c10::string_view((o).level_rule)

Owned own(TWIN_ML_ATTR_PARAMS) {
  return Owned{output_height, output_width, featmap_strides.vec(), sampling_ratio, aligned, std::string(pool_mode),
               finest_scale,  roi_scale_factor, std::string(level_rule)};
}

Opt opt(const at::Tensor& t) { return t.defined() ? Opt(t) : Opt(); }
at::Tensor value_or_undefined(const Opt& t) { return t.has_value() ? *t : at::Tensor(); }

at::Tensor call_forward(const at::Tensor& rois, const variable_list& lv, const Owned& o) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("twinops::multi_level_roi_align", "")
                             .typed<ForwardSignature>();
  return op.call(rois, lv[0], opt(lv[1]), opt(lv[2]), opt(lv[3]), opt(lv[4]), TWIN_ML_OWNED_ARGS(o));
}

std::vector<at::Tensor> call_backward(const at::Tensor& g, const at::Tensor& rois, const variable_list& lv,
                                      const Owned& o) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("twinops::multi_level_roi_align_backward", "")
                             .typed<BackwardSignature>();
  return op.call(g, rois, lv[0], opt(lv[1]), opt(lv[2]), opt(lv[3]), opt(lv[4]), TWIN_ML_OWNED_ARGS(o));
}

void save(AutogradContext* ctx, const Owned& o) {
  auto& s = ctx->saved_data;
  s["output_height"] = o.output_height, s["output_width"] = o.output_width;
  s["featmap_strides"] = o.featmap_strides, s["sampling_ratio"] = o.sampling_ratio, s["aligned"] = o.aligned;
  s["pool_mode"] = o.pool_mode, s["finest_scale"] = o.finest_scale, s["roi_scale_factor"] = o.roi_scale_factor;
  s["level_rule"] = o.level_rule;
}

Owned restore(AutogradContext* ctx) {
  auto& s = ctx->saved_data;
  return Owned{s["output_height"].toInt(),       s["output_width"].toInt(),     s["featmap_strides"].toDoubleVector(),
               s["sampling_ratio"].toInt(),      s["aligned"].toInt(),          s["pool_mode"].toStringRef(),
               s["finest_scale"].toDouble(),     s["roi_scale_factor"].toDouble(), s["level_rule"].toStringRef()};
}

// Inputs: rois, level0..level4 (undefined where absent), then the attributes (one slot).
struct MultiLevelFunction : public torch::autograd::Function<MultiLevelFunction> {
  // Absent levels are empty optionals, so they are no inputs of the graph node: the given levels
  // (level0 first, in order) are the node's inputs 1, 2, ... after rois.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& rois, const at::Tensor& l0, const Opt& l1,
                            const Opt& l2, const Opt& l3, const Opt& l4, const Owned& o) {
    const variable_list lv{l0, value_or_undefined(l1), value_or_undefined(l2), value_or_undefined(l3),
                           value_or_undefined(l4)};
    ctx->save_for_backward({rois, lv[0], lv[1], lv[2], lv[3], lv[4]});
    save(ctx, o);
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(rois, lv, o);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    variable_list out(kSchemaLevels + 2);
    bool any = false;
    const variable_list lv(saved.begin() + 1, saved.end());
    int given = 0;
    while (given < kSchemaLevels && lv[given].defined()) ++given;
    for (int l = 0; l < given; ++l) any = any || ctx->needs_input_grad(1 + l);
    if (!grads[0].defined() || !any) return out;
    const std::vector<at::Tensor> g = call_backward(grads[0], saved[0], lv, restore(ctx));
    for (size_t l = 0; l < g.size(); ++l)
      if (ctx->needs_input_grad(static_cast<int>(1 + l))) out[1 + l] = g[l];
    return out;
  }
};

struct MultiLevelBackwardFunction : public torch::autograd::Function<MultiLevelBackwardFunction> {
  static variable_list forward(AutogradContext*, const at::Tensor& g, const at::Tensor& rois, const at::Tensor& l0,
                               const Opt& l1, const Opt& l2, const Opt& l3, const Opt& l4, const Owned& o) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(g, rois,
                         {l0, value_or_undefined(l1), value_or_undefined(l2), value_or_undefined(l3),
                          value_or_undefined(l4)},
                         o);
  }

  static variable_list backward(AutogradContext*, variable_list) {
    fail("twinops.multi_level_roi_align: second derivatives are not supported (differentiate once)");
  }
};

at::Tensor multi_level_autograd(const at::Tensor& rois, TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const Owned o = own(TWIN_ML_ATTR_ARGS);
  const at::Tensor l1 = value_or_undefined(level1), l2 = value_or_undefined(level2), l3 = value_or_undefined(level3),
                   l4 = value_or_undefined(level4);
  if (!any_requires_grad({&level0, &l1, &l2, &l3, &l4})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_forward(rois, {level0, l1, l2, l3, l4}, o);
  }
  return MultiLevelFunction::apply(rois, level0, opt(l1), opt(l2), opt(l3), opt(l4), o);
}

std::vector<at::Tensor> multi_level_backward_autograd(const at::Tensor& g, const at::Tensor& rois,
                                                      TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const Owned o = own(TWIN_ML_ATTR_ARGS);
  const at::Tensor l1 = value_or_undefined(level1), l2 = value_or_undefined(level2), l3 = value_or_undefined(level3),
                   l4 = value_or_undefined(level4);
  if (!any_requires_grad({&g, &level0, &l1, &l2, &l3, &l4})) {
    at::AutoDispatchBelowADInplaceOrView guard;
    return call_backward(g, rois, {level0, l1, l2, l3, l4}, o);
  }
  return MultiLevelBackwardFunction::apply(g, rois, level0, opt(l1), opt(l2), opt(l3), opt(l4), o);
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, Autograd, m) {
  m.impl("multi_level_roi_align", TORCH_FN(multi_level_autograd));
  m.impl("multi_level_roi_align_backward", TORCH_FN(multi_level_backward_autograd));
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
