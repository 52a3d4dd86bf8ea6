// CPU loops of the ms_deform_attn op over the per-sample math of ms_deform_attn.cuh. Header-only
// templates so the torch frontend can instantiate them for its own half types (T converts to and
// from float) without this directory depending on torch.
//
// Parallelism is handed in: parallel_for(begin, end, grain, fn) runs fn(b, e) over sub-ranges
// (at::parallel_for). Every result is bitwise the same for any thread count: the forward writes
// each (query, head) from one task, and the backward runs each (batch, head) plane in one task
// (grad_value of a plane is only that plane's samples' sum), in query, level, point, tap order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ms_deform_attn.cuh"

namespace twinops {
namespace ms_deform_attn {
namespace cpu_detail {

// Calls fn(l, p, ok, taps, a) for every sample of (n, q, m): its taps (when ok) and weight a.
template <typename T, typename Acc, typename Fn>
void each_sample(const Params& p, const int64_t* shapes, const int64_t* starts, const T* loc, const T* weights,
                 int64_t n, int64_t q, int64_t m, const Fn& fn) {
  const int64_t* ls = p.loc_stride;
  const int64_t* ws = p.weight_stride;
  for (int64_t l = 0; l < p.levels; ++l) {
    int64_t h, w, start;
    const bool level_ok = level_of(shapes, starts, l, p.s, &h, &w, &start);
    for (int64_t k = 0; k < p.points; ++k) {
      const T* xy = loc + n * ls[0] + q * ls[1] + m * ls[2] + l * ls[3] + k * ls[4];
      const Acc a = static_cast<Acc>(weights[n * ws[0] + q * ws[1] + m * ws[2] + l * ws[3] + k * ws[4]]);
      SampleTaps<Acc> st;
      sampling::AxisTaps<2, Acc> ax, ay;
      const bool ok =
          level_ok && location_taps<Acc>(static_cast<Acc>(xy[0]), static_cast<Acc>(xy[ls[5]]), h, w, &ax, &ay);
      if (ok) st.fill(ax, ay, w);
      fn(start, ok, st, a);
    }
  }
}

}  // namespace cpu_detail

// out (N, Lq, M * D), strided by p.out_stride. shapes: (L, 2) contiguous int64; starts: (L,).
template <typename T, typename PF>
void forward_cpu(const Params& p, const T* value, const int64_t* shapes, const int64_t* starts, const T* loc,
                 const T* weights, T* out, PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const int64_t* vs = p.value_stride;
  const int64_t* os = p.out_stride;
  parallel_for(int64_t(0), p.n * p.lq * p.m, int64_t(16), [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(p.d));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t m = i % p.m, q = (i / p.m) % p.lq, n = i / (p.m * p.lq);
      std::fill(acc.begin(), acc.end(), Acc(0));
      const T* v = value + n * vs[0] + m * vs[2];
      cpu_detail::each_sample<T, Acc>(p, shapes, starts, loc, weights, n, q, m,
                                      [&](int64_t start, bool ok, const SampleTaps<Acc>& st, Acc a) {
        for (int64_t d = 0; d < p.d; ++d) {
          Acc s = Acc(0);
          if (!ok) {
            s = quiet_nan<Acc>();
          } else {
            for (int t = 0; t < 4; ++t)
              if (st.row[t] >= 0) s += st.w[t] * static_cast<Acc>(v[(start + st.row[t]) * vs[1] + d * vs[3]]);
          }
          acc[static_cast<size_t>(d)] += a * s;
        }
      });
      T* o = out + n * os[0] + q * os[1] + m * p.d * os[2];
      for (int64_t d = 0; d < p.d; ++d) o[d * os[2]] = static_cast<T>(acc[static_cast<size_t>(d)]);
    }
  });
}

// The gradients (each null when not wanted): grad_value (N, S, M, D), grad_loc (N, Lq, M, L, P,
// 2), grad_weight (N, Lq, M, L, P), strided by p's grad strides; gout strided by p.out_stride.
// A NaN sample (NaN location, or a level that does not fit) has NaN grad_loc and grad_weight
// (D >= 1: NaN times any grad_output is NaN) and adds nothing to grad_value.
template <typename T, typename PF>
void backward_cpu(const Params& p, const T* gout, const T* value, const int64_t* shapes, const int64_t* starts,
                  const T* loc, const T* weights, T* gvalue, T* gloc, T* gweight, PF&& parallel_for) {
  using Acc = typename OpMath<T>::type;
  const int64_t* vs = p.value_stride;
  const int64_t* os = p.out_stride;
  parallel_for(int64_t(0), p.n * p.m, int64_t(1), [&](int64_t begin, int64_t end) {
    std::vector<Acc> gv(gvalue != nullptr ? static_cast<size_t>(p.s * p.d) : 0);
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / p.m, m = plane % p.m;
      std::fill(gv.begin(), gv.end(), Acc(0));
      const T* v = value + n * vs[0] + m * vs[2];
      for (int64_t q = 0; q < p.lq; ++q) {
        const T* go = gout + n * os[0] + q * os[1] + m * p.d * os[2];
        int64_t l = 0, k = 0;  // the sample each_sample visits (level-major, as it runs)
        cpu_detail::each_sample<T, Acc>(p, shapes, starts, loc, weights, n, q, m,
                                        [&](int64_t start, bool ok, const SampleTaps<Acc>& st, Acc a) {
          Acc ga = Acc(0), gx = Acc(0), gy = Acc(0);
          for (int64_t d = 0; d < p.d; ++d) {
            const Acc g = static_cast<Acc>(go[d * os[2]]);
            if (!ok) {
              ga += g * quiet_nan<Acc>();
              gx += g * quiet_nan<Acc>();
              gy += g * quiet_nan<Acc>();
              continue;
            }
            Acc s = Acc(0), sx = Acc(0), sy = Acc(0);
            for (int t = 0; t < 4; ++t) {
              if (st.row[t] < 0) continue;
              const int64_t r = start + st.row[t];
              const Acc x = static_cast<Acc>(v[r * vs[1] + d * vs[3]]);
              s += st.w[t] * x;
              sx += st.dwx[t] * x;
              sy += st.dwy[t] * x;
              if (gvalue != nullptr) gv[static_cast<size_t>(r * p.d + d)] += g * a * st.w[t];
            }
            ga += g * s;
            gx += g * a * sx;
            gy += g * a * sy;
          }
          store_sample_grads(p, n, q, m, l, k, ok, st, ga, gx, gy, gloc, gweight,
                             [](Acc x) { return static_cast<T>(x); });
          if (++k == p.points) k = 0, ++l;
        });
      }
      if (gvalue != nullptr) {
        const int64_t* s = p.grad_value_stride;
        T* g = gvalue + n * s[0] + m * s[2];
        for (int64_t r = 0; r < p.s; ++r)
          for (int64_t d = 0; d < p.d; ++d)
            g[r * s[1] + d * s[3]] = static_cast<T>(gv[static_cast<size_t>(r * p.d + d)]);
      }
    }
  });
}

}  // namespace ms_deform_attn
}  // namespace twinops
