// Helpers shared by the ops' OpCores (op_core.h): the floating-point I/O types the kernels are
// built for, the dispatch from a TensorRT DataType to the kernel's element type, and enqueue's
// logging of a CUDA status.
#pragma once

#include <NvInferRuntime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <string>

#include "plugin_base.h"

namespace twinops {
namespace trt {

// float32, float16 and (TensorRT >= 9) bfloat16: the types the kernels are instantiated for.
inline bool is_float_type(nvinfer1::DataType t) {
#if TWIN_TRT_HAS_BF16
  if (t == nvinfer1::DataType::kBF16) return true;
#endif
  return t == nvinfer1::DataType::kFLOAT || t == nvinfer1::DataType::kHALF;
}

// is_float_type's types, for messages.
constexpr const char* kFloatTypes = TWIN_TRT_HAS_BF16 ? "float32, float16 or bfloat16" : "float32 or float16";

// A DataType in messages ("DataType 3"): its value, the same in every header version.
inline std::string type_name(nvinfer1::DataType t) { return "DataType " + std::to_string(static_cast<int32_t>(t)); }

// int32 and (TensorRT >= 9) int64: the index tensors (level tables, batch indices) the kernels read.
inline bool is_index_type(nvinfer1::DataType t) {
#if TWIN_TRT_HAS_BF16
  if (t == nvinfer1::DataType::kINT64) return true;
#endif
  return t == nvinfer1::DataType::kINT32;
}

// is_index_type's types, for messages.
constexpr const char* kIndexTypes = TWIN_TRT_HAS_BF16 ? "int32 or int64" : "int32";

template <typename T>
struct TypeTag {
  using type = T;
};

// launch(TypeTag<T>{}) with T the CUDA element type of t (float, __half, __nv_bfloat16);
// cudaErrorInvalidValue for a type that is_float_type refuses.
template <class Launch>
cudaError_t with_float_type(nvinfer1::DataType t, Launch&& launch) {
  switch (t) {
    case nvinfer1::DataType::kFLOAT: return launch(TypeTag<float>{});
    case nvinfer1::DataType::kHALF: return launch(TypeTag<__half>{});
#if TWIN_TRT_HAS_BF16
    case nvinfer1::DataType::kBF16: return launch(TypeTag<__nv_bfloat16>{});
#endif
    default: return cudaErrorInvalidValue;
  }
}

// enqueue's result for shapes or pointers it cannot run: the message logged, cudaErrorInvalidValue.
inline int32_t enqueue_refused(const std::string& message) {
  log_error(message);
  return static_cast<int32_t>(cudaErrorInvalidValue);
}

// enqueue's result for a launch status, a failure logged as "<who>CUDA error <name>: <reason>".
inline int32_t enqueue_status(const std::string& who, cudaError_t e) {
  if (e != cudaSuccess) log_error(who + "CUDA error " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
  return static_cast<int32_t>(e);
}

}  // namespace trt
}  // namespace twinops
