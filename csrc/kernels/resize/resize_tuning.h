// The tuning of the resize kernels in one place: block shapes, register and shared-memory
// budgets and the host rules fitted to the NVIDIA H200, each written in terms of the device
// property it stands for; the measurement behind each is in docs/perf/resize-notes.md
// (section named per item). Host and device constexprs, included by resize.cuh. The host
// rules are pure functions of a DeviceProps (../device_props.h): on the fitted device
// (fitted_device) they give the measured values, on any other a conservative rule stated at
// each. They only choose among kernels that compute the same results.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../common/twinops_common.h"
#include "../device_props.h"

namespace twinops {
namespace resize {

// Threads per block of the resize kernels (8 warps), but for HalvingBlock's wide block.
constexpr int kThreads = 256;

// Blocks of `threads` threads resident per SM when each thread holds `registers` registers
// (kRegistersPerSm, the same on every architecture): the minimum blocks per SM that
// __launch_bounds__ sizes a kernel's registers for. Every minimum below (at most 3 x 256 or
// 3 x 128 threads) fits the 1024 threads of the smallest SM since sm_50, so none needs
// arch_min_blocks.
TWIN_HD constexpr int blocks_at_registers(int threads, int registers) {
  return kRegistersPerSm / (threads * registers);
}

// ---- Staged tiles (resize_staged.cuh; launch_gather picks the tile).

// Tile shapes (output columns x rows), largest first: the first whose shared memory fits the
// budget below is taken (notes: "Staged tiles" / "Tile budgets (kept)").
struct TileShape {
  int tw, th;
};
constexpr TileShape kStagedTileShapes[] = {{128, 64}, {128, 32}, {64, 32}, {64, 16}, {64, 8}};
// The tallest tile's rows (a tile's rows are one bit each of a 64-bit mask, row_bits).
constexpr int kTileHMax = 64;
// 128 columns only for upscaling tiles of outputs wider than 64 (notes: "Staged tiles" /
// "Measured and not kept", 128-wide downscaling tiles).
TWIN_HD constexpr bool staged_tile_width_ok(int tw, int64_t out_w, bool w_first) {
  return !(tw == 128 && (out_w <= 64 || !w_first));
}
// Input windows in shared memory: two in flight, one in use (notes: "Staged tiles" /
// "Measured and not kept", a fourth and fifth stage).
constexpr int kStages = 3;

// Blocks per SM the staged kernel's registers are sized for, and the tile budget's share of
// the SM's shared memory: three for upscaling tiles (65536 / (3 x 256): 85 registers a
// thread), two (128 registers, larger tiles) for downscaling tiles and double precision
// (notes: "Staged tiles" / "Tile budgets (kept)").
template <bool WFirst, typename Acc>
constexpr int staged_min_blocks() {
  return sizeof(Acc) > 4 || !WFirst ? 2 : 3;
}
// Blocks per SM the registers alone are sized for: as staged_min_blocks, but three for the
// float32 downscaling tiles of 2 and 4 taps: where the tile's shared memory allows a third
// block, sizing them for two makes the nearest float32 2x backward at 1080p about 15% slower
// (docs/perf/resize-notes.md, "Non-finite values on CUDA", has the measurements).
template <bool WFirst, int TY, typename T, typename Acc>
constexpr int staged_register_blocks() {
  return !WFirst && TY > 0 && TY <= 4 && sizeof(T) == 4 && sizeof(Acc) == 4 ? 3 : staged_min_blocks<WFirst, Acc>();
}

// Caps of a staged tile's shared memory, KB, fitted on the H200 (228 KB per SM, where a
// block's share is 75 KB at three blocks per SM and 113 KB at two): upscaling tiles at their
// blocks per SM, and downscaling tiles and the upscaling tiles' two-block alternative
// (notes: "Staged tiles" / "Tile budgets (kept)").
constexpr int64_t kUpscalingTileCapKb = 72;
constexpr int64_t kTwoBlockTileCapKb = 112;

// The caps on `d`, bytes: the same share of its shared memory per SM as the fitted caps are of
// the fitted device's (72 / 228 and 112 / 228), never above the fitted caps (larger tiles
// were slower where measured). On a device with 228 KB per SM, the fitted device included,
// they are kUpscalingTileCapKb and kTwoBlockTileCapKb; with less, the tiles shrink with it
// and the blocks per SM the registers are sized for still fit.
struct TileCaps {
  int64_t upscaling, two_block;
};
inline TileCaps staged_tile_caps(const DeviceProps& d) {
  const auto cap = [&](int64_t fitted_kb) {
    const int64_t share = d.smem_per_sm * fitted_kb * 1024 / kFittedDevice.smem_per_sm;
    return share < fitted_kb * 1024 ? share : fitted_kb * 1024;
  };
  return TileCaps{cap(kUpscalingTileCapKb), cap(kTwoBlockTileCapKb)};
}

// A tile's shared-memory budget, bytes: its share of the SM's at `blocks` per SM (less the
// runtime's reserve per block), at most `cap` and at most what one block may opt in to with
// `static_bytes` of static shared memory; 0 where nothing is left.
inline int64_t staged_tile_budget(const DeviceProps& d, int64_t blocks, int64_t cap, int64_t static_bytes) {
  int64_t b = d.smem_per_sm / blocks - d.smem_reserved_per_block;
  b = b < cap ? b : cap;
  b = b < d.smem_optin_per_block - static_bytes ? b : d.smem_optin_per_block - static_bytes;
  return b > 0 ? b : 0;
}

// The budgets launch_gather picks staged tiles by: `tile` for the tiles at the blocks per SM
// the kernel's registers are sized for (`min_blocks`, staged_min_blocks; fewer where `d` holds
// fewer: register_blocks), capped by staged_tile_caps (upscaling tiles: the upscaling cap at
// any blocks per SM); `large`, the upscaling tiles' two-block alternative, only where
// large_upscaling_tiles can take it (three blocks per SM, on the fitted device), else 0.
struct StagedBudgets {
  int64_t blocks, tile, large;
};
inline StagedBudgets staged_budgets(const DeviceProps& d, bool w_first, int min_blocks, int64_t static_bytes) {
  const TileCaps caps = staged_tile_caps(d);
  StagedBudgets b{register_blocks(d, kThreads, min_blocks), 0, 0};
  b.tile = staged_tile_budget(d, b.blocks, w_first ? caps.upscaling : caps.two_block, static_bytes);
  if (w_first && b.blocks > 2 && fitted_device(d)) b.large = staged_tile_budget(d, 2, caps.two_block, static_bytes);
  return b;
}

// A start (its tables, its first windows' copies and W pass) and a plane of a staged
// upscaling block, us, fitted on the H200 for bicubic float32 2x at (1, 3, 1080, 1920) and
// (8, 64, 256, 256): 128x32 tiles at three blocks per SM (small) and 128x64 tiles at two
// (large) (notes: "Staged tiles" / "Tile budgets (kept)").
constexpr double kSmallTileStartUs = 4.2, kSmallTilePlaneUs = 2.3;
constexpr double kLargeTileStartUs = 2.5, kLargeTilePlaneUs = 3.2;

// Whether the upscaling staged tiles (launch_gather) take the larger tiles of the two-block
// budget over the three-block budget's, on the fitted device: `small` and `large` tiles per
// plane, `resident_small` and `resident_large` blocks resident at once, `planes` planes. Only
// where one plane's small tiles fill the resident blocks (with fewer, every block fits one
// wave; where blocks got plane slots, the small tiles were faster). Each block then resamples
// its tile in every plane, and the blocks run in ceil(tiles / resident) waves, each taking a
// block's start and its planes, at the fitted times above; the large tiles are taken where
// that estimate is lower.
inline bool large_upscaling_tiles(int64_t small, int64_t resident_small, int64_t large, int64_t resident_large,
                                  int64_t planes) {
  if (small < resident_small || resident_small < 1 || resident_large < 1) return false;
  const double waves_small = static_cast<double>((small + resident_small - 1) / resident_small);
  const double waves_large = static_cast<double>((large + resident_large - 1) / resident_large);
  const double p = static_cast<double>(planes);
  return waves_large * (kLargeTileStartUs + kLargeTilePlaneUs * p) <
         waves_small * (kSmallTileStartUs + kSmallTilePlaneUs * p);
}
// The same on `d`: the estimate above on the fitted device; elsewhere never, since its times
// hold only there and the small tiles are the measured default (never slower where blocks got
// plane slots).
inline bool large_upscaling_tiles(int64_t small, int64_t resident_small, int64_t large, int64_t resident_large,
                                  int64_t planes, const DeviceProps& d) {
  return fitted_device(d) && large_upscaling_tiles(small, resident_small, large, resident_large, planes);
}

// ---- Row kernels (resize_rows.cuh).

// Rows of a row kernel's block: one per warp, a warp spanning a row's columns (notes:
// "Nearest", "Pairs kernel").
constexpr int kOneTapRows = kThreads / 32;

// ---- Ring kernels (resize_rings.cuh; notes: "Ring kernels").

// The ring kernels fetch each row's input chunks A rows before they are used, in rotated
// register buffers, and keep to 128 registers a thread: two blocks of kThreads per SM
// (notes: "Ring kernels" / "Why they exist").
constexpr int kRingRegisters = 128;
constexpr int kRingMinBlocks = blocks_at_registers(kThreads, kRingRegisters);

// halving_kernel's block: 8 warps at kRingMinBlocks and the rows fetched ahead (two for 2 and
// 4 taps, one for 8, where two spill registers); float32 with 8 taps: 4 warps at 168
// registers (three blocks per SM), two rows ahead, which ptxas keeps 1.5 output rows before
// their use at 168 registers and not at 128 (notes: "Ring kernels" / "float32 8-tap halving
// in 4-warp blocks (kept)").
template <int TT, typename T>
struct HalvingBlock {
  static constexpr bool kWide = TT == 8 && std::is_same_v<T, float>;
  static constexpr int kThreads = kWide ? 128 : twinops::resize::kThreads;
  // float32's two taps fit 80 registers: three blocks per SM, as before the fix-up's callee
  // (resize_fixup.cuh, fix_own_outputs) would take them to 118.
  static constexpr bool kThree = TT == 2 && std::is_same_v<T, float>;
  static constexpr int kMinBlocks =
      kWide ? blocks_at_registers(128, 168) : (kThree ? blocks_at_registers(kThreads, 80) : kRingMinBlocks);
  static constexpr int kAhead = kWide || TT < 8 ? 2 : 1;  // rows fetched ahead
};

// doubling_kernel: input columns per lane (an 8-byte load of 2-byte elements), and the rows
// fetched ahead for an NW-row ring (two for 3 rows, one for 5, where two spill registers)
// (notes: "Ring kernels" / "Why they exist").
constexpr int kDoublingCols = 4;
TWIN_HD constexpr int doubling_ahead(int nw) { return nw == 3 ? 2 : 1; }

// Rows per warp at most in ring_grid: halving_kernel's output rows, doubling_kernel's input
// rows (two output rows each). A row resampled along W before a warp's first output
// (the ring's prologue) counts as this fraction of a loop row's work (notes: "Ring kernels" /
// "The grid (`launch_ring`, kept)").
constexpr int kHalvingRowsMax = 16, kDoublingRowsMax = 64;
constexpr double kRingPrologueRow = 0.4;

// The grid of a ring kernel (launch_ring), on every device: it reads the device only through
// `resident` (the kernel's resident blocks per SM, from the occupancy query, times
// DeviceProps::sm_count), and its one fitted number, kRingPrologueRow, is a count of rows'
// work rather than a time. R rows per warp (2..r_max) and gz plane slots,
// for `rows` rows in blocks of `warps` warps, gx blocks across W, `planes` planes and
// `resident` blocks resident at once. One wave of blocks (gx gy gz <= resident) with the
// fewest estimated row times: the planes a block loops over times its rows (R, plus
// `prologue`, the loop rows' worth of work before a warp's first output, plus one row per
// plane for its fetch-ahead pipeline to refill), over the fraction of the resident blocks the
// grid fills. Ties keep the larger R. With many planes this is R = r_max and blocks looping
// over planes; with few (C = 3), more and shorter blocks that fill the device (a second wave
// of a few blocks, or blocks looping over 2 of 3 planes, were slower: notes, "Ring kernels" /
// "The grid (`launch_ring`, kept)"). Where no wave holds one plane's blocks: R = r_max (or
// the rows' worth), gz = 1.
struct RingGrid {
  int r;
  int64_t gy, gz;
};
inline RingGrid ring_grid(int64_t rows, int64_t gx, int64_t planes, int64_t resident, int r_max, double prologue,
                          int warps) {
  const int64_t z_max = planes < 65535 ? planes : 65535;
  const int64_t r_rows = (rows + warps - 1) / warps;
  const int r_top = static_cast<int>(r_rows < r_max ? (r_rows > 2 ? r_rows : 2) : r_max);
  RingGrid best{r_top, (rows + int64_t{warps} * r_top - 1) / (int64_t{warps} * r_top), 1};
  double best_t = -1.0;
  for (int r = r_top; r >= 2; --r) {
    const int64_t gy = (rows + int64_t{warps} * r - 1) / (int64_t{warps} * r);
    if (gx * gy > resident) break;  // smaller R: more blocks per plane
    // The most planes at once, then k = 1..8 planes per block.
    for (int k = 0; k <= 8; ++k) {
      int64_t gz = k == 0 ? resident / (gx * gy) : (planes + k - 1) / k;
      gz = gz < z_max ? gz : z_max;
      if (gz < 1 || gx * gy * gz > resident) continue;
      const int64_t loops = (planes + gz - 1) / gz;
      const double t = static_cast<double>(loops) * (r + prologue + 1.0) * static_cast<double>(resident) /
                       static_cast<double>(gx * gy * gz);
      if (best_t < 0 || t < best_t) {
        best_t = t;
        best = RingGrid{r, gy, gz};
      }
    }
  }
  return best;
}

}  // namespace resize
}  // namespace twinops
