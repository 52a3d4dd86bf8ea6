// Schema fragment of twinops::ms_deform_attn / ms_deform_attn_backward, argument checks and CPU
// kernels. Fake kernels live in Python next to the op (ops/library/ms_deform_attn/api.py); they
// run the same checks through twinops::_ms_deform_attn_check.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "../../kernels/ms_deform_attn/ms_deform_attn_cpu.h"
#include "../../kernels/ms_deform_attn/ms_deform_attn_host.h"
#include "ms_deform_attn_common.h"

namespace twinops {
namespace ms_deform_attn {
namespace torch_op {

namespace {

const std::string kForward = "torch.ops.twinops.ms_deform_attn";
const std::string kBackward = "torch.ops.twinops.ms_deform_attn_backward";
const char* const kNames[5] = {"value", "spatial_shapes", "level_start_index", "sampling_locations",
                               "attention_weights"};

// Every check that needs no tensor data; `who` starts the messages.
Params check_forward(const std::string& who, const std::array<Desc, 5>& in) {
  std::array<int, 5> ranks{};
  std::array<const int64_t*, 5> shapes{};
  for (int i = 0; i < 5; ++i) {
    ranks[i] = static_cast<int>(in[i].shape.size());
    shapes[i] = in[i].shape.data();
  }
  // Ranks first (make_params reads the shapes by rank), then dtypes and devices, then sizes.
  const int want_rank[5] = {4, 2, 1, 6, 5};
  for (int i = 0; i < 5; ++i)
    if (ranks[i] != want_rank[i]) {
      Params unused;
      fail(who + ": " + make_params(ranks.data(), shapes.data(), &unused));
    }
  if (!floating(in[0].dtype))
    fail(who + ": value must be float32, float64, float16 or bfloat16, got " + c10::toString(in[0].dtype));
  for (int i : {1, 2})
    if (in[i].dtype != at::kLong && in[i].dtype != at::kInt)
      fail(who + ": " + kNames[i] + " must be int64 or int32, got " + c10::toString(in[i].dtype));
  for (int i : {3, 4})
    if (in[i].dtype != in[0].dtype)
      fail(who + ": " + kNames[i] + " must have value's dtype (" + c10::toString(in[0].dtype) + "), got " +
           c10::toString(in[i].dtype));
  for (int i = 1; i < 5; ++i)
    if (in[i].device != in[0].device)
      fail(who + ": " + kNames[i] + " must be on value's device (" + in[0].device.str() + "), got " +
           in[i].device.str());
  if (in[0].device.is_cuda() && in[0].dtype == at::kDouble)
    fail(who + ": float64 runs on the CPU only; on CUDA value must be float32, float16 or bfloat16");
  Params p;
  const std::string err = make_params(ranks.data(), shapes.data(), &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

Params check_backward(const Desc& grad_output, const std::array<Desc, 5>& in) {
  Params p = check_forward(kBackward, in);
  if (grad_output.dtype != in[0].dtype)
    fail(kBackward + ": grad_output must have value's dtype (" + c10::toString(in[0].dtype) + "), got " +
         c10::toString(grad_output.dtype));
  if (grad_output.device != in[0].device)
    fail(kBackward + ": grad_output must be on value's device (" + in[0].device.str() + "), got " +
         grad_output.device.str());
  const std::vector<int64_t> want{p.n, p.lq, p.m * p.d};
  if (grad_output.shape != at::IntArrayRef(want))
    fail(kBackward + ": grad_output must have shape " + shape_str(want) + " (N, Lq, M * D), got " +
         shape_str(grad_output.shape));
  return p;
}

std::array<Desc, 5> descs(const Inputs& in) {
  return {desc_of(in.value), desc_of(in.spatial_shapes), desc_of(in.level_start_index), desc_of(in.loc),
          desc_of(in.weights)};
}

template <size_t R>
void strides_of(const at::Tensor& t, int64_t* out) {
  for (size_t k = 0; k < R; ++k) out[k] = t.stride(static_cast<int64_t>(k));
}

// The level table for the kernels: contiguous (on the CPU as int64, its values checked).
void level_table(const std::string& who, const Inputs& in, const Params& p, at::Tensor* shapes, at::Tensor* starts) {
  if (!in.value.is_cuda()) {
    *shapes = in.spatial_shapes.to(at::kLong).contiguous();
    *starts = in.level_start_index.to(at::kLong).contiguous();
    const std::string err =
        check_levels(shapes->const_data_ptr<int64_t>(), starts->const_data_ptr<int64_t>(), p.levels, p.s);
    if (!err.empty()) fail(who + ": " + err);
    return;
  }
  // CUDA: int32 or int64 as given (the kernels read either), never read on the host.
  *shapes = in.spatial_shapes.to(in.level_start_index.scalar_type()).contiguous();
  *starts = in.level_start_index.contiguous();
}

void input_strides(const Inputs& in, Params* p) {
  strides_of<4>(in.value, p->value_stride);
  strides_of<6>(in.loc, p->loc_stride);
  strides_of<5>(in.weights, p->weight_stride);
}

}  // namespace

Forward prepare_forward(const Inputs& in) {
  Forward r;
  r.params = check_forward(kForward, descs(in));
  level_table(kForward, in, r.params, &r.shapes, &r.starts);
  r.output = at::empty({r.params.n, r.params.lq, r.params.m * r.params.d}, in.value.options());
  input_strides(in, &r.params);
  strides_of<3>(r.output, r.params.out_stride);
  return r;
}

Backward prepare_backward(const at::Tensor& grad_output, const Inputs& in, std::array<bool, 3> output_mask) {
  Backward r;
  r.params = check_backward(desc_of(grad_output), descs(in));
  r.want = output_mask;
  level_table(kBackward, in, r.params, &r.shapes, &r.starts);
  const at::Tensor* like[3] = {&in.value, &in.loc, &in.weights};
  at::Tensor* out[3] = {&r.grad_value, &r.grad_loc, &r.grad_weight};
  for (int k = 0; k < 3; ++k)
    *out[k] = output_mask[k] ? at::empty(like[k]->sizes(), in.value.options()) : at::empty({0}, in.value.options());
  input_strides(in, &r.params);
  strides_of<3>(grad_output, r.params.out_stride);
  if (output_mask[0]) strides_of<4>(r.grad_value, r.params.grad_value_stride);
  if (output_mask[1]) strides_of<6>(r.grad_loc, r.params.grad_loc_stride);
  if (output_mask[2]) strides_of<5>(r.grad_weight, r.params.grad_weight_stride);
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

at::Tensor ms_deform_attn_cpu(const at::Tensor& value, const at::Tensor& spatial_shapes,
                              const at::Tensor& level_start_index, const at::Tensor& loc, const at::Tensor& weights) {
  const Inputs in{value, spatial_shapes, level_start_index, loc, weights};
  Forward r = prepare_forward(in);
  if (r.output.numel() == 0) return r.output;
  dispatch_floating(value.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    forward_cpu<scalar_t>(r.params, value.const_data_ptr<scalar_t>(), r.shapes.const_data_ptr<int64_t>(),
                          r.starts.const_data_ptr<int64_t>(), loc.const_data_ptr<scalar_t>(),
                          weights.const_data_ptr<scalar_t>(), r.output.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.output;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ms_deform_attn_backward_cpu(
    const at::Tensor& grad_output, const at::Tensor& value, const at::Tensor& spatial_shapes,
    const at::Tensor& level_start_index, const at::Tensor& loc, const at::Tensor& weights,
    std::array<bool, 3> output_mask) {
  const Inputs in{value, spatial_shapes, level_start_index, loc, weights};
  Backward r = prepare_backward(grad_output, in, output_mask);
  const bool gv = r.want[0] && r.grad_value.numel() > 0, gl = r.want[1] && r.grad_loc.numel() > 0,
             gw = r.want[2] && r.grad_weight.numel() > 0;
  // An empty grad_output (D or M of 0) still has grad_loc and grad_weight: zeros.
  if ((gl || gw) && grad_output.numel() == 0) {
    if (gl) r.grad_loc.zero_();
    if (gw) r.grad_weight.zero_();
    if (gv) r.grad_value.zero_();
    return {r.grad_value, r.grad_loc, r.grad_weight};
  }
  if (!gv && !gl && !gw) return {r.grad_value, r.grad_loc, r.grad_weight};
  dispatch_floating(value.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    backward_cpu<scalar_t>(r.params, grad_output.const_data_ptr<scalar_t>(), value.const_data_ptr<scalar_t>(),
                           r.shapes.const_data_ptr<int64_t>(), r.starts.const_data_ptr<int64_t>(),
                           loc.const_data_ptr<scalar_t>(), weights.const_data_ptr<scalar_t>(),
                           gv ? r.grad_value.mutable_data_ptr<scalar_t>() : nullptr,
                           gl ? r.grad_loc.mutable_data_ptr<scalar_t>() : nullptr,
                           gw ? r.grad_weight.mutable_data_ptr<scalar_t>() : nullptr, parallel_for);
  });
  return {r.grad_value, r.grad_loc, r.grad_weight};
}

// Raises exactly what `op` would raise for tensors of these shapes, dtypes and devices (the level
// table's values are the kernels' to check); grad_output is read by the backward only.
void ms_deform_attn_check(c10::string_view op, std::vector<std::vector<int64_t>> shapes,
                          std::vector<at::ScalarType> dtypes, std::vector<c10::Device> devices,
                          at::IntArrayRef grad_output_shape, at::ScalarType grad_output_dtype,
                          c10::Device grad_output_device) {
  if (shapes.size() != 5 || dtypes.size() != 5 || devices.size() != 5)
    fail("torch.ops.twinops._ms_deform_attn_check: five shapes, dtypes and devices expected");
  std::array<Desc, 5> in{Desc{shapes[0], dtypes[0], devices[0]}, Desc{shapes[1], dtypes[1], devices[1]},
                         Desc{shapes[2], dtypes[2], devices[2]}, Desc{shapes[3], dtypes[3], devices[3]},
                         Desc{shapes[4], dtypes[4], devices[4]}};
  if (op == "ms_deform_attn")
    check_forward(kForward, in);
  else if (op == "ms_deform_attn_backward")
    check_backward(Desc{grad_output_shape, grad_output_dtype, grad_output_device}, in);
  else
    fail("torch.ops.twinops._ms_deform_attn_check: op must be 'ms_deform_attn' or 'ms_deform_attn_backward', got '" +
         std::string(op) + "'");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  m.def("ms_deform_attn(Tensor value, Tensor spatial_shapes, Tensor level_start_index, Tensor sampling_locations, "
        "Tensor attention_weights) -> Tensor");
  m.def("ms_deform_attn_backward(Tensor grad_output, Tensor value, Tensor spatial_shapes, Tensor level_start_index, "
        "Tensor sampling_locations, Tensor attention_weights, bool[3] output_mask) -> (Tensor, Tensor, Tensor)");
  // The fake kernels' checks: tensor-free, so it runs under FakeTensorMode too.
  m.def("_ms_deform_attn_check(str op, int[][] shapes, ScalarType[] dtypes, Device[] devices, int[] grad_output_shape, "
        "ScalarType grad_output_dtype, Device grad_output_device) -> ()",
        &ms_deform_attn_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("ms_deform_attn", &ms_deform_attn_cpu);
  m.impl("ms_deform_attn_backward", &ms_deform_attn_backward_cpu);
}

}  // namespace torch_op
}  // namespace ms_deform_attn
}  // namespace twinops
