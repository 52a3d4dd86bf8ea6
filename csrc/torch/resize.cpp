// TORCH_LIBRARY schema of twinops::resize / resize_backward and their CPU kernels.
// Fake (meta) kernels and autograd live in Python next to the op (ops/_resize_op.py).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "../kernels/resize_cpu.h"
#include "resize_common.h"

namespace twinops {
namespace torch_frontend {

ResizeArgs pack_args(c10::string_view mode, c10::string_view coord, c10::string_view nearest, double cubic_coeff_a,
                     int64_t exclude_outside, int64_t antialias, c10::ArrayRef<double> scales,
                     c10::ArrayRef<double> roi, double extrapolation_value, int64_t pytorch) {
  return ResizeArgs{std::string(mode), std::string(coord), std::string(nearest), cubic_coeff_a, exclude_outside,
                    antialias, scales, roi, extrapolation_value, pytorch};
}

resize::Params make_params(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const ResizeArgs& a) {
  resize::Params p;
  TORCH_CHECK(a.scales.size() == 2, "twinops.resize: scales must have 2 entries (H, W), got ", a.scales.size());
  TORCH_CHECK(a.roi.size() == 4, "twinops.resize: roi must have 4 entries (h_start, w_start, h_end, w_end), got ",
              a.roi.size());
  TORCH_CHECK(out_h > 0 && out_w > 0, "twinops.resize: output_size must be positive, got (", out_h, ", ", out_w, ")");
  TORCH_CHECK(in_h > 0 && in_w > 0, "twinops.resize: input spatial size must be positive, got (", in_h, ", ", in_w,
              ")");
  p.h = {in_h, out_h, a.scales[0], static_cast<float>(a.roi[0]), static_cast<float>(a.roi[2])};
  p.w = {in_w, out_w, a.scales[1], static_cast<float>(a.roi[1]), static_cast<float>(a.roi[3])};
  const char* err = resize::parse_mode(a.mode.c_str(), &p.mode);
  if (!err) err = resize::parse_coord(a.coordinate_transformation_mode.c_str(), &p.coord);
  if (!err) err = resize::parse_nearest(a.nearest_mode.c_str(), &p.nearest);
  TORCH_CHECK(err == nullptr, "twinops.resize: ", err);
  p.cubic_a = static_cast<float>(a.cubic_coeff_a);
  p.exclude_outside = static_cast<int32_t>(a.exclude_outside);
  p.antialias = static_cast<int32_t>(a.antialias);
  p.pytorch = static_cast<int32_t>(a.pytorch);
  p.extrapolation_value = static_cast<float>(a.extrapolation_value);
  err = resize::check_params(p);
  TORCH_CHECK(err == nullptr, "twinops.resize: ", err);
  return p;
}

void check_tensor(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.dim() == 4, "twinops.resize: ", name, " must be a 4-D (N, C, H, W) tensor, got ", t.dim(), "-D");
  const auto s = t.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16, "twinops.resize: ", name,
              " must be float32, float64, float16 or bfloat16, got ", s);
}

resize::Geometry make_geometry(const at::Tensor& in, const at::Tensor& out) {
  resize::Geometry g;
  g.n = in.size(0);
  g.c = in.size(1);
  for (int k = 0; k < 4; ++k) {
    g.in_stride[k] = in.stride(k);
    g.out_stride[k] = out.stride(k);
  }
  return g;
}

bool wants_channels_last(const at::Tensor& t) {
  return t.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};


at::Tensor resize_cpu(const at::Tensor& input, at::IntArrayRef output_size, c10::string_view mode,
                      c10::string_view coord, c10::string_view nearest, double cubic_coeff_a, int64_t exclude_outside,
                      int64_t antialias, at::ArrayRef<double> scales, at::ArrayRef<double> roi,
                      double extrapolation_value, int64_t pytorch) {
  check_tensor(input, "input");
  TORCH_CHECK(output_size.size() == 2, "twinops.resize: output_size must have 2 entries (H, W)");
  const resize::Params p =
      make_params(input.size(2), input.size(3), output_size[0], output_size[1],
                  pack_args(mode, coord, nearest, cubic_coeff_a, exclude_outside, antialias, scales, roi,
                       extrapolation_value, pytorch));
  const bool cl = wants_channels_last(input);
  at::Tensor out = at::empty({input.size(0), input.size(1), output_size[0], output_size[1]},
                             input.options().memory_format(cl ? at::MemoryFormat::ChannelsLast
                                                              : at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  const resize::Geometry g = make_geometry(input, out);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_resize_cpu", [&] {
    using Acc = typename OpMath<scalar_t>::type;
    const resize::Workspace L = resize::workspace_layout(p, sizeof(Acc), false);
    std::vector<char> ws(L.bytes);
    resize::forward_cpu<scalar_t>(p, L, g, input.const_data_ptr<scalar_t>(), out.mutable_data_ptr<scalar_t>(), cl,
                                  ws.data(), parallel_for);
  });
  return out;
}

at::Tensor resize_backward_cpu(const at::Tensor& grad_output, at::IntArrayRef input_size, c10::string_view mode,
                               c10::string_view coord, c10::string_view nearest, double cubic_coeff_a,
                               int64_t exclude_outside, int64_t antialias, at::ArrayRef<double> scales,
                               at::ArrayRef<double> roi, double extrapolation_value, int64_t pytorch) {
  check_tensor(grad_output, "grad_output");
  TORCH_CHECK(input_size.size() == 4, "twinops.resize_backward: input_size must have 4 entries (N, C, H, W)");
  TORCH_CHECK(input_size[0] == grad_output.size(0) && input_size[1] == grad_output.size(1),
              "twinops.resize_backward: grad_output batch/channels ", grad_output.sizes(),
              " do not match input_size ", input_size);
  const resize::Params p =
      make_params(input_size[2], input_size[3], grad_output.size(2), grad_output.size(3),
                  pack_args(mode, coord, nearest, cubic_coeff_a, exclude_outside, antialias, scales, roi,
                       extrapolation_value, pytorch));
  const bool cl = wants_channels_last(grad_output);
  at::Tensor gin = at::empty(input_size, grad_output.options().memory_format(cl ? at::MemoryFormat::ChannelsLast
                                                                                : at::MemoryFormat::Contiguous));
  if (gin.numel() == 0) return gin;
  const resize::Geometry g = make_geometry(gin, grad_output);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad_output.scalar_type(), "twinops_resize_bwd_cpu", [&] {
    using Acc = typename OpMath<scalar_t>::type;
    const resize::Workspace L = resize::workspace_layout(p, sizeof(Acc), true);
    std::vector<char> ws(L.bytes);
    resize::backward_cpu<scalar_t>(p, L, g, grad_output.const_data_ptr<scalar_t>(), gin.mutable_data_ptr<scalar_t>(),
                                   cl, ws.data(), parallel_for);
  });
  return gin;
}

}  // namespace

TORCH_LIBRARY(twinops, m) {
  m.def(
      "resize(Tensor input, SymInt[2] output_size, str mode, str coordinate_transformation_mode, str nearest_mode, "
      "float cubic_coeff_a, int exclude_outside, int antialias, float[2] scales, float[4] roi, "
      "float extrapolation_value, int pytorch) -> Tensor");
  m.def(
      "resize_backward(Tensor grad_output, SymInt[4] input_size, str mode, str coordinate_transformation_mode, "
      "str nearest_mode, float cubic_coeff_a, int exclude_outside, int antialias, float[2] scales, float[4] roi, "
      "float extrapolation_value, int pytorch) -> Tensor");
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("resize", &resize_cpu);
  m.impl("resize_backward", &resize_backward_cpu);
}

}  // namespace torch_frontend
}  // namespace twinops
