// CUDA registrations of twinops::resize / resize_backward (built only with CUDA).
#define TWIN_WITH_CUDA_RUNTIME 1
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <torch/library.h>

#include "resize_common.h"

namespace twinops {
namespace torch_frontend {
namespace {

// c10 storage types -> the CUDA types the kernels are instantiated for.
template <typename T>
struct CudaType {
  using type = T;
};
template <>
struct CudaType<c10::Half> {
  using type = __half;
};
template <>
struct CudaType<c10::BFloat16> {
  using type = __nv_bfloat16;
};

void check_cuda(cudaError_t e, const char* what) {
  TORCH_CHECK(e == cudaSuccess, "twinops.", what, ": CUDA error: ", cudaGetErrorString(e));
}


resize::Workspace layout_for(const resize::Params& p, const at::Tensor& like, bool backward) {
  return resize::workspace_layout(p, like.scalar_type() == at::kDouble ? sizeof(double) : sizeof(float), backward);
}

at::Tensor workspace_for(const resize::Workspace& L, const at::Tensor& like) {
  return at::empty({static_cast<int64_t>(L.bytes)}, like.options().dtype(at::kByte));
}

at::Tensor resize_cuda(const at::Tensor& input, at::IntArrayRef output_size, c10::string_view mode,
                       c10::string_view coord, c10::string_view nearest, double cubic_coeff_a, int64_t exclude_outside,
                       int64_t antialias, at::ArrayRef<double> scales, at::ArrayRef<double> roi,
                       double extrapolation_value, int64_t pytorch) {
  check_tensor(input, "input");
  TORCH_CHECK(output_size.size() == 2, "twinops.resize: output_size must have 2 entries (H, W)");
  const resize::Params p =
      make_params(input.size(2), input.size(3), output_size[0], output_size[1],
                  pack_args(mode, coord, nearest, cubic_coeff_a, exclude_outside, antialias, scales, roi,
                       extrapolation_value, pytorch));
  const c10::cuda::CUDAGuard guard(input.device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool cl = wants_channels_last(input);
  at::Tensor out = at::empty({input.size(0), input.size(1), output_size[0], output_size[1]},
                             input.options().memory_format(cl ? at::MemoryFormat::ChannelsLast
                                                              : at::MemoryFormat::Contiguous));
  if (out.numel() == 0) return out;
  const resize::Workspace L = layout_for(p, input, false);
  const at::Tensor ws = workspace_for(L, input);
  const resize::Geometry g = make_geometry(input, out);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "twinops_resize_cuda", [&] {
    using T = typename CudaType<scalar_t>::type;
    check_cuda(resize::forward_cuda<T>(p, L, g, reinterpret_cast<const T*>(input.const_data_ptr<scalar_t>()),
                                       reinterpret_cast<T*>(out.mutable_data_ptr<scalar_t>()), cl, ws.data_ptr(),
                                       stream),
               "resize");
  });
  return out;
}

at::Tensor resize_backward_cuda(const at::Tensor& grad_output, at::IntArrayRef input_size, c10::string_view mode,
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
  const c10::cuda::CUDAGuard guard(grad_output.device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const bool cl = wants_channels_last(grad_output);
  at::Tensor gin = at::empty(input_size, grad_output.options().memory_format(cl ? at::MemoryFormat::ChannelsLast
                                                                                : at::MemoryFormat::Contiguous));
  if (gin.numel() == 0) return gin;
  const resize::Workspace L = layout_for(p, grad_output, true);
  const at::Tensor ws = workspace_for(L, grad_output);
  const resize::Geometry g = make_geometry(gin, grad_output);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, grad_output.scalar_type(), "twinops_resize_bwd_cuda", [&] {
    using T = typename CudaType<scalar_t>::type;
    check_cuda(resize::backward_cuda<T>(p, L, g, reinterpret_cast<const T*>(grad_output.const_data_ptr<scalar_t>()),
                                        reinterpret_cast<T*>(gin.mutable_data_ptr<scalar_t>()), cl, ws.data_ptr(),
                                        stream),
               "resize_backward");
  });
  return gin;
}

}  // namespace

TORCH_LIBRARY_IMPL(twinops, CUDA, m) {
  m.impl("resize", &resize_cuda);
  m.impl("resize_backward", &resize_backward_cuda);
}

}  // namespace torch_frontend
}  // namespace twinops
