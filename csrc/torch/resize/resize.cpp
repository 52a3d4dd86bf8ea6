// Schema fragment of twinops::resize / resize_backward, argument checks and CPU kernels.
// Fake (meta) kernels and autograd live in Python next to the op (ops/library/resize/api.py).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

#include "../../kernels/resize/resize_attrs.h"
#include "../../kernels/resize/resize_cpu.h"
#include "../frontend_util.h"
#include "resize_common.h"

namespace twinops {
namespace resize {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

namespace {

// Messages start with the op the caller named (`who`, e.g. "torch.ops.twinops.resize").
resize::Params make_params(const std::string& who, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                           const ResizeArgs& a) {
  if (!a.error.empty()) fail(who + ": " + a.error);  // a list argument of the wrong length
  if (out_h <= 0 || out_w <= 0) fail(who + ": output_size must be positive, got " + shape_str({out_h, out_w}));
  // The rest of the translation is shared with the TensorRT plugins.
  resize::Params p;
  const std::string err = resize::make_params(in_h, in_w, out_h, out_w, a.attrs, &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

void check_tensor(const std::string& who, int64_t dim, at::ScalarType s, const char* name) {
  if (dim != 4) fail(who + ": " + name + " must be a 4-D (N, C, H, W) tensor, got " + std::to_string(dim) + "-D");
  if (s != at::kFloat && s != at::kDouble && s != at::kHalf && s != at::kBFloat16)
    fail(who + ": " + name + " must be float32, float64, float16 or bfloat16, got " + c10::toString(s));
}

const std::string kForward = "torch.ops.twinops.resize";
const std::string kBackward = "torch.ops.twinops.resize_backward";

// Every check of the forward / backward op that needs no tensor data: the CPU and CUDA
// kernels run it through prepare_*, the fake kernels through twinops::_resize_check.
resize::Params check_forward(at::IntArrayRef in_shape, at::ScalarType dtype, at::IntArrayRef output_size,
                             const ResizeArgs& a) {
  check_tensor(kForward, static_cast<int64_t>(in_shape.size()), dtype, "input");
  if (output_size.size() != 2) fail(kForward + ": output_size must have 2 entries (H, W)");
  return make_params(kForward, in_shape[2], in_shape[3], output_size[0], output_size[1], a);
}

resize::Params check_backward(at::IntArrayRef grad_shape, at::ScalarType dtype, at::IntArrayRef input_size,
                              const ResizeArgs& a) {
  check_tensor(kBackward, static_cast<int64_t>(grad_shape.size()), dtype, "grad_output");
  if (input_size.size() != 4) fail(kBackward + ": input_size must have 4 entries (N, C, H, W)");
  if (input_size[0] != grad_shape[0] || input_size[1] != grad_shape[1])
    fail(kBackward + ": grad_output " + shape_str(grad_shape) + " does not match input_size " +
         shape_str(input_size) + " in N and C");
  return make_params(kBackward, input_size[2], input_size[3], grad_shape[2], grad_shape[3], a);
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

at::Tensor dense_like(const at::Tensor& src, at::IntArrayRef shape, bool channels_last) {
  return at::empty(shape, src.options().memory_format(channels_last ? at::MemoryFormat::ChannelsLast
                                                                    : at::MemoryFormat::Contiguous));
}

}  // namespace

Prepared prepare_forward(const at::Tensor& input, at::IntArrayRef output_size, const ResizeArgs& a) {
  Prepared r;
  r.params = check_forward(input.sizes(), input.scalar_type(), output_size, a);
  r.channels_last = input.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
  r.result = dense_like(input, {input.size(0), input.size(1), output_size[0], output_size[1]}, r.channels_last);
  r.geometry = make_geometry(input, r.result);
  return r;
}

Prepared prepare_backward(const at::Tensor& grad_output, at::IntArrayRef input_size, const ResizeArgs& a) {
  Prepared r;
  r.params = check_backward(grad_output.sizes(), grad_output.scalar_type(), input_size, a);
  r.channels_last = grad_output.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
  r.result = dense_like(grad_output, input_size, r.channels_last);
  r.geometry = make_geometry(r.result, grad_output);  // in_stride: unused; out_stride: grad_output
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

template <bool Backward>
at::Tensor run(const at::Tensor& src, at::IntArrayRef size, const ResizeArgs& args) {
  Prepared r = Backward ? prepare_backward(src, size, args) : prepare_forward(src, size, args);
  if (r.result.numel() == 0) return r.result;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, src.scalar_type(), "twinops_resize_cpu", [&] {
    using Acc = typename OpMath<scalar_t>::type;
    // The CPU backward's inverse rows keep zero-weight taps: its non-finite outputs are
    // recomputed from them (resize_nonfinite.cuh).
    const resize::Workspace L = resize::workspace_layout(r.params, sizeof(Acc), Backward, /*zero_taps=*/true);
    std::vector<char> ws(L.bytes);
    const scalar_t* s = src.const_data_ptr<scalar_t>();
    scalar_t* d = r.result.mutable_data_ptr<scalar_t>();
    if (Backward) {
      resize::backward_cpu<scalar_t>(r.params, L, r.geometry, s, d, r.channels_last, ws.data(), parallel_for);
    } else {
      resize::forward_cpu<scalar_t>(r.params, L, r.geometry, s, d, r.channels_last, ws.data(), parallel_for);
    }
  });
  return r.result;
}

at::Tensor resize_cpu(const at::Tensor& input, at::IntArrayRef output_size TWIN_RESIZE_TORCH_PARAMS) {
  return run<false>(input, output_size, TWIN_RESIZE_TORCH_ARGS);
}

at::Tensor resize_backward_cpu(const at::Tensor& grad_output, at::IntArrayRef input_size TWIN_RESIZE_TORCH_PARAMS) {
  return run<true>(grad_output, input_size, TWIN_RESIZE_TORCH_ARGS);
}

// `op` is "resize" or "resize_backward"; `shape` / `dtype` describe the op's tensor argument and
// `size` is its output_size / input_size. Raises exactly what that op would raise.
void resize_check(c10::string_view op, at::IntArrayRef shape, at::ScalarType dtype,
                  at::IntArrayRef size TWIN_RESIZE_TORCH_PARAMS) {
  if (op == "resize")
    check_forward(shape, dtype, size, TWIN_RESIZE_TORCH_ARGS);
  else if (op == "resize_backward")
    check_backward(shape, dtype, size, TWIN_RESIZE_TORCH_ARGS);
  else
    fail("torch.ops.twinops._resize_check: op must be 'resize' or 'resize_backward', got '" + std::string(op) + "'");
}

}  // namespace

// Schemas (resize's own fragment of the twinops library). The attribute arguments come from
// TWIN_RESIZE_ATTRS, e.g. "str mode, ..., float[2] scales, float[4] roi, ..., int pytorch".
TORCH_LIBRARY_FRAGMENT(twinops, m) {
  const std::string attrs = schema_args<resize::ResizeAttrs>();
  m.def(("resize(Tensor input, SymInt[2] output_size, " + attrs + ") -> Tensor").c_str());
  m.def(("resize_backward(Tensor grad_output, SymInt[4] input_size, " + attrs + ") -> Tensor").c_str());
  // The fake kernels' checks (ops/library/resize/api.py): tensor-free, so it runs under FakeTensorMode too;
  // lists unsized, so a wrong length gets the op's own message.
  m.def(("_resize_check(str op, int[] shape, ScalarType dtype, int[] size, " +
         schema_args<resize::ResizeAttrs>(/*sized=*/false) + ") -> ()")
            .c_str(),
        &resize_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("resize", &resize_cpu);
  m.impl("resize_backward", &resize_backward_cpu);
}

}  // namespace torch_op
}  // namespace resize
}  // namespace twinops
