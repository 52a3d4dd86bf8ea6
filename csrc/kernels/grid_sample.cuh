// grid_sample of a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) tensor at the points of a grid
// (N, [D_out,] H_out, W_out, 2 | 3): every mode of F.grid_sample (bilinear, nearest, bicubic)
// and ONNX GridSample-20, forward and deterministic backward.
//
// A 4-D call is a 5-D one with D = D_out = 1 (and a grid of 2 coordinates), so one Params
// describes both. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../common/twinops_common.h"

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
#endif

namespace twinops {
namespace grid_sample {

enum Mode : int32_t { kLinear = 0, kNearest = 1, kCubic = 2 };  // PyTorch's GridSamplerInterpolation order
enum Padding : int32_t { kZeros = 0, kBorder = 1, kReflection = 2 };  // PyTorch's GridSamplerPadding order

struct Params {
  Mode mode = kLinear;
  Padding padding = kZeros;
  int32_t align_corners = 0;
  int32_t dims = 2;          // spatial dims: 2 (4-D input) or 3 (5-D input)
  int64_t n = 0, c = 0;
  int64_t in[3] = {1, 1, 1};   // D, H, W of the input (D = 1 when dims == 2)
  int64_t out[3] = {1, 1, 1};  // D_out, H_out, W_out (D_out = 1 when dims == 2)
  // Element strides, always 5 entries with the D entry unused (0) when dims == 2:
  int64_t input_stride[5] = {};   // N, C, D, H, W
  int64_t grid_stride[5] = {};    // N, D_out, H_out, W_out, coordinate (x, y[, z])
  int64_t output_stride[5] = {};  // N, C, D_out, H_out, W_out: the forward's output, the backward's grad_output
  int64_t grad_input_stride[5] = {};  // backward only: N, C, D, H, W
  int64_t grad_grid_stride[5] = {};   // backward only: N, D_out, H_out, W_out, coordinate
};

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
// Device workspace (bytes) backward_cuda needs for `p`; the forward needs none.
size_t backward_workspace_bytes(const Params& p);

// CUDA launchers (T = float, double, __half, __nv_bfloat16). They return the first failing
// CUDA status; launches are asynchronous on `stream`. The backward writes grad_input and/or
// grad_grid (either may be null: not computed), deterministically (bitwise the same run to run,
// no atomics on data), using `workspace` (backward_workspace_bytes(p) bytes).
template <typename T>
cudaError_t forward_cuda(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream);
template <typename T>
cudaError_t backward_cuda(const Params& p, const T* grad_output, const T* input, const T* grid, T* grad_input,
                          T* grad_grid, void* workspace, cudaStream_t stream);
#endif

}  // namespace grid_sample
}  // namespace twinops
