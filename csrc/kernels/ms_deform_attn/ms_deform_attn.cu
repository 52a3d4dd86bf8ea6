// CUDA kernels of ms_deform_attn (the math is ms_deform_attn.cuh's, as the CPU loops).
//
// Forward, three layouts (forward_layout): one thread per output element (n, q, m, d), d fastest,
// so a warp's loads of one tap read consecutive channels of one value row; one warp per query
// head, its samples computed once into shared memory and its lanes over the channels; or a few
// lanes per head, each reading 16 bytes of channels per tap (ms_deform_attn_vectors.cuh).
// Backward, deterministic (one warp per query head):
// - grad_loc and grad_weight: the head's lanes over the channels, each sample's channel sum in
//   a fixed shuffle tree (no atomics);
// - grad_value: the same lanes add grad_output * weight * tap weight of their channels into a
//   64-bit fixed-point accumulator per value element (../fixed_scatter.cuh: integer addition is
//   associative, so the sum is bitwise the same whatever the schedule). The scale of a plane
//   (n, m) comes from a bound on what one element can receive: max |grad_output| over the plane
//   times max |attention weight| over it (tap weights are at most 1) times Lq * P (an element
//   lies in one level, and each (query, point) of the plane adds to it at most once). Passes:
//   the plane maxima, their fractional bits, the samples, the conversion to value's dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "../device_props.h"
#include "../dtype_convert.cuh"
#include "../fixed_scatter.cuh"
#include "../vector_io.cuh"
#include "../workspace.h"
#include "ms_deform_attn.cuh"
#include "ms_deform_attn_cuda.h"

namespace twinops {
namespace ms_deform_attn {

namespace fs = ::twinops::fixed_scatter;

namespace kernels {

constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }


// The taps of sample (n, q, m, l, k) and its weight; false for a NaN sample (its location, or
// its level not fitting in S). start: the level's first row.
template <typename T, typename I, typename Acc>
__device__ __forceinline__ bool sample_of(const Params& p, const I* shapes, const I* starts, const T* loc,
                                          const T* weights, int64_t n, int64_t q, int64_t m, int64_t l, int64_t k,
                                          int64_t* start, SampleTaps<Acc>* st, Acc* a) {
  const int64_t* ls = p.loc_stride;
  const int64_t* ws = p.weight_stride;
  *a = load(weights + n * ws[0] + q * ws[1] + m * ws[2] + l * ws[3] + k * ws[4]);
  int64_t h, w;
  if (!level_of(shapes, starts, l, p.s, &h, &w, start)) return false;
  const T* xy = loc + n * ls[0] + q * ls[1] + m * ls[2] + l * ls[3] + k * ls[4];
  sampling::AxisTaps<2, Acc> ax, ay;
  if (!location_taps<Acc>(load(xy), load(xy + ls[5]), h, w, &ax, &ay)) return false;
  st->fill(ax, ay, w);
  return true;
}

// Sample j (level-major: l = j / P, k = j % P) of head (n, q, m) as the forward's tables hold it:
// each tap's row of value in S (-1 outside, and for all four of a NaN sample), its weight, and
// the attention weight (NaN for a NaN sample).
template <typename Acc>
struct ForwardSample {
  int64_t row[4];
  Acc w[4];
  Acc a;
};

template <typename Acc, typename T, typename I>
__device__ __forceinline__ ForwardSample<Acc> forward_sample(const Params& p, const I* shapes, const I* starts,
                                                             const T* loc, const T* weights, int64_t n, int64_t q,
                                                             int64_t m, int64_t j) {
  const int64_t l = j / p.points, k = j - l * p.points;
  int64_t start = 0;
  SampleTaps<Acc> st;
  Acc a;
  const bool ok = sample_of(p, shapes, starts, loc, weights, n, q, m, l, k, &start, &st, &a);
  ForwardSample<Acc> f;
#pragma unroll
  for (int t = 0; t < 4; ++t) f.row[t] = ok && st.row[t] >= 0 ? start + st.row[t] : -1, f.w[t] = st.w[t];
  f.a = ok ? a : quiet_nan<Acc>();
  return f;
}

// Query head h = (n, q, m) (m fastest) and its rows: value's plane (n, :, m, :) and the
// (N, Lq, M * D) tensor's channels of (n, q, m), the forward's output or the backward's
// grad_output (O: T or const T).
template <typename T, typename O>
struct Head {
  int64_t n, q, m, samples;
  const T* v;
  O* o;

  __device__ __forceinline__ Head(const Params& p, int64_t h, const T* value, O* out) {
    m = h % p.m, q = (h / p.m) % p.lq, n = h / (p.m * p.lq);
    samples = p.levels * p.points;
    v = value + n * p.value_stride[0] + m * p.value_stride[2];
    o = out + n * p.out_stride[0] + q * p.out_stride[1] + m * p.d * p.out_stride[2];
  }
};

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const Params p, const T* __restrict__ value, const I* __restrict__ shapes,
                   const I* __restrict__ starts, const T* __restrict__ loc, const T* __restrict__ weights,
                   T* __restrict__ out, int64_t count) {
  using Acc = typename OpMath<T>::type;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= count) return;
  const int64_t d = e % p.d, m = (e / p.d) % p.m, q = (e / (p.d * p.m)) % p.lq, n = e / (p.d * p.m * p.lq);
  const int64_t* vs = p.value_stride;
  const T* v = value + n * vs[0] + m * vs[2] + d * vs[3];
  Acc acc = Acc(0);
  for (int64_t l = 0; l < p.levels; ++l) {
    for (int64_t k = 0; k < p.points; ++k) {
      int64_t start;
      SampleTaps<Acc> st;
      Acc a;
      Acc s = Acc(0);
      if (!sample_of(p, shapes, starts, loc, weights, n, q, m, l, k, &start, &st, &a)) {
        s = quiet_nan<Acc>();
      } else {
#pragma unroll
        for (int t = 0; t < 4; ++t)
          if (st.row[t] >= 0) s += st.w[t] * load(v + (start + st.row[t]) * vs[1]);
      }
      acc += a * s;
    }
  }
  const int64_t* os = p.out_stride;
  out[n * os[0] + q * os[1] + (m * p.d + d) * os[2]] = store_as<T>(acc);
}

// The forward with one warp per query head (n, q, m) of `heads`: the head's samples are computed
// once, 32 at a time, one per lane, into shared memory (the taps' rows of value, their weights,
// the attention weight; a NaN sample as weight NaN over no taps), then each lane sums its
// channels (d = lane, lane + 32, ...) over them in forward_kernel's order and arithmetic. Where
// forward_kernel recomputes every sample for each of the D channels, this computes it once.
constexpr int kWarps = kThreads / 32;

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    forward_heads_kernel(const Params p, const T* __restrict__ value, const I* __restrict__ shapes,
                         const I* __restrict__ starts, const T* __restrict__ loc, const T* __restrict__ weights,
                         T* __restrict__ out, int64_t heads) {
  using Acc = typename OpMath<T>::type;
  __shared__ int64_t tap_row[kWarps][32][4];  // the tap's row of value in S, -1 outside
  __shared__ Acc tap_w[kWarps][32][4];
  __shared__ Acc sample_a[kWarps][32];
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const int64_t h = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  if (h >= heads) return;  // h is the same for the whole warp: it leaves together
  const auto [n, q, m, samples, v, o] = Head<T, T>(p, h, value, out);
  const int64_t* vs = p.value_stride;
  const int64_t* os = p.out_stride;
  for (int64_t d0 = 0; d0 < p.d; d0 += 32) {
    const int64_t d = d0 + lane;
    Acc acc = Acc(0);
    for (int64_t c0 = 0; c0 < samples; c0 += 32) {
      const int64_t j = c0 + lane;
      if (j < samples) {
        const ForwardSample<Acc> f = forward_sample<Acc>(p, shapes, starts, loc, weights, n, q, m, j);
#pragma unroll
        for (int t = 0; t < 4; ++t) tap_row[warp][lane][t] = f.row[t], tap_w[warp][lane][t] = f.w[t];
        sample_a[warp][lane] = f.a;
      }
      __syncwarp();
      const int count = static_cast<int>(samples - c0 < 32 ? samples - c0 : 32);
      if (d < p.d) {
        for (int i = 0; i < count; ++i) {
          Acc s = Acc(0);
#pragma unroll
          for (int t = 0; t < 4; ++t) {
            const int64_t r = tap_row[warp][i][t];
            if (r >= 0) s += tap_w[warp][i][t] * load(v + r * vs[1] + d * vs[3]);
          }
          acc += sample_a[warp][i] * s;
        }
      }
      __syncwarp();  // the next chunk overwrites the table
    }
    if (d < p.d) o[d * os[2]] = store_as<T>(acc);
  }
}

// Byte offsets of the backward's workspace (grad_value only): an accumulator and flags per value
// element, each plane's max |grad_output| and max |weight| (float bits, fs::max_of_bits) and its
// fractional bits.
struct FixedLayout {
  size_t acc, flags, go_max, a_max, zeroed, frac, bytes;
};

FixedLayout fixed_layout(const Params& p) {
  const int64_t planes = p.n * p.m, elems = p.n * p.s * p.m * p.d;
  WorkspaceOffsets w;
  FixedLayout L{};
  L.acc = w.take(sizeof(unsigned long long) * static_cast<size_t>(elems));
  L.flags = w.take(sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(elems)));
  L.go_max = w.take(sizeof(uint32_t) * static_cast<size_t>(planes));
  L.a_max = w.take(sizeof(uint32_t) * static_cast<size_t>(planes));
  L.zeroed = w.end;  // the arrays above start at zero; frac is written whole
  L.frac = w.take(sizeof(int32_t) * static_cast<size_t>(planes));
  L.bytes = w.end;
  return L;
}

// Plane (n, m) = blockIdx.y: max |grad_output| over its (q, d) and max |weight| over its
// (q, l, p), the block's threads striding over them.
template <typename T>
__global__ void __launch_bounds__(kThreads) plane_max_kernel(const Params p, const T* __restrict__ gout,
                                                             const T* __restrict__ weights, int64_t plane0,
                                                             uint32_t* __restrict__ go_max,
                                                             uint32_t* __restrict__ a_max) {
  const int64_t plane = plane0 + blockIdx.y, n = plane / p.m, m = plane - n * p.m;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t* os = p.out_stride;
  uint32_t bits = 0;
  for (int64_t i = first; i < p.lq * p.d; i += stride) {
    const int64_t q = i / p.d, d = i - q * p.d;
    bits = max(bits, fs::abs_bits(static_cast<float>(load(gout + n * os[0] + q * os[1] + (m * p.d + d) * os[2]))));
  }
  fs::block_max_into<kThreads>(bits, go_max + plane);
  const int64_t* ws = p.weight_stride;
  const int64_t lp = p.levels * p.points;
  bits = 0;
  for (int64_t i = first; i < p.lq * lp; i += stride) {
    const int64_t q = i / lp, r = i - q * lp, l = r / p.points, k = r - l * p.points;
    bits = max(bits, fs::abs_bits(static_cast<float>(load(weights + n * ws[0] + q * ws[1] + m * ws[2] + l * ws[3] +
                                                      k * ws[4]))));
  }
  fs::block_max_into<kThreads>(bits, a_max + plane);
}

__global__ void __launch_bounds__(kThreads) frac_kernel(const uint32_t* __restrict__ go_max,
                                                        const uint32_t* __restrict__ a_max, double most,
                                                        int32_t* __restrict__ frac, int64_t planes) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < planes)
    frac[i] = fs::frac_bits(static_cast<double>(fs::max_of_bits(go_max[i])) *
                            static_cast<double>(fs::max_of_bits(a_max[i])) * most);
}

// The warp's sum of v in a fixed tree (lane 0 holds it): the same bits every run.
template <typename Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// A sample as the backward's table holds it (plain data: shared memory takes no constructors).
template <typename Acc>
struct SampleRecord {
  int64_t start;
  int64_t row[4];
  Acc w[4], dwx[4], dwy[4];
  Acc a, mult_x, mult_y;
  int32_t ok;
};

// One warp per query head (n, q, m) of `heads`, its lanes over the channels (d = lane, lane + 32,
// ...). For each sample (l, k) the lanes read their channels of the four taps (consecutive across
// the lanes), add their channels' grad_value contributions (when acc is not null; neighbouring
// addresses per warp), and keep their channels' partial sums of grad_weight and grad_loc, which
// the warp then sums in a fixed tree for lane 0 to write (when gweight / gloc are not null).
// kTable: the samples are computed once, 32 at a time, one per lane, into shared memory (as
// forward_heads_kernel's); otherwise every lane computes each sample itself (the location and
// weight loads are broadcasts). Both give the same bits.
template <typename T, typename I, bool kTable>
__global__ void __launch_bounds__(kThreads)
    sample_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ value,
                  const I* __restrict__ shapes, const I* __restrict__ starts, const T* __restrict__ loc,
                  const T* __restrict__ weights, int64_t heads, const int32_t* __restrict__ frac,
                  unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, T* __restrict__ gloc,
                  T* __restrict__ gweight) {
  using Acc = typename OpMath<T>::type;
  constexpr int kChunk = kTable ? 32 : 1;  // samples per table fill
  __shared__ SampleRecord<Acc> table[kTable ? kWarps : 1][kChunk];
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const int64_t h = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  if (h >= heads) return;  // h is the same for the whole warp: it leaves together
  const auto [n, q, m, samples, v, go] = Head<T, const T>(p, h, value, gout);
  const int64_t* os = p.out_stride;
  const int64_t* vs = p.value_stride;
  const int f = acc != nullptr ? frac[n * p.m + m] : 0;
  int64_t l = 0, k = 0;  // the sample the loop below is at (level-major), counted without divisions
  for (int64_t c0 = 0; c0 < samples; c0 += kChunk) {
    if constexpr (kTable) {
      const int64_t j = c0 + lane;
      if (j < samples) {
        const int64_t jl = j / p.points, jk = j - jl * p.points;
        SampleRecord<Acc>& r = table[warp][lane];
        int64_t start = 0;
        SampleTaps<Acc> st;
        Acc a;
        r.ok = sample_of(p, shapes, starts, loc, weights, n, q, m, jl, jk, &start, &st, &a) ? 1 : 0;
        r.start = start, r.a = a, r.mult_x = st.mult_x, r.mult_y = st.mult_y;
#pragma unroll
        for (int t = 0; t < 4; ++t) r.row[t] = st.row[t], r.w[t] = st.w[t], r.dwx[t] = st.dwx[t], r.dwy[t] = st.dwy[t];
      }
      __syncwarp();
    }
    const int count = static_cast<int>(samples - c0 < kChunk ? samples - c0 : kChunk);
    for (int i = 0; i < count; ++i, k = k + 1 == p.points ? 0 : k + 1, l += k == 0 ? 1 : 0) {
      int64_t start = 0;
      SampleTaps<Acc> st;
      Acc a;
      bool ok;
      if constexpr (kTable) {
        const SampleRecord<Acc>& r = table[warp][i];
        ok = r.ok != 0, start = r.start, a = r.a, st.mult_x = r.mult_x, st.mult_y = r.mult_y;
#pragma unroll
        for (int t = 0; t < 4; ++t) st.row[t] = r.row[t], st.w[t] = r.w[t], st.dwx[t] = r.dwx[t], st.dwy[t] = r.dwy[t];
      } else {
        ok = sample_of(p, shapes, starts, loc, weights, n, q, m, l, k, &start, &st, &a);
      }
      int64_t elem[4];  // the taps' element of channel 0 in the contiguous (N, S, M, D) accumulators
#pragma unroll
      for (int t = 0; t < 4; ++t) elem[t] = ((n * p.s + start + st.row[t]) * p.m + m) * p.d;
      Acc ga = Acc(0), gx = Acc(0), gy = Acc(0);
      for (int64_t d = lane; d < p.d; d += 32) {
        const Acc g = load(go + d * os[2]);
        if (!ok) {
          const Acc nan = quiet_nan<Acc>();
          ga += g * nan, gx += g * nan, gy += g * nan;
          continue;
        }
        Acc s = Acc(0), sx = Acc(0), sy = Acc(0);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          if (st.row[t] < 0) continue;
          const Acc x = load(v + (start + st.row[t]) * vs[1] + d * vs[3]);
          s += st.w[t] * x;
          sx += st.dwx[t] * x;
          sy += st.dwy[t] * x;
          if (acc != nullptr) fs::add(acc, flags, elem[t] + d, static_cast<float>(g * a * st.w[t]), f);
        }
        ga += g * s;
        gx += g * a * sx;
        gy += g * a * sy;
      }
      ga = warp_sum(ga), gx = warp_sum(gx), gy = warp_sum(gy);
      if (lane == 0)
        store_sample_grads(p, n, q, m, l, k, ok, st, ga, gx, gy, gloc, gweight, [](Acc x) { return store_as<T>(x); });
    }
    if constexpr (kTable) __syncwarp();  // the next chunk overwrites the table
  }
}

#include "ms_deform_attn_vectors.cuh"  // the vector layouts, on the helpers above

// Element i of the contiguous (N, S, M, D) grad_value from its accumulator, flags and plane's scale.
template <typename T>
__global__ void __launch_bounds__(kThreads) finish_kernel(const Params p, const unsigned long long* __restrict__ acc,
                                                          const uint32_t* __restrict__ flags,
                                                          const int32_t* __restrict__ frac, int64_t count,
                                                          T* __restrict__ gvalue) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t m = (i / p.d) % p.m, n = i / (p.s * p.m * p.d);
  gvalue[i] = store_as<T>(static_cast<Acc>(
      fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i), frac[n * p.m + m])));
}

// Planes per launch row range (gridDim.y), and the plane-max blocks per plane.
constexpr int64_t kMaxRows = 65535;
constexpr int64_t kPlaneMaxBlocks = 1024;

}  // namespace kernels

template <typename T>
bool vector_layout_fits(const Params& p, const T* value) {
  constexpr int64_t kLanes = Vec16<T>::kLanes, kMax32 = 2147483647;
  const int64_t* vs = p.value_stride;
  return vs[3] == 1 && p.d % kLanes == 0 && vs[0] % kLanes == 0 && vs[1] % kLanes == 0 && vs[2] % kLanes == 0 &&
         vs[0] >= 0 && vs[1] >= 0 && vs[2] >= 0 && reinterpret_cast<uintptr_t>(value) % 16 == 0 &&
         p.s <= kMax32 && (p.s == 0 || vs[1] <= kMax32 / p.s);  // every row's offset, S * stride, in int32
}

// The vector layout's lanes per head: value's 16-byte vectors per row rounded up to a power of
// two, 2 to 32.
template <typename T>
int vector_lanes(const Params& p) {
  const int64_t vectors = p.d / Vec16<T>::kLanes;
  int g = 2;
  while (g < 32 && g < vectors) g *= 2;
  return g;
}

template <typename T>
ForwardLayout forward_layout(const Params& p, const T* value) {
  const char* v = std::getenv("TWINOPS_MS_DEFORM_ATTN_FORWARD");
  if (v != nullptr && std::strcmp(v, "elements") == 0) return kElements;
  if (v != nullptr && std::strcmp(v, "heads") == 0) return kHeads;
  if (!vector_layout_fits(p, value)) return kHeads;
  if (v != nullptr && std::strcmp(v, "vectors") == 0) return kVectors;
  // The head layout: 2.1x to 2.7x the element layout at every bench shape on the H200. The
  // vector layout: 1.6x to 2.8x the head layout where its blocks fill the device twice over,
  // but, with 8 to 128 heads a block, slower where they do not (2.2x slower at 38 blocks on
  // 132 SMs, 6% at 150), on the H100 (docs/perf/ms_deform_attn-notes.md). Unknown SM count:
  // the head layout.
  DeviceProps d;
  if (current_device_props(&d) != cudaSuccess || d.sm_count <= 0) return kHeads;
  const int64_t blocks = kernels::blocks_for(p.n * p.lq * p.m * vector_lanes<T>(p));
  return blocks >= 2 * d.sm_count ? kVectors : kHeads;
}

BackwardLayout backward_layout() {
  const char* v = std::getenv("TWINOPS_MS_DEFORM_ATTN_BACKWARD");
  if (v != nullptr && std::strcmp(v, "lanes") == 0) return kLaneSamples;
  // The table: 1.1x to 1.3x the per-lane samples at every bench shape on the H200
  // (docs/perf/ms_deform_attn-notes.md).
  return kSampleTable;
}

size_t backward_workspace_bytes(const Params& p, bool grad_value) {
  return grad_value ? kernels::fixed_layout(p).bytes : 0;
}

bool grad_value_contiguous(const Params& p) {
  const int64_t* s = p.grad_value_stride;
  return s[3] == 1 && s[2] == p.d && s[1] == p.m * p.d && s[0] == p.s * p.m * p.d;
}

template <typename T, typename I>
cudaError_t forward_cuda(const Params& p, const T* value, const I* shapes, const I* starts, const T* loc,
                         const T* weights, T* out, cudaStream_t stream) {
  const int64_t count = p.n * p.lq * p.m * p.d;
  if (count == 0) return cudaSuccess;
  const int64_t heads = p.n * p.lq * p.m;
  const ForwardLayout layout = forward_layout(p, value);
  if (layout == kVectors) {
    const int g = vector_lanes<T>(p);
    const auto launch = [&](auto lanes) {
      constexpr int G = decltype(lanes)::value;
      kernels::forward_vectors_kernel<T, I, G><<<kernels::blocks_for(heads * G), kernels::kThreads, 0, stream>>>(
          p, value, shapes, starts, loc, weights, out, heads);
    };
    if (g == 2) launch(std::integral_constant<int, 2>{});
    else if (g == 4) launch(std::integral_constant<int, 4>{});
    else if (g == 8) launch(std::integral_constant<int, 8>{});
    else if (g == 16) launch(std::integral_constant<int, 16>{});
    else launch(std::integral_constant<int, 32>{});
  } else if (layout == kHeads) {
    kernels::forward_heads_kernel<T, I><<<kernels::blocks_for(heads * 32), kernels::kThreads, 0, stream>>>(
        p, value, shapes, starts, loc, weights, out, heads);
  } else {
    kernels::forward_kernel<T, I><<<kernels::blocks_for(count), kernels::kThreads, 0, stream>>>(
        p, value, shapes, starts, loc, weights, out, count);
  }
  return cudaGetLastError();
}

template <typename T, typename I>
cudaError_t backward_cuda(const Params& p, const T* gout, const T* value, const I* shapes, const I* starts,
                          const T* loc, const T* weights, T* gvalue, T* gloc, T* gweight, void* workspace,
                          cudaStream_t stream) {
  using namespace kernels;
  cudaError_t e;
  const int64_t elems = p.n * p.s * p.m * p.d, planes = p.n * p.m;
  const int64_t heads = p.n * p.lq * p.m;
  unsigned long long* acc = nullptr;
  uint32_t* flags = nullptr;
  int32_t* frac = nullptr;
  if (gvalue != nullptr) {
    if (!grad_value_contiguous(p) || workspace == nullptr) return cudaErrorInvalidValue;
    const FixedLayout L = fixed_layout(p);
    char* ws = static_cast<char*>(workspace);
    acc = reinterpret_cast<unsigned long long*>(ws + L.acc);
    flags = reinterpret_cast<uint32_t*>(ws + L.flags);
    auto* go_max = reinterpret_cast<uint32_t*>(ws + L.go_max);
    auto* a_max = reinterpret_cast<uint32_t*>(ws + L.a_max);
    frac = reinterpret_cast<int32_t*>(ws + L.frac);
    if ((e = cudaMemsetAsync(ws, 0, L.zeroed, stream)) != cudaSuccess) return e;
    const int64_t work = std::max(p.lq * p.d, p.lq * p.levels * p.points);
    const int64_t per_plane =
        std::min<int64_t>(blocks_for(work), std::max<int64_t>(1, kPlaneMaxBlocks / std::max<int64_t>(1, planes)));
    for (int64_t r0 = 0; work > 0 && r0 < planes; r0 += kMaxRows) {
      const dim3 g(static_cast<unsigned>(std::max<int64_t>(1, per_plane)),
                   static_cast<unsigned>(std::min(planes - r0, kMaxRows)));
      plane_max_kernel<T><<<g, kThreads, 0, stream>>>(p, gout, weights, r0, go_max, a_max);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    const double most = static_cast<double>(p.lq) * static_cast<double>(p.points);
    if (planes > 0) {
      frac_kernel<<<blocks_for(planes), kThreads, 0, stream>>>(go_max, a_max, most, frac, planes);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
  }
  if (heads > 0) {
    if (backward_layout() == kSampleTable) {
      sample_kernel<T, I, true><<<blocks_for(heads * 32), kThreads, 0, stream>>>(
          p, gout, value, shapes, starts, loc, weights, heads, frac, acc, flags, gloc, gweight);
    } else {
      sample_kernel<T, I, false><<<blocks_for(heads * 32), kThreads, 0, stream>>>(
          p, gout, value, shapes, starts, loc, weights, heads, frac, acc, flags, gloc, gweight);
    }
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  if (gvalue != nullptr && elems > 0) {
    finish_kernel<T><<<blocks_for(elems), kThreads, 0, stream>>>(p, acc, flags, frac, elems, gvalue);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaSuccess;
}

#define TWIN_INSTANTIATE(T, I)                                                                                    \
  template cudaError_t forward_cuda<T, I>(const Params&, const T*, const I*, const I*, const T*, const T*, T*,  \
                                          cudaStream_t);                                                        \
  template cudaError_t backward_cuda<T, I>(const Params&, const T*, const T*, const I*, const I*, const T*,     \
                                           const T*, T*, T*, T*, void*, cudaStream_t);
TWIN_INSTANTIATE(float, int32_t)
TWIN_INSTANTIATE(float, int64_t)
TWIN_INSTANTIATE(__half, int32_t)
TWIN_INSTANTIATE(__half, int64_t)
TWIN_INSTANTIATE(__nv_bfloat16, int32_t)
TWIN_INSTANTIATE(__nv_bfloat16, int64_t)
#undef TWIN_INSTANTIATE

template ForwardLayout forward_layout<float>(const Params&, const float*);
template ForwardLayout forward_layout<__half>(const Params&, const __half*);
template ForwardLayout forward_layout<__nv_bfloat16>(const Params&, const __nv_bfloat16*);

}  // namespace ms_deform_attn
}  // namespace twinops
