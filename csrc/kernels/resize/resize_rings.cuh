// The ring kernels: halving_kernel (2:1 downscaling of both axes) and doubling_kernel (2x
// upscaling of both axes), which keep each input row's W pass in a register ring; with the
// helpers they share (their table entries, fetched chunks, the W and H sums).
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_fixup.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

// The table entries of a ring kernel's block into shared memory: columns [bx0, bx0 + cols)
// into swx, rows [by0, by0 + rows) into swy, NW slots each. Output d's TT taps are re-indexed
// from its window's first input, d NUM / DEN - HALO (its nonzero taps fall inside NW slots:
// halving_axis, doubling_axis); entries past the output are zeros.
template <int TT, int NW, int NUM, int DEN, int HALO, typename Acc>
__device__ void ring_tables(const Params& p, int32_t OH, int32_t OW, int32_t bx0, int cols, int32_t by0, int rows,
                            Acc* swx, Acc* swy) {
  for (int e = threadIdx.x; e < cols + rows; e += blockDim.x) {
    const bool col = e < cols;
    const int32_t i = col ? e : e - cols;
    const int32_t d = (col ? bx0 : by0) + i;
    Acc* w = (col ? swx : swy) + i * NW;
    for (int k = 0; k < NW; ++k) w[k] = Acc(0);
    if (d < (col ? OW : OH)) {
      int32_t first = 0;
      Acc t[TT];
      tile_entry<Acc>(p, !col, d, TT, &first, t);
      for (int k = 0; k < TT; ++k)
        if (t[k] != Acc(0)) w[first + k - (d * NUM / DEN - HALO)] = t[k];
    }
  }
}

// Calls row(r, buf[...], buf[...]) for r in [begin, end): the current row's buffer (fetched
// A rows before) and the one to fetch row r + A into, which row r - 1 read last. Unrolled by
// A + 1, so that every buffer is a fixed set of registers.
template <int A, typename Buf, typename Row>
__device__ __forceinline__ void rotate_rows(int32_t begin, int32_t end, Buf (&buf)[A + 1], Row&& row) {
  int32_t r = begin;
  for (; r + A < end; r += A + 1)
#pragma unroll
    for (int j = 0; j <= A; ++j) row(r + j, buf[j], buf[(j + A) % (A + 1)]);
#pragma unroll
  for (int j = 0; j < A; ++j)
    if (r + j < end) row(r + j, buf[j], buf[(j + A) % (A + 1)]);
}

// N elements of T held as 32-bit words: the ring kernels' fetched chunks of 2-byte elements
// where they have halo chunks. Kept as words until each element is converted, so that the
// halo's zeros are whole words: held as 2-byte elements, the zeroing compiled to a byte
// permute per element. Chunks without a halo, and float32's, keep Pack: as words they were
// no faster (docs/perf/resize-notes.md, "Ring kernels" / "Halo chunks as 32-bit words").
template <typename T, int N>
struct Words {
  static_assert(sizeof(T) == 2 && N % 2 == 0, "2-byte elements, two per word");
  uint32_t w[N * sizeof(T) / 4];
};

// A fetched chunk's element type and length, and whether it is held as words.
template <typename Chunk>
struct ChunkTraits;
template <typename T, int N>
struct ChunkTraits<Pack<T, N>> {
  using Elem = T;
  static constexpr int kLen = N;
  static constexpr bool kWords = false;
};
template <typename T, int N>
struct ChunkTraits<Words<T, N>> {
  using Elem = T;
  static constexpr int kLen = N;
  static constexpr bool kWords = true;
};

// Element i of a fetched chunk, converted to Acc.
template <typename Acc, typename T, int N>
__device__ __forceinline__ Acc chunk_elem(const Pack<T, N>& c, int i) {
  return Convert<T>::template load<Acc>(c.v[i]);
}
template <typename Acc, typename T, int N>
__device__ __forceinline__ Acc chunk_elem(const Words<T, N>& c, int i) {
  const uint32_t word = c.w[i / 2];
  const unsigned short bits = static_cast<unsigned short>(i % 2 ? word >> 16 : word & 0xffffu);
  T v;
  memcpy(&v, &bits, sizeof(T));
  return Convert<T>::template load<Acc>(v);
}

// The chunk at q (a 16-, 8- or 4-byte vector, aligned so), or zeros where `ok` is false (q
// is then not read): zero words, or (Pack) zero elements.
template <typename Chunk>
__device__ __forceinline__ Chunk load_or_zero(const void* q, bool ok) {
  using Vec = RawLoad<sizeof(Chunk)>;
  static_assert(sizeof(Vec) == sizeof(Chunk), "16, 8 or 4 bytes");
  Chunk c;
  if constexpr (ChunkTraits<Chunk>::kWords) {
    Vec raw{};
    if (ok) raw = __ldg(reinterpret_cast<const Vec*>(q));
    memcpy(&c, &raw, sizeof(c));
  } else {
    using T = typename ChunkTraits<Chunk>::Elem;
#pragma unroll
    for (int i = 0; i < ChunkTraits<Chunk>::kLen; ++i) c.v[i] = Convert<T>::template store<float>(0.0f);
    if (ok) {
      const Vec raw = __ldg(reinterpret_cast<const Vec*>(q));
      memcpy(&c, &raw, sizeof(c));
    }
  }
  return c;
}

// A lane's chunks of one input row: its CW columns in ch[1], the CW columns each side in
// ch[0] and ch[2] (the halo; zeros where `left` / `right` is false: past the input's edges).
template <typename Chunk, typename T>
__device__ __forceinline__ void ring_fetch(const T* row, bool left, bool right, Chunk (&ch)[3]) {
  constexpr int CW = ChunkTraits<Chunk>::kLen;
  ch[0] = load_or_zero<Chunk>(row - CW, left);
  ch[1] = load_or_zero<Chunk>(row, true);
  ch[2] = load_or_zero<Chunk>(row + CW, right);
}

// The W pass of a fetched row into m[NO]: output e's NT taps start at column
// e NUM / DEN - HALO of ch[1] (wx re-indexed so, see ring_tables). Zeros where the row is
// outside the input (`inside` false: its rows were clamped when fetched, their weights are
// zero), so that no value outside a window reaches an output.
template <int NUM, int DEN, int HALO, int NO, int NT, typename Chunk, typename Acc>
__device__ __forceinline__ void ring_w_sum(const Acc (&wx)[NO][NT], const Chunk (&ch)[3], bool inside, Acc* m) {
  constexpr int CW = ChunkTraits<Chunk>::kLen;
#pragma unroll
  for (int e = 0; e < NO; ++e) {
    Acc v = Acc(0);
#pragma unroll
    for (int k = 0; k < NT; ++k) {
      const int at = CW + e * NUM / DEN - HALO + k;  // into the three chunks
      v += wx[e][k] * chunk_elem<Acc>(ch[at / CW], at % CW);
    }
    m[e] = inside ? v : Acc(0);
  }
}

// The H pass of a ring kernel's output row: sum over the NT rows of the ring (W results) with
// the row's weights wy, rounded to T. Notes the outputs in `notes` (resize_fixup.cuh).
template <typename T, int NT, int NO, typename Acc, typename Notes>
__device__ __forceinline__ Pack<T, NO> ring_h_sum(const Acc (&wy)[NT], const Acc (&mid)[NT][NO], Notes& notes) {
  Pack<T, NO> o;
  Acc acc[NO];
#pragma unroll
  for (int e = 0; e < NO; ++e) {
    acc[e] = Acc(0);
#pragma unroll
    for (int k = 0; k < NT; ++k) acc[e] += wy[k] * mid[k][e];
    o.v[e] = Convert<T>::template store<Acc>(acc[e]);
  }
  notes.add(acc, o);
  return o;
}

// Exact 2:1 downscaling of both axes with TT-tap windows centred on the input pairs (see
// halving_axis: output d's nonzero taps lie in [2 d - h, 2 d - h + TT), h = TT / 2 - 1), NCHW
// with 16-byte aligned rows. The block first writes its columns' and rows' table entries
// into shared memory, re-indexed from 2 d - h (so every output's taps are at the same
// offsets from its pair; clamped edge taps land where they are, taps outside the input
// read zeros). A warp then owns 32 K adjacent outputs (K = G / 2 per lane: one 16-byte load
// of G input columns per row, plus the neighbouring loads for the h halo columns each side,
// which the neighbouring lanes read too: L1 hits) and R consecutive output rows. Input rows
// are resampled along W once each: output row y needs the W results of input rows
// 2 y - h .. 2 y - h + TT - 1, of which the first TT - 2 are the previous row's last, kept in
// registers. The sums are gather_element's (W then H), in the same order away from the edges.
template <int TT, typename T, typename Acc>
__global__ void __launch_bounds__(HalvingBlock<TT, T>::kThreads, HalvingBlock<TT, T>::kMinBlocks)
    halving_kernel(const __grid_constant__ Gather<T, Acc> g, Params p, int32_t C, int32_t OH, int32_t OW,
                   int64_t planes, int32_t R, T* __restrict__ dst) {
  constexpr int G = kPairLoad<T>, K = G / 2, HALO = TT / 2 - 1, kCols = 32 * K;
  constexpr int kWarps = HalvingBlock<TT, T>::kThreads / 32;
  static_assert(HALO <= G, "the halo columns are one 16-byte chunk each side");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* swx = reinterpret_cast<Acc*>(smem_raw);  // [kCols][TT]
  Acc* swy = swx + kCols * TT;                  // [kWarps R][TT]
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int32_t bx0 = blockIdx.x * kCols, by0 = blockIdx.y * kWarps * R;
  ring_tables<TT, TT, 2, 1, HALO>(p, OH, OW, bx0, kCols, by0, kWarps * R, swx, swy);
  __syncthreads();
  const int32_t x0 = bx0 + lane * K;
  const int32_t y_begin = by0 + warp * R, y_end = min(y_begin + R, OH);
  if (x0 >= OW || y_begin >= OH) return;  // OW is a multiple of K; no barrier follows
  Acc wx[K][TT];
#pragma unroll
  for (int e = 0; e < K; ++e) load_taps<TT>(swx + (lane * K + e) * TT, wx[e]);
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  const bool left_ok = 2 * x0 - G >= 0, right_ok = 2 * x0 + 2 * G <= g.src_w;
  const int64_t plane_size = static_cast<int64_t>(OH) * OW;
  // One input row's G columns with the halo chunks each side (words for 2-byte elements with
  // a halo, see Words).
  using Chunks = std::conditional_t<(HALO > 0 && sizeof(T) == 2), Words<T, G>, Pack<T, G>>[3];
  // Input row r, clamped into the plane (see ring_w_sum).
  auto fetch = [&](const T* src, int32_t r, Chunks& ch) {
    ring_fetch(src + static_cast<int32_t>(min(max(r, 0), g.src_h - 1)) * row_stride, HALO > 0 && left_ok,
               HALO > 0 && right_ok, ch);
  };
  auto w_sum = [&](const Chunks& ch, int32_t r, Acc* m) {
    ring_w_sum<2, 1, HALO>(wx, ch, r >= 0 && r < g.src_h, m);
  };
  constexpr int A = HalvingBlock<TT, T>::kAhead;  // rows fetched ahead
  RingNotes<T, Acc, sizeof(T) == 2> notes;  // resize_fixup.cuh
  for_planes(g, C, planes, [&](const T* plane_src, int64_t plane) {
    const T* src = plane_src + 2 * x0;
    T* out = dst + plane * plane_size + x0;
    Acc mid[TT][K];
    int32_t y = y_begin;
    Chunks buf[A + 1][2];  // each output row's two new input rows, fetched A rows ahead
#pragma unroll
    for (int k = 0; k < TT - 2; k += 2) {
      fetch(src, 2 * y - HALO + k, buf[0][0]);
      fetch(src, 2 * y - HALO + k + 1, buf[0][1]);
      w_sum(buf[0][0], 2 * y - HALO + k, mid[k]);
      w_sum(buf[0][1], 2 * y - HALO + k + 1, mid[k + 1]);
    }
#pragma unroll
    for (int j = 0; j < A; ++j) {
      fetch(src, 2 * (y + j) - HALO + TT - 2, buf[j][0]);
      fetch(src, 2 * (y + j) - HALO + TT - 1, buf[j][1]);
    }
    // Output row oy from its two new input rows `cur`, while row oy + A's are fetched into
    // `ahead` (past the warp's last rows they re-read rows of the plane, clamped: L2 hits). The
    // loop below rotates the A + 1 buffers, so that no fetched chunk is copied.
    auto row = [&](int32_t oy, Chunks (&cur)[2], Chunks (&ahead)[2]) {
      fetch(src, 2 * (oy + A) - HALO + TT - 2, ahead[0]);
      fetch(src, 2 * (oy + A) - HALO + TT - 1, ahead[1]);
      w_sum(cur[0], 2 * oy - HALO + TT - 2, mid[TT - 2]);
      w_sum(cur[1], 2 * oy - HALO + TT - 1, mid[TT - 1]);
      Acc wy[TT];
      load_taps<TT>(swy + (oy - by0) * TT, wy);
      const Pack<T, K> o = ring_h_sum<T>(wy, mid, notes);
      uint2 raw;
      memcpy(&raw, &o, sizeof(raw));
      __stcs(reinterpret_cast<uint2*>(out + static_cast<int64_t>(oy) * OW), raw);
#pragma unroll
      for (int k = 0; k < TT - 2; ++k)
#pragma unroll
        for (int e = 0; e < K; ++e) mid[k][e] = mid[k + 2][e];
    };
    rotate_rows<A>(y, y_end, buf, row);
  });
  finish_ring<RingFix::kRectangle>(notes, g, C, planes, OH, OW, y_begin, y_end, x0, x0 + K, dst);
}

// Exact 2x upscaling of both axes with every output's window around its input (see
// doubling_axis: output d's nonzero taps lie in [d / 2 - h, d / 2 - h + NW), h = NW / 2),
// NCHW with aligned rows (launch_gather routes 2-byte elements here). As halving_kernel: the
// block writes its columns' and rows' table entries (TT wide) into shared memory re-indexed
// from d / 2 - h; a lane owns 4 input columns (one 8-byte load per row for 2-byte elements,
// plus the neighbouring loads for the halo) and their 8 output columns; a warp R consecutive
// input rows, each the source of an output row pair. Every input row is resampled along W
// once (a register ring of the NW rows an output pair reads), then each output row of the
// pair along H: gather_element's sums, in the same order away from the edges.
template <int TT, int NW, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, kRingMinBlocks)
    doubling_kernel(const __grid_constant__ Gather<T, Acc> g, Params p, int32_t C, int32_t OH, int32_t OW,
                    int64_t planes, int32_t R, T* __restrict__ dst) {
  constexpr int IC = kDoublingCols, OC = 2 * IC, HALO = NW / 2, kCols = 32 * OC, kWarps = kThreads / 32;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* swx = reinterpret_cast<Acc*>(smem_raw);  // [kCols][NW]
  Acc* swy = swx + kCols * NW;                  // [2 kWarps R][NW]
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int32_t bx0 = blockIdx.x * kCols, by0 = blockIdx.y * 2 * kWarps * R;  // output column / row
  ring_tables<TT, NW, 1, 2, HALO>(p, OH, OW, bx0, kCols, by0, 2 * kWarps * R, swx, swy);
  __syncthreads();
  const int32_t c0 = (blockIdx.x * 32 + lane) * IC;  // first input column
  const int32_t i_begin = by0 / 2 + warp * R, i_end = min(i_begin + R, g.src_h);
  if (c0 >= g.src_w || i_begin >= g.src_h) return;  // src_w is a multiple of IC; no barrier follows
  Acc wx[OC][NW];
#pragma unroll
  for (int e = 0; e < OC; ++e)
#pragma unroll
    for (int k = 0; k < NW; ++k) wx[e][k] = swx[(lane * OC + e) * NW + k];
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  const bool left_ok = c0 - IC >= 0, right_ok = c0 + 2 * IC <= g.src_w;
  const int64_t plane_size = static_cast<int64_t>(OH) * OW;
  using Chunks = Words<T, IC>[3];  // one input row's IC columns with the halo chunks each side
  // Input row r, clamped into the plane (see ring_w_sum).
  auto fetch = [&](const T* src, int32_t r, Chunks& ch) {
    ring_fetch(src + static_cast<int32_t>(min(max(r, 0), g.src_h - 1)) * row_stride, left_ok, right_ok, ch);
  };
  // float16 notes the W results instead of the outputs: half the notes (each feeds two output
  // rows), and every non-finite output sum has a non-finite W result among its terms, since
  // float sums of weighed float16 values cannot overflow (bfloat16's can: it notes its outputs).
  constexpr bool kNoteMid = std::is_same_v<T, __half>;
  RingNotes<T, Acc> notes;  // resize_fixup.cuh
  auto w_sum = [&](const Chunks& ch, int32_t r, Acc* m) {
    ring_w_sum<1, 2, HALO>(wx, ch, r >= 0 && r < g.src_h, m);
    if constexpr (kNoteMid)
#pragma unroll
      for (int e = 0; e < OC; ++e) note(notes.bad, m[e]);
  };
  constexpr int A = doubling_ahead(NW);  // rows fetched ahead
  // The outputs' notes: none where the W results are noted.
  NoNotes none;
  auto& out_notes = *[&] {
    if constexpr (kNoteMid) return &none; else return &notes;
  }();
  for_planes(g, C, planes, [&](const T* plane_src, int64_t plane) {
    const T* src = plane_src + c0;
    T* out = dst + plane * plane_size + 2 * c0;
    Acc mid[NW][OC];
    Chunks buf[A + 1];  // input row i's new row (i - h + NW - 1), fetched A rows ahead
#pragma unroll
    for (int k = 0; k < NW - 1; ++k) {
      fetch(src, i_begin - HALO + k, buf[0]);
      w_sum(buf[0], i_begin - HALO + k, mid[k]);
    }
#pragma unroll
    for (int j = 0; j < A; ++j) fetch(src, i_begin + j - HALO + NW - 1, buf[j]);
    // Output rows 2 iy and 2 iy + 1 from input row iy's new row `cur`, while row iy + A's is
    // fetched into `ahead` (past the warp's last rows it re-reads rows of the plane, clamped:
    // L2 hits). The loop below rotates the A + 1 buffers, so that no fetched chunk is copied.
    auto row = [&](int32_t iy, Chunks& cur, Chunks& ahead) {
      fetch(src, iy + A - HALO + NW - 1, ahead);
      w_sum(cur, iy - HALO + NW - 1, mid[NW - 1]);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int32_t y = 2 * iy + half;
        const Acc* wyr = swy + (y - by0) * NW;
        Acc wy[NW];
#pragma unroll
        for (int k = 0; k < NW; ++k) wy[k] = wyr[k];
        const Pack<T, OC> o = ring_h_sum<T>(wy, mid, out_notes);
        constexpr int kStores = OC * static_cast<int>(sizeof(T)) / 16;
        uint4 raw[kStores];
        memcpy(raw, &o, sizeof(raw));
        uint4* q = reinterpret_cast<uint4*>(out + static_cast<int64_t>(y) * OW);
#pragma unroll
        for (int k = 0; k < kStores; ++k) __stcs(q + k, raw[k]);
      }
#pragma unroll
      for (int k = 0; k < NW - 1; ++k)
#pragma unroll
        for (int e = 0; e < OC; ++e) mid[k][e] = mid[k + 1][e];
    };
    rotate_rows<A>(i_begin, i_end, buf, row);
  });
  finish_ring<RingFix::kPerElement>(notes, g, C, planes, OH, OW, 2 * i_begin, 2 * i_end, 2 * c0, 2 * c0 + OC, dst);
}

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
