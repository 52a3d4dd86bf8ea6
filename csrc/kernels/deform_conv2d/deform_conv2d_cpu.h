// CPU loops of the deform_conv2d op over the per-sample math of deform_conv2d.cuh. Header-only
// templates so the torch frontend can instantiate them for its own half types (T converts to and
// from float) without this directory depending on torch. Every tensor is contiguous.
//
// Parallelism is handed in: parallel_for(begin, end, grain, fn) runs fn(b, e) over sub-ranges
// (at::parallel_for). Every result is bitwise the same for any thread count: each output element
// is summed by one task in a fixed order (the forward over k ascending from 0, then the bias, as
// the CUDA kernels do for float32).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "deform_conv2d.cuh"

namespace twinops {
namespace deform_conv2d {
namespace cpu_detail {

// The corners of sample s (its undeformed point plus its offsets).
template <typename Acc, typename T>
Corners<Acc> sample_corners(const Params& p, const T* offset, const SampleAt& s) {
  const Acc y = Acc(s.base_y) + static_cast<Acc>(offset[s.offset]);
  const Acc x = Acc(s.base_x) + static_cast<Acc>(offset[s.offset + p.positions()]);
  return corners<Acc>(y, x, p.h, p.w);
}

// The columns of image n, channels [c0, c0 + count): col[(c - c0) * taps + t][pos] (Acc).
template <typename T, typename Acc>
void columns(const Params& p, const T* input, const T* offset, const T* mask, int64_t n, int64_t c0, int64_t count,
             Acc* col) {
  const int64_t kk = p.taps(), P = p.positions(), plane = p.h * p.w;
  for (int64_t c = c0; c < c0 + count; ++c) {
    const T* in = input + (n * p.c_in + c) * plane;
    const auto read = [&](int64_t i) { return static_cast<Acc>(in[i]); };
    for (int64_t t = 0; t < kk; ++t) {
      Acc* row = col + ((c - c0) * kk + t) * P;
      for (int64_t pos = 0; pos < P; ++pos) {
        const SampleAt s = sample_at(p, n, c, t, pos);
        const Acc v = corner_value(sample_corners<Acc>(p, offset, s), read);
        row[pos] = p.has_mask ? mul_rn(static_cast<Acc>(mask[s.mask]), v) : v;
      }
    }
  }
}

}  // namespace cpu_detail

// out (N, C_out, h_out, w_out). bias may be null when !p.has_bias, mask when !p.has_mask.
template <typename T, typename PF>
void forward_cpu(const Params& p, const T* input, const T* offset, const T* mask, const T* weight, const T* bias,
                 T* out, PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const int64_t P = p.positions(), K = p.depth(), og = p.group_outputs(), cg = p.group_channels();
  parallel_for(int64_t(0), p.n * p.groups, int64_t(1), [&](int64_t begin, int64_t end) {
    std::vector<Acc> col(static_cast<size_t>(K * P)), acc(static_cast<size_t>(P));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / p.groups, g = i - n * p.groups;
      cpu_detail::columns<T, Acc>(p, input, offset, mask, n, g * cg, cg, col.data());
      for (int64_t o = g * og; o < (g + 1) * og; ++o) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        const T* wrow = weight + o * K;
        for (int64_t k = 0; k < K; ++k) {
          const Acc wk = static_cast<Acc>(wrow[k]);
          const Acc* c = col.data() + k * P;
          for (int64_t pos = 0; pos < P; ++pos) acc[pos] = fma_rn(wk, c[pos], acc[pos]);
        }
        const Acc b = p.has_bias ? static_cast<Acc>(bias[o]) : Acc(0);
        T* y = out + (n * p.c_out + o) * P;
        for (int64_t pos = 0; pos < P; ++pos) y[pos] = static_cast<T>(acc[pos] + b);
      }
    }
  });
}

// The gradients asked for (the others null): ginput (N, C_in, H, W), goffset (as offset), gmask
// (as mask; only with p.has_mask), gweight (as weight), gbias (C_out,; only with p.has_bias).
template <typename T, typename PF>
void backward_cpu(const Params& p, const T* gout, const T* input, const T* offset, const T* mask, const T* weight,
                  T* ginput, T* goffset, T* gmask, T* gweight, T* gbias, PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const int64_t P = p.positions(), K = p.depth(), og = p.group_outputs();
  const int64_t kk = p.taps(), plane = p.h * p.w, oc = p.offset_channels();
  if (ginput != nullptr || goffset != nullptr || gmask != nullptr) {
    // Per image: the columns' gradient gcol[c * taps + t][pos] = sum over o of the group of
    // weight[o, k] * gout[n, o, pos], then the samples' gradients from it.
    parallel_for(int64_t(0), p.n, int64_t(1), [&](int64_t begin, int64_t end) {
      std::vector<Acc> gcol(static_cast<size_t>(p.c_in * kk * P)), gin(static_cast<size_t>(plane));
      for (int64_t n = begin; n < end; ++n) {
        std::fill(gcol.begin(), gcol.end(), Acc(0));
        for (int64_t g = 0; g < p.groups; ++g)
          for (int64_t o = g * og; o < (g + 1) * og; ++o) {
            const T* go = gout + (n * p.c_out + o) * P;
            for (int64_t k = 0; k < K; ++k) {
              const Acc wk = static_cast<Acc>(weight[o * K + k]);
              Acc* row = gcol.data() + (g * K + k) * P;
              for (int64_t pos = 0; pos < P; ++pos) row[pos] = fma_rn(wk, static_cast<Acc>(go[pos]), row[pos]);
            }
          }
        // grad_input, one channel at a time, samples in (t, pos) order.
        if (ginput != nullptr)
          for (int64_t c = 0; c < p.c_in; ++c) {
            std::fill(gin.begin(), gin.end(), Acc(0));
            for (int64_t t = 0; t < kk; ++t)
              for (int64_t pos = 0; pos < P; ++pos) {
                const SampleAt s = sample_at(p, n, c, t, pos);
                const Corners<Acc> cs = cpu_detail::sample_corners<Acc>(p, offset, s);
                if (cs.nan || cs.outside) continue;
                Acc v = gcol[(c * kk + t) * P + pos];
                if (p.has_mask) v = mul_rn(v, static_cast<Acc>(mask[s.mask]));
                for (int q = 0; q < 4; ++q)
                  if (scatters(cs, q)) gin[cs.idx[q]] = fma_rn(cs.w[q], v, gin[cs.idx[q]]);
              }
            T* gi = ginput + (n * p.c_in + c) * plane;
            for (int64_t i = 0; i < plane; ++i) gi[i] = static_cast<T>(gin[i]);
          }
        // grad_offset and grad_mask: per (offset group, tap, pos), summed over its channels.
        if (goffset != nullptr || gmask != nullptr)
          for (int64_t g = 0; g < p.offset_groups; ++g)
            for (int64_t t = 0; t < kk; ++t)
              for (int64_t pos = 0; pos < P; ++pos) {
                const SampleAt s = sample_at(p, n, g * oc, t, pos);
                const Corners<Acc> cs = cpu_detail::sample_corners<Acc>(p, offset, s);
                const Acc m = p.has_mask ? static_cast<Acc>(mask[s.mask]) : Acc(1);
                Acc sy = Acc(0), sx = Acc(0), sm = Acc(0);
                for (int64_t c = g * oc; c < (g + 1) * oc; ++c) {
                  const T* in = input + (n * p.c_in + c) * plane;
                  const auto read = [&](int64_t i) { return static_cast<Acc>(in[i]); };
                  const Acc gc = gcol[(c * kk + t) * P + pos];
                  Acc dy, dx;
                  corner_grads(cs, read, &dy, &dx);
                  sy = fma_rn(gc, dy, sy);
                  sx = fma_rn(gc, dx, sx);
                  sm = fma_rn(gc, corner_value(cs, read), sm);
                }
                if (goffset != nullptr) {
                  goffset[s.offset] = static_cast<T>(p.has_mask ? mul_rn(sy, m) : sy);
                  goffset[s.offset + P] = static_cast<T>(p.has_mask ? mul_rn(sx, m) : sx);
                }
                if (gmask != nullptr) gmask[s.mask] = static_cast<T>(sm);
              }
      }
    });
  }
  if (gweight != nullptr) {
    // gweight[o, k] = sum over n, pos of gout[n, o, pos] * column(n, k, pos): images in order,
    // each weight row summed by one task.
    std::vector<Acc> gw(static_cast<size_t>(p.c_out * K), Acc(0));
    std::vector<Acc> col(static_cast<size_t>(p.c_in * kk * P));
    for (int64_t n = 0; n < p.n; ++n) {
      cpu_detail::columns<T, Acc>(p, input, offset, mask, n, 0, p.c_in, col.data());
      parallel_for(int64_t(0), p.c_out, int64_t(1), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const int64_t g = o / og;
          const T* go = gout + (n * p.c_out + o) * P;
          for (int64_t k = 0; k < K; ++k) {
            const Acc* c = col.data() + (g * K + k) * P;
            Acc s = gw[o * K + k];
            for (int64_t pos = 0; pos < P; ++pos) s = fma_rn(static_cast<Acc>(go[pos]), c[pos], s);
            gw[o * K + k] = s;
          }
        }
      });
    }
    for (int64_t i = 0; i < p.c_out * K; ++i) gweight[i] = static_cast<T>(gw[i]);
  }
  if (gbias != nullptr) {
    parallel_for(int64_t(0), p.c_out, int64_t(1), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        Acc s = Acc(0);
        for (int64_t n = 0; n < p.n; ++n) {
          const T* go = gout + (n * p.c_out + o) * P;
          for (int64_t pos = 0; pos < P; ++pos) s += static_cast<Acc>(go[pos]);
        }
        gbias[o] = static_cast<T>(s);
      }
    });
  }
}

}  // namespace deform_conv2d
}  // namespace twinops
