// CUDA kernels of the resize op: table builders and the separable gather (forward over the
// input, backward over grad_output with the transposed tables: deterministic, no atomics
// on data). One translation unit; the kernels are in the resize_*.cuh headers by family:
//   resize_common.cuh  device helpers (conversions, packed loads and stores, the plane walk)
//   resize_tables.cuh  table kernels and the per-element gather
//   resize_staged.cuh  staged tiles (the general NCHW gather)
//   resize_rows.cuh    one-tap, pairs, replicate and pick kernels
//   resize_rings.cuh   halving and doubling ring kernels
//   resize_launch.cuh  launchers and the routing between the families
//   resize_fixup.cuh   the non-finite fix-up the gathers start from the device
//   resize_tuning.h    the tuning constants and rules fitted to the H200
// (one unit: ptxas compiles each kernel's callees per kernel, and the routing instantiates
// every kernel, so splitting it would not build faster).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_tables.cuh"
#include "resize_staged.cuh"
#include "resize_rows.cuh"
#include "resize_rings.cuh"
#include "resize_launch.cuh"
#include "../stream_word.h"

namespace twinops {
namespace resize {

// The kernels and their launchers are in a named namespace, not an anonymous one: with the
// device runtime (-ewp) an anonymous namespace's kernels get unreadable names in profiles.
using namespace kernels;

namespace {

// The gather's fix-up flag (resize_fixup.cuh), one per stream.
template <typename T, typename Acc>
cudaError_t attach_fixup(Gather<T, Acc>& g, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  g.fixup = stream_word(stream, &e);
  return e;
}

}  // namespace

template <typename T>
cudaError_t forward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* input, T* output,
                         bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  Gather<T, Acc> g = forward_gather<T, Acc>(p, tables_at<Acc>(L, ws), input, geo.in_stride);
  if (cudaError_t e = attach_fixup(g, stream); e != cudaSuccess) return e;
  return gather(g, TableSource{&p, &L, ws}, geo.n, geo.c, p.h.out, p.w.out, channels_last, output, stream);
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* grad_output,
                          T* grad_input, bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  Gather<T, Acc> g = backward_gather<T, Acc>(p, tables_at<Acc>(L, ws), grad_output, geo.out_stride);
  if (cudaError_t e = attach_fixup(g, stream); e != cudaSuccess) return e;
  for (int k = 0; k < 2 && L.zlo[k] != 0; ++k) {  // the reader ranges the fix-up reads
    g.zlo[k] = reinterpret_cast<const int32_t*>(ws + L.zlo[k]);
    g.zhi[k] = reinterpret_cast<const int32_t*>(ws + L.zhi[k]);
    g.lo[k] = reinterpret_cast<const int32_t*>(ws + L.lo[k]);
    g.hi[k] = reinterpret_cast<const int32_t*>(ws + L.hi[k]);
  }
  // Nearest downscales by powers of two (and same-size nearest): pick_kernel, no tables.
  if (!channels_last && geo.c < INT32_MAX && narrow_offsets(g)) {
    bool launched = false;
    if (cudaError_t e = pick(g, p, geo.n, geo.c, grad_input, stream, &launched); e != cudaSuccess || launched)
      return e;
  }
  if (cudaError_t e = build_tables<Acc>(p, L, ws, true, stream); e != cudaSuccess) return e;
  return gather(g, TableSource{}, geo.n, geo.c, p.h.in, p.w.in, channels_last, grad_input, stream);
}

#define TWIN_INSTANTIATE(T)                                                                                    \
  template cudaError_t forward_cuda<T>(const Params&, const Workspace&, const Geometry&, const T*, T*, bool,   \
                                       void*, cudaStream_t);                                                   \
  template cudaError_t backward_cuda<T>(const Params&, const Workspace&, const Geometry&, const T*, T*, bool,  \
                                        void*, cudaStream_t);

TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)

#undef TWIN_INSTANTIATE
}  // namespace resize
}  // namespace twinops
