// The staged tiles (staged_gather_kernel), the general NCHW gather: each plane's input
// window staged in shared memory with cp.async, resampled along one axis then the other;
// with the shared-memory sizing of its tiles.
// Device code, included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cuda_pipeline.h>
#include <type_traits>

#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_fixup.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

constexpr int kLimSlots = 4;         // the staged kernel's static shared memory: s_lim
constexpr int64_t kStaticSmem = 64;  // bytes, an upper bound of it (with alignment)

TWIN_HD constexpr size_t align16(size_t b) { return (b + 15) & ~size_t(15); }

// Window widths are multiples of this: whole 16-byte copy units and kVec-wide H passes.
template <typename T>
TWIN_HD constexpr int window_align() {
  return 16 / sizeof(T) > kVec ? static_cast<int>(16 / sizeof(T)) : kVec;
}

// Bytes before the windows: the tile's row offsets and H weights, then (H first: tiles hold
// their own tables) its column firsts and W weights.
template <typename Acc>
TWIN_HD size_t row_table_bytes(int32_t ty) {
  return kTileHMax * sizeof(int32_t) + align16(kTileHMax * static_cast<size_t>(ty) * sizeof(Acc));
}
template <typename Acc>
TWIN_HD size_t tile_table_bytes(bool w_first, int tw, int32_t ty, int32_t tx) {
  return row_table_bytes<Acc>(ty) +
         (w_first ? 0 : align16(tw * sizeof(int32_t)) + align16(static_cast<size_t>(tw) * tx * sizeof(Acc)));
}

// Elements of one intermediate (`mid`) buffer: window rows x tile width after a W pass,
// tile height x window width after an H pass.
TWIN_HD constexpr int64_t mid_elements(bool w_first, int tw, int th, int64_t rows, int64_t cols) {
  return w_first ? static_cast<int64_t>(tw) * rows : th * cols;
}

template <typename T, typename Acc>
size_t staged_smem(bool w_first, int tw, int th, int32_t ty, int32_t tx, int64_t rows, int64_t cols) {
  return tile_table_bytes<Acc>(w_first, tw, ty, tx) + kStages * align16(static_cast<size_t>(rows * cols) * sizeof(T)) +
         2 * static_cast<size_t>(mid_elements(w_first, tw, th, rows, cols)) * sizeof(Acc);
}

// NCHW fast path. A block owns a th x TW tile of one output plane (th <= kTileHMax) and
// loops over planes. Tiles that resample along H first hold their table entries (th rows,
// TW columns) in shared memory: the forward builds them with axis_entry (no table kernel),
// the backward copies them from the inverse tables; the others read the workspace's tables
// (see kTileTables). Each plane's input window (the rows and columns the tile reads) is
// copied into shared memory with cp.async, two planes ahead of use, so the loads of later
// planes are in flight while this one computes. Upscaling (WFirst) resamples the window
// rows along W into `mid`, then `mid` along H, writing kVec adjacent outputs per thread
// with one vector store; downscaling resamples along H first (kVec window columns per
// thread, vector loads), then along W. The W taps a thread uses live in its registers,
// fixed for all planes; one barrier per plane. Tiles whose window exceeds the
// launch's window (crops, flips, uneven tables) take the per-element gather.
template <bool WFirst, int TW, int TY, int TX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, staged_register_blocks<WFirst, TY, T, Acc>())
    staged_gather_kernel(const __grid_constant__ Gather<T, Acc> g, Params p, bool own_tables, int32_t C, int32_t OH,
                         int32_t OW, int64_t planes, int32_t th, int32_t max_rows, int32_t win_cols,
                         bool vec_copy, bool vec_store, T* __restrict__ dst) {
  constexpr int kGroups = TW / kVec;             // pass-2 threads per tile row
  constexpr int kRowStep2 = kThreads / kGroups;  // pass-2 row groups
  constexpr int kRowStep1 = kThreads / TW;       // pass-1 rows in flight
  constexpr int kUnroll1 = TX > 0 && TX <= 4 ? 4 : 1;
  constexpr int G = 16 / sizeof(T);  // elements per 16-byte copy
  static_assert(kThreads % TW == 0 && kVec == 4, "tile shape");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int32_t s_lim[kLimSlots];  // min / max first row, min / max first column
  const int32_t ty = TY > 0 ? TY : g.ty;
  const int32_t tx = TX > 0 ? TX : g.tx;
  // Tile rows: first input row (later: row in `mid`, -1 extrapolate) and H weights; tile
  // columns (kTileTables): first input column (-1 extrapolate) and W weights.
  int32_t* s_off = reinterpret_cast<int32_t*>(smem_raw);
  Acc* s_w = reinterpret_cast<Acc*>(smem_raw + kTileHMax * sizeof(int32_t));
  int32_t* s_fx = reinterpret_cast<int32_t*>(smem_raw + row_table_bytes<Acc>(ty));
  Acc* s_wx = reinterpret_cast<Acc*>(smem_raw + row_table_bytes<Acc>(ty) + align16(TW * sizeof(int32_t)));
  const size_t window = align16(static_cast<size_t>(max_rows) * win_cols * sizeof(T));
  unsigned char* windows = smem_raw + tile_table_bytes<Acc>(WFirst, TW, ty, tx);
  Acc* mids = reinterpret_cast<Acc*>(windows + kStages * window);
  const int tid = threadIdx.x;
  const int32_t oy0 = blockIdx.y * th, ox0 = blockIdx.x * TW;
  const int32_t tile_h = min(th, OH - oy0), tile_w = min(TW, OW - ox0);
  Acc bad = Acc(0);  // resize_fixup.cuh

  // The tables this tile reads, tile-locally indexed: its own entries in shared memory when
  // resampling along H first; else (upscaling) the workspace's, which the table kernel built
  // (in shared memory they slowed the upscaling H pass: docs/perf/resize-notes.md, "Staged
  // tiles" / "Measured and not kept").
  constexpr bool kTileTables = !WFirst;
  const int32_t* fy = g.fy + oy0;
  const Acc* wy = g.wy + static_cast<int64_t>(oy0) * ty;
  const int32_t* fx = g.fx + ox0;
  const Acc* wx = g.wx + static_cast<int64_t>(ox0) * tx;
  if constexpr (kTileTables) {
    // One thread per entry: th rows, then TW columns; past the output: -1, zero weights.
    // Built (the forward, `own_tables`) or copied from g's tables (the backward's inverse).
    for (int e = tid; e < th + TW; e += kThreads) {
      const bool row = e < th;
      const int32_t i = row ? e : e - th;
      const int32_t o = (row ? oy0 : ox0) + i;
      const int32_t taps = row ? ty : tx;
      int32_t* f = row ? s_off + i : s_fx + i;
      Acc* w = row ? s_w + i * ty : s_wx + i * tx;
      if (o >= (row ? OH : OW)) {
        *f = -1;
        for (int32_t k = 0; k < taps; ++k) w[k] = Acc(0);
      } else if (own_tables) {
        tile_entry<Acc>(p, row, o, taps, f, w);
      } else {
        *f = (row ? g.fy : g.fx)[o];
        const Acc* src = (row ? g.wy : g.wx) + static_cast<int64_t>(o) * taps;
        for (int32_t k = 0; k < taps; ++k) w[k] = src[k];
      }
    }
    fy = s_off;
    wy = s_w;
    fx = s_fx;
    wx = s_wx;
    __syncthreads();
  }

  // Warp 0 finds the tile's input rows, warp 1 its input columns.
  if (tid < 64) {
    const bool is_row = tid < 32;
    const int32_t* f = is_row ? fy : fx;
    const int32_t n = is_row ? tile_h : tile_w;
    int32_t lo = INT32_MAX, hi = -1;
    for (int i = tid % 32; i < n; i += 32) {
      const int32_t v = f[i];
      if (v >= 0) {
        lo = min(lo, v);
        hi = max(hi, v);
      }
    }
#pragma unroll
    for (int s = 16; s > 0; s /= 2) {
      lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, s));
      hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, s));
    }
    if (tid % 32 == 0) {
      s_lim[is_row ? 0 : 2] = lo;
      s_lim[is_row ? 1 : 3] = hi;
    }
  }
  __syncthreads();
  const int32_t ymin = s_lim[0];
  const int32_t nrows = s_lim[1] < 0 ? 0 : s_lim[1] - ymin + ty;
  const int32_t xmin = s_lim[3] < 0 ? 0 : (vec_copy ? s_lim[2] & ~(G - 1) : s_lim[2]);
  const int32_t ncols = s_lim[3] < 0 ? 0 : s_lim[3] - xmin + tx;
  const int64_t step = gridDim.z;
  const int64_t plane_size = static_cast<int64_t>(OH) * OW;
  if (nrows > max_rows || ncols > win_cols) {  // block-uniform: the whole block takes the per-element path
    Gather<T, Acc> gt = g;  // the tile's tables: tile row i is entry i
    gt.fy = fy;
    gt.wy = wy;
    gt.fx = fx;
    gt.wx = wx;
    const int j = tid % TW;
    for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
      const int64_t n = plane / C, c = plane % C;
      T* out = dst + plane * plane_size;
      for (int i = tid / TW; i < tile_h; i += kRowStep1) {
        if (j < tile_w) {
          const Acc v = gather_element<TY, TX>(gt, n, c, i, j);
          note(bad, v);
          out[static_cast<int64_t>(oy0 + i) * OW + ox0 + j] = Convert<T>::template store<Acc>(v);
        }
      }
    }
    finish_gather(bad, g, planes, C, OH, OW, false, dst);
    return;
  }
  // Rows of `mid`, shared by every plane (published by the barrier before the first pass 1;
  // extrapolated rows have zero weights).
  if constexpr (kTileTables) {
    for (int i = tid; i < th; i += kThreads) s_off[i] = s_off[i] >= 0 ? s_off[i] - ymin : -1;
  } else {
    for (int e = tid; e < th * ty; e += kThreads) s_w[e] = e / ty < tile_h && fy[e / ty] >= 0 ? wy[e] : Acc(0);
    for (int i = tid; i < th; i += kThreads) s_off[i] = i < tile_h && fy[i] >= 0 ? fy[i] - ymin : -1;
  }

  // Copies of one plane's window: units of G elements (vec_copy) or single elements, laid
  // out row by row with pitch win_cols; row r holds input row min(ymin + r, src_h - 1) (as
  // tap_index clamps) and column c input column xmin + c. Only the columns the tile reads
  // are copied (`need`, rounded to whole units and kVec groups). Columns past the input's
  // last one are only read by zero-weight padding taps (axis_entry merges every real
  // tap into the range); they hold zeros, written once for all planes below, so no copy
  // diverges on the right edge. (tap_index would read the last column there: the same
  // result unless that column is not finite.)
  const int32_t unit = vec_copy ? G : 1;
  constexpr int kAlignCols = window_align<T>();
  const int32_t need = ncols > 0 ? min(win_cols, (ncols + kAlignCols - 1) / kAlignCols * kAlignCols) : 0;
  const int32_t units = ncols > 0 ? need / unit : 1;
  const int32_t copy_rows = ncols > 0 ? nrows : 0;
  // Copy lanes: `lanes` threads per window row, one unit column each (looping when a row has
  // more units than threads), kThreads / lanes rows at a time; the rest idle. A lane's
  // columns are the same for every plane and row, so its loop only steps the row.
  const int32_t lanes = min(units, kThreads);
  const int32_t c_q0 = tid % lanes, c_r0 = tid / lanes, c_dr = kThreads / lanes;
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]), col_stride = static_cast<int32_t>(g.stride[3]);
  const int32_t past_end = max(0, min(need, g.src_w - xmin));  // first window column past the input
  const int32_t tail = need - past_end, tail_per_stage = copy_rows * tail;
  for (int32_t e = tid; e < kStages * tail_per_stage; e += kThreads) {
    const int32_t st = e / tail_per_stage, rc = e % tail_per_stage;
    reinterpret_cast<T*>(windows + st * window)[(rc / tail) * win_cols + past_end + rc % tail] =
        Convert<T>::template store<Acc>(Acc(0));
  }
  auto issue = [&](const T* src, T* win) {
    for (int32_t q = c_r0 < c_dr ? c_q0 : units; q < units; q += lanes) {
      const int32_t x = xmin + q * unit;
      T* d = win + q * unit;
      if (vec_copy && x + G <= g.src_w) {
        for (int32_t r = c_r0; r < copy_rows; r += c_dr)
          __pipeline_memcpy_async(d + r * win_cols, src + tap_index(ymin, r, g.src_h) * row_stride + x, 16);
      } else if (x < g.src_w) {  // a unit across the input's end (src_w % G != 0), or unit 1
        for (int32_t r = c_r0; r < copy_rows; r += c_dr) {
          const T* row = src + tap_index(ymin, r, g.src_h) * row_stride;
          for (int e = 0; e < unit; ++e)
            if (x + e < g.src_w) copy_element(d + r * win_cols + e, row + static_cast<int64_t>(x + e) * col_stride);
        }
      }
    }
    __pipeline_commit();
  };

  // Pass 1 (one column per thread): the column's W taps are the same for every row and
  // plane, so they live in registers. Columns out of range or extrapolated get zero weights
  // and read column 0 (no branch in the loop); their results are never stored.
  const int j = tid % TW, r1 = tid / TW;
  const bool col_ok = j < tile_w && fx[j] >= 0;
  const int32_t cx = col_ok ? fx[j] - xmin : 0;
  const Acc* wxr = wx + (col_ok ? j : 0) * tx;
  Acc wreg[TX > 0 ? TX : 1];
  if constexpr (TX > 0) {
#pragma unroll
    for (int b = 0; b < TX; ++b) wreg[b] = col_ok ? wxr[b] : Acc(0);
  }
  auto resample_rows = [&](const T* win, Acc* mid) {
    const T* p = win + r1 * win_cols + cx;
    Acc* m = mid + r1 * TW + j;
#pragma unroll kUnroll1
    for (int r = r1; r < copy_rows; r += kRowStep1) {
      Acc v = Acc(0);
      if constexpr (TX > 0) {
#pragma unroll
        for (int b = 0; b < TX; ++b) v += wreg[b] * Convert<T>::template load<Acc>(p[b]);
      } else {
        if (col_ok)
          for (int32_t b = 0; b < tx; ++b) v += wxr[b] * Convert<T>::template load<Acc>(p[b]);
      }
      *m = v;
      p += kRowStep1 * win_cols;
      m += kRowStep1 * TW;
    }
  };

  // Pass 1 on column pairs (2 jp, 2 jp + 1), used when in every pair of the tile the second
  // column's taps start 0 or 1 window columns after the first's (upscaling along W): TX + 1
  // window loads give both mids. Same sums, same order as resample_rows.
  constexpr bool kPairable = WFirst && TX > 0 && TX <= 4;
  constexpr int kPairsPerRow = TW / 2, kPairRowStep = kThreads / kPairsPerRow;
  const int jp = tid % kPairsPerRow, rp = tid / kPairsPerRow;
  bool pairs = false, pshift = false, all_shift = false;
  int32_t pc = 0;
  Acc pw0[kPairable ? TX : 1], pw1[kPairable ? TX : 1];
  if constexpr (kPairable) {
    const int32_t ja = 2 * jp, jb = ja + 1;
    const bool oka = ja < tile_w && fx[ja] >= 0, okb = jb < tile_w && fx[jb] >= 0;
    const int32_t ca = oka ? fx[ja] - xmin : 0;
    const int32_t cb = okb ? fx[jb] - xmin : ca;
    pc = oka ? ca : cb;
    pshift = cb - pc == 1;
#pragma unroll
    for (int b = 0; b < TX; ++b) {
      pw0[b] = oka ? wx[ja * TX + b] : Acc(0);
      pw1[b] = okb ? wx[jb * TX + b] : Acc(0);
    }
    pairs = __syncthreads_and(cb - pc == 0 || pshift);
    if constexpr (TX > 1) all_shift = __syncthreads_and(pshift);
  }
  // Blocks whose every pair is shifted (`all_shift`: 2x along W, away from the image's
  // edges, where clamped taps merge) take a copy of the loop without the per-element
  // selects. Not for one tap: it saves a single select there, and measured slower
  // (docs/perf/resize-notes.md, "Staged tiles" / "Passes (kept)").
  auto pairs_loop = [&](const T* win, Acc* mid, auto all_tag) {
    if constexpr (kPairable) {
      const bool shift = decltype(all_tag)::value || pshift;
      const T* p = win + rp * win_cols + pc;
      Acc* m = mid + rp * TW + 2 * jp;
#pragma unroll 2
      for (int r = rp; r < copy_rows; r += kPairRowStep) {
        Acc f[TX + 1];
#pragma unroll
        for (int b = 0; b < TX; ++b) f[b] = Convert<T>::template load<Acc>(p[b]);
        f[TX] = shift ? Convert<T>::template load<Acc>(p[TX]) : Acc(0);  // only a shifted pair reads it
        Pack<Acc, 2> v;
        v.v[0] = v.v[1] = Acc(0);
#pragma unroll
        for (int b = 0; b < TX; ++b) v.v[0] += pw0[b] * f[b];
#pragma unroll
        for (int b = 0; b < TX; ++b) v.v[1] += pw1[b] * (shift ? f[b + 1] : f[b]);
        *reinterpret_cast<Pack<Acc, 2>*>(m) = v;
        p += kPairRowStep * win_cols;
        m += kPairRowStep * TW;
      }
    }
  };
  auto resample_pairs = [&](const T* win, Acc* mid) {
    if (all_shift) pairs_loop(win, mid, std::true_type{});
    else pairs_loop(win, mid, std::false_type{});
  };

  // Pass 2 (kVec adjacent columns per thread): along H from `mid`. Extrapolated rows (offset
  // -1) are not computed; the extrapolation value replaces them at the store.
  const int q = tid % kGroups, r2 = tid / kGroups;
  const int32_t oxq = ox0 + q * kVec;
  unsigned xmask = 0;  // columns of this thread that are in range and not extrapolated
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    if (q * kVec + k < tile_w && fx[q * kVec + k] >= 0) xmask |= 1u << k;
  const bool fast = vec_store && oxq + kVec <= OW && xmask == (1u << kVec) - 1;
  const Acc extrapolation = g.extrapolation;
  // Each group of kGroups threads takes a run of consecutive tile rows, two at a time: when
  // the second row's taps start at most one mid row below the first's (upscaling), the two
  // rows share their mid-row loads (TY + 1 rows for both instead of 2 * TY). The sums are
  // the same, in the same order.
  const int32_t chunk2 = (th + kRowStep2 - 1) / kRowStep2;
  const int32_t i_begin = min(r2 * chunk2, tile_h), i_end = min(i_begin + chunk2, tile_h);
  using Row = Pack<Acc, kVec>;
  auto resample_cols = [&](const Acc* mid, T* out) {
    const Acc* col = mid + q * kVec;
    T* o = out + static_cast<int64_t>(oy0 + i_begin) * OW + oxq;
    auto one_row = [&](int32_t off, const Acc* w, Acc* v) {
      const Acc* c = col + off * TW;
#pragma unroll
      for (int32_t a = 0; a < (TY > 0 ? TY : ty); ++a) {
        const Acc wa = w[a];
        const Row d = *reinterpret_cast<const Row*>(c + a * TW);
#pragma unroll
        for (int e = 0; e < kVec; ++e) v[e] += wa * d.v[e];
      }
    };
    auto store_row = [&](T* dst_row, int32_t off, const Acc* v) {
      if (fast && off >= 0) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) note(bad, v[e]);
        store4(dst_row, v);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (oxq + e < OW) {
            const Acc u = off >= 0 && (xmask >> e & 1u) ? v[e] : extrapolation;
            note(bad, u);
            dst_row[e] = Convert<T>::template store<Acc>(u);
          }
      }
    };
    int i = i_begin;
    if constexpr (TY > 0 && TY <= 4) {
      for (; i + 1 < i_end; i += 2) {
        const int32_t off0 = s_off[i], off1 = s_off[i + 1], d = off1 - off0;
        const Acc* w0 = s_w + i * TY;
        const Acc* w1 = w0 + TY;
        Acc v0[kVec], v1[kVec];
#pragma unroll
        for (int e = 0; e < kVec; ++e) v0[e] = v1[e] = Acc(0);
        if (off0 >= 0 && (d == 0 || d == 1)) {
          const Acc* c = col + off0 * TW;
          auto mac = [](Acc* v, const Acc* w, const Row* rows) {  // v += sum_a w[a] * rows[a]
#pragma unroll
            for (int a = 0; a < TY; ++a) {
              const Acc wa = w[a];
#pragma unroll
              for (int e = 0; e < kVec; ++e) v[e] += wa * rows[a].v[e];
            }
          };
          Row r[TY + 1];
#pragma unroll
          for (int a = 0; a < TY; ++a) r[a] = *reinterpret_cast<const Row*>(c + a * TW);
          mac(v0, w0, r);
          if (d == 0) {  // two branches: register arrays need compile-time indices
            mac(v1, w1, r);
          } else {
            r[TY] = *reinterpret_cast<const Row*>(c + TY * TW);
            mac(v1, w1, r + 1);
          }
        } else {
          if (off0 >= 0) one_row(off0, w0, v0);
          if (off1 >= 0) one_row(off1, w1, v1);
        }
        store_row(o, off0, v0);
        store_row(o + OW, off1, v1);
        o += 2 * static_cast<int64_t>(OW);
      }
    }
    for (; i < i_end; ++i) {
      const int32_t off = s_off[i];
      Acc v[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) v[e] = Acc(0);
      if (off >= 0) one_row(off, s_w + i * ty, v);
      store_row(o, off, v);
      o += OW;
    }
  };

  // H first (WFirst = false, for downscaling): pass 1 resamples the window along H into `mid`
  // (tile rows x window columns), kVec window columns per thread with vector loads; pass 2
  // resamples `mid` along W, one output column per thread with its taps in registers.
  // A thread's column group is the same for every row and plane when the block has a thread
  // per group (v_rows rows at a time; the other threads idle), else it walks the items.
  const int32_t groups = (ncols + kVec - 1) / kVec;
  const int32_t v_rows = groups > 0 ? kThreads / groups : 0;
  const int32_t v_c = groups > 0 ? tid % groups : 0, v_i = v_rows > 0 && tid < v_rows * groups ? tid / groups : th;
  auto h_item = [&](const T* win, Acc* mid, int32_t i, int32_t c4) {
    const Acc* w = s_w + i * ty;
    const T* src = win + max(s_off[i], 0) * win_cols + c4 * kVec;
    Acc wv[TY > 0 ? TY : 1];  // unrolled taps: loaded up front, with vector loads
    if constexpr (TY > 0) load_taps<TY>(w, wv);
    const auto weight = [&](int32_t a) {
      if constexpr (TY > 0) return wv[a];
      else return w[a];
    };
    Acc v[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) v[e] = Acc(0);
#pragma unroll
    for (int32_t a = 0; a < (TY > 0 ? TY : ty); ++a) {
      const Acc wa = weight(a);
      const Pack<T, kVec> d = *reinterpret_cast<const Pack<T, kVec>*>(src + a * win_cols);
#pragma unroll
      for (int e = 0; e < kVec; ++e) v[e] += wa * Convert<T>::template load<Acc>(d.v[e]);
    }
    Pack<Acc, kVec> r;
#pragma unroll
    for (int e = 0; e < kVec; ++e) r.v[e] = v[e];
    *reinterpret_cast<Pack<Acc, kVec>*>(mid + i * win_cols + c4 * kVec) = r;
  };
  auto resample_h_first = [&](const T* win, Acc* mid) {
    if (v_rows > 0) {
      for (int32_t i = v_i; i < tile_h; i += v_rows) h_item(win, mid, i, v_c);
    } else {
      for (int32_t e = tid; e < tile_h * groups; e += kThreads) h_item(win, mid, e / groups, e % groups);
    }
  };
  // Rows of the tile that are stored from `mid` (the others, extrapolated, take the
  // extrapolation value), one bit each: no shared-memory load per output.
  uint64_t row_bits = 0;  // set after the barrier that publishes s_off
  const bool col_store = j < tile_w;
  auto resample_w_last = [&](const Acc* mid, T* out) {
    if (!col_store) return;
    const Acc* p = mid + r1 * win_cols + cx;
    T* o = out + static_cast<int64_t>(oy0 + r1) * OW + ox0 + j;
    const int64_t o_step = static_cast<int64_t>(kRowStep1) * OW;
#pragma unroll kUnroll1
    for (int i = r1; i < tile_h; i += kRowStep1) {
      Acc v = Acc(0);
      if constexpr (TX > 0) {
#pragma unroll
        for (int b = 0; b < TX; ++b) v += wreg[b] * p[b];
      } else {
        if (col_ok)
          for (int32_t b = 0; b < tx; ++b) v += wxr[b] * p[b];
      }
      const Acc u = col_ok && (row_bits >> i & 1u) ? v : extrapolation;
      note(bad, u);
      *o = Convert<T>::template store<Acc>(u);
      p += kRowStep1 * win_cols;
      o += o_step;
    }
  };
  auto pass1 = [&](const T* win, Acc* mid) {
    if constexpr (WFirst) {
      if (pairs) resample_pairs(win, mid);
      else resample_rows(win, mid);
    } else {
      resample_h_first(win, mid);
    }
  };
  auto pass2 = [&](const Acc* mid, T* out) {
    if constexpr (WFirst) resample_cols(mid, out);
    else resample_w_last(mid, out);
  };

  // Plane k of this block is blockIdx.z + k * gridDim.z; its window is copied in iteration
  // k - 2 (or before the loop), resampled along W in iteration k - 1 and along H (and
  // stored) in iteration k. Three windows rotate (copy target, pass-1 source, and the one
  // a slow thread may still read), two mid buffers alternate; one barrier per iteration
  // separates every write of a buffer from the reads before it.
  const int64_t items = blockIdx.z < planes ? (planes - 1 - blockIdx.z) / step + 1 : 0;
  const int64_t step_n = step / C, step_c = step % C;
  int64_t cn = blockIdx.z / C, cc = blockIdx.z % C;  // (n, c) of the next plane to copy
  auto next_source = [&]() {
    const T* src = g.src + cn * g.stride[0] + cc * g.stride[1];
    cn += step_n;
    cc += step_c;
    if (cc >= C) {
      cc -= C;
      ++cn;
    }
    return src;
  };
  // Buffers by index, not through a pointer array (which would live in local memory and
  // turn the shared-memory loads into generic ones).
  const auto win = [&](int st) { return reinterpret_cast<T*>(windows + st * window); };
  const int64_t mid_elems = mid_elements(WFirst, TW, th, max_rows, win_cols);
  if (items > 0) issue(next_source(), win(0));
  else __pipeline_commit();
  if (items > 1) issue(next_source(), win(1));
  else __pipeline_commit();
  __pipeline_wait_prior(1);
  __syncthreads();  // also publishes the tile's H table
  if constexpr (!WFirst)
    for (int i = 0; i < tile_h; ++i) row_bits |= static_cast<uint64_t>(s_off[i] >= 0) << i;
  if (items > 0) pass1(win(0), mids);
  T* out = dst + blockIdx.z * plane_size;
  const int64_t out_step = step * plane_size;
  int s_copy = 2, s_pass1 = 1;
  for (int64_t k = 0; k < items; ++k) {
    if (k + 2 < items) issue(next_source(), win(s_copy));
    else __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    if (k + 1 < items) pass1(win(s_pass1), mids + ((k + 1) & 1) * mid_elems);
    pass2(mids + (k & 1) * mid_elems, out);
    out += out_step;
    s_pass1 = s_copy;
    s_copy = s_copy == kStages - 1 ? 0 : s_copy + 1;
  }
  finish_gather(bad, g, planes, C, OH, OW, false, dst);
}

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
