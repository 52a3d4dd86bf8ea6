// The CUDA launchers of deform_conv2d (deform_conv2d.cu), for the torch frontend and the plugins:
// float, __half and __nv_bfloat16 data (float64 runs on the CPU only), every tensor contiguous
// and on the device. Every launcher returns the CUDA status.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "deform_conv2d.cuh"

namespace twinops {
namespace deform_conv2d {

// Workspace of forward_cuda for p, in bytes: room for the sampled columns (float) of as many
// images as fit 256 MiB (at least one). It grows with every dimension of p, so the value at a
// profile's largest shapes serves every shape of the profile.
size_t forward_workspace_bytes(const Params& p);

// out (N, C_out, h_out, w_out). bias may be null when !p.has_bias, mask when !p.has_mask. Each
// output is its float32 sum over k = (c, tap) (float: ascending from 0; the half types: on tensor
// cores, see deform_conv2d.cu), then the bias added. workspace: forward_workspace_bytes(p) bytes
// (cudaErrorInvalidValue when null for a non-empty output).
template <typename T>
cudaError_t forward_cuda(const Params& p, const T* input, const T* offset, const T* mask, const T* weight,
                         const T* bias, T* out, void* workspace, cudaStream_t stream);

// What backward_cuda computes: the gradients asked for.
struct Wanted {
  bool input = false, offset = false, mask = false, weight = false, bias = false;
};

// Workspace of backward_cuda for p and the gradients asked for, in bytes.
size_t backward_workspace_bytes(const Params& p, const Wanted& want);

// The gradients asked for (the others null): ginput (N, C_in, H, W), goffset (as offset), gmask
// (as mask; only with p.has_mask), gweight (as weight), gbias (C_out,; only with p.has_bias).
// Deterministic: bitwise the same run to run (no floating-point atomics; grad_input through the
// fixed-point scatter of ../fixed_scatter.cuh). workspace: backward_workspace_bytes(p, want) bytes.
template <typename T>
cudaError_t backward_cuda(const Params& p, const T* gout, const T* input, const T* offset, const T* mask,
                          const T* weight, T* ginput, T* goffset, T* gmask, T* gweight, T* gbias, void* workspace,
                          cudaStream_t stream);

}  // namespace deform_conv2d
}  // namespace twinops
