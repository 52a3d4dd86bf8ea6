// Shared by the CPU and CUDA registrations of twinops::resize: argument checks, output
// allocation and the translation of schema arguments into the kernel's Params / Geometry.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>

#include <string>

#include "../../kernels/resize/resize_attrs.h"
#include "../op_attrs.h"

namespace twinops {
namespace resize {
namespace torch_op {

using namespace ::twinops::torch_frontend;  // the generic frontend helpers

// The kernels' attribute arguments (TWIN_TORCH_PARAMS(TWIN_RESIZE_ATTRS)) as resize::ResizeAttrs;
// a list of the wrong length is raised by prepare_* in the order of the op's checks.
using ResizeArgs = TorchAttrs<resize::ResizeAttrs>;
#define TWIN_RESIZE_TORCH_PARAMS TWIN_TORCH_PARAMS(TWIN_RESIZE_ATTRS)
#define TWIN_RESIZE_TORCH_ARGS \
  ::twinops::torch_frontend::torch_attrs<::twinops::resize::ResizeAttrs>(TWIN_TORCH_ARGS(TWIN_RESIZE_ATTRS))

// The schema's attribute arguments after (tensor, size), owned: what an autograd node keeps.
using OwnedAttrs = TWIN_TORCH_OWNED_TUPLE(TWIN_RESIZE_ATTRS);
// Calls twinops::resize (forward = true) or twinops::resize_backward through the dispatcher.
at::Tensor call_resize(bool forward, const at::Tensor& t, c10::SymIntArrayRef size, const OwnedAttrs& a);

// Validated params, the dense result tensor (NCHW, or NHWC following the source layout)
// and the geometry the launchers take.
struct Prepared {
  resize::Params params;
  at::Tensor result;
  bool channels_last;
  resize::Geometry geometry;
};

// Throw c10::Error with a message naming the argument on bad input. For CUDA, call them
// under the device guard (they allocate the result).
Prepared prepare_forward(const at::Tensor& input, at::IntArrayRef output_size, const ResizeArgs& a);
Prepared prepare_backward(const at::Tensor& grad_output, at::IntArrayRef input_size, const ResizeArgs& a);

}  // namespace torch_op
}  // namespace resize
}  // namespace twinops
