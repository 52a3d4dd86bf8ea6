// CPU loops of roi_align over the per-element math of roi_align.cuh. Header-only templates so the
// torch frontend instantiates them for its own half types (T converts to and from float) without
// this directory depending on torch.
//
// parallel_for(begin, end, grain, fn) runs fn(b, e) over sub-ranges (at::parallel_for). Results
// are bitwise the same for any thread count: the forward writes each output element from one
// task; the backward runs each (batch, channel) plane of a level in one task, adding the rois of
// that batch in roi, bin, sample, tap order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "roi_align.cuh"

namespace twinops {
namespace roi_align {

// out (K, C, PH, PW) strided by p.out_stride. feats: one pointer per level; rois as p says;
// batch: the (K,) batch indices of 4-column rois (else null).
template <typename T, typename I, typename PF>
void forward_cpu(const Params& p, const T* const* feats, const T* rois, const I* batch, T* out,
                 PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const auto read_roi = [&](int64_t off) { return static_cast<Acc>(rois[off]); };
  parallel_for(int64_t(0), p.k * p.c, int64_t(1), [&](int64_t begin, int64_t end) {
    for (int64_t kc = begin; kc < end; ++kc) {
      const int64_t k = kc / p.c, c = kc % p.c;
      const Roi<Acc> r = roi_of<Acc>(p, read_roi, batch, k);
      const Level& L = p.level[r.level];
      const T* plane = feats[r.level] + (r.ok ? r.batch * L.stride[0] + c * L.stride[1] : 0);
      const auto read = [&](int64_t off) { return static_cast<Acc>(plane[off]); };
      const int64_t* os = p.out_stride;
      for (int64_t y = 0; y < p.ph; ++y)
        for (int64_t x = 0; x < p.pw; ++x)
          out[k * os[0] + c * os[1] + y * os[2] + x * os[3]] = static_cast<T>(bin_value(p, r, y, x, read));
    }
  });
}

// grad of level `lvl`'s input (strided by p.grad_input_stride), from gout (strided by
// p.out_stride). Every element is written (0 where no roi reads it).
template <typename T, typename I, typename PF>
void backward_cpu(const Params& p, int32_t lvl, const T* gout, const T* feat, const T* rois, const I* batch,
                  T* grad, PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const auto read_roi = [&](int64_t off) { return static_cast<Acc>(rois[off]); };
  const Level& L = p.level[lvl];
  // Planes of dense offsets y * W + x: the taps' offsets use the level's strides, so a dense copy
  // of the strides maps them back.
  Params q = p;
  q.level[lvl].stride[2] = L.w;
  q.level[lvl].stride[3] = 1;
  parallel_for(int64_t(0), p.n * p.c, int64_t(1), [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(L.h * L.w));
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / p.c, c = plane % p.c;
      std::fill(acc.begin(), acc.end(), Acc(0));
      const T* src = feat + n * L.stride[0] + c * L.stride[1];
      // Dense offsets back to the input's own (max mode reads the input).
      const auto read = [&](int64_t off) {
        const int64_t y = off / L.w, x = off % L.w;
        return static_cast<Acc>(src[y * L.stride[2] + x * L.stride[3]]);
      };
      for (int64_t k = 0; k < p.k; ++k) {
        const Roi<Acc> r = roi_of<Acc>(q, read_roi, batch, k);
        if (!r.ok || r.batch != n || r.level != lvl) continue;
        const int64_t* os = p.out_stride;
        for (int64_t y = 0; y < p.ph; ++y)
          for (int64_t x = 0; x < p.pw; ++x) {
            const Acc g = static_cast<Acc>(gout[k * os[0] + c * os[1] + y * os[2] + x * os[3]]);
            bin_grad(q, r, y, x, g, read, [&](int64_t off, Acc v) { acc[static_cast<size_t>(off)] += v; });
          }
      }
      const int64_t* gs = p.grad_input_stride;
      T* dst = grad + n * gs[0] + c * gs[1];
      for (int64_t y = 0; y < L.h; ++y)
        for (int64_t x = 0; x < L.w; ++x) dst[y * gs[2] + x * gs[3]] = static_cast<T>(acc[static_cast<size_t>(y * L.w + x)]);
    }
  });
}

}  // namespace roi_align
}  // namespace twinops
