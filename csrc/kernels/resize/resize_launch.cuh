// Host side of the resize kernels: the resident-blocks query (the device's properties come
// from ../device_props.h), each family's launcher and the routing (launch_gather, gather)
// that picks a family for a forward or backward.
// Included only by resize.cu (the one translation unit of the resize kernels).
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "../device_props.h"
#include "resize.cuh"
#include "resize_common.cuh"
#include "resize_rings.cuh"
#include "resize_rows.cuh"
#include "resize_staged.cuh"
#include "resize_tables.cuh"
#include "resize_tuning.h"

namespace twinops {
namespace resize {

namespace kernels {

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

// Resident blocks per SM (the occupancy query) times the SM count (DeviceProps) for a kernel
// at a dynamic shared memory size, on the current device; raises the kernel's shared memory
// limit when needed. Queried once per (kernel, bytes, device): the queries cost more host time
// than a small resize. `threads`: the kernel's block size.
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
  // exceeds 48 KB needs it, and that can happen below 48 KB of dynamic memory.
  size_t& raised = limit[std::make_pair(kernel, device)];
  if (smem > raised) {
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        e != cudaSuccess)
      return e;
    raised = smem;
  }
  DeviceProps dev;
  if (cudaError_t e = device_props(device, &dev); e != cudaSuccess) return e;
  int per_sm = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem); e != cudaSuccess)
    return e;
  *blocks = cache[key] = static_cast<int64_t>(std::max(per_sm, 1)) * dev.sm_count;
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
  // Prologue: TT - 2 input rows resampled along W, each kRingPrologueRow of an output row's
  // work (a loop row fetches and resamples 2, then sums along H and stores).
  return launch_ring(halving_kernel<TT, T, Acc>, g, p, N, C, H, W, kCols, H, kHalvingRowsMax,
                     kRingPrologueRow * (TT - 2),
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
  // Prologue: NW - 1 input rows resampled along W, each kRingPrologueRow of a loop row's work.
  return launch_ring(doubling_kernel<TT, NW, T, Acc>, g, p, N, C, H, W, kCols, g.src_h, kDoublingRowsMax,
                     kRingPrologueRow * (NW - 1),
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
  // 2-byte elements (float32 keeps the staged tiles, as fast or faster: docs/perf/resize-notes.md,
  // "Ring kernels" / "Why they exist").
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
  // Largest tiles first (kStagedTileShapes: longer stores, less halo, longer runs of rows per
  // pass-2 thread); the first whose shared memory fits `budget`, else the smallest (8 rows)
  // that fits a block at all.
  DeviceProps dev;
  if (cudaError_t e = current_device_props(&dev); e != cudaSuccess) return e;
  auto pick = [&](int64_t budget, Tile* out) {
    for (int pass = 0; pass < 2; ++pass) {
      for (const TileShape& shape : kStagedTileShapes) {
        Tile t{shape.tw, shape.th};
        if (pass == 1 && t.th != 8) continue;
        if (!staged_tile_width_ok(t.tw, W, w_first)) continue;
        if ((H + t.th - 1) / t.th > 65535) continue;
        t.rows = static_cast<int64_t>(std::ceil((t.th - 1) * span_y)) + g.ty + 2;
        t.cols = (static_cast<int64_t>(std::ceil((t.tw - 1) * span_x)) + g.tx + 2 + (kAlign - 1) + (kAlign - 1)) /
                 kAlign * kAlign;
        t.smem = staged_smem<T, Acc>(w_first, t.tw, t.th, g.ty, g.tx, t.rows, t.cols);
        if (static_cast<int64_t>(t.smem) > (pass == 0 ? budget : dev.smem_optin_per_block - kStaticSmem)) continue;
        *out = t;
        return true;
      }
    }
    return false;
  };
  // The budgets (staged_budgets, resize_tuning.h) leave room for the blocks per SM the
  // kernel's registers are sized for (staged_min_blocks): larger downscaling tiles at two
  // blocks, smaller upscaling tiles at three where blocks loop over many planes, and where one
  // plane's tiles fill the resident blocks (large images, few planes) the larger ones when
  // large_upscaling_tiles says so (docs/perf/resize-notes.md, "Staged tiles" / "Tile budgets
  // (kept)").
  const StagedBudgets budgets = staged_budgets(
      dev, w_first, w_first ? staged_min_blocks<true, Acc>() : staged_min_blocks<false, Acc>(), kStaticSmem);
  // Tiles per plane, and the blocks of their kernel resident at once.
  const auto tiles = [&](const Tile& t) { return (W + t.tw - 1) / t.tw * ((H + t.th - 1) / t.th); };
  const auto resident = [&](const Tile& t, int64_t* out) {
    const auto kernel = t.tw == 128 ? staged_gather_kernel<true, 128, TY, TX, T, Acc>
                                    : staged_gather_kernel<true, 64, TY, TX, T, Acc>;
    return resident_blocks(reinterpret_cast<const void*>(kernel), t.smem, out);
  };
  Tile t, large;
  if (!pick(budgets.tile, &t)) return elementwise();
  if (budgets.large > 0 && pick(budgets.large, &large) && large.smem > t.smem) {
    int64_t r_small = 0, r_large = 0;
    if (cudaError_t e = resident(t, &r_small); e != cudaSuccess) return e;
    if (cudaError_t e = resident(large, &r_large); e != cudaSuccess) return e;
    if (large_upscaling_tiles(tiles(t), r_small, tiles(large), r_large, N * C, dev)) t = large;
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

}  // namespace kernels

}  // namespace resize
}  // namespace twinops
