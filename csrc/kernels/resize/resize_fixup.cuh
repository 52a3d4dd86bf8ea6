// The CUDA gathers' non-finite fix-up: outputs that come out NaN or +-Inf are recomputed with
// the reference's own terms (resize_nonfinite.cuh says why the fast sums differ there).
//
// Each gather notes its stored values (one fused multiply-add per value: `bad` turns NaN once
// any is not finite, and stays so; some ring kernels note pairs, or their W results: RingNotes).
// Then, two ways:
// - The ring kernels (forward only) recompute their own non-finite outputs, thread by thread
//   (finish_ring).
// - The other gathers (staged tiles, pairs, per-element; the backward too, whose zero-weight
//   readers may belong to another block) start fixup_kernel from the device. A thread that
//   noted a value, at the end of the kernel, sets the stream's flag word, and the thread that
//   set it first starts fixup_kernel as a tail launch (CUDA dynamic parallelism,
//   cudaStreamTailLaunch): it runs once the whole gather grid has finished, before anything
//   queued after the gather on the stream. fixup_kernel clears the flag and recomputes every
//   output that is not finite. With every output finite, nothing is launched. The gather
//   still pays for being able to launch: 0.5-1.5 us per call on the H200, whatever the launch
//   code looks like; the device runtime costs that to any kernel that can launch.
// Measured alternatives (a second kernel after every gather, a programmatic dependent launch, a
// last-block ticket, a per-thread call in every gather): docs/perf/resize-notes.md,
// "Non-finite values on CUDA".
//
// The flag is one zeroed device word per (device, stream) (stream_word.h): calls on one stream
// are ordered, and the fix-up has cleared it before the next gather on that stream starts.
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_nonfinite.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

// `bad` is NaN once any noted value is not finite (v * 0 is NaN for NaN and +-Inf, else +-0).
template <typename Acc>
__device__ __forceinline__ void note(Acc& bad, Acc v) {
  bad = fma(v, Acc(0), bad);
}
template <typename Acc>
__device__ __forceinline__ bool noted(Acc bad) {
  return bad != bad;
}

// What the fix-up needs: the gather (its parameters, source, tables) and the outputs, dst
// holding planes * H * W values, NCHW or channels_last, as the gathers store them.
template <typename T, typename Acc>
struct FixupArgs {
  Gather<T, Acc> g;
  T* dst;
  int64_t C, H, W, total;
  bool channels_last;
};

// Whether input i along axis k is read with weight 0 by an output outside the range of its
// other readers (a reader the backward's inverse rows leave out: Gather.zlo / lo).
template <typename T, typename Acc>
__device__ bool zero_reader(const Gather<T, Acc>& g, int k, int64_t i) {
  return g.zlo[k] != nullptr && (g.zlo[k][i] < g.lo[k][i] || g.zhi[k][i] > g.hi[k][i]);
}

// Recomputes, with the reference's terms, every output of a.dst that is not finite; in the
// backward also those that an output reads with weight 0 only, where the reference's 0 * inf
// gives NaN and the fast sum (which has no such term) a finite value.
template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) fixup_kernel(const __grid_constant__ FixupArgs<T, Acc> a) {
  // The gather has finished (a tail launch starts after its grid): no thread sets the flag now.
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.g.fixup = 0u;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < a.total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t n, c, y, x;
    decompose<int64_t>(idx, a.C, a.H, a.W, a.channels_last, &n, &c, &y, &x);
    const bool fast_finite = finite_value(Convert<T>::template load<Acc>(a.dst[idx]));
    if (fast_finite && !zero_reader(a.g, 0, y) && !zero_reader(a.g, 1, x)) continue;
    const Acc r = reference_element<T, Acc>(a.g, n, c, y, x);
    if (!fast_finite || !finite_value(r)) a.dst[idx] = Convert<T>::template store<Acc>(r);
  }
}

// Starts the fix-up once per launch (the first thread to set the flag). Inlined in the gather's
// cold branch after its loops. Out of line it gave the ring kernels' loops back their code
// without the launch, but timed slower (docs/perf/resize-notes.md, "The device runtime, not the
// code"). `g` is the kernel's own __grid_constant__ parameter, copied only here.
template <typename T, typename Acc>
__device__ __forceinline__ void request_fixup(const Gather<T, Acc>* g, int64_t planes, int64_t C, int64_t H,
                                              int64_t W, bool channels_last, T* dst) {
  // A plain read first: once the flag is set, the other threads skip the atomic.
  if (g->fixup == nullptr || *reinterpret_cast<volatile unsigned*>(g->fixup) != 0u ||
      atomicExch(g->fixup, 1u) != 0u)
    return;
  FixupArgs<T, Acc> a;
  static_assert(sizeof(Gather<T, Acc>) % sizeof(uint32_t) == 0, "copied in words");
  const uint32_t* from = reinterpret_cast<const uint32_t*>(g);
  uint32_t* to = reinterpret_cast<uint32_t*>(&a.g);
#pragma unroll 1
  for (size_t k = 0; k < sizeof(Gather<T, Acc>) / sizeof(uint32_t); ++k) to[k] = from[k];
  a.dst = dst;
  a.C = C;
  a.H = H;
  a.W = W;
  a.total = planes * H * W;
  a.channels_last = channels_last;
  const int64_t blocks = (a.total + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 4096 ? blocks : 4096);
  fixup_kernel<T, Acc><<<grid, kThreads, 0, cudaStreamTailLaunch>>>(a);
  const cudaError_t e = cudaGetLastError();
  // A failed launch (the device runtime out of launch slots) leaves these outputs as the fast
  // sums gave them, and the flag clear for the next gather on this stream.
  if (e != cudaSuccess) atomicExch(g->fixup, 0u);
}

// The end of a gather kernel, in every thread: `bad` its notes, `g` the kernel's
// __grid_constant__ parameter.
template <typename T, typename Acc>
__device__ __forceinline__ void finish_gather(Acc bad, const Gather<T, Acc>& g, int64_t planes, int64_t C, int64_t H,
                                              int64_t W, bool channels_last, T* dst) {
  if (noted(bad)) request_fixup(&g, planes, C, H, W, channels_last, dst);
}

// The ring kernels' fix-up, without the device runtime: they gather forwards only, so an
// output's reference value depends on no other thread's output, and a thread that noted a
// non-finite store recomputes its own outputs that are not finite, re-reading them from dst
// (its own stores). Out of line, so that under the ring kernels' register bound the callee
// spills and the loops keep their code; where the call goes is per kernel, as measured
// (docs/perf/resize-notes.md, "Non-finite values on CUDA" / "The ring kernels recompute their
// own outputs"): halving_kernel calls once over its rectangle (a call per output spilled up to
// 472 bytes around it); doubling_kernel calls per output from an inlined loop (one call over
// the rectangle made its 5-row rings 14% slower at (8, 64, 256, 256)).
template <typename T, typename Acc>
__device__ __forceinline__ void fix_if_not_finite(const Gather<T, Acc>& g, int32_t C, int64_t plane, int32_t y,
                                                  int32_t x, T* q) {
  if (!finite_value(Convert<T>::template load<Acc>(*q)))
    *q = Convert<T>::template store<Acc>(reference_forward_element<T, Acc>(g, plane / C, plane % C, y, x));
}

template <typename T, typename Acc>
__device__ __noinline__ void fix_element(const Gather<T, Acc>* g, int32_t C, int64_t plane, int32_t y, int32_t x,
                                         T* q) {
  fix_if_not_finite(*g, C, plane, y, x, q);
}

// Calls fix(plane, y, x, q) on the thread's outputs: rows [y0, y1) x columns [x0, x1) of every
// plane it visited (for_planes' walk), q the output's address.
template <typename T, typename Fix>
__device__ __forceinline__ void for_own_outputs(int64_t planes, int32_t OH, int32_t OW, int32_t y0, int32_t y1,
                                                int32_t x0, int32_t x1, T* dst, Fix&& fix) {
  for (int64_t plane = blockIdx.z; plane < planes; plane += gridDim.z) {
    T* out = dst + plane * OH * OW;
    for (int32_t y = y0; y < y1; ++y)
      for (int32_t x = x0; x < x1; ++x) fix(plane, y, x, out + static_cast<int64_t>(y) * OW + x);
  }
}

template <typename T, typename Acc>
__device__ __noinline__ void fix_own_outputs(const Gather<T, Acc>* g, int32_t C, int64_t planes, int32_t OH,
                                             int32_t OW, int32_t y0, int32_t y1, int32_t x0, int32_t x1, T* dst) {
  for_own_outputs(planes, OH, OW, y0, y1, x0, x1, dst,
                  [&](int64_t plane, int32_t y, int32_t x, T* q) { fix_if_not_finite(*g, C, plane, y, x, q); });
}

// What a ring kernel notes, for finish_ring: `bad` turns NaN once a noted value is not finite.
// By default each output's sum before rounding (ring_h_sum), one fused multiply-add per value,
// as the other gathers do. kPacked: the stored 2-byte values two at a time, one packed fused
// multiply-add per pair (a store that rounds to +-Inf counts too). Which kernel notes what was
// measured (docs/perf/resize-notes.md, "What the ring kernels note"): the packed notes halve
// the notes' cost in the 8-tap halving kernels, and make the 5-row doubling kernels 14%
// slower; those note their W results instead (doubling_kernel).
template <typename T, typename Acc, bool kPacked = false>
struct RingNotes {
  Acc bad = Acc(0);
  template <int N>
  __device__ __forceinline__ void add(const Acc (&acc)[N], const Pack<T, N>&) {
#pragma unroll
    for (int e = 0; e < N; ++e) note(bad, acc[e]);
  }
  __device__ __forceinline__ bool any() const { return noted(bad); }
};

template <typename T2>
struct PackedRingNotes {
  T2 bad = T2{};  // +0 in both lanes
  template <typename Acc, typename T, int N>
  __device__ __forceinline__ void add(const Acc (&)[N], const Pack<T, N>& o) {
    static_assert(sizeof(T2) == 2 * sizeof(T) && N % 2 == 0, "pairs of 2-byte values");
#pragma unroll
    for (int e = 0; e < N; e += 2) {
      T2 pair;
      memcpy(&pair, &o.v[e], sizeof(pair));
      bad = __hfma2(pair, T2{}, bad);
    }
  }
  __device__ __forceinline__ bool any() const {
    const float both = __low2float(bad) + __high2float(bad);
    return both != both;
  }
};
template <typename Acc>
struct RingNotes<__half, Acc, true> : PackedRingNotes<__half2> {};
template <typename Acc>
struct RingNotes<__nv_bfloat16, Acc, true> : PackedRingNotes<__nv_bfloat162> {};

// Notes nothing (for a ring kernel that notes other values than its outputs).
struct NoNotes {
  template <typename A, typename P>
  __device__ __forceinline__ void add(const A&, const P&) {}
};

// Where a ring kernel's recompute goes: one call over the thread's outputs (fix_own_outputs)
// or one per output (fix_element), as measured per kernel (above).
enum class RingFix { kRectangle, kPerElement };

// The end of a ring kernel, in every thread: `notes` its notes, `g` the kernel's
// __grid_constant__ parameter, [y0, y1) x [x0, x1) its outputs in each of its planes.
template <RingFix How, typename Notes, typename T, typename Acc>
__device__ __forceinline__ void finish_ring(const Notes& notes, const Gather<T, Acc>& g, int32_t C, int64_t planes,
                                            int32_t OH, int32_t OW, int32_t y0, int32_t y1, int32_t x0, int32_t x1,
                                            T* dst) {
  if (!notes.any() || g.direction != 1) return;
  if constexpr (How == RingFix::kPerElement)
    for_own_outputs(planes, OH, OW, y0, y1, x0, x1, dst,
                    [&](int64_t plane, int32_t y, int32_t x, T* q) { fix_element(&g, C, plane, y, x, q); });
  else
    fix_own_outputs(&g, C, planes, OH, OW, y0, y1, x0, x1, dst);
}

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
