// CPU loops of the grid_sample op over the per-point math of grid_sample.cuh. Header-only
// templates so the torch frontend can instantiate them for its own half types (c10::Half,
// c10::BFloat16: T must convert to and from float) without this directory depending on torch.
//
// Parallelism is handed in: parallel_for(begin, end, grain, fn) runs fn(b, e) over sub-ranges
// (at::parallel_for). Every result is bitwise the same for any thread count: the forward and
// grad_grid write each point from one task, and grad_input accumulates each channel plane in
// one task, in point order then tap order (the order the CUDA gather sums in too).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "grid_sample.cuh"

namespace twinops {
namespace grid_sample {
namespace cpu_detail {

// Grid values of point q = (n, od, oh, ow) (4-D: od = 0, gz unused).
template <int DIMS, typename T, typename Acc>
inline void read_grid(const Params& p, const T* grid, int64_t n, int64_t q, Acc* gx, Acc* gy, Acc* gz) {
  const int64_t ow = q % p.out[2], oh = (q / p.out[2]) % p.out[1], od = q / (p.out[2] * p.out[1]);
  const int64_t* s = p.grid_stride;
  const T* g = grid + n * s[0] + od * s[1] + oh * s[2] + ow * s[3];
  *gx = static_cast<Acc>(g[0]);
  *gy = static_cast<Acc>(g[s[4]]);
  *gz = DIMS == 3 ? static_cast<Acc>(g[2 * s[4]]) : Acc(0);
}

// Offset of point q in a (N, C, D_out, H_out, W_out)-strided tensor, channel 0.
inline int64_t point_offset(const int64_t* s, const Params& p, int64_t n, int64_t q) {
  const int64_t ow = q % p.out[2], oh = (q / p.out[2]) % p.out[1], od = q / (p.out[2] * p.out[1]);
  return n * s[0] + od * s[2] + oh * s[3] + ow * s[4];
}

// Per tap: the input offset (strides s: N, C, D, H, W; channel 0, batch excluded) or -1.
template <Mode M, int DIMS, typename Acc>
inline int64_t tap_offset(const PointTaps<M, DIMS, Acc>& pt, int tap, const int64_t* s) {
  using PT = PointTaps<M, DIMS, Acc>;
  if (!pt.valid(tap)) return -1;
  return pt.z.idx[PT::kz(tap)] * s[2] + pt.y.idx[PT::ky(tap)] * s[3] + int64_t(pt.x.idx[PT::kx(tap)]) * s[4];
}

constexpr int64_t kGrain = 256;  // points per task

// Runs fn(n, q, gx, gy, gz) for every output point (n, q) with its grid values, kGrain points
// per task: the loop of the forward and of grad_grid, which write each point from one task.
template <int DIMS, typename Acc, typename T, typename PF, typename Fn>
void each_point(const Params& p, const T* grid, PF& parallel_for, const Fn& fn) {
  const int64_t P = points_per_batch(p);
  parallel_for(int64_t(0), p.n * P, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / P, q = i % P;
      Acc gx, gy, gz;
      read_grid<DIMS>(p, grid, n, q, &gx, &gy, &gz);
      fn(n, q, gx, gy, gz);
    }
  });
}

template <Mode M, int DIMS, typename T, typename PF>
void forward(const Params& p, const T* input, const T* grid, T* output, PF& parallel_for) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  each_point<DIMS, Acc>(p, grid, parallel_for, [&](int64_t n, int64_t q, Acc gx, Acc gy, Acc gz) {
    PT pt;
    T* out = output + point_offset(p.output_stride, p, n, q);
    if (!point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt)) {
      for (int64_t c = 0; c < p.c; ++c) out[c * p.output_stride[1]] = static_cast<T>(std::numeric_limits<Acc>::quiet_NaN());
      return;
    }
    int64_t off[PT::T];
    Acc w[PT::T];
    for (int t = 0; t < PT::T; ++t) {
      off[t] = tap_offset(pt, t, p.input_stride);
      w[t] = pt.weight(t);
    }
    const T* in = input + n * p.input_stride[0];
    for (int64_t c = 0; c < p.c; ++c) {
      const T* ic = in + c * p.input_stride[1];
      Acc sum = Acc(0);
      for (int t = 0; t < PT::T; ++t)
        if (off[t] >= 0) sum += static_cast<Acc>(ic[off[t]]) * w[t];
      out[c * p.output_stride[1]] = static_cast<T>(sum);
    }
  });
}

template <Mode M, int DIMS, typename T, typename PF>
void grad_grid(const Params& p, const T* gout, const T* input, const T* grid, T* ggrid, PF& parallel_for) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  each_point<DIMS, Acc>(p, grid, parallel_for, [&](int64_t n, int64_t q, Acc gx, Acc gy, Acc gz) {
    // grad_grid's strides are (N, D_out, H_out, W_out, coord), without a C slot.
    const int64_t ow = q % p.out[2], oh = (q / p.out[2]) % p.out[1], od = q / (p.out[2] * p.out[1]);
    const int64_t* gs = p.grad_grid_stride;
    T* gg = ggrid + n * gs[0] + od * gs[1] + oh * gs[2] + ow * gs[3];
    const int64_t sc = p.grad_grid_stride[4];
    PT pt;
    if (!point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt)) {
      for (int k = 0; k < DIMS; ++k) gg[k * sc] = static_cast<T>(std::numeric_limits<Acc>::quiet_NaN());
      return;
    }
    if (M == kNearest) {  // piecewise constant: ATen's gradient is 0 whatever the input holds
      for (int k = 0; k < DIMS; ++k) gg[k * sc] = static_cast<T>(Acc(0));
      return;
    }
    int64_t off[PT::T];
    Acc dx[PT::T], dy[PT::T], dz[PT::T];
    for (int t = 0; t < PT::T; ++t) {
      off[t] = tap_offset(pt, t, p.input_stride);
      dx[t] = pt.dweight_x(t);
      dy[t] = pt.dweight_y(t);
      dz[t] = pt.dweight_z(t);
    }
    const T* in = input + n * p.input_stride[0];
    const T* go = gout + point_offset(p.output_stride, p, n, q);
    Acc sx = Acc(0), sy = Acc(0), sz = Acc(0);
    for (int64_t c = 0; c < p.c; ++c) {
      const T* ic = in + c * p.input_stride[1];
      Acc tx = Acc(0), ty = Acc(0), tz = Acc(0);
      for (int t = 0; t < PT::T; ++t) {
        if (off[t] < 0) continue;
        const Acc v = static_cast<Acc>(ic[off[t]]);
        tx += v * dx[t];
        ty += v * dy[t];
        if (DIMS == 3) tz += v * dz[t];
      }
      const Acc g = static_cast<Acc>(go[c * p.output_stride[1]]);
      sx += tx * g;
      sy += ty * g;
      if (DIMS == 3) sz += tz * g;
    }
    gg[0] = static_cast<T>(sx * pt.x.mult);
    gg[sc] = static_cast<T>(sy * pt.y.mult);
    if (DIMS == 3) gg[2 * sc] = static_cast<T>(sz * pt.z.mult);
  });
}

// grad_input: per batch, points in chunks; per chunk the taps of every point (parallel over
// points), then every channel plane adds its chunk's contributions (parallel over channels,
// each plane sequentially in point then tap order) into an opmath buffer.
template <Mode M, int DIMS, typename T, typename PF>
void grad_input(const Params& p, const T* gout, const T* grid, T* ginput, PF& parallel_for) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t P = points_per_batch(p);
  const int64_t E = p.in[0] * p.in[1] * p.in[2];
  constexpr int64_t kChunk = 8192;
  std::vector<Acc> acc(static_cast<size_t>(p.c * E));
  std::vector<int64_t> idx(static_cast<size_t>(kChunk * PT::T));
  std::vector<Acc> wts(static_cast<size_t>(kChunk * PT::T));
  for (int64_t n = 0; n < p.n; ++n) {
    std::fill(acc.begin(), acc.end(), Acc(0));
    for (int64_t q0 = 0; q0 < P; q0 += kChunk) {
      const int64_t len = std::min(kChunk, P - q0);
      parallel_for(int64_t(0), len, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) {
          Acc gx, gy, gz;
          read_grid<DIMS>(p, grid, n, q0 + j, &gx, &gy, &gz);
          PT pt;
          const bool ok = point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt);  // a NaN point contributes nothing
          for (int t = 0; t < PT::T; ++t) {
            const bool v = ok && pt.valid(t);
            idx[j * PT::T + t] =
                v ? (pt.z.idx[PT::kz(t)] * p.in[1] + pt.y.idx[PT::ky(t)]) * p.in[2] + pt.x.idx[PT::kx(t)] : -1;
            wts[j * PT::T + t] = v ? pt.weight(t) : Acc(0);
          }
        }
      });
      parallel_for(int64_t(0), p.c, int64_t(1), [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
          Acc* a = acc.data() + c * E;
          for (int64_t j = 0; j < len; ++j) {
            const Acc g = static_cast<Acc>(gout[point_offset(p.output_stride, p, n, q0 + j) + c * p.output_stride[1]]);
            for (int t = 0; t < PT::T; ++t) {
              const int64_t e = idx[j * PT::T + t];
              if (e >= 0) a[e] += g * wts[j * PT::T + t];
            }
          }
        }
      });
    }
    parallel_for(int64_t(0), p.c, int64_t(1), [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        const Acc* a = acc.data() + c * E;
        T* gi = ginput + n * p.grad_input_stride[0] + c * p.grad_input_stride[1];
        for (int64_t e = 0; e < E; ++e) {
          const int64_t x = e % p.in[2], y = (e / p.in[2]) % p.in[1], z = e / (p.in[2] * p.in[1]);
          gi[z * p.grad_input_stride[2] + y * p.grad_input_stride[3] + x * p.grad_input_stride[4]] =
              static_cast<T>(a[e]);
        }
      }
    });
  }
}

}  // namespace cpu_detail

// output (N, C, [D_out,] H_out, W_out; p.output_stride) = grid_sample(input, grid).
template <typename T, typename ParallelFor>
void forward_cpu(const Params& p, const T* input, const T* grid, T* output, ParallelFor&& parallel_for) {
  dispatch_mode(p, [&](auto m, auto d) {
    cpu_detail::forward<decltype(m)::value, decltype(d)::value>(p, input, grid, output, parallel_for);
  });
}

// grad_input (p.grad_input_stride) and / or grad_grid (p.grad_grid_stride); either may be null.
// grad_output has p.output_stride.
template <typename T, typename ParallelFor>
void backward_cpu(const Params& p, const T* grad_output, const T* input, const T* grid, T* grad_input, T* grad_grid,
                  ParallelFor&& parallel_for) {
  dispatch_mode(p, [&](auto m, auto d) {
    constexpr Mode M = decltype(m)::value;
    constexpr int D = decltype(d)::value;
    if (grad_grid) cpu_detail::grad_grid<M, D>(p, grad_output, input, grid, grad_grid, parallel_for);
    if (grad_input) cpu_detail::grad_input<M, D>(p, grad_output, grid, grad_input, parallel_for);
  });
}

}  // namespace grid_sample
}  // namespace twinops
