// The vector layout of ms_deform_attn's CUDA forward: a few lanes per query head, each holding
// 16 bytes of adjacent channels (Vec16: 4 float, 8 __half or __nv_bfloat16) and reading them with
// one load per tap, so a warp serves several heads. It gives the bits of its one-warp-per-head
// twin in ms_deform_attn.cu: the same arithmetic per channel in the same order. Included by
// ms_deform_attn.cu inside its `kernels` namespace, after the helpers it uses (Head, forward_sample,
// kThreads) and ../vector_io.cuh.
#pragma once

// The lanes of a group of G (a power of two, at most 32) within their warp, for __syncwarp:
// only they share the group's table.
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
  const auto [n, q, m, samples, v, o] = Head<T, T>(p, h, value, out);
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
        const ForwardSample<Acc> f = forward_sample<Acc>(p, shapes, starts, loc, weights, n, q, m, c0 + i);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          tap_off[g][i][t] = f.row[t] >= 0 ? static_cast<int32_t>(f.row[t] * vs[1]) : -1;
          tap_w[g][i][t] = f.w[t];
        }
        sample_a[g][i] = f.a;
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
