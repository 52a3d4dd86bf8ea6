// CPU loops of the resize op: the same tables and per-element math as the CUDA kernels.
// Header-only templates so the frontend can instantiate them for its own half types
// (c10::Half, c10::BFloat16) without this directory depending on torch.
#pragma once

#include <climits>
#include <cstdint>

#include "resize.cuh"

namespace twinops {
namespace resize {

// Builds both axis tables (and the inverse ranges when `backward`) in host memory `ws`.
template <typename Acc>
void build_tables_cpu(const Params& p, const Workspace& L, void* ws, bool backward) {
  char* b = static_cast<char*>(ws);
  const Axis* axes[2] = {&p.h, &p.w};
  for (int k = 0; k < 2; ++k) {
    auto* first = reinterpret_cast<int32_t*>(b + L.first[k]);
    auto* count = reinterpret_cast<int32_t*>(b + L.count[k]);
    auto* weight = reinterpret_cast<Acc*>(b + L.weight[k]);
    for (int64_t d = 0; d < axes[k]->out; ++d) resize_axis_entry<Acc>(p, *axes[k], d, L.taps[k], first, count, weight);
    if (!backward) continue;
    auto* lo = reinterpret_cast<int32_t*>(b + L.lo[k]);
    auto* hi = reinterpret_cast<int32_t*>(b + L.hi[k]);
    for (int64_t i = 0; i < axes[k]->in; ++i) {
      lo[i] = INT32_MAX;
      hi[i] = -1;
    }
    for (int64_t d = 0; d < axes[k]->out; ++d) invert_range_cpu(first, count, d, lo, hi);
  }
}

// `parallel_for(begin, end, grain, fn)` runs fn(b, e) over sub-ranges (at::parallel_for).
template <typename T, typename ParallelFor>
void forward_cpu(const Params& p, const Geometry& g, const T* in, T* out, bool channels_last, void* ws,
                 ParallelFor&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const Workspace L = workspace_layout(p, sizeof(Acc), false);
  build_tables_cpu<Acc>(p, L, ws, false);
  const Tables<Acc> t = tables_at<Acc>(L, ws);
  const int64_t OH = p.h.out, OW = p.w.out;
  const int64_t total = g.n * g.c * OH * OW;
  const Acc extrapolation = static_cast<Acc>(p.extrapolation_value);
  parallel_for(int64_t(0), total, int64_t(2048), [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      int64_t n, c, oy, ox;
      decompose(idx, g.c, OH, OW, channels_last, &n, &c, &oy, &ox);
      out[idx] = static_cast<T>(forward_element<T, Acc>(in, g, n, c, oy, ox, t.first[0], t.count[0], t.weight[0],
                                                        t.taps[0], t.first[1], t.count[1], t.weight[1], t.taps[1],
                                                        extrapolation));
    }
  });
}

template <typename T, typename ParallelFor>
void backward_cpu(const Params& p, const Geometry& g, const T* gout, T* gin, bool channels_last, void* ws,
                  ParallelFor&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const Workspace L = workspace_layout(p, sizeof(Acc), true);
  build_tables_cpu<Acc>(p, L, ws, true);
  const Tables<Acc> t = tables_at<Acc>(L, ws);
  const int64_t IH = p.h.in, IW = p.w.in;
  const int64_t total = g.n * g.c * IH * IW;
  parallel_for(int64_t(0), total, int64_t(2048), [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      int64_t n, c, iy, ix;
      decompose(idx, g.c, IH, IW, channels_last, &n, &c, &iy, &ix);
      gin[idx] = static_cast<T>(backward_element<T, Acc>(gout, g, n, c, iy, ix, t.first[0], t.count[0], t.weight[0],
                                                         t.taps[0], t.lo[0], t.hi[0], t.first[1], t.count[1],
                                                         t.weight[1], t.taps[1], t.lo[1], t.hi[1]));
    }
  });
}

}  // namespace resize
}  // namespace twinops
