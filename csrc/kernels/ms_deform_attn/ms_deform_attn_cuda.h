// The CUDA launchers of ms_deform_attn (ms_deform_attn.cu), for the torch frontend and the
// plugins: float, __half and __nv_bfloat16 data (float64 runs on the CPU only), int32_t or
// int64_t level tables (contiguous, on the device). Every launcher returns the CUDA status.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "ms_deform_attn.cuh"

namespace twinops {
namespace ms_deform_attn {

// How the forward maps work to threads: one thread per output element (kElements); one warp
// per query head (n, q, m) sharing its samples' taps through shared memory (kHeads); or, where
// value's channels are contiguous and its rows 16-byte aligned with offsets in 32 bits, a few
// lanes per head reading 16 bytes of channels per tap (kVectors). The default is kVectors where
// it fits and its blocks fill the device at least twice over, else kHeads (see forward_layout
// in ms_deform_attn.cu). All give the same bits. The environment variable
// TWINOPS_MS_DEFORM_ATTN_FORWARD = "elements", "heads" or "vectors" (where it fits) forces one
// (read per call).
enum ForwardLayout : int { kElements = 0, kHeads = 1, kVectors = 2 };
template <typename T>
ForwardLayout forward_layout(const Params& p, const T* value);

// out: (N, Lq, M * D), strided by p.out_stride.
template <typename T, typename I>
cudaError_t forward_cuda(const Params& p, const T* value, const I* shapes, const I* starts, const T* loc,
                         const T* weights, T* out, cudaStream_t stream);

// Where the backward gets its samples: one warp per query head whose lanes each compute them
// (kLaneSamples) or that computes each once into a shared-memory table (kSampleTable, the
// default). Both give the same bits. TWINOPS_MS_DEFORM_ATTN_BACKWARD = "lanes" or "table"
// forces one (read per call).
enum BackwardLayout : int { kLaneSamples = 0, kSampleTable = 1 };
BackwardLayout backward_layout();

// Workspace of backward_cuda: the fixed-point accumulators when grad_value is asked for, else 0.
size_t backward_workspace_bytes(const Params& p, bool grad_value);

// Whether p's grad_value strides are the contiguous (N, S, M, D) ones, which backward_cuda needs.
bool grad_value_contiguous(const Params& p);

// The gradients asked for (the others null): grad_value (contiguous (N, S, M, D)), grad_loc and
// grad_weight (strided by p's grad strides); gout strided by p.out_stride. Deterministic: bitwise
// the same run to run. workspace: backward_workspace_bytes(p, gvalue != nullptr) bytes.
template <typename T, typename I>
cudaError_t backward_cuda(const Params& p, const T* gout, const T* value, const I* shapes, const I* starts,
                          const T* loc, const T* weights, T* gvalue, T* gloc, T* gweight, void* workspace,
                          cudaStream_t stream);

}  // namespace ms_deform_attn
}  // namespace twinops
