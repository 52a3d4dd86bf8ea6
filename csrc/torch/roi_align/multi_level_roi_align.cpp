// Schema fragment of twinops::multi_level_roi_align / multi_level_roi_align_backward, argument
// checks and CPU kernels (roi_align's kernels over a level table). Fake kernels live in Python
// (ops/library/roi_align/multi_level.py); they run the same checks through
// twinops::_multi_level_roi_align_check.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "../../kernels/roi_align/roi_align_cpu.h"
#include "roi_align_common.h"

namespace twinops {
namespace roi_align {
namespace torch_op {

namespace {

const std::string kForward = "torch.ops.twinops.multi_level_roi_align";
const std::string kBackward = "torch.ops.twinops.multi_level_roi_align_backward";

// Every check of the forward that needs no tensor data; levels: level0, level1, ... as given.
Params check_forward(const std::string& who, const Desc& rois, const std::vector<Desc>& levels,
                     const MultiLevelAttrs& a) {
  if (rois.shape.size() != 2)
    fail(who + ": rois must be a 2-D (K, 5) tensor (batch index, x1, y1, x2, y2), got " +
         std::to_string(rois.shape.size()) + "-D");
  const Desc& l0 = levels[0];
  for (size_t l = 0; l < levels.size(); ++l) {
    const std::string name = "level" + std::to_string(l);
    if (levels[l].shape.size() != 4)
      fail(who + ": " + name + " must be a 4-D (N, C, H, W) tensor, got " + std::to_string(levels[l].shape.size()) +
           "-D");
    if (!floating(levels[l].dtype))
      fail(who + ": " + name + " must be float32, float64, float16 or bfloat16, got " +
           c10::toString(levels[l].dtype));
    if (levels[l].dtype != l0.dtype)
      fail(who + ": " + name + " must have level0's dtype (" + c10::toString(l0.dtype) + "), got " +
           c10::toString(levels[l].dtype));
    if (levels[l].device != l0.device)
      fail(who + ": " + name + " must be on level0's device (" + l0.device.str() + "), got " +
           levels[l].device.str());
  }
  if (rois.dtype != l0.dtype)
    fail(who + ": rois must have the levels' dtype (" + c10::toString(l0.dtype) + "), got " +
         c10::toString(rois.dtype));
  if (rois.device != l0.device)
    fail(who + ": rois must be on the levels' device (" + l0.device.str() + "), got " + rois.device.str());
  if (l0.device.is_cuda() && l0.dtype == at::kDouble)
    fail(who + ": float64 runs on the CPU only; on CUDA the levels must be float32, float16 or bfloat16");
  std::vector<const int64_t*> shapes;
  for (const Desc& d : levels) shapes.push_back(d.shape.data());
  Params p;
  const std::string err =
      make_multi_params(static_cast<int32_t>(levels.size()), shapes.data(), rois.shape.data(), a, &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

Params check_backward(const Desc& grad_output, const Desc& rois, const std::vector<Desc>& levels,
                      const MultiLevelAttrs& a) {
  Params p = check_forward(kBackward, rois, levels, a);
  check_grad_output(kBackward, grad_output, levels[0], "the levels'", p);
  return p;
}

std::vector<Desc> descs(const std::vector<at::Tensor>& levels) {
  std::vector<Desc> d;
  for (const at::Tensor& t : levels) d.push_back(desc_of(t));
  return d;
}

}  // namespace

std::vector<at::Tensor> given_levels(const std::string& who, TWIN_ML_LEVEL_PARAMS) {
  std::vector<at::Tensor> out{level0};
  const std::optional<at::Tensor>* rest[kSchemaLevels - 1] = {&level1, &level2, &level3, &level4};
  bool ended = false;
  for (int l = 0; l < kSchemaLevels - 1; ++l) {
    const bool has = rest[l]->has_value() && rest[l]->value().defined();
    if (has && ended)
      fail(who + ": level" + std::to_string(l + 1) + " is given after an absent level: give the levels in order");
    if (!has) ended = true;
    else out.push_back(rest[l]->value());
  }
  return out;
}

MultiForward prepare_multi_forward(const at::Tensor& rois, const std::vector<at::Tensor>& levels,
                                   const MultiLevelAttrs& a) {
  MultiForward r;
  r.params = check_forward(kForward, desc_of(rois), descs(levels), a);
  r.output = at::empty({r.params.k, r.params.c, r.params.ph, r.params.pw}, levels[0].options());
  for (size_t l = 0; l < levels.size(); ++l) strides_of<4>(levels[l], r.params.level[l].stride);
  strides_of<2>(rois, r.params.roi_stride);
  strides_of<4>(r.output, r.params.out_stride);
  return r;
}

MultiBackward prepare_multi_backward(const at::Tensor& grad_output, const at::Tensor& rois,
                                     const std::vector<at::Tensor>& levels, const MultiLevelAttrs& a) {
  MultiBackward r;
  r.params = check_backward(desc_of(grad_output), desc_of(rois), descs(levels), a);
  for (size_t l = 0; l < levels.size(); ++l) {
    strides_of<4>(levels[l], r.params.level[l].stride);
    r.grads.push_back(at::empty(levels[l].sizes(), levels[l].options()));
  }
  strides_of<2>(rois, r.params.roi_stride);
  strides_of<4>(grad_output, r.params.out_stride);
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

at::Tensor multi_level_roi_align_cpu(const at::Tensor& rois, TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const std::vector<at::Tensor> levels = given_levels(kForward, TWIN_ML_LEVEL_ARGS);
  MultiForward r = prepare_multi_forward(rois, levels, multi_level_attrs(TWIN_ML_ATTR_ARGS));
  if (r.output.numel() == 0) return r.output;
  dispatch_floating(levels[0].scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    const scalar_t* feats[kMaxLevels] = {};
    for (size_t l = 0; l < levels.size(); ++l) feats[l] = levels[l].const_data_ptr<scalar_t>();
    forward_cpu<scalar_t, int64_t>(r.params, feats, rois.const_data_ptr<scalar_t>(), nullptr,
                                   r.output.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.output;
}

std::vector<at::Tensor> multi_level_roi_align_backward_cpu(const at::Tensor& grad_output, const at::Tensor& rois,
                                                           TWIN_ML_LEVEL_PARAMS, TWIN_ML_ATTR_PARAMS) {
  const std::vector<at::Tensor> levels = given_levels(kBackward, TWIN_ML_LEVEL_ARGS);
  MultiBackward r = prepare_multi_backward(grad_output, rois, levels, multi_level_attrs(TWIN_ML_ATTR_ARGS));
  dispatch_floating(levels[0].scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    for (size_t l = 0; l < levels.size(); ++l) {
      if (r.grads[l].numel() == 0) continue;
      Params p = r.params;
      strides_of<4>(r.grads[l], p.grad_input_stride);
      backward_cpu<scalar_t, int64_t>(p, static_cast<int32_t>(l), grad_output.const_data_ptr<scalar_t>(),
                                      levels[l].const_data_ptr<scalar_t>(), rois.const_data_ptr<scalar_t>(), nullptr,
                                      r.grads[l].mutable_data_ptr<scalar_t>(), parallel_for);
    }
  });
  return r.grads;
}

// Raises exactly what `op` would raise for tensors of these shapes, dtypes and devices (rois, then
// the given levels); the grad_output arguments are read by the backward only.
void multi_level_roi_align_check(c10::string_view op, std::vector<std::vector<int64_t>> shapes,
                                 std::vector<at::ScalarType> dtypes, std::vector<c10::Device> devices,
                                 at::IntArrayRef grad_output_shape, at::ScalarType grad_output_dtype,
                                 c10::Device grad_output_device, TWIN_ML_ATTR_PARAMS) {
  const std::string who = "torch.ops.twinops._multi_level_roi_align_check";
  if (shapes.size() < 2 || dtypes.size() != shapes.size() || devices.size() != shapes.size())
    fail(who + ": rois and at least one level's shapes, dtypes and devices expected");
  const Desc rois{shapes[0], dtypes[0], devices[0]};
  std::vector<Desc> levels;
  for (size_t i = 1; i < shapes.size(); ++i) levels.push_back(Desc{shapes[i], dtypes[i], devices[i]});
  const MultiLevelAttrs a = multi_level_attrs(TWIN_ML_ATTR_ARGS);
  if (op == "multi_level_roi_align")
    check_forward(kForward, rois, levels, a);
  else if (op == "multi_level_roi_align_backward")
    check_backward(Desc{grad_output_shape, grad_output_dtype, grad_output_device}, rois, levels, a);
  else
    fail(who + ": op must be 'multi_level_roi_align' or 'multi_level_roi_align_backward', got '" + std::string(op) +
         "'");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  const std::string levels = "Tensor level0, Tensor? level1, Tensor? level2, Tensor? level3, Tensor? level4";
  const std::string attrs = multi_level_attr_schema();
  m.def(("multi_level_roi_align(Tensor rois, " + levels + ", " + attrs + ") -> Tensor").c_str());
  m.def(("multi_level_roi_align_backward(Tensor grad_output, Tensor rois, " + levels + ", " + attrs +
         ") -> Tensor[]")
            .c_str());
  m.def(("_multi_level_roi_align_check(str op, int[][] shapes, ScalarType[] dtypes, Device[] devices, "
         "int[] grad_output_shape, ScalarType grad_output_dtype, Device grad_output_device, " +
         std::string(attrs) + ") -> ()")
            .c_str(),
        &multi_level_roi_align_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("multi_level_roi_align", &multi_level_roi_align_cpu);
  m.impl("multi_level_roi_align_backward", &multi_level_roi_align_backward_cpu);
}

}  // namespace torch_op
}  // namespace roi_align
}  // namespace twinops
