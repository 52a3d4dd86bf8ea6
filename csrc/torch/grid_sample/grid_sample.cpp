// Schema fragment of twinops::grid_sample / grid_sample_backward, argument checks and CPU
// kernels. Fake (meta) kernels and autograd live in Python next to the op (ops/library/grid_sample/api.py);
// they run the same checks through twinops::_grid_sample_check.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "../../kernels/grid_sample/grid_sample_attrs.h"
#include "../../kernels/grid_sample/grid_sample_cpu.h"
#include "../frontend_util.h"
#include "grid_sample_common.h"

namespace twinops {
namespace grid_sample {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

namespace {

const std::string kForward = "torch.ops.twinops.grid_sample";
const std::string kBackward = "torch.ops.twinops.grid_sample_backward";

// Every check of the forward that needs no tensor data; `who` starts the messages.
grid_sample::Params check_forward(const std::string& who, const Desc& input, const Desc& grid, const GridSampleArgs& a) {
  if (!a.error.empty()) fail(who + ": " + a.error);
  const auto rank = static_cast<int64_t>(input.shape.size());
  if (rank != 4 && rank != 5)
    fail(who + ": input must be a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) tensor, got " + std::to_string(rank) +
         "-D");
  if (!floating(input.dtype))
    fail(who + ": input must be float32, float64, float16 or bfloat16, got " + c10::toString(input.dtype));
  if (static_cast<int64_t>(grid.shape.size()) != rank)
    fail(who + ": grid must be a " + std::to_string(rank) + "-D tensor " +
         (rank == 4 ? "(N, H_out, W_out, 2)" : "(N, D_out, H_out, W_out, 3)") + " for a " + std::to_string(rank) +
         "-D input, got " + std::to_string(grid.shape.size()) + "-D");
  if (grid.dtype != input.dtype)
    fail(who + ": grid must have input's dtype (" + c10::toString(input.dtype) + "), got " +
         c10::toString(grid.dtype));
  if (grid.device != input.device)
    fail(who + ": grid must be on input's device (" + input.device.str() + "), got " + grid.device.str());
  grid_sample::Params p;
  const std::string err =
      grid_sample::make_params(static_cast<int>(rank), input.shape.data(), grid.shape.data(), a.attrs, &p);
  if (!err.empty()) fail(who + ": " + err);
  return p;
}

// The expected grad_output shape: (N, C, [D_out,] H_out, W_out).
std::vector<int64_t> output_shape(at::IntArrayRef input, at::IntArrayRef grid) {
  std::vector<int64_t> s{input[0], input[1]};
  for (size_t i = 1; i + 1 < grid.size(); ++i) s.push_back(grid[i]);
  return s;
}

grid_sample::Params check_backward(const Desc& grad_output, const Desc& input, const Desc& grid,
                                   const GridSampleArgs& a) {
  grid_sample::Params p = check_forward(kBackward, input, grid, a);
  if (grad_output.dtype != input.dtype)
    fail(kBackward + ": grad_output must have input's dtype (" + c10::toString(input.dtype) + "), got " +
         c10::toString(grad_output.dtype));
  if (grad_output.device != input.device)
    fail(kBackward + ": grad_output must be on input's device (" + input.device.str() + "), got " +
         grad_output.device.str());
  const std::vector<int64_t> want = output_shape(input.shape, grid.shape);
  if (grad_output.shape != at::IntArrayRef(want))
    fail(kBackward + ": grad_output must have shape " + shape_str(want) + " (N, C and grid's spatial sizes), got " +
         shape_str(grad_output.shape));
  return p;
}

// Strides of a 4-D tensor spread into Params' 5-entry layout: `grid` (N, H, W, coord) ->
// (N, 0, H, W, coord); otherwise (N, C, H, W) -> (N, C, 0, H, W).
void strides_of(const at::Tensor& t, bool grid, int64_t* out) {
  const at::IntArrayRef s = t.strides();
  if (t.dim() == 5) {
    for (int k = 0; k < 5; ++k) out[k] = s[k];
  } else if (grid) {
    out[0] = s[0], out[1] = 0, out[2] = s[1], out[3] = s[2], out[4] = s[3];
  } else {
    out[0] = s[0], out[1] = s[1], out[2] = 0, out[3] = s[2], out[4] = s[3];
  }
}

}  // namespace

GridSampleForward prepare_grid_sample(const at::Tensor& input, const at::Tensor& grid, const GridSampleArgs& a) {
  GridSampleForward r;
  r.params = check_forward(kForward, desc_of(input), desc_of(grid), a);
  r.output = at::empty(output_shape(input.sizes(), grid.sizes()), input.options());
  strides_of(input, false, r.params.input_stride);
  strides_of(grid, true, r.params.grid_stride);
  strides_of(r.output, false, r.params.output_stride);
  return r;
}

GridSampleBackward prepare_grid_sample_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                const at::Tensor& grid, const GridSampleArgs& a,
                                                std::array<bool, 2> output_mask) {
  GridSampleBackward r;
  r.params = check_backward(desc_of(grad_output), desc_of(input), desc_of(grid), a);
  r.want_input = output_mask[0];
  r.want_grid = output_mask[1];
  r.grad_input = r.want_input ? at::empty(input.sizes(), input.options()) : at::empty({0}, input.options());
  r.grad_grid = r.want_grid ? at::empty(grid.sizes(), input.options()) : at::empty({0}, input.options());
  strides_of(input, false, r.params.input_stride);
  strides_of(grid, true, r.params.grid_stride);
  strides_of(grad_output, false, r.params.output_stride);
  if (r.want_input) strides_of(r.grad_input, false, r.params.grad_input_stride);
  if (r.want_grid) strides_of(r.grad_grid, true, r.params.grad_grid_stride);
  return r;
}

namespace {

auto parallel_for = [](int64_t begin, int64_t end, int64_t grain, const auto& fn) {
  at::parallel_for(begin, end, grain, fn);
};

at::Tensor grid_sample_cpu(const at::Tensor& input, const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS) {
  GridSampleForward r = prepare_grid_sample(input, grid, TWIN_GRID_SAMPLE_TORCH_ARGS);
  if (r.output.numel() == 0) return r.output;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_grid_sample_cpu", [&] {
    grid_sample::forward_cpu<scalar_t>(r.params, input.const_data_ptr<scalar_t>(), grid.const_data_ptr<scalar_t>(),
                                       r.output.mutable_data_ptr<scalar_t>(), parallel_for);
  });
  return r.output;
}

std::tuple<at::Tensor, at::Tensor> grid_sample_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input,
                                                            const at::Tensor& grid TWIN_GRID_SAMPLE_TORCH_PARAMS,
                                                            std::array<bool, 2> output_mask) {
  GridSampleBackward r =
      prepare_grid_sample_backward(grad_output, input, grid, TWIN_GRID_SAMPLE_TORCH_ARGS, output_mask);
  const bool gi = r.want_input && r.grad_input.numel() > 0;
  const bool gg = r.want_grid && r.grad_grid.numel() > 0;
  if (!gi && !gg) return {r.grad_input, r.grad_grid};
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_grid_sample_backward_cpu",
                                  [&] {
                                    grid_sample::backward_cpu<scalar_t>(
                                        r.params, grad_output.const_data_ptr<scalar_t>(),
                                        input.const_data_ptr<scalar_t>(), grid.const_data_ptr<scalar_t>(),
                                        gi ? r.grad_input.mutable_data_ptr<scalar_t>() : nullptr,
                                        gg ? r.grad_grid.mutable_data_ptr<scalar_t>() : nullptr, parallel_for);
                                  });
  return {r.grad_input, r.grad_grid};
}

// Raises exactly what `op` ("grid_sample" or "grid_sample_backward") would raise for tensors
// of these shapes, dtypes and devices; the grad_output arguments are read by the backward only.
void grid_sample_check(c10::string_view op, at::IntArrayRef input_shape, at::ScalarType input_dtype,
                       c10::Device input_device, at::IntArrayRef grid_shape, at::ScalarType grid_dtype,
                       c10::Device grid_device, at::IntArrayRef grad_output_shape, at::ScalarType grad_output_dtype,
                       c10::Device grad_output_device TWIN_GRID_SAMPLE_TORCH_PARAMS) {
  const Desc input{input_shape, input_dtype, input_device}, grid{grid_shape, grid_dtype, grid_device};
  if (op == "grid_sample")
    check_forward(kForward, input, grid, TWIN_GRID_SAMPLE_TORCH_ARGS);
  else if (op == "grid_sample_backward")
    check_backward(Desc{grad_output_shape, grad_output_dtype, grad_output_device}, input, grid,
                   TWIN_GRID_SAMPLE_TORCH_ARGS);
  else
    fail("torch.ops.twinops._grid_sample_check: op must be 'grid_sample' or 'grid_sample_backward', got '" +
         std::string(op) + "'");
}

}  // namespace

// Schemas (grid_sample's own fragment of the twinops library). The attribute arguments come
// from TWIN_GRID_SAMPLE_ATTRS: "str mode, str padding_mode, int align_corners".
TORCH_LIBRARY_FRAGMENT(twinops, m) {
  const std::string attrs = schema_args<grid_sample::GridSampleAttrs>();
  m.def(("grid_sample(Tensor input, Tensor grid, " + attrs + ") -> Tensor").c_str());
  m.def(("grid_sample_backward(Tensor grad_output, Tensor input, Tensor grid, " + attrs +
         ", bool[2] output_mask) -> (Tensor, Tensor)")
            .c_str());
  // The fake kernels' checks: tensor-free, so it runs under FakeTensorMode too.
  m.def(("_grid_sample_check(str op, int[] input_shape, ScalarType input_dtype, Device input_device, "
         "int[] grid_shape, ScalarType grid_dtype, Device grid_device, int[] grad_output_shape, "
         "ScalarType grad_output_dtype, Device grad_output_device, " +
         attrs + ") -> ()")
            .c_str(),
        &grid_sample_check);
}

TORCH_LIBRARY_IMPL(twinops, CPU, m) {
  m.impl("grid_sample", &grid_sample_cpu);
  m.impl("grid_sample_backward", &grid_sample_backward_cpu);
}

}  // namespace torch_op
}  // namespace grid_sample
}  // namespace twinops
