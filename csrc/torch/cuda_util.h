// Shared by the ops' CUDA registrations (built only with CUDA): c10 storage types -> the CUDA
// types the kernels are instantiated for, typed data pointers, and CUDA status -> c10::Error.
#pragma once

#include <ATen/ATen.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <string>

#include "frontend_util.h"

namespace twinops {
namespace torch_frontend {

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

// t's data as the kernels' element type; S is t's c10 storage type (scalar_t of the dispatch).
template <typename S>
const typename CudaType<S>::type* cuda_ptr(const at::Tensor& t) {
  return reinterpret_cast<const typename CudaType<S>::type*>(t.const_data_ptr<S>());
}
template <typename S>
typename CudaType<S>::type* cuda_mut_ptr(at::Tensor& t) {
  return reinterpret_cast<typename CudaType<S>::type*>(t.mutable_data_ptr<S>());
}

// Throws "<who>: CUDA error: <reason>" unless status is cudaSuccess.
inline void check_cuda(cudaError_t status, const std::string& who) {
  if (status != cudaSuccess) fail(who + ": CUDA error: " + cudaGetErrorString(status));
}

}  // namespace torch_frontend
}  // namespace twinops
