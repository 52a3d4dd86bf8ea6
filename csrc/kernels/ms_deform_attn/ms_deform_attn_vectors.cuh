// The vector layouts of ms_deform_attn's CUDA kernels: a few lanes per query head, each holding
// 16 bytes of adjacent channels (Vec16: 4 float, 8 __half or __nv_bfloat16) and reading them with
// one load per tap, so a warp serves several heads. Each gives the bits of its one-warp-per-head
// twin in ms_deform_attn.cu: the same arithmetic per channel in the same order (and, for the
// backward's channel sums, the same tree). Included by ms_deform_attn.cu inside its `kernels`
// namespace, after the helpers they share (Head, sample_of, kThreads) and ../vector_io.cuh.
#pragma once

// The lanes of a group of G (a power of two, at most 32) within their warp, for __syncwarp and
// the shuffles: only they share the group's table.
template <int G>
__device__ __forceinline__ unsigned group_mask() {
  return G == 32 ? 0xffffffffu : ((1u << G) - 1u) << ((threadIdx.x & 31u) & ~(G - 1u));
}

// The forward with G lanes per query head (G a power of two, at most 32), each lane holding V
// = 16 / sizeof(T) adjacent channels read as one 16-byte vector per tap: a warp serves 32 / G
// heads. The head's samples go into shared memory as forward_heads_kernel's, filled by its G
// lanes, with each tap's offset from the head's channel 0 in 32 bits (vector_layout_fits). Per
// channel the arithmetic and its order are forward_heads_kernel's, so the bits are the same.
// Three blocks per SM: ptxas then gives it the 80 registers it needs (sm_90, CUDA 13: without
// the bound it kept 64 and spilled 16 to 40 bytes).
template <typename T, typename I, int G>
__global__ void __launch_bounds__(kThreads, 3)
    forward_vectors_kernel(const Params p, const T* __restrict__ value, const I* __restrict__ shapes,
                           const I* __restrict__ starts, const T* __restrict__ loc, const T* __restrict__ weights,
                           T* __restrict__ out, int64_t heads) {
  using Acc = typename OpMath<T>::type;
  using V = Vec16<T>;
  constexpr int kGroups = kThreads / G;                // heads per block
  constexpr int kChunk = 2 * G < 16 ? 2 * G : 16;      // samples per table fill (18 KiB a block at most)
  __shared__ int32_t tap_off[kGroups][kChunk][4];      // value offset of the tap's row, -1 outside
  __shared__ Acc tap_w[kGroups][kChunk][4];
  __shared__ Acc sample_a[kGroups][kChunk];
  const int r = static_cast<int>(threadIdx.x % G), g = static_cast<int>(threadIdx.x / G);
  const int64_t h = static_cast<int64_t>(blockIdx.x) * kGroups + g;
  if (h >= heads) return;  // h is the same for the group's lanes: they leave together
  const unsigned mask = group_mask<G>();
  const Head<T, T> head(p, h, value, out);
  const int64_t n = head.n, q = head.q, m = head.m, samples = head.samples;
  const T* v = head.v;
  T* o = head.o;
  const int64_t* vs = p.value_stride;
  const int64_t* os = p.out_stride;
  const int64_t vectors = p.d / V::kLanes;
  for (int64_t c0v = 0; c0v < vectors; c0v += G) {
    const int64_t cv = c0v + r;  // this lane's vector: channels cv * V ... cv * V + V - 1
    Acc acc[V::kLanes];
#pragma unroll
    for (int k = 0; k < V::kLanes; ++k) acc[k] = Acc(0);
    for (int64_t c0 = 0; c0 < samples; c0 += kChunk) {
      const int count = static_cast<int>(samples - c0 < kChunk ? samples - c0 : kChunk);
      for (int i = r; i < count; i += G) {
        const int64_t j = c0 + i, l = j / p.points, k = j - l * p.points;
        int64_t start = 0;
        SampleTaps<Acc> st;
        Acc a;
        const bool ok = sample_of(p, shapes, starts, loc, weights, n, q, m, l, k, &start, &st, &a);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          tap_off[g][i][t] = ok && st.row[t] >= 0 ? static_cast<int32_t>((start + st.row[t]) * vs[1]) : -1;
          tap_w[g][i][t] = st.w[t];
        }
        sample_a[g][i] = ok ? a : quiet_nan<Acc>();
      }
      __syncwarp(mask);
      if (cv < vectors) {
        const T* vc = v + cv * V::kLanes;
        for (int i = 0; i < count; ++i) {
          Acc s[V::kLanes];
#pragma unroll
          for (int k = 0; k < V::kLanes; ++k) s[k] = Acc(0);
#pragma unroll
          for (int t = 0; t < 4; ++t) {
            const int32_t off = tap_off[g][i][t];
            if (off >= 0) V::load_or_zero(vc + off, true).accumulate(s, tap_w[g][i][t]);
          }
          const Acc a = sample_a[g][i];
#pragma unroll
          for (int k = 0; k < V::kLanes; ++k) acc[k] += a * s[k];
        }
      }
      __syncwarp(mask);  // the next chunk overwrites the table
    }
    if (cv < vectors) {
#pragma unroll
      for (int k = 0; k < V::kLanes; ++k) o[(cv * V::kLanes + k) * os[2]] = store_as<T>(acc[k]);
    }
  }
}

// A sample as the vector backward's table holds it: the taps' rows of value in S (-1 outside)
// in 32 bits (vector_layout_fits), the rest as SampleRecord.
template <typename Acc>
struct VectorRecord {
  int32_t row[4];
  Acc w[4], dwx[4], dwy[4];
  Acc a, mult_x, mult_y;
  int32_t ok;
};

// sample_kernel<T, I, true> with kG = 32 / V lanes per query head (8 for float, 4 for the half
// types): lane r holds channels 32 c + r V ... 32 c + r V + V - 1 of each round c of 32 channels,
// the channels that lanes r V ... r V + V - 1 of sample_kernel hold, and sums them in its order.
// The channel sums then follow warp_sum's tree: its steps of 16 down to V channels are shuffles
// across the group's lanes, the steps below V adds within a lane. grad_value's contributions are
// the same fixed-point additions (their order does not matter). The group computes its head's
// samples kG at a time into shared memory.
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    sample_vectors_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ value,
                          const I* __restrict__ shapes, const I* __restrict__ starts, const T* __restrict__ loc,
                          const T* __restrict__ weights, int64_t heads, const int32_t* __restrict__ frac,
                          unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags,
                          T* __restrict__ gloc, T* __restrict__ gweight) {
  using Acc = typename OpMath<T>::type;
  using V = Vec16<T>;
  constexpr int kV = V::kLanes, kG = 32 / kV, kGroups = kThreads / kG, kChunk = kG;
  __shared__ VectorRecord<Acc> table[kGroups][kChunk];
  const int r = static_cast<int>(threadIdx.x % kG), g = static_cast<int>(threadIdx.x / kG);
  const int64_t h = static_cast<int64_t>(blockIdx.x) * kGroups + g;
  if (h >= heads) return;  // h is the same for the group's lanes: they leave together
  const unsigned mask = group_mask<kG>();
  const Head<T, const T> head(p, h, value, gout);
  const int64_t n = head.n, q = head.q, m = head.m, samples = head.samples;
  const T* go = head.o;
  const T* v = head.v;
  const int64_t* os = p.out_stride;
  const int64_t* vs = p.value_stride;
  const int f = acc != nullptr ? frac[n * p.m + m] : 0;
  const int64_t acc_base = (n * p.s * p.m + m) * p.d, acc_row = p.m * p.d;  // (N, S, M, D) accumulators
  int64_t l = 0, k = 0;  // the sample the loop below is at (level-major), counted without divisions
  for (int64_t c0 = 0; c0 < samples; c0 += kChunk) {
    const int count = static_cast<int>(samples - c0 < kChunk ? samples - c0 : kChunk);
    if (r < count) {
      const int64_t j = c0 + r, jl = j / p.points, jk = j - jl * p.points;
      VectorRecord<Acc>& rec = table[g][r];
      int64_t start = 0;
      SampleTaps<Acc> st;
      Acc a;
      rec.ok = sample_of(p, shapes, starts, loc, weights, n, q, m, jl, jk, &start, &st, &a) ? 1 : 0;
      rec.a = a, rec.mult_x = st.mult_x, rec.mult_y = st.mult_y;
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        rec.row[t] = st.row[t] >= 0 ? static_cast<int32_t>(start + st.row[t]) : -1;
        rec.w[t] = st.w[t], rec.dwx[t] = st.dwx[t], rec.dwy[t] = st.dwy[t];
      }
    }
    __syncwarp(mask);
    for (int i = 0; i < count; ++i, k = k + 1 == p.points ? 0 : k + 1, l += k == 0 ? 1 : 0) {
      const VectorRecord<Acc>& rec = table[g][i];
      const bool ok = rec.ok != 0;
      const Acc a = rec.a;
      Acc ga[kV], gx[kV], gy[kV];
#pragma unroll
      for (int e = 0; e < kV; ++e) ga[e] = gx[e] = gy[e] = Acc(0);
      for (int64_t d0 = static_cast<int64_t>(r) * kV; d0 < p.d; d0 += 32) {  // this lane's vector of each round
        Acc gk[kV];
#pragma unroll
        for (int e = 0; e < kV; ++e) gk[e] = load(go + (d0 + e) * os[2]);
        if (!ok) {
          const Acc nan = quiet_nan<Acc>();
#pragma unroll
          for (int e = 0; e < kV; ++e) ga[e] += gk[e] * nan, gx[e] += gk[e] * nan, gy[e] += gk[e] * nan;
          continue;
        }
        Acc s[kV], sx[kV], sy[kV];
#pragma unroll
        for (int e = 0; e < kV; ++e) s[e] = sx[e] = sy[e] = Acc(0);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          const int32_t row = rec.row[t];
          if (row < 0) continue;
          const V x = V::load_or_zero(v + static_cast<int64_t>(row) * vs[1] + d0, true);
          const Acc w = rec.w[t], dwx = rec.dwx[t], dwy = rec.dwy[t];
          const int64_t elem = acc_base + row * acc_row + d0;
#pragma unroll
          for (int e = 0; e < kV; ++e) {
            const Acc xe = DtypeConvert<T>::template load<Acc>(x.lane(e));
            s[e] += w * xe;
            sx[e] += dwx * xe;
            sy[e] += dwy * xe;
            if (acc != nullptr) fs::add(acc, flags, elem + e, static_cast<float>(gk[e] * a * w), f);
          }
        }
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          ga[e] += gk[e] * s[e];
          gx[e] += gk[e] * a * sx[e];
          gy[e] += gk[e] * a * sy[e];
        }
      }
      // warp_sum's tree over the 32 channel positions (lane r, element e) <-> r * kV + e
#pragma unroll
      for (int o = 16; o >= kV; o >>= 1) {
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          ga[e] += __shfl_down_sync(mask, ga[e], o / kV, kG);
          gx[e] += __shfl_down_sync(mask, gx[e], o / kV, kG);
          gy[e] += __shfl_down_sync(mask, gy[e], o / kV, kG);
        }
      }
#pragma unroll
      for (int o = kV / 2; o > 0; o >>= 1) {
#pragma unroll
        for (int e = 0; e < o; ++e) ga[e] += ga[e + o], gx[e] += gx[e + o], gy[e] += gy[e + o];
      }
      if (r == 0) {
        SampleTaps<Acc> st;
        st.mult_x = rec.mult_x, st.mult_y = rec.mult_y;
        store_sample_grads(p, n, q, m, l, k, ok, st, ga[0], gx[0], gy[0], gloc, gweight,
                           [](Acc x) { return store_as<T>(x); });
      }
    }
    __syncwarp(mask);  // the next chunk overwrites the table
  }
}
