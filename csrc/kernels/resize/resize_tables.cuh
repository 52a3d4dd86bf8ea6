// The table kernels (forward tables; for the backward the ranges and the inverse tables)
// and the per-element gather (NHWC, and tiles whose window does not fit).
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <climits>
#include <cstdint>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_fixup.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

// Table kernels run one thread per entry of both axes: threads [0, len_h) take axis 0 (H),
// the next len_w threads axis 1 (W). Returns false past the end.
__device__ bool axis_thread(int64_t len_h, int64_t len_w, int* k, int64_t* d) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  *k = i < len_h ? 0 : 1;
  *d = *k == 0 ? i : i - len_h;
  return *d < (*k == 0 ? len_h : len_w);
}

// Forward tables; for the backward also the empty [lo, hi] (and [zlo, zhi]) ranges (one
// launch, no memsets).
template <typename Acc>
__global__ void build_tables_kernel(Params p, Workspace L, char* ws, bool backward) {
  int k;
  int64_t d;
  const int64_t len_h = backward ? max(p.h.out, p.h.in) : p.h.out;
  const int64_t len_w = backward ? max(p.w.out, p.w.in) : p.w.out;
  if (!axis_thread(len_h, len_w, &k, &d)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  if (d < a.out)
    resize_axis_entry<Acc>(p, a, d, L.taps[k], reinterpret_cast<int32_t*>(ws + L.first[k]),
                           reinterpret_cast<Acc*>(ws + L.weight[k]));
  if (backward && d < a.in) {
    reinterpret_cast<int32_t*>(ws + L.lo[k])[d] = INT32_MAX;
    reinterpret_cast<int32_t*>(ws + L.hi[k])[d] = -1;
    if (L.zlo[k] != 0) {
      reinterpret_cast<int32_t*>(ws + L.zlo[k])[d] = INT32_MAX;
      reinterpret_cast<int32_t*>(ws + L.zhi[k])[d] = -1;
    }
  }
}

template <typename Acc>
__global__ void scatter_ranges_kernel(Params p, Workspace L, char* ws) {
  int k;
  int64_t d;
  if (!axis_thread(p.h.out, p.w.out, &k, &d)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  const int32_t* first = reinterpret_cast<const int32_t*>(ws + L.first[k]);
  const Acc* weight = reinterpret_cast<const Acc*>(ws + L.weight[k]);
  if (first[d] < 0) return;
  int32_t* lo = reinterpret_cast<int32_t*>(ws + L.lo[k]);
  int32_t* hi = reinterpret_cast<int32_t*>(ws + L.hi[k]);
  const int32_t taps = L.taps[k];
  int32_t* zlo = L.zlo[k] != 0 ? reinterpret_cast<int32_t*>(ws + L.zlo[k]) : nullptr;
  int32_t* zhi = reinterpret_cast<int32_t*>(ws + L.zhi[k]);
  // Min/max are order independent: the ranges, and so the backward, are deterministic.
  for (int32_t t = 0; t < taps; ++t) {
    const Acc w = weight[d * taps + t];
    if (padding_weight(w)) continue;
    const int32_t idx = tap_index(first[d], t, static_cast<int32_t>(a.in));
    if (w == Acc(0) && L.zero_taps == 0) {
      // The zero-weight readers, for the fix-up (resize_fixup.cuh), apart from the others:
      // scattering every reader twice cost the bicubic-antialias 1080p 0.5x backward 1.7 us.
      if (zlo != nullptr) {
        atomicMin(zlo + idx, static_cast<int32_t>(d));
        atomicMax(zhi + idx, static_cast<int32_t>(d));
      }
      continue;
    }
    atomicMin(lo + idx, static_cast<int32_t>(d));
    atomicMax(hi + idx, static_cast<int32_t>(d));
  }
}

template <typename Acc>
__global__ void inverse_tables_kernel(Params p, Workspace L, char* ws) {
  int k;
  int64_t j;
  if (!axis_thread(p.h.in, p.w.in, &k, &j)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  inverse_entry<Acc>(reinterpret_cast<const int32_t*>(ws + L.first[k]), reinterpret_cast<const Acc*>(ws + L.weight[k]),
                     L.taps[k], static_cast<int32_t>(a.out), static_cast<int32_t>(a.in),
                     reinterpret_cast<const int32_t*>(ws + L.lo[k]), reinterpret_cast<const int32_t*>(ws + L.hi[k]), j,
                     L.inv_taps[k], reinterpret_cast<int32_t*>(ws + L.ifirst[k]),
                     reinterpret_cast<Acc*>(ws + L.iweight[k]));
}

template <int TY, int TX, typename T, typename Acc, typename I>
__global__ void __launch_bounds__(kThreads) gather_kernel(const __grid_constant__ Gather<T, Acc> g, I C, I H, I W,
                                                          I total, bool channels_last, T* __restrict__ dst) {
  Acc bad = Acc(0);  // resize_fixup.cuh
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  // The step stops at `total` rather than stepping past it, which could overflow I.
  for (I idx = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx = idx < total - stride ? idx + stride : total) {
    I n, c, y, x;
    decompose<I>(idx, C, H, W, channels_last, &n, &c, &y, &x);
    const Acc v = gather_element<TY, TX>(g, n, c, y, x);
    note(bad, v);
    dst[idx] = Convert<T>::template store<Acc>(v);
  }
  finish_gather(bad, g, total / (static_cast<int64_t>(H) * W), C, H, W, channels_last, dst);
}

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
