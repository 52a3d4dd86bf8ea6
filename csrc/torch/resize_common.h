// Shared by the CPU and CUDA registrations of twinops::resize: argument checks and the
// translation of schema arguments into the kernel's Params / Geometry.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>

#include <string>

#include "../kernels/resize.cuh"

namespace twinops {
namespace torch_frontend {

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

ResizeArgs pack_args(c10::string_view mode, c10::string_view coord, c10::string_view nearest, double cubic_coeff_a,
                     int64_t exclude_outside, int64_t antialias, c10::ArrayRef<double> scales,
                     c10::ArrayRef<double> roi, double extrapolation_value, int64_t pytorch);

// Builds and validates Params for a (in_h, in_w) -> (out_h, out_w) resize; throws
// c10::Error with a message naming the argument on bad input.
resize::Params make_params(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const ResizeArgs& a);

// Checks that `t` is a 4-D floating tensor; `name` is the argument name used in errors.
void check_tensor(const at::Tensor& t, const char* name);

resize::Geometry make_geometry(const at::Tensor& in, const at::Tensor& out);

// Dense output layout following the input (channels_last in, channels_last out).
bool wants_channels_last(const at::Tensor& t);

}  // namespace torch_frontend
}  // namespace twinops
