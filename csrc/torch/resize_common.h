// Shared by the CPU and CUDA registrations of twinops::resize: argument checks, output
// allocation and the translation of schema arguments into the kernel's Params / Geometry.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>

#include <string>

#include "../kernels/resize.cuh"

namespace twinops {
namespace torch_frontend {

// The schema's attribute arguments, in schema order (after input and output/input size).
#define TWIN_RESIZE_ATTR_PARAMS                                                                              \
  c10::string_view mode, c10::string_view coordinate_transformation_mode, c10::string_view nearest_mode,    \
      double cubic_coeff_a, int64_t exclude_outside, int64_t antialias, at::ArrayRef<double> scales,        \
      at::ArrayRef<double> roi, double extrapolation_value, int64_t pytorch
#define TWIN_RESIZE_ATTR_ARGS                                                                                \
  ResizeArgs{std::string(mode), std::string(coordinate_transformation_mode), std::string(nearest_mode),     \
             cubic_coeff_a, exclude_outside, antialias, scales, roi, extrapolation_value, pytorch}

struct ResizeArgs {
  std::string mode;
  std::string coordinate_transformation_mode;
  std::string nearest_mode;
  double cubic_coeff_a;
  int64_t exclude_outside;
  int64_t antialias;
  c10::ArrayRef<double> scales;
  c10::ArrayRef<double> roi;
  double extrapolation_value;
  int64_t pytorch;
};

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

}  // namespace torch_frontend
}  // namespace twinops
