// The CUDA launchers of roi_align (roi_align.cu), for the torch frontend and the plugins: float,
// __half and __nv_bfloat16 data (float64 runs on the CPU only); batch indices of 4-column rois as
// int32_t or int64_t (null for 5-column rois). Every launcher returns the CUDA status.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "roi_align.cuh"

namespace twinops {
namespace roi_align {

// out: (K, C, PH, PW), strided by p.out_stride (avg: blocks of one roi; max: a thread per element).
template <typename T, typename I>
cudaError_t forward_cuda(const Params& p, LevelPtrs<const T> feats, const T* rois, const I* batch, T* out,
                         cudaStream_t stream);

// Workspace of backward_cuda for level lvl: the fixed-point accumulators of its input.
size_t backward_workspace_bytes(const Params& p, int32_t lvl);

// grad of level lvl's input (strided by p.grad_input_stride; every element written), from gout
// (strided by p.out_stride). Deterministic: bitwise the same run to run (../fixed_scatter.cuh).
template <typename T, typename I>
cudaError_t backward_cuda(const Params& p, int32_t lvl, const T* gout, const T* feat, const T* rois, const I* batch,
                          T* grad, void* workspace, cudaStream_t stream);

}  // namespace roi_align
}  // namespace twinops
