// Schema fragment of twinops::deform_conv2d / deform_conv2d_backward, argument checks and CPU
// kernels. Fake kernels live in Python next to the op (ops/library/deform_conv2d/api.py); they
// run the same checks through twinops::_deform_conv2d_check.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "../../kernels/deform_conv2d/deform_conv2d_cpu.h"
#include "deform_conv2d_common.h"

namespace twinops {
namespace deform_conv2d {
namespace torch_op {

namespace {

const std::string kForward = "torch.ops.twinops.deform_conv2d";
const std::string kBackward = "torch.ops.twinops.deform_conv2d_backward";
const char* const kNames[5] = {"input", "offset", "weight", "bias", "mask"};
const char* const kLayouts[5] = {"(N, C_in, H, W)", "(N, 2 * offset_groups * kh * kw, H_out, W_out)",
                                 "(C_out, C_in / groups, kh, kw)", "(C_out,)",
                                 "(N, offset_groups * kh * kw, H_out, W_out)"};
const int kRanks[5] = {4, 4, 4, 1, 4};

// What the checks read of the five inputs: bias and mask may be absent.
struct Descs {
  std::array<Desc, 5> d;
  std::array<bool, 5> present{true, true, true, false, false};
};

Geometry geometry(const std::string& who, const Geo& geo) {
  const TorchAttrs<DeformConv2dAttrs> a = torch_attrs<DeformConv2dAttrs>(geo.stride, geo.padding, geo.dilation);
  if (!a.error.empty()) fail(who + ": " + a.error);
  const Geometry g = geometry_of(a.attrs);
  if (std::string e = check_geometry(g); !e.empty()) fail(who + ": " + e);
  return g;
}

// Every check that needs no tensor data; `who` starts the messages.
Params check_forward(const std::string& who, const Descs& in, const Geo& geo) {
  for (int i = 0; i < 5; ++i)
    if (in.present[i] && static_cast<int>(in.d[i].shape.size()) != kRanks[i])
      fail(who + ": " + kNames[i] + " must be a " + std::to_string(kRanks[i]) + "-D " + kLayouts[i] +
           " tensor, got " + std::to_string(in.d[i].shape.size()) + "-D with shape " + shape_str(in.d[i].shape));
  const at::ScalarType dt = in.d[0].dtype;
  if (!floating(dt)) fail(who + ": input must be float32, float64, float16 or bfloat16, got " + c10::toString(dt));
  for (int i = 1; i < 5; ++i) {
    if (!in.present[i]) continue;
    if (in.d[i].dtype != dt)
      fail(who + ": " + kNames[i] + " must have input's dtype (" + c10::toString(dt) + "), got " +
           c10::toString(in.d[i].dtype));
    if (in.d[i].device != in.d[0].device)
      fail(who + ": " + kNames[i] + " must be on input's device (" + in.d[0].device.str() + "), got " +
           in.d[i].device.str());
  }
  if (in.d[0].device.is_cuda() && dt == at::kDouble)
    fail(who + ": float64 runs on the CPU only; on CUDA input must be float32, float16 or bfloat16");
  const Geometry g = geometry(who, geo);
  Params p;
  const std::string err = make_params(in.d[0].shape.data(), in.d[1].shape.data(), in.d[2].shape.data(),
                                      in.present[3] ? in.d[3].shape.data() : nullptr,
                                      in.present[4] ? in.d[4].shape.data() : nullptr, g, &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

Params check_backward(const Desc& grad_output, const Descs& in, const Geo& geo) {
  Params p = check_forward(kBackward, in, geo);
  if (grad_output.dtype != in.d[0].dtype)
    fail(kBackward + ": grad_output must have input's dtype (" + c10::toString(in.d[0].dtype) + "), got " +
         c10::toString(grad_output.dtype));
  if (grad_output.device != in.d[0].device)
    fail(kBackward + ": grad_output must be on input's device (" + in.d[0].device.str() + "), got " +
         grad_output.device.str());
  const std::vector<int64_t> want{p.n, p.c_out, p.h_out, p.w_out};
  if (grad_output.shape != at::IntArrayRef(want))
    fail(kBackward + ": grad_output must have shape " + shape_str(want) + " (N, C_out, H_out, W_out), got " +
         shape_str(grad_output.shape));
  return p;
}

Descs descs(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
            const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& mask) {
  Descs r{{desc_of(input), desc_of(offset), desc_of(weight), desc_of(input), desc_of(input)}};
  if (bias.has_value() && bias->defined()) r.d[3] = desc_of(*bias), r.present[3] = true;
  if (mask.has_value() && mask->defined()) r.d[4] = desc_of(*mask), r.present[4] = true;
  return r;
}

Inputs contiguous(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
                  const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& mask) {
  Inputs r{input.contiguous(), offset.contiguous(), weight.contiguous(), at::Tensor(), at::Tensor()};
  if (bias.has_value() && bias->defined()) r.bias = bias->contiguous();
  if (mask.has_value() && mask->defined()) r.mask = mask->contiguous();
  return r;
}

}  // namespace

Forward prepare_forward(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
                        const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& mask, const Geo& geo) {
  Forward r;
  r.params = check_forward(kForward, descs(input, offset, weight, bias, mask), geo);
  r.in = contiguous(input, offset, weight, bias, mask);
  r.output = at::empty({r.params.n, r.params.c_out, r.params.h_out, r.params.w_out}, input.options());
  return r;
}

Backward prepare_backward(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& offset,
                          const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& mask, const Geo& geo, std::array<bool, 5> output_mask) {
  Backward r;
  const Descs d = descs(input, offset, weight, bias, mask);
  r.params = check_backward(desc_of(grad_output), d, geo);
  r.in = contiguous(input, offset, weight, bias, mask);
  r.grad_output = grad_output.contiguous();
  const at::Tensor* like[5] = {&r.in.input, &r.in.offset, &r.in.weight, &r.in.bias, &r.in.mask};
  for (int k = 0; k < 5; ++k) {
    r.want[k] = output_mask[k] && d.present[k];
    r.grads[k] = r.want[k] ? at::empty(like[k]->sizes(), input.options()) : at::empty({0}, input.options());
  }
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

at::Tensor deform_conv2d_cpu(const at::Tensor& input, const at::Tensor& offset, const at::Tensor& weight,
                             const std::optional<at::Tensor>& bias,
                             const std::optional<at::Tensor>& mask TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS)) {
  Forward r = prepare_forward(input, offset, weight, bias, mask, Geo{stride, padding, dilation});
  if (r.output.numel() == 0) return r.output;
  dispatch_floating(input.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    const Inputs& in = r.in;
    forward_cpu<scalar_t>(r.params, in.input.const_data_ptr<scalar_t>(), in.offset.const_data_ptr<scalar_t>(),
                          data_or_null<scalar_t>(in.mask), in.weight.const_data_ptr<scalar_t>(),
                          data_or_null<scalar_t>(in.bias), r.output.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.output;
}

using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

Grads deform_conv2d_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& offset,
                                 const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                                 const std::optional<at::Tensor>& mask TWIN_TORCH_PARAMS(TWIN_DEFORM_CONV2D_ATTRS),
                                 std::array<bool, 5> output_mask) {
  Backward r = prepare_backward(grad_output, input, offset, weight, bias, mask, Geo{stride, padding, dilation},
                                output_mask);
  dispatch_floating(input.scalar_type(), true, [&](auto tag) {
    using scalar_t = decltype(tag);
    const Inputs& in = r.in;
    const auto grad = [&](int k) { return grad_or_null<scalar_t>(r, k); };
    backward_cpu<scalar_t>(r.params, r.grad_output.const_data_ptr<scalar_t>(), in.input.const_data_ptr<scalar_t>(),
                           in.offset.const_data_ptr<scalar_t>(), data_or_null<scalar_t>(in.mask),
                           in.weight.const_data_ptr<scalar_t>(), grad(0), grad(1), grad(4), grad(2), grad(3),
                           parallel_for);
  });
  return {r.grads[0], r.grads[1], r.grads[2], r.grads[3], r.grads[4]};
}

// Raises exactly what `op` would raise for tensors of these shapes, dtypes and devices; bias and
// mask count where `present` says so; grad_output is read by the backward only.
void deform_conv2d_check(c10::string_view op, std::vector<std::vector<int64_t>> shapes,
                         std::vector<at::ScalarType> dtypes, std::vector<c10::Device> devices,
                         const c10::List<bool>& present, at::IntArrayRef stride, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef grad_output_shape, at::ScalarType grad_output_dtype,
                         c10::Device grad_output_device) {
  if (shapes.size() != 5 || dtypes.size() != 5 || devices.size() != 5 || present.size() != 5)
    fail("torch.ops.twinops._deform_conv2d_check: five shapes, dtypes, devices and present flags expected");
  Descs in{{Desc{shapes[0], dtypes[0], devices[0]}, Desc{shapes[1], dtypes[1], devices[1]},
            Desc{shapes[2], dtypes[2], devices[2]}, Desc{shapes[3], dtypes[3], devices[3]},
            Desc{shapes[4], dtypes[4], devices[4]}}};
  for (int i = 0; i < 5; ++i) in.present[i] = present.get(i);
  const Geo geo{stride, padding, dilation};
  if (op == "deform_conv2d")
    check_forward(kForward, in, geo);
  else if (op == "deform_conv2d_backward")
    check_backward(Desc{grad_output_shape, grad_output_dtype, grad_output_device}, in, geo);
  else
    fail("torch.ops.twinops._deform_conv2d_check: op must be 'deform_conv2d' or 'deform_conv2d_backward', got '" +
         std::string(op) + "'");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(twinops, m) {
  const std::string attrs = schema_args<DeformConv2dAttrs>();
  m.def(("deform_conv2d(Tensor input, Tensor offset, Tensor weight, Tensor? bias, Tensor? mask, " + attrs +
         ") -> Tensor")
            .c_str());
  m.def(("deform_conv2d_backward(Tensor grad_output, Tensor input, Tensor offset, Tensor weight, Tensor? bias, "
         "Tensor? mask, " +
         attrs + ", bool[5] output_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)")
            .c_str());
  // The fake kernels' checks: tensor-free, so it runs under FakeTensorMode too.
  m.def("_deform_conv2d_check(str op, int[][] shapes, ScalarType[] dtypes, Device[] devices, bool[] present, "
        "int[] stride, int[] padding, int[] dilation, int[] grad_output_shape, ScalarType grad_output_dtype, "
        "Device grad_output_device) -> ()",
        &deform_conv2d_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("deform_conv2d", &deform_conv2d_cpu);
  m.impl("deform_conv2d_backward", &deform_conv2d_backward_cpu);
}

}  // namespace torch_op
}  // namespace deform_conv2d
}  // namespace twinops
