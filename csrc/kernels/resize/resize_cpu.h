// CPU loops of the resize op: the same tables and gather as the CUDA kernels.
// Header-only templates so the frontend can instantiate them for its own half types
// (c10::Half, c10::BFloat16) without this directory depending on torch.
#pragma once

#include <climits>
#include <cstdint>

#include "resize.cuh"
#include "resize_nonfinite.cuh"

namespace twinops {
namespace resize {

// Builds both axis tables (and the inverse tables when `backward`) in host memory `ws`.
template <typename Acc>
void build_tables_cpu(const Params& p, const Workspace& L, void* ws, bool backward) {
  char* b = static_cast<char*>(ws);
  const Axis* axes[2] = {&p.h, &p.w};
  for (int k = 0; k < 2; ++k) {
    const Axis& a = *axes[k];
    auto* first = reinterpret_cast<int32_t*>(b + L.first[k]);
    auto* weight = reinterpret_cast<Acc*>(b + L.weight[k]);
    for (int64_t d = 0; d < a.out; ++d) resize_axis_entry<Acc>(p, a, d, L.taps[k], first, weight);
    if (!backward) continue;
    auto* lo = reinterpret_cast<int32_t*>(b + L.lo[k]);
    auto* hi = reinterpret_cast<int32_t*>(b + L.hi[k]);
    for (int64_t i = 0; i < a.in; ++i) {
      lo[i] = INT32_MAX;
      hi[i] = -1;
    }
    const auto in_len = static_cast<int32_t>(a.in), out_len = static_cast<int32_t>(a.out);
    for (int64_t d = 0; d < a.out; ++d)
      scatter_range_host<Acc>(first, weight, L.taps[k], in_len, d, lo, hi, L.zero_taps != 0);
    for (int64_t i = 0; i < a.in; ++i)
      inverse_entry<Acc>(first, weight, L.taps[k], out_len, in_len, lo, hi, i, L.inv_taps[k],
                         reinterpret_cast<int32_t*>(b + L.ifirst[k]), reinterpret_cast<Acc*>(b + L.iweight[k]));
  }
}

// dst (dense NCHW or NHWC, N x C x H x W) = gather over g; parallel_for(begin, end, grain, fn)
// runs fn(b, e) over sub-ranges (at::parallel_for).
template <typename T, typename Acc, typename ParallelFor>
void gather_cpu(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last, T* dst,
                ParallelFor&& parallel_for) {
  parallel_for(int64_t(0), N * C * H * W, int64_t(2048), [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      int64_t n, c, y, x;
      decompose<int64_t>(idx, C, H, W, channels_last, &n, &c, &y, &x);
      dst[idx] = Convert<T>::template store<Acc>(finish_element(g, gather_element<0, 0>(g, n, c, y, x), n, c, y, x));
    }
  });
}

// `L` = workspace_layout(p, sizeof(opmath), backward) and `ws` holds L.bytes bytes.
template <typename T, typename ParallelFor>
void forward_cpu(const Params& p, const Workspace& L, const Geometry& geo, const T* in, T* out, bool channels_last,
                 void* ws, ParallelFor&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  build_tables_cpu<Acc>(p, L, ws, false);
  const Gather<T, Acc> g = forward_gather<T, Acc>(p, tables_at<Acc>(L, ws), in, geo.in_stride);
  gather_cpu(g, geo.n, geo.c, p.h.out, p.w.out, channels_last, out, parallel_for);
}

template <typename T, typename ParallelFor>
void backward_cpu(const Params& p, const Workspace& L, const Geometry& geo, const T* gout, T* gin,
                  bool channels_last, void* ws, ParallelFor&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  build_tables_cpu<Acc>(p, L, ws, true);
  const Gather<T, Acc> g = backward_gather<T, Acc>(p, tables_at<Acc>(L, ws), gout, geo.out_stride);
  gather_cpu(g, geo.n, geo.c, p.h.in, p.w.in, channels_last, gin, parallel_for);
}

}  // namespace resize
}  // namespace twinops
