// grid_sample of a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) tensor at the points of a grid
// (N, [D_out,] H_out, W_out, 2 | 3): every mode of F.grid_sample (bilinear, nearest, bicubic)
// and ONNX GridSample-20, forward and deterministic backward.
//
// A 4-D call is a 5-D one with D = D_out = 1 (and a grid of 2 coordinates), so one Params
// describes both. Includes neither torch nor TensorRT headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <math.h>

#include <type_traits>

#include "../../common/twinops_common.h"
#include "../sampling.cuh"

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
#endif

namespace twinops {
namespace grid_sample {

// The per-point math is the shared sampling piece (../sampling.cuh: modes, padding, the taps of
// a grid value and their rules), under the names this op's code uses. A NaN point (NaN grid
// value, or an infinite one with reflection) has a NaN output in every channel, a NaN grad_grid
// and no grad_input contribution (where ATen's CPU and CUDA kernels disagree).
using namespace ::twinops::sampling;

// How the CUDA backward sums grad_input (both deterministic; csrc/kernels/grid_sample/grid_sample.cu
// and grid_sample_fixed.cu): the sorted gather of (point, tap) pairs, or the fused fixed-point
// scatter (csrc/kernels/fixed_scatter.cuh).
enum Scatter : int32_t { kSortedGather = 0, kFixedPoint = 1 };

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
  // CUDA backward only: how grad_input is summed, chosen once per call (choose_scatter) so that
  // the workspace size and the launch agree.
  Scatter scatter = kSortedGather;
};

// The taps of the point with grid values (gx, gy[, gz]). Returns false for a NaN point.
template <Mode M, int DIMS, typename Acc>
TWIN_HD bool point_taps(const Params& p, Acc gx, Acc gy, Acc gz, PointTaps<M, DIMS, Acc>* pt) {
  const bool align = p.align_corners != 0;
  bool ok = axis_taps<M, Acc>(gx, p.in[2], p.padding, align, &pt->x);
  ok = axis_taps<M, Acc>(gy, p.in[1], p.padding, align, &pt->y) && ok;
  if constexpr (DIMS == 3) {
    ok = axis_taps<M, Acc>(gz, p.in[0], p.padding, align, &pt->z) && ok;
  } else {
    pt->z.idx[0] = 0;
    pt->z.w[0] = Acc(1);
    pt->z.dw[0] = Acc(0);
    pt->z.mult = Acc(0);
  }
  return ok;
}

// Calls f(std::integral_constant<Mode, M>, std::integral_constant<int, DIMS>) for p's mode
// and spatial dims: the one place that lists the compiled combinations (cubic is 4-D only;
// make_params refuses it for 5-D). Returns false for a combination that is not compiled.
template <typename F>
bool dispatch_mode(const Params& p, F&& f) {
  using L = std::integral_constant<Mode, kLinear>;
  using Nn = std::integral_constant<Mode, kNearest>;
  using Cu = std::integral_constant<Mode, kCubic>;
  using D2 = std::integral_constant<int, 2>;
  using D3 = std::integral_constant<int, 3>;
  if (p.dims == 2) {
    if (p.mode == kLinear) return f(L{}, D2{}), true;
    if (p.mode == kNearest) return f(Nn{}, D2{}), true;
    if (p.mode == kCubic) return f(Cu{}, D2{}), true;
  } else if (p.dims == 3) {
    if (p.mode == kLinear) return f(L{}, D3{}), true;
    if (p.mode == kNearest) return f(Nn{}, D3{}), true;
  }
  return false;
}

// Output points per batch (D_out * H_out * W_out).
TWIN_HD int64_t points_per_batch(const Params& p) { return p.out[0] * p.out[1] * p.out[2]; }

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
// The grad_input design for `p` with elements of `element_bytes` bytes (grid_sample_fixed.cu):
// the environment variable TWINOPS_GRID_SAMPLE_SCATTER = "sort" or "fixed" forces one (read per
// call); unset or any other value, the measured rule of grid_sample_tuning.h (fixed_point_wins).
// float64 always takes the sorted gather (the fixed point's bound is sized for float opmath).
Scatter choose_scatter(const Params& p, int element_bytes);

// Device workspace (bytes) backward_cuda needs for `p` (p.scatter's design); the forward needs
// none, and neither does a backward that computes grad_grid only (workspace may then be null).
// The sorted gather asks CUB for its sort's scratch size, on the current device: about 24 bytes
// per (point, tap) pair plus 8 per point and 8 per input element of one sort, plus CUB's scratch
// (grid_sample.cu, layout(); a sort takes whole batches up to 2^30 pairs, or part of one
// batch). The fixed point takes 8.5 bytes per input element of every plane plus 8 per plane.
size_t backward_workspace_bytes(const Params& p);

// CUDA launchers (T = float, double, __half, __nv_bfloat16). They return the first failing
// CUDA status; launches are asynchronous on `stream`. The backward writes grad_input and/or
// grad_grid (either may be null: not computed), deterministically (bitwise the same run to run,
// whatever the schedule), using `workspace` (backward_workspace_bytes(p) bytes).
template <typename T>
cudaError_t forward_cuda(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream);
template <typename T>
cudaError_t backward_cuda(const Params& p, const T* grad_output, const T* input, const T* grid, T* grad_input,
                          T* grad_grid, void* workspace, cudaStream_t stream);
#endif

}  // namespace grid_sample
}  // namespace twinops
