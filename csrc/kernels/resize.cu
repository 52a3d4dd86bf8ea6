// CUDA kernels of the resize op: table builders and the separable gather (forward over the
// input, backward over grad_output with the transposed tables: deterministic, no atomics
// on data).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cuda_pipeline.h>

#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#include "resize.cuh"

namespace twinops {
namespace resize {

template <>
struct Convert<__half> {
  template <typename Acc>
  static __host__ __device__ Acc load(__half v) {
    return static_cast<Acc>(__half2float(v));
  }
  template <typename Acc>
  static __host__ __device__ __half store(Acc v) {
    return __float2half_rn(static_cast<float>(v));
  }
};

template <>
struct Convert<__nv_bfloat16> {
  template <typename Acc>
  static __host__ __device__ Acc load(__nv_bfloat16 v) {
    return static_cast<Acc>(__bfloat162float(v));
  }
  template <typename Acc>
  static __host__ __device__ __nv_bfloat16 store(Acc v) {
    return __float2bfloat16_rn(static_cast<float>(v));
  }
};

namespace {

constexpr int kThreads = 256;

// Table kernels run one thread per entry of both axes: threads [0, len_h) take axis 0 (H),
// the next len_w threads axis 1 (W). Returns false past the end.
__device__ bool axis_thread(int64_t len_h, int64_t len_w, int* k, int64_t* d) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  *k = i < len_h ? 0 : 1;
  *d = *k == 0 ? i : i - len_h;
  return *d < (*k == 0 ? len_h : len_w);
}

// Forward tables; for the backward also the empty [lo, hi] ranges (one launch, no memsets).
template <typename Acc>
__global__ void build_tables_kernel(Params p, Workspace L, char* ws, bool backward) {
  int k;
  int64_t d;
  const int64_t len_h = backward ? max(p.h.out, p.h.in) : p.h.out;
  const int64_t len_w = backward ? max(p.w.out, p.w.in) : p.w.out;
  if (!axis_thread(len_h, len_w, &k, &d)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  if (d < a.out)
    resize_axis_entry<Acc>(p, a, d, L.taps[k], reinterpret_cast<int32_t*>(ws + L.first[k]),
                           reinterpret_cast<Acc*>(ws + L.weight[k]));
  if (backward && d < a.in) {
    reinterpret_cast<int32_t*>(ws + L.lo[k])[d] = INT32_MAX;
    reinterpret_cast<int32_t*>(ws + L.hi[k])[d] = -1;
  }
}

template <typename Acc>
__global__ void scatter_ranges_kernel(Params p, Workspace L, char* ws) {
  int k;
  int64_t d;
  if (!axis_thread(p.h.out, p.w.out, &k, &d)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  const int32_t* first = reinterpret_cast<const int32_t*>(ws + L.first[k]);
  const Acc* weight = reinterpret_cast<const Acc*>(ws + L.weight[k]);
  if (first[d] < 0) return;
  int32_t* lo = reinterpret_cast<int32_t*>(ws + L.lo[k]);
  int32_t* hi = reinterpret_cast<int32_t*>(ws + L.hi[k]);
  const int32_t taps = L.taps[k];
  // Min/max are order independent: the ranges, and so the backward, are deterministic.
  for (int32_t t = 0; t < taps; ++t) {
    if (weight[d * taps + t] == Acc(0)) continue;
    const int32_t idx = tap_index(first[d], t, static_cast<int32_t>(a.in));
    atomicMin(lo + idx, static_cast<int32_t>(d));
    atomicMax(hi + idx, static_cast<int32_t>(d));
  }
}

template <typename Acc>
__global__ void inverse_tables_kernel(Params p, Workspace L, char* ws) {
  int k;
  int64_t j;
  if (!axis_thread(p.h.in, p.w.in, &k, &j)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  inverse_entry<Acc>(reinterpret_cast<const int32_t*>(ws + L.first[k]), reinterpret_cast<const Acc*>(ws + L.weight[k]),
                     L.taps[k], static_cast<int32_t>(a.out), static_cast<int32_t>(a.in),
                     reinterpret_cast<const int32_t*>(ws + L.lo[k]), reinterpret_cast<const int32_t*>(ws + L.hi[k]), j,
                     L.inv_taps[k], reinterpret_cast<int32_t*>(ws + L.ifirst[k]),
                     reinterpret_cast<Acc*>(ws + L.iweight[k]));
}

template <int TY, int TX, typename T, typename Acc, typename I>
__global__ void __launch_bounds__(kThreads) gather_kernel(Gather<T, Acc> g, I C, I H, I W, I total, bool channels_last,
                                                          T* __restrict__ dst) {
  for (I idx = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<I>(gridDim.x) * blockDim.x) {
    I n, c, y, x;
    decompose<I>(idx, C, H, W, channels_last, &n, &c, &y, &x);
    dst[idx] = Convert<T>::template store<Acc>(gather_element<TY, TX>(g, n, c, y, x));
  }
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
constexpr int kTileHMax = 64;
constexpr int kVec = 4;     // adjacent outputs (W first) or window columns (H first) per thread
constexpr int kStages = 3;  // input windows in shared memory: two in flight, one in use
constexpr int kLimSlots = 4;      // the staged kernel's static shared memory: s_lim
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

// Four adjacent outputs with one (double: two) vector stores; `o` is aligned. The explicit
// store intrinsics keep the compiler from splitting them (it did, with plain assignments),
// and the streaming hint keeps a large output from evicting the input rows from L2.
template <typename T, typename Acc>
__device__ void store4(T* o, const Acc* v) {
#pragma unroll
  for (int k = 0; k < 4; ++k) o[k] = Convert<T>::template store<Acc>(v[k]);
}
__device__ void store4(float* o, const float* v) {
  __stcs(reinterpret_cast<float4*>(o), make_float4(v[0], v[1], v[2], v[3]));
}
__device__ void store4(double* o, const double* v) {
  __stcs(reinterpret_cast<double2*>(o), make_double2(v[0], v[1]));
  __stcs(reinterpret_cast<double2*>(o) + 1, make_double2(v[2], v[3]));
}
template <typename P>
__device__ unsigned bits(P v) {
  return *reinterpret_cast<const unsigned*>(&v);
}
__device__ void store4(__half* o, const float* v) {
  __stcs(reinterpret_cast<uint2*>(o), make_uint2(bits(__floats2half2_rn(v[0], v[1])), bits(__floats2half2_rn(v[2], v[3]))));
}
__device__ void store4(__nv_bfloat16* o, const float* v) {
  __stcs(reinterpret_cast<uint2*>(o),
         make_uint2(bits(__floats2bfloat162_rn(v[0], v[1])), bits(__floats2bfloat162_rn(v[2], v[3]))));
}

template <typename V, int N>
struct alignas(sizeof(V) * N <= 16 ? sizeof(V) * N : 16) Pack {
  V v[N];
};

// One element into shared memory: asynchronously where cp.async can (4 and 8 bytes).
template <typename T>
__device__ void copy_element(T* dst, const T* src) {
  if constexpr (sizeof(T) >= 4) {
    __pipeline_memcpy_async(dst, src, sizeof(T));
  } else {
    *dst = __ldg(src);
  }
}

// The TY taps of one table entry from shared memory, with vector loads where the entry's
// bytes allow (entries are TY * sizeof(Acc) apart from a 16-byte aligned start).
template <int TY, typename Acc>
__device__ void load_taps(const Acc* w, Acc* out) {
  constexpr int bytes = TY * static_cast<int>(sizeof(Acc));
  constexpr int V = bytes % 16 == 0 ? 16 / static_cast<int>(sizeof(Acc)) : (bytes % 8 == 0 ? 8 / static_cast<int>(sizeof(Acc)) : 1);
#pragma unroll
  for (int a = 0; a < TY; a += V) {
    const Pack<Acc, V> p = *reinterpret_cast<const Pack<Acc, V>*>(w + a);
#pragma unroll
    for (int e = 0; e < V; ++e) out[a + e] = p.v[e];
  }
}

// One table entry of a staged tile (axis H when `row`, else W). Called, not inlined: the
// staged kernel variants share one copy, and their registers are not sized by it.
template <typename Acc>
__device__ __noinline__ void tile_entry(const Params& p, bool row, int32_t d, int32_t taps, int32_t* first, Acc* w) {
  axis_entry<Acc>(p, row ? p.h : p.w, d, taps, first, w);
}

// Blocks per SM the staged kernel's registers are sized for: three for upscaling tiles,
// two (larger tiles, see launch_gather) for downscaling tiles and double precision.
template <bool WFirst, typename Acc>
constexpr int staged_min_blocks() {
  return sizeof(Acc) > 4 || !WFirst ? 2 : 3;
}

template <bool WFirst, int TW, int TY, int TX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, staged_min_blocks<WFirst, Acc>())
    staged_gather_kernel(Gather<T, Acc> g, Params p, bool own_tables, int32_t C, int32_t OH, int32_t OW,
                         int64_t planes, int32_t th, int32_t max_rows, int32_t win_cols, bool vec_copy,
                         bool vec_store, T* __restrict__ dst) {
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

  // The tables this tile reads, tile-locally indexed: its own entries in shared memory when
  // resampling along H first; else (upscaling) the workspace's, which the table kernel built
  // (measured: the same entries in shared memory slowed the 2x bicubic float32 forward by
  // 19%, through a worse schedule of its H pass).
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
        if (j < tile_w)
          out[static_cast<int64_t>(oy0 + i) * OW + ox0 + j] =
              Convert<T>::template store<Acc>(gather_element<TY, TX>(gt, n, c, i, j));
      }
    }
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
  // selects (measured on an H200: float16 bicubic 2x forward 156 -> 150 us). Not for one
  // tap: it saves a single select there, and the nearest 0.5x backward (float16) was 7%
  // slower with it.
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
        store4(dst_row, v);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (oxq + e < OW)
            dst_row[e] = Convert<T>::template store<Acc>(off >= 0 && (xmask >> e & 1u) ? v[e] : extrapolation);
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
      *o = Convert<T>::template store<Acc>(col_ok && (row_bits >> i & 1u) ? v : extrapolation);
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
}

// Calls body(src, plane) for the output planes blockIdx.z, blockIdx.z + gridDim.z, ... below
// `planes` (N * C), src pointing at plane (n, c) of the strided input (n and c are stepped,
// not divided, per plane). The pairs and ring kernels loop over planes so (one_tap_kernel
// writes the same walk out).
template <typename T, typename Acc, typename Body>
__device__ __forceinline__ void for_planes(const Gather<T, Acc>& g, int32_t C, int64_t planes, Body&& body) {
  const int64_t step = gridDim.z, step_n = step / C, step_c = step % C;
  int64_t n = blockIdx.z / C, c = blockIdx.z % C;
  for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
    body(g.src + n * g.stride[0] + c * g.stride[1], plane);
    n += step_n;
    c += step_c;
    if (c >= C) {
      c -= C;
      ++n;
    }
  }
}

// One-tap gathers (nearest) of NCHW tensors that downscale along H: each output reads one
// input element, so no window is staged (and no input row is read that no output needs). A
// thread owns kVec adjacent output columns of a row (their input columns and weights in
// registers, fixed for every plane) and loops over planes, then rows; one vector store per
// row. The arithmetic is gather_element's. Measured on an H200 at (8, 64, 256, 256), against
// the staged tiles: nearest 0.5x forward float32 42 -> 35 us, float16 32 -> 24 us, outputs
// bitwise equal; at 2x (every input element read by four outputs) it was slower (float16
// 102 -> 200 us), so upscaling keeps the staged tiles.
// kOwn (F.interpolate's nearest and nearest-exact, p.pytorch): the kernel computes its
// entries with axis_entry's arithmetic (pytorch_nearest_index, weight 1), and no table
// kernel runs before it. Measured on the H200 (1080p, float32 nearest 0.5x): the table
// kernel before the gather cost about 3.6 us per call.
constexpr int kOneTapRows = kThreads / 32;  // rows per block; a warp spans 32 * kVec columns
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
  // 8-16 more instructions and measured 5% slower on the H200 (float16 nearest 0.5x at
  // (8, 64, 256, 256), 23.6 -> 24.8 us).
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
template <typename T>
constexpr int kPairLoad = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load
template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads) pairs_kernel(Gather<T, Acc> g, int32_t C, int32_t OH, int32_t OW,
                                                         int64_t planes, T* __restrict__ dst) {
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
          o.v[e] = Convert<T>::template store<Acc>(acc);
        }
      }
      uint2 raw;
      memcpy(&raw, &o, sizeof(raw));
      __stcs(reinterpret_cast<uint2*>(out + static_cast<int64_t>(y) * OW), raw);
    }
  });
}

// The type of one aligned load of kBytes (2, 4, 8 or 16) bytes.
template <size_t kBytes>
using RawLoad = std::conditional_t<
    kBytes == 16, uint4,
    std::conditional_t<kBytes == 8, uint2, std::conditional_t<kBytes == 4, unsigned, unsigned short>>>;

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

// The ring kernels fetch each row's input chunks A rows before they are used (register
// buffers, rotated), and keep to 128 registers (two blocks per SM). Measured on the H200
// (8x64x256x256 and 1080p, standalone harness): fetching ahead took bicubic float16 0.5x
// from 53.5 to 30.8 us and 2x from 138 to 114 us; two rows ahead helps the 2- and 4-tap
// halving and the 3-wide doubling, and spills registers in the others.
constexpr int kRingMinBlocks = 2;

// halving_kernel's block: 8 warps, two blocks per SM (128 registers) and the rows fetched
// ahead above; float32 with 8 taps: 4 warps, three blocks per SM (168 registers), two rows
// ahead. With 128 registers ptxas moves the loads of a second row ahead toward their use;
// with 168 it keeps them about 270 instructions (1.5 output rows) before it. Measured on
// the H200 (standalone harness, outputs bitwise equal): bicubic-antialias float32 0.5x
// 67.1 -> 60.0 us at 8x64x256x256, 21.0 -> 19.8 at 1x3x1080x1920, 14.0 -> 13.0 at
// 4x3x512x512; for float16 this block was no faster (40.0 -> 40.0 us), for bfloat16 and for
// float16 at 1080p slower (38.9 -> 40.5, 15.8 -> 17.2).
template <int TT, typename T>
struct HalvingBlock {
  static constexpr bool kWide = TT == 8 && std::is_same_v<T, float>;
  static constexpr int kThreads = kWide ? 128 : twinops::resize::kThreads;
  static constexpr int kMinBlocks = kWide ? 3 : kRingMinBlocks;
  static constexpr int kAhead = kWide || TT < 8 ? 2 : 1;  // rows fetched ahead
};

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
// permute per element. Measured on the H200 (8x64x256x256, outputs bitwise equal):
// bicubic-antialias 0.5x bfloat16 42.3 -> 38.9 us, float16 40.8 -> 39.9 us; bilinear float16
// 0.5x, which has no halo, 29.2 -> 30.6 us as words, so it keeps Pack, as float32 does
// (neutral to 1% slower as words).
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
// the row's weights wy, rounded to T.
template <typename T, int NT, int NO, typename Acc>
__device__ __forceinline__ Pack<T, NO> ring_h_sum(const Acc (&wy)[NT], const Acc (&mid)[NT][NO]) {
  Pack<T, NO> o;
#pragma unroll
  for (int e = 0; e < NO; ++e) {
    Acc acc = Acc(0);
#pragma unroll
    for (int k = 0; k < NT; ++k) acc += wy[k] * mid[k][e];
    o.v[e] = Convert<T>::template store<Acc>(acc);
  }
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
    halving_kernel(Gather<T, Acc> g, Params p, int32_t C, int32_t OH, int32_t OW, int64_t planes, int32_t R,
                   T* __restrict__ dst) {
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
      const Pack<T, K> o = ring_h_sum<T>(wy, mid);
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
constexpr int kDoublingCols = 4;  // input columns per lane
template <int TT, int NW, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, kRingMinBlocks)
    doubling_kernel(Gather<T, Acc> g, Params p, int32_t C, int32_t OH, int32_t OW, int64_t planes, int32_t R,
                    T* __restrict__ dst) {
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
  auto w_sum = [&](const Chunks& ch, int32_t r, Acc* m) {
    ring_w_sum<1, 2, HALO>(wx, ch, r >= 0 && r < g.src_h, m);
  };
  constexpr int A = NW == 3 ? 2 : 1;  // rows fetched ahead
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
        const Pack<T, OC> o = ring_h_sum<T>(wy, mid);
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
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < (1 << 20) ? (b > 0 ? b : 1) : (1 << 20));
}

// Per-element gather (NHWC, and NCHW tiles that do not fit), unrolled for 1, 2 and 4 taps.
template <int TY, int TX, typename T, typename Acc>
cudaError_t launch_elementwise(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last,
                               T* dst, cudaStream_t stream) {
  constexpr int FY = TY <= 4 ? TY : 0, FX = TX <= 4 ? TX : 0;
  const int64_t total = N * C * H * W;
  if (total < INT32_MAX) {  // 32-bit index decomposition; element offsets stay 64-bit
    gather_kernel<FY, FX, T, Acc, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        g, static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W), static_cast<int32_t>(total),
        channels_last, dst);
  } else {
    gather_kernel<FY, FX, T, Acc, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(g, C, H, W, total,
                                                                                       channels_last, dst);
  }
  return cudaGetLastError();
}

// Shared memory of the current device: per SM, the most one block may opt in to, and what
// the runtime reserves per block. Queried once per device.
struct SmemLimits {
  int64_t per_sm = 0, per_block = 0, reserved_per_block = 0;
};
cudaError_t smem_limits(SmemLimits* out) {
  static std::mutex mutex;
  static std::map<int, SmemLimits> cache;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(device); it != cache.end()) {
    *out = it->second;
    return cudaSuccess;
  }
  int per_sm = 0, per_block = 0, reserved = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
      e != cudaSuccess)
    return e;
  if (cudaError_t e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device);
      e != cudaSuccess)
    return e;
  *out = cache[device] = SmemLimits{per_sm, per_block, reserved};
  return cudaSuccess;
}

// Resident blocks per SM and the SM count for a kernel at a dynamic shared memory size, on
// the current device; raises the kernel's shared memory limit when needed. Queried once
// per (kernel, bytes, device): the queries cost more host time than a small resize.
// `threads`: the kernel's block size.
cudaError_t resident_blocks(const void* kernel, size_t smem, int64_t* blocks, int threads = kThreads) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, size_t, int>, int64_t> cache;
  static std::map<std::pair<const void*, int>, size_t> limit;  // the kernel's raised limit, only ever raised
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  const auto key = std::make_tuple(kernel, smem, device);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) {
    *blocks = it->second;
    return cudaSuccess;
  }
  // The limit is raised for any size: a launch whose dynamic plus static shared memory
  // exceeds 48 KB needs it, so 48 KB of dynamic memory alone already does (a bug once).
  size_t& raised = limit[std::make_pair(kernel, device)];
  if (smem > raised) {
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        e != cudaSuccess)
      return e;
    raised = smem;
  }
  int sms = 0, per_sm = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess) return e;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem); e != cudaSuccess)
    return e;
  *blocks = cache[key] = static_cast<int64_t>(std::max(per_sm, 1)) * sms;
  return cudaSuccess;
}

// Whether every element offset within a source plane fits in 32 bits.
template <typename T, typename Acc>
bool narrow_offsets(const Gather<T, Acc>& g) {
  return (g.src_h - 1) * g.stride[2] + (g.src_w - 1) * g.stride[3] < INT32_MAX;
}

// Whether every source row of every plane is dense (unit element stride) and starts at a
// multiple of k elements (k sizeof(T) bytes): the row, ring and staged kernels' vector loads.
template <typename T, typename Acc>
bool aligned_rows(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t k) {
  return g.stride[3] == 1 && g.stride[2] % k == 0 && (N == 1 || g.stride[0] % k == 0) &&
         (C == 1 || g.stride[1] % k == 0) && reinterpret_cast<uintptr_t>(g.src) % (k * sizeof(T)) == 0;
}

// Grid of the row kernels (one_tap_kernel, pairs_kernel): a warp spans 32 * `cols` output
// columns of a row, a block kOneTapRows rows; one resident wave, in which each block loops
// over planes (its columns' tables stay in registers).
cudaError_t row_kernel_grid(const void* kernel, int64_t planes, int64_t H, int64_t W, int cols, dim3* grid) {
  int64_t resident = 0;
  if (cudaError_t e = resident_blocks(kernel, 0, &resident); e != cudaSuccess) return e;
  const int64_t gx = (W + 32 * cols - 1) / (32 * cols);
  const int64_t gy = std::min<int64_t>((H + kOneTapRows - 1) / kOneTapRows, 65535);
  const int64_t gz = std::min<int64_t>(std::max<int64_t>(resident / (gx * gy), 1), std::min<int64_t>(planes, 65535));
  *grid = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
  return cudaSuccess;
}

// `own`: F.interpolate's parameters (one_tap_kernel's kOwn), else null: the tables are built.
template <typename T, typename Acc>
cudaError_t launch_one_tap(const Gather<T, Acc>& g, const Params* own, int64_t N, int64_t C, int64_t H, int64_t W,
                           T* dst, cudaStream_t stream) {
  const auto kernel = own != nullptr ? one_tap_kernel<true, T, Acc> : one_tap_kernel<false, T, Acc>;
  dim3 grid;
  if (cudaError_t e = row_kernel_grid(reinterpret_cast<const void*>(kernel), N * C, H, W, kVec, &grid); e != cudaSuccess)
    return e;
  const bool vec_store = W % kVec == 0 && reinterpret_cast<uintptr_t>(dst) % (kVec * sizeof(T)) == 0;
  kernel<<<grid, kThreads, 0, stream>>>(g, own != nullptr ? *own : Params{}, static_cast<int32_t>(C),
                                        static_cast<int32_t>(H), static_cast<int32_t>(W), N * C, vec_store, dst);
  return cudaGetLastError();
}

// replicate_kernel<SX> for F.interpolate's parameters `p` when its factors and layout allow
// (dense rows, every load and 16-byte store aligned); else *launched = false.
template <int SX, typename T, typename Acc>
cudaError_t launch_replicate(const Gather<T, Acc>& g, int sy, int64_t N, int64_t C, int64_t W, T* dst,
                             cudaStream_t stream, bool* launched) {
  constexpr int L = kReplicateLoad<SX, T>;
  *launched = aligned_rows(g, N, C, L) && g.src_w % L == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  if (!*launched) return cudaSuccess;
  const auto kernel = replicate_kernel<SX, T, Acc>;
  dim3 grid;
  if (cudaError_t e = row_kernel_grid(reinterpret_cast<const void*>(kernel), N * C, g.src_h, g.src_w, L, &grid);
      e != cudaSuccess)
    return e;
  kernel<<<grid, kThreads, 0, stream>>>(g, static_cast<int32_t>(C), sy, static_cast<int32_t>(W), N * C, dst);
  return cudaGetLastError();
}

template <typename T, typename Acc>
cudaError_t replicate(const Gather<T, Acc>& g, const Params& p, int64_t N, int64_t C, int64_t W, T* dst,
                      cudaStream_t stream, bool* launched) {
  *launched = false;
  const int sy = nearest_ratio<Acc>(p, p.h), sx = nearest_ratio<Acc>(p, p.w);
  if (sy <= 0) return cudaSuccess;
  switch (sx) {
    case 1: return launch_replicate<1>(g, sy, N, C, W, dst, stream, launched);
    case 2: return launch_replicate<2>(g, sy, N, C, W, dst, stream, launched);
    case 4: return launch_replicate<4>(g, sy, N, C, W, dst, stream, launched);
    case 8: return launch_replicate<8>(g, sy, N, C, W, dst, stream, launched);
    default: return cudaSuccess;
  }
}

// pick_kernel<SX> for the backward of F.interpolate's parameters `p` when its factors and
// layout allow (grad_output rows dense and every load aligned, grad_input rows whole 16-byte
// stores); else *launched = false.
template <int SX, typename T, typename Acc>
cudaError_t launch_pick(const Gather<T, Acc>& g, int sy, int oy, int ox, int64_t N, int64_t C, int64_t IH,
                        int64_t IW, T* dst, cudaStream_t stream, bool* launched) {
  constexpr int E = 16 / static_cast<int>(sizeof(T)), L = E / SX;
  *launched = false;
  if constexpr (L >= 1) {
    *launched = aligned_rows(g, N, C, L) && IW % E == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
    if (!*launched) return cudaSuccess;
    const auto kernel = pick_kernel<SX, T, Acc>;
    dim3 grid;
    if (cudaError_t e = row_kernel_grid(reinterpret_cast<const void*>(kernel), N * C, IH, IW, E, &grid);
        e != cudaSuccess)
      return e;
    kernel<<<grid, kThreads, 0, stream>>>(g, static_cast<int32_t>(C), sy, oy, ox, static_cast<int32_t>(IH),
                                          static_cast<int32_t>(IW), N * C, dst);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

template <typename T, typename Acc>
cudaError_t pick(const Gather<T, Acc>& g, const Params& p, int64_t N, int64_t C, T* dst, cudaStream_t stream,
                 bool* launched) {
  *launched = false;
  const int ry = nearest_ratio<Acc>(p, p.h), rx = nearest_ratio<Acc>(p, p.w);
  // Downscales (or equal lengths) on both axes: the factors and the offsets of the picks.
  if (ry == 0 || rx == 0 || (ry > 1 || rx > 1)) return cudaSuccess;
  const int sy = ry < 0 ? -ry : 1, sx = rx < 0 ? -rx : 1;
  const int oy = p.coord == kHalfPixel ? sy / 2 : 0, ox = p.coord == kHalfPixel ? sx / 2 : 0;
  switch (sx) {
    case 1: return launch_pick<1>(g, sy, oy, ox, N, C, p.h.in, p.w.in, dst, stream, launched);
    case 2: return launch_pick<2>(g, sy, oy, ox, N, C, p.h.in, p.w.in, dst, stream, launched);
    case 4: return launch_pick<4>(g, sy, oy, ox, N, C, p.h.in, p.w.in, dst, stream, launched);
    case 8: return launch_pick<8>(g, sy, oy, ox, N, C, p.h.in, p.w.in, dst, stream, launched);
    default: return cudaSuccess;
  }
}

// Whether pairs_kernel can read `g` and write `dst`: dense rows, every 16-byte load and
// 8-byte store aligned (the table conditions are pairs_axis's).
template <typename T, typename Acc>
bool pairs_layout(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t W, const T* dst) {
  constexpr int G = kPairLoad<T>;
  static_assert(G / 2 * sizeof(T) == 8, "one 8-byte store per row");
  return aligned_rows(g, N, C, G) && W % (G / 2) == 0 && reinterpret_cast<uintptr_t>(dst) % 8 == 0;
}

template <typename T, typename Acc>
cudaError_t launch_pairs(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, T* dst,
                         cudaStream_t stream) {
  const auto kernel = pairs_kernel<T, Acc>;
  dim3 grid;
  if (cudaError_t e = row_kernel_grid(reinterpret_cast<const void*>(kernel), N * C, H, W, kPairLoad<T> / 2, &grid);
      e != cudaSuccess)
    return e;
  kernel<<<grid, kThreads, 0, stream>>>(g, static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W),
                                        N * C, dst);
  return cudaGetLastError();
}

// Launches a ring kernel (halving_kernel, doubling_kernel), whose warps own R consecutive
// rows of `rows` (output rows, or input rows for doubling) and 32 lanes' columns (blocks of
// `cols` output columns across W); each block loops over the planes blockIdx.z + k gz. R and
// gz: ring_grid (one wave of blocks). `smem_of(R)`: the block's shared memory; `threads`: the
// kernel's block size. gy <= 65535: launch_gather routes H <= 65535 * 16 here, and ring_grid
// takes R below r_max (16 or 64) only where the blocks fit one wave, so gy is at most the
// resident blocks or rows / (warps r_max), with at least 4 warps per block.
template <typename T, typename Acc, typename SmemOf>
cudaError_t launch_ring(void (*kernel)(Gather<T, Acc>, Params, int32_t, int32_t, int32_t, int64_t, int32_t, T*),
                        const Gather<T, Acc>& g, const Params& p, int64_t N, int64_t C, int64_t H, int64_t W,
                        int64_t cols, int64_t rows, int r_max, double prologue, SmemOf smem_of, T* dst,
                        cudaStream_t stream, int threads = kThreads) {
  const int warps = threads / 32;
  const int64_t planes = N * C, gx = (W + cols - 1) / cols;
  // Shared memory grows with R: r_max's resident blocks hold for every R.
  int64_t resident = 0;
  if (cudaError_t e = resident_blocks(reinterpret_cast<const void*>(kernel), smem_of(r_max), &resident, threads);
      e != cudaSuccess)
    return e;
  const RingGrid rg = ring_grid(rows, gx, planes, resident, r_max, prologue, warps);
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(rg.gy), static_cast<unsigned>(rg.gz));
  kernel<<<grid, threads, smem_of(rg.r), stream>>>(g, p, static_cast<int32_t>(C), static_cast<int32_t>(H),
                                                    static_cast<int32_t>(W), planes, rg.r, dst);
  return cudaGetLastError();
}

template <int TT, typename T, typename Acc>
cudaError_t launch_halving(const Gather<T, Acc>& g, const Params& p, int64_t N, int64_t C, int64_t H, int64_t W, T* dst,
                           cudaStream_t stream) {
  constexpr int kCols = 32 * (kPairLoad<T> / 2), kThreadsH = HalvingBlock<TT, T>::kThreads, kWarps = kThreadsH / 32;
  // Prologue: TT - 2 input rows resampled along W, about 0.4 of an output row's work each
  // (a loop row fetches and resamples 2, then sums along H and stores).
  return launch_ring(halving_kernel<TT, T, Acc>, g, p, N, C, H, W, kCols, H, 16, 0.4 * (TT - 2),
                     [](int r) { return static_cast<size_t>(kCols + kWarps * r) * TT * sizeof(Acc); }, dst, stream,
                     kThreadsH);
}

// Whether doubling_kernel can read `g` and write `dst`: dense rows whose 4-column loads and
// 8-column stores (16 bytes for 2-byte elements) are aligned.
template <typename T, typename Acc>
bool doubling_layout(const Gather<T, Acc>& g, int64_t N, int64_t C, const T* dst) {
  constexpr int IC = kDoublingCols;
  static_assert(sizeof(T) == 2, "launch_gather routes 2-byte elements here: 16-byte stores of 8 outputs");
  return aligned_rows(g, N, C, IC) && g.src_w % IC == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
}

template <int TT, int NW, typename T, typename Acc>
cudaError_t launch_doubling(const Gather<T, Acc>& g, const Params& p, int64_t N, int64_t C, int64_t H, int64_t W,
                            T* dst, cudaStream_t stream) {
  constexpr int kCols = 2 * 32 * kDoublingCols, kWarps = kThreads / 32;
  // R counts input rows.
  // Prologue: NW - 1 input rows resampled along W, about 0.4 of a loop row's work each.
  return launch_ring(doubling_kernel<TT, NW, T, Acc>, g, p, N, C, H, W, kCols, g.src_h, 64, 0.4 * (NW - 1),
                     [](int r) { return static_cast<size_t>(kCols + 2 * kWarps * r) * NW * sizeof(Acc); }, dst,
                     stream);
}

// Where a forward's tables come from. With `own` (the forward's parameters), staged tiles
// that resample along H first build their own entries, and the table kernel runs (into L /
// ws) only for the other gathers. The backward passes none: its inverse tables are built
// before (from the forward tables) and tiles copy their entries from them.
struct TableSource {
  const Params* own = nullptr;
  const Workspace* L = nullptr;
  char* ws = nullptr;
};

template <typename Acc>
cudaError_t build_tables(const Params& p, const Workspace& L, char* ws, bool backward, cudaStream_t stream) {
  const int64_t entries = backward ? std::max(p.h.out, p.h.in) + std::max(p.w.out, p.w.in) : p.h.out + p.w.out;
  build_tables_kernel<Acc><<<blocks_for(entries), kThreads, 0, stream>>>(p, L, ws, backward);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (!backward) return cudaSuccess;
  scatter_ranges_kernel<Acc><<<blocks_for(p.h.out + p.w.out), kThreads, 0, stream>>>(p, L, ws);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  inverse_tables_kernel<Acc><<<blocks_for(p.h.in + p.w.in), kThreads, 0, stream>>>(p, L, ws);
  return cudaGetLastError();
}

template <typename Acc>
cudaError_t ensure_tables(const TableSource& src, cudaStream_t stream) {
  return src.own != nullptr ? build_tables<Acc>(*src.own, *src.L, src.ws, false, stream) : cudaSuccess;
}

template <bool WFirst, int TW, int TY, int TX, typename T, typename Acc>
cudaError_t launch_staged(const Gather<T, Acc>& g, const TableSource& src, int64_t N, int64_t C, int64_t H, int64_t W,
                          int32_t th, int32_t rows, int32_t cols, T* dst, cudaStream_t stream) {
  constexpr int G = 16 / sizeof(T);
  const auto kernel = staged_gather_kernel<WFirst, TW, TY, TX, T, Acc>;
  const size_t smem = staged_smem<T, Acc>(WFirst, TW, th, g.ty, g.tx, rows, cols);
  // Tiles that resample along W first read the workspace's tables (see kTileTables).
  const bool own = !WFirst && src.own != nullptr;
  if (WFirst)
    if (cudaError_t e = ensure_tables<Acc>(src, stream); e != cudaSuccess) return e;
  int64_t resident = 0;
  if (cudaError_t e = resident_blocks(reinterpret_cast<const void*>(kernel), smem, &resident); e != cudaSuccess)
    return e;
  const int64_t tiles_x = (W + TW - 1) / TW, tiles_y = (H + th - 1) / th;
  // One resident wave: each block loops over planes, so its pipeline start is paid once.
  int64_t z = resident / (tiles_x * tiles_y);
  z = std::min<int64_t>(std::max<int64_t>(z, 1), std::min<int64_t>(N * C, 65535));
  const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y), static_cast<unsigned>(z));
  const bool vec_store = W % kVec == 0 && reinterpret_cast<uintptr_t>(dst) % (kVec * sizeof(T)) == 0;
  // 16-byte copies need dense rows whose starts (and the window's, rounded down) are aligned.
  const bool vec_copy = aligned_rows(g, N, C, G);
  kernel<<<grid, kThreads, smem, stream>>>(g, own ? *src.own : Params{}, own,
                                           static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W),
                                           N * C, th, rows, cols, vec_copy, vec_store, dst);
  return cudaGetLastError();
}

template <int TY, int TX, typename T, typename Acc>
cudaError_t launch_gather(const Gather<T, Acc>& g, const TableSource& src, int64_t N, int64_t C, int64_t H, int64_t W,
                          bool channels_last, T* dst, cudaStream_t stream) {
  auto elementwise = [&]() {
    if (cudaError_t e = ensure_tables<Acc>(src, stream); e != cudaSuccess) return e;
    return launch_elementwise<TY, TX>(g, N, C, H, W, channels_last, dst, stream);
  };
  // The staged tiles (pass 1), the one-tap and the pairs kernels keep 32-bit element offsets
  // within a source plane.
  if (channels_last || C >= INT32_MAX || !narrow_offsets(g)) return elementwise();
  // The window a tile typically reads: the coordinate step is about src / out per axis, plus
  // the taps, one for the rounding of the first tap and the alignment of its start (16-byte
  // copies) and of the width (kVec-wide H passes).
  constexpr int kAlign = window_align<T>();
  const double span_y = static_cast<double>(g.src_h) / static_cast<double>(H);
  const double span_x = static_cast<double>(g.src_w) / static_cast<double>(W);
  // Upscaling resamples along W first (fewer window rows than tile rows), downscaling along
  // H first (fewer tile rows than window rows).
  const bool w_first = span_y <= 1.0;
  if constexpr (TY == 1 && TX == 1) {
    // Nearest upscales by powers of two (and same-size nearest): replicate_kernel.
    if (src.own != nullptr) {
      bool launched = false;
      if (cudaError_t e = replicate(g, *src.own, N, C, W, dst, stream, &launched); e != cudaSuccess || launched)
        return e;
    }
    // Downscaling one-tap tables (nearest): nothing to share through a window, so the one-tap
    // kernel (and H-first staged tiles always have two or more taps per row).
    if (!w_first) {
      if (src.own != nullptr && src.own->pytorch && src.own->mode == kNearest)
        return launch_one_tap(g, src.own, N, C, H, W, dst, stream);
      if (cudaError_t e = ensure_tables<Acc>(src, stream); e != cudaSuccess) return e;
      return launch_one_tap<T, Acc>(g, nullptr, N, C, H, W, dst, stream);
    }
  }
  // Forward 2:1 downscales of both axes centred on the input pairs: halving_kernel (its halo
  // is one 16-byte chunk each side: not float64 with 8 taps).
  if constexpr (TY == TX && (TX == 2 || TX == 4 || TX == 8) && TX / 2 - 1 <= kPairLoad<T>) {
    if (src.own != nullptr && pairs_layout(g, N, C, W, dst) && H <= 65535 * 16 &&
        halving_axis(*src.own, src.own->w, TX, sizeof(Acc)) && halving_axis(*src.own, src.own->h, TY, sizeof(Acc)))
      return launch_halving<TX>(g, *src.own, N, C, H, W, dst, stream);
  }
  // Forward 2x upscales of both axes with windows around their inputs: doubling_kernel, for
  // 2-byte elements (with float32 the staged tiles were as fast or faster on the H200).
  if constexpr (TY == TX && (TX == 2 || TX == 4 || TX == 8) && sizeof(T) == 2) {
    constexpr int NW = TX == 2 ? 3 : 5;
    if (src.own != nullptr && doubling_layout(g, N, C, dst) && H <= 65535 * 16 &&
        doubling_axis(*src.own, src.own->w, TX, NW, sizeof(Acc)) &&
        doubling_axis(*src.own, src.own->h, TY, NW, sizeof(Acc)))
      return launch_doubling<TX, NW>(g, *src.own, N, C, H, W, dst, stream);
  }
  // Forward 2:1 downscales along W on the input pairs (bilinear 0.5x): pairs_kernel.
  if constexpr (TY == 2 && TX == 2) {
    if (!w_first && src.own != nullptr && pairs_layout(g, N, C, W, dst) &&
        pairs_axis(*src.own, src.own->w, TX, sizeof(Acc))) {
      if (cudaError_t e = ensure_tables<Acc>(src, stream); e != cudaSuccess) return e;
      return launch_pairs(g, N, C, H, W, dst, stream);
    }
  }
  struct Tile {
    int tw = 0, th = 0;
    int64_t rows = 0, cols = 0;  // the window's
    size_t smem = 0;
  };
  // Largest tiles first (longer stores, less halo, longer runs of rows per pass-2 thread);
  // the first whose shared memory fits `budget`, else the smallest that fits a block at all.
  SmemLimits limits;
  if (cudaError_t e = smem_limits(&limits); e != cudaSuccess) return e;
  auto pick = [&](int64_t budget, Tile* out) {
    constexpr Tile kShapes[] = {{128, 64}, {128, 32}, {64, 32}, {64, 16}, {64, 8}};
    for (int pass = 0; pass < 2; ++pass) {
      for (Tile t : kShapes) {
        if (pass == 1 && t.th != 8) continue;
        if (t.tw == 128 && (W <= 64 || !w_first)) continue;
        if ((H + t.th - 1) / t.th > 65535) continue;
        t.rows = static_cast<int64_t>(std::ceil((t.th - 1) * span_y)) + g.ty + 2;
        t.cols = (static_cast<int64_t>(std::ceil((t.tw - 1) * span_x)) + g.tx + 2 + (kAlign - 1) + (kAlign - 1)) /
                 kAlign * kAlign;
        t.smem = staged_smem<T, Acc>(w_first, t.tw, t.th, g.ty, g.tx, t.rows, t.cols);
        if (static_cast<int64_t>(t.smem) > (pass == 0 ? budget : limits.per_block - kStaticSmem)) continue;
        *out = t;
        return true;
      }
    }
    return false;
  };
  // The budget leaves room for the blocks per SM the kernel's registers are sized for
  // (staged_min_blocks). Measured on an H200 (228 KB per SM): downscaling tiles within
  // 112 KB (two blocks) beat smaller ones at three (bicubic float32 0.5x: 60 vs 64 us, float16
  // 42 vs 46); upscaling tiles within 72 KB (three blocks) beat larger ones at two where
  // blocks loop over many planes (bicubic float32 2x at (8, 64, 256, 256): 198 vs 203 us with
  // 128x64 tiles, at (1, 64, 128, 128) 16.9 vs 18.2), but often not where one plane's tiles
  // fill the resident blocks (large images, few planes): see large_upscaling_tiles.
  const int64_t blocks = w_first ? staged_min_blocks<true, Acc>() : staged_min_blocks<false, Acc>();
  const auto budget = [&](int64_t per_sm, int64_t cap_kb) {
    return std::min<int64_t>(cap_kb * 1024, limits.per_sm / per_sm - limits.reserved_per_block);
  };
  // Tiles per plane, and the blocks of their kernel resident at once.
  const auto tiles = [&](const Tile& t) { return (W + t.tw - 1) / t.tw * ((H + t.th - 1) / t.th); };
  const auto resident = [&](const Tile& t, int64_t* out) {
    const auto kernel = t.tw == 128 ? staged_gather_kernel<true, 128, TY, TX, T, Acc>
                                    : staged_gather_kernel<true, 64, TY, TX, T, Acc>;
    return resident_blocks(reinterpret_cast<const void*>(kernel), t.smem, out);
  };
  Tile t, large;
  if (!pick(budget(blocks, w_first ? 72 : 112), &t)) return elementwise();
  if (w_first && blocks > 2 && pick(budget(2, 112), &large) && large.smem > t.smem) {
    int64_t r_small = 0, r_large = 0;
    if (cudaError_t e = resident(t, &r_small); e != cudaSuccess) return e;
    if (cudaError_t e = resident(large, &r_large); e != cudaSuccess) return e;
    if (large_upscaling_tiles(tiles(t), r_small, tiles(large), r_large, N * C)) t = large;
  }
  const int32_t r = static_cast<int32_t>(t.rows), c = static_cast<int32_t>(t.cols);
  if constexpr (!(TY == 1 && TX == 1))
    if (!w_first) return launch_staged<false, 64, TY, TX>(g, src, N, C, H, W, t.th, r, c, dst, stream);
  if (t.tw == 128) return launch_staged<true, 128, TY, TX>(g, src, N, C, H, W, t.th, r, c, dst, stream);
  return launch_staged<true, 64, TY, TX>(g, src, N, C, H, W, t.th, r, c, dst, stream);
}

// Unrolled gathers for the table widths workspace_layout pads to (both axes alike).
template <typename T, typename Acc>
cudaError_t gather(const Gather<T, Acc>& g, const TableSource& src, int64_t N, int64_t C, int64_t H, int64_t W,
                   bool channels_last, T* dst, cudaStream_t stream) {
  if (g.ty == g.tx) {
    switch (g.ty) {
      case 1: return launch_gather<1, 1>(g, src, N, C, H, W, channels_last, dst, stream);
      case 2: return launch_gather<2, 2>(g, src, N, C, H, W, channels_last, dst, stream);
      case 4: return launch_gather<4, 4>(g, src, N, C, H, W, channels_last, dst, stream);
      case 8: return launch_gather<8, 8>(g, src, N, C, H, W, channels_last, dst, stream);
      case 10: return launch_gather<10, 10>(g, src, N, C, H, W, channels_last, dst, stream);
      case 12: return launch_gather<12, 12>(g, src, N, C, H, W, channels_last, dst, stream);
      case 16: return launch_gather<16, 16>(g, src, N, C, H, W, channels_last, dst, stream);
      default: break;
    }
  }
  return launch_gather<0, 0>(g, src, N, C, H, W, channels_last, dst, stream);
}

}  // namespace

template <typename T>
cudaError_t forward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* input, T* output,
                         bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  Gather<T, Acc> g = forward_gather<T, Acc>(p, tables_at<Acc>(L, ws), input, geo.in_stride);
  return gather(g, TableSource{&p, &L, ws}, geo.n, geo.c, p.h.out, p.w.out, channels_last, output, stream);
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* grad_output,
                          T* grad_input, bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  Gather<T, Acc> g = backward_gather<T, Acc>(p, tables_at<Acc>(L, ws), grad_output, geo.out_stride);
  // Nearest downscales by powers of two (and same-size nearest): pick_kernel, no tables.
  if (!channels_last && geo.c < INT32_MAX && narrow_offsets(g)) {
    bool launched = false;
    if (cudaError_t e = pick(g, p, geo.n, geo.c, grad_input, stream, &launched); e != cudaSuccess || launched)
      return e;
  }
  if (cudaError_t e = build_tables<Acc>(p, L, ws, true, stream); e != cudaSuccess) return e;
  return gather(g, TableSource{}, geo.n, geo.c, p.h.in, p.w.in, channels_last, grad_input, stream);
}

#define TWIN_INSTANTIATE(T)                                                                                    \
  template cudaError_t forward_cuda<T>(const Params&, const Workspace&, const Geometry&, const T*, T*, bool,   \
                                       void*, cudaStream_t);                                                   \
  template cudaError_t backward_cuda<T>(const Params&, const Workspace&, const Geometry&, const T*, T*, bool,  \
                                        void*, cudaStream_t);

TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)

#undef TWIN_INSTANTIATE

}  // namespace resize
}  // namespace twinops
