// The row kernels: gathers that read the input directly, no staged window: one_tap_kernel
// (nearest downscaling along H), pairs_kernel (bilinear 0.5x along W), replicate_kernel and
// pick_kernel (nearest by powers of two, forward and backward).
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <cstdint>
#include <cstring>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_fixup.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

// One-tap gathers (nearest) of NCHW tensors that downscale along H: each output reads one
// input element, so no window is staged (and no input row is read that no output needs). A
// thread owns kVec adjacent output columns of a row (their input columns and weights in
// registers, fixed for every plane) and loops over planes, then rows; one vector store per
// row. The arithmetic is gather_element's. Faster than the staged tiles for downscaling;
// upscaling (every input element read by several outputs) keeps the tiles
// (docs/perf/resize-notes.md, "Nearest" / "One-tap kernel for downscaling along H").
// kOwn (F.interpolate's nearest and nearest-exact, p.pytorch): the kernel computes its
// entries with axis_entry's arithmetic (pytorch_nearest_index, weight 1), and no table
// kernel runs before it (one launch fewer per call: notes, "Nearest" / "Its own entries for
// F.interpolate's nearest"). A block has kOneTapRows rows; a warp spans 32 * kVec columns.
template <bool kOwn, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) one_tap_kernel(Gather<T, Acc> g, Params p, int32_t C, int32_t OH,
                                                           int32_t OW, int64_t planes, bool vec_store,
                                                           T* __restrict__ dst) {
  const int32_t x0 = (blockIdx.x * 32 + threadIdx.x % 32) * kVec;
  if (x0 >= OW) return;
  const int32_t col_stride = static_cast<int32_t>(g.stride[3]), row_stride = static_cast<int32_t>(g.stride[2]);
  const bool align = p.coord == kAlignCorners;
  const float step_x = kOwn ? static_cast<float>(pytorch_step<Acc>(p.w, align)) : 0.0f;
  const float step_y = kOwn ? static_cast<float>(pytorch_step<Acc>(p.h, align)) : 0.0f;
  int32_t col[kVec];  // input column offsets (column 0 where extrapolated or past the output)
  Acc wxv[kVec];
  unsigned okx = 0;  // columns in range and not extrapolated
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    const int32_t x = x0 + e;
    const int32_t f =
        x >= OW ? -1 : (kOwn ? static_cast<int32_t>(pytorch_nearest_index(p, p.w, step_x, x)) : g.fx[x]);
    if (f >= 0) okx |= 1u << e;
    col[e] = f >= 0 ? f * col_stride : 0;
    wxv[e] = f >= 0 ? (kOwn ? Acc(1) : g.wx[x]) : Acc(0);
  }
  const bool full = vec_store && x0 + kVec <= OW;
  // The plane walk of for_planes, written out: through for_planes this kernel compiled to
  // more instructions and ran slower (notes, "Nearest" / "One-tap kernel for downscaling
  // along H").
  const int64_t plane_size = static_cast<int64_t>(OH) * OW, step = gridDim.z;
  const int64_t step_n = step / C, step_c = step % C;
  int64_t n = blockIdx.z / C, c = blockIdx.z % C;
  const int32_t y_begin = blockIdx.y * kOneTapRows + threadIdx.x / 32, y_step = gridDim.y * kOneTapRows;
  for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
    const T* src = g.src + n * g.stride[0] + c * g.stride[1];
    T* out = dst + plane * plane_size + x0;
    for (int32_t y = y_begin; y < OH; y += y_step) {
      const int32_t sy = kOwn ? static_cast<int32_t>(pytorch_nearest_index(p, p.h, step_y, y)) : g.fy[y];
      const Acc wy = kOwn ? Acc(1) : g.wy[y];
      const T* row = src + (sy >= 0 ? sy * row_stride : 0);
      Acc v[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        Acc r = Acc(0);
        r += wxv[e] * Convert<T>::template load<Acc>(row[col[e]]);
        Acc a = Acc(0);
        a += wy * r;
        v[e] = sy >= 0 && (okx >> e & 1u) ? a : g.extrapolation;
      }
      T* o = out + static_cast<int64_t>(y) * OW;
      if (full) {
        store4(o, v);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (x0 + e < OW) o[e] = Convert<T>::template store<Acc>(v[e]);
      }
    }
    n += step_n;
    c += step_c;
    if (c >= C) {
      c -= C;
      ++n;
    }
  }
}

// Exact 2:1 downscaling along W whose two-tap windows are the input pairs (see pairs_axis:
// bilinear 0.5x), with two-tap H entries, of NCHW tensors with 16-byte aligned rows. A thread
// owns K = G / 2 adjacent outputs of a row: their 2 K input columns are one 16-byte load per
// tap row, so the input is read with a copy's contiguous, fully coalesced loads, and no
// window is staged (each input element is read by one output). The W weights live in
// registers, fixed for every plane; the thread loops over planes, then rows, with one 8-byte
// store per row. The arithmetic is gather_element's.
template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) pairs_kernel(const __grid_constant__ Gather<T, Acc> g, int32_t C,
                                                         int32_t OH, int32_t OW, int64_t planes,
                                                         T* __restrict__ dst) {
  constexpr int G = kPairLoad<T>, K = G / 2;
  const int32_t x0 = (blockIdx.x * 32 + threadIdx.x % 32) * K;
  if (x0 >= OW) return;  // OW is a multiple of K
  Acc wx[K][2];
#pragma unroll
  for (int e = 0; e < K; ++e) {
    wx[e][0] = g.wx[(x0 + e) * 2];
    wx[e][1] = g.wx[(x0 + e) * 2 + 1];
  }
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  const int64_t plane_size = static_cast<int64_t>(OH) * OW;
  const int32_t y_begin = blockIdx.y * kOneTapRows + threadIdx.x / 32, y_step = gridDim.y * kOneTapRows;
  auto load = [](const T* p) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    Pack<T, G> v;
    memcpy(&v, &raw, sizeof(raw));
    return v;
  };
  Acc bad = Acc(0);  // resize_fixup.cuh
  for_planes(g, C, planes, [&](const T* plane_src, int64_t plane) {
    const T* src = plane_src + 2 * x0;
    T* out = dst + plane * plane_size + x0;
    for (int32_t y = y_begin; y < OH; y += y_step) {
      const int32_t fy = g.fy[y];
      Pack<T, K> o;
      if (fy < 0) {
#pragma unroll
        for (int e = 0; e < K; ++e) o.v[e] = Convert<T>::template store<Acc>(g.extrapolation);
      } else {
        const Acc wy0 = g.wy[2 * y], wy1 = g.wy[2 * y + 1];
        const Pack<T, G> a = load(src + fy * row_stride);
        const Pack<T, G> b = load(src + tap_index(fy, 1, g.src_h) * row_stride);
#pragma unroll
        for (int e = 0; e < K; ++e) {
          Acc r0 = Acc(0), r1 = Acc(0);
          r0 += wx[e][0] * Convert<T>::template load<Acc>(a.v[2 * e]);
          r0 += wx[e][1] * Convert<T>::template load<Acc>(a.v[2 * e + 1]);
          r1 += wx[e][0] * Convert<T>::template load<Acc>(b.v[2 * e]);
          r1 += wx[e][1] * Convert<T>::template load<Acc>(b.v[2 * e + 1]);
          Acc acc = Acc(0);
          acc += wy0 * r0;
          acc += wy1 * r1;
          note(bad, acc);
          o.v[e] = Convert<T>::template store<Acc>(acc);
        }
      }
      uint2 raw;
      memcpy(&raw, &o, sizeof(raw));
      __stcs(reinterpret_cast<uint2*>(out + static_cast<int64_t>(y) * OW), raw);
    }
  });
  finish_gather(bad, g, planes, C, OH, OW, false, dst);
}

// Nearest upscales by whole powers of two (F.interpolate's nearest and nearest-exact with
// out = s in on both axes, s in {1, 2, 4, 8}, the step exactly 1 / s: nearest_ratio) of
// NCHW tensors: output (y, x) is input (y / sy, x / SX), computed as the gather computes it
// (0 + 1 v: v, -0 as +0). A lane loads L adjacent input elements of a row (one aligned,
// streaming load) and writes their L SX outputs to each of the row's sy output rows with
// 16-byte streaming stores: a copy's traffic, no tables and no window. A warp owns 32 L
// input columns, a block kOneTapRows input rows at a time; threads loop over rows and planes.
template <int SX, typename T>
constexpr int kReplicateLoad = 16 / (SX * static_cast<int>(sizeof(T))) > 0 ? 16 / (SX * static_cast<int>(sizeof(T))) : 1;
template <int SX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) replicate_kernel(Gather<T, Acc> g, int32_t C, int32_t sy, int32_t OW,
                                                             int64_t planes, T* __restrict__ dst) {
  constexpr int L = kReplicateLoad<SX, T>, kOut = L * SX;
  constexpr int kStores = kOut * static_cast<int>(sizeof(T)) / 16;
  static_assert(kStores * 16 == kOut * static_cast<int>(sizeof(T)), "whole 16-byte stores");
  using Load = RawLoad<L * sizeof(T)>;
  static_assert(sizeof(Load) == L * sizeof(T), "one load of 2, 4, 8 or 16 bytes");
  const int32_t c0 = (blockIdx.x * 32 + threadIdx.x % 32) * L;  // first input column
  if (c0 >= g.src_w) return;                                      // src_w is a multiple of L
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  const int64_t out_plane = static_cast<int64_t>(g.src_h) * sy * OW;
  const int32_t i_begin = blockIdx.y * kOneTapRows + threadIdx.x / 32, i_step = gridDim.y * kOneTapRows;
  for_planes(g, C, planes, [&](const T* plane_src, int64_t plane) {
    const T* src = plane_src + c0;
    T* out = dst + plane * out_plane + static_cast<int64_t>(c0) * SX;
    for (int32_t i = i_begin; i < g.src_h; i += i_step) {
      const Load raw_in = __ldcs(reinterpret_cast<const Load*>(src + i * row_stride));
      Pack<T, L> in;
      memcpy(&in, &raw_in, sizeof(raw_in));
      Pack<T, kOut> o;
#pragma unroll
      for (int l = 0; l < L; ++l) {
        const T v = Convert<T>::template store<Acc>(Acc(0) + Convert<T>::template load<Acc>(in.v[l]));
#pragma unroll
        for (int k = 0; k < SX; ++k) o.v[l * SX + k] = v;
      }
      uint4 raw[kStores];
      memcpy(raw, &o, sizeof(raw));
      T* row = out + static_cast<int64_t>(i) * sy * OW;
      for (int32_t r = 0; r < sy; ++r)
#pragma unroll
        for (int k = 0; k < kStores; ++k) __stcs(reinterpret_cast<uint4*>(row + static_cast<int64_t>(r) * OW) + k, raw[k]);
    }
  });
}

// The backward of nearest downscales by whole powers of two (the forward's output d reads
// input d s + o on each axis, s in {1, 2, 4, 8}: nearest_ratio) of NCHW gradients: grad_input
// (i, j) is grad_output ((i - oy) / sy, (j - ox) / SX) where both divide exactly (computed as
// the gather computes it: 0 + 1 v), else 0. A lane writes E = 16 / sizeof(T) adjacent
// grad_input columns of a row (one 16-byte streaming store), reading the E / SX grad_output
// elements they pick (one aligned load, rows that pick none read nothing): a memset's
// traffic plus grad_output once. Rows and planes are looped over as in replicate_kernel.
template <int SX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) pick_kernel(Gather<T, Acc> g, int32_t C, int32_t sy, int32_t oy,
                                                        int32_t ox, int32_t IH, int32_t IW, int64_t planes,
                                                        T* __restrict__ dst) {
  constexpr int E = 16 / static_cast<int>(sizeof(T)), L = E / SX;
  static_assert(L >= 1 && L * SX == E, "a lane's columns pick whole grad_output elements");
  using Load = RawLoad<L * sizeof(T)>;
  static_assert(sizeof(Load) == L * sizeof(T), "one load of 2, 4, 8 or 16 bytes");
  const int32_t j0 = (blockIdx.x * 32 + threadIdx.x % 32) * E;  // first grad_input column
  if (j0 >= IW) return;                                          // IW is a multiple of E
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  const int64_t plane_size = static_cast<int64_t>(IH) * IW;
  const int32_t i_begin = blockIdx.y * kOneTapRows + threadIdx.x / 32, i_step = gridDim.y * kOneTapRows;
  const T zero = Convert<T>::template store<Acc>(Acc(0));
  for_planes(g, C, planes, [&](const T* plane_src, int64_t plane) {
    const T* src = plane_src + j0 / SX;
    T* out = dst + plane * plane_size + j0;
    for (int32_t i = i_begin; i < IH; i += i_step) {
      Pack<T, E> o;
#pragma unroll
      for (int q = 0; q < E; ++q) o.v[q] = zero;
      const int32_t di = i - oy;
      if (di >= 0 && di % sy == 0) {
        const Load raw_in = __ldcs(reinterpret_cast<const Load*>(src + di / sy * row_stride));
        Pack<T, L> in;
        memcpy(&in, &raw_in, sizeof(raw_in));
#pragma unroll
        for (int q = 0; q < E; ++q)
          if (q % SX == ox)
            o.v[q] = Convert<T>::template store<Acc>(Acc(0) + Convert<T>::template load<Acc>(in.v[q / SX]));
      }
      uint4 raw;
      memcpy(&raw, &o, sizeof(raw));
      __stcs(reinterpret_cast<uint4*>(out + static_cast<int64_t>(i) * IW), raw);
    }
  });
}

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
