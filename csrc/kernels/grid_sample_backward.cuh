// The deterministic CUDA backward of grid_sample by points binned per input cell: one entry
// per output point, not per (point, tap) pair.
//
// Part of grid_sample.cu's translation unit: included there after its helpers (load, store_as,
// nan_of, split_point, read_grid, Offsets, channel_slice, blocks_for, bits_for,
// elements_per_batch), whose anonymous namespace this header's code joins.
//
// Why: the pair path (grid_sample.cu) sorts every (point, tap) pair, P * taps items with 32-bit
// keys, and weights of 8 bytes per pair: on the H200 it ran at 0.2x .. 0.8x ATen's atomic
// backward (1080p C = 3: 0.58 ms vs 0.10 ms). Here:
//  1. one pass over the points (fused with grad_grid when that is wanted) gives every point a
//     key, the input CELL of its taps: per axis the smallest in-range tap index, n folded in;
//     points reading nothing (all taps outside, NaN points) get the key `none` and drop out.
//     The same pass counts the points per cell (integer atomics: counts do not depend on the
//     order) and writes the point index as the sort value;
//  2. CUB's stable radix sort of (key, point) over the key's bits only, so each cell's points
//     lie together in increasing point order; an exclusive scan of the counts gives each
//     cell's start in the sorted list;
//  3. one thread per input element (and channel slice) visits, in a fixed order, the cells
//     whose points can put a tap on it, recomputes each listed point's taps with the forward's
//     math (point_taps, grid_sample.cuh), adds the weights of the taps that land on the element
//     and sums grad_output * weight per channel (nearest: the element's own cell only, whose
//     points all put their one tap, of weight 1, on it; no grid read).
// The order of every sum is fixed by the data (cells in z, y, x order, points in index order),
// so grad_input is bitwise the same run to run; no atomics touch data.
//
// The cell <-> element relation, per axis. A point's taps along an axis (K of them: nearest 1,
// linear 2, cubic 4) all lie in [m, m + K - 1] where m is its smallest in-range tap: linear and
// nearest pad the coordinate before tapping (taps x0, x0 + 1 of the padded coordinate), cubic
// with zeros padding drops the taps outside, and cubic with border clamps each tap, which only
// narrows the spread. So element x is reached only from cells m in [x - K + 1, x] (clipped to
// the input), and since adjacent cells of one row are adjacent keys, one row's candidates are
// one contiguous range of the sorted list. This needs the tap coordinates to be exact integers
// where they land inside the input: every spatial size <= 2^24 (float opmath). The binning
// pass and the gather get a point's taps from the same code (point_taps), so they agree on
// them bit for bit. Cubic with reflection padding reflects each tap: in exact arithmetic that
// keeps the spread (reflection moves no two taps apart), but far outside, the tap coordinates
// collapse or gap in float and the flip count's parity comes from a rounded quotient, so a
// point's 4 taps need not lie within 3 of each other; it (and any size beyond 2^24) keeps the
// pair path.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

namespace twinops {
namespace grid_sample {
namespace {

// Limits of the cell path (not tuning): points per sort (CUB's item count is an int; the sort
// value is the point's int32 index in its sort) and the largest spatial size along any axis
// whose in-range tap coordinates are exact integers in float (the cell relation above).
constexpr int64_t kMaxPointsPerSort = int64_t(1) << 30;
constexpr int64_t kMaxCellAxis = int64_t(1) << 24;

// Whether the backward of `p` takes the cell path (else the pair path of grid_sample.cu).
inline bool uses_cell_path(const Params& p) {
  if (p.mode == kCubic && p.padding == kReflection) return false;
  for (int a = 0; a < 3; ++a)
    if (p.in[a] > kMaxCellAxis) return false;
  return elements_per_batch(p) <= kMaxElementsPerSort;
}

// Which points one cell sort takes: whole batches while their points and cells fit one sort,
// else one batch's points in several sorts whose gathers add up in order.
struct CellChunking {
  int64_t batches = 1;  // batches per sort
  int64_t points = 0;   // points per sort
  bool split_batch = false;
  int64_t max_elems = 0;
};

inline CellChunking cell_chunking(const Params& p) {
  const int64_t P = points_per_batch(p), E = elements_per_batch(p);
  CellChunking c;
  if (P <= kMaxPointsPerSort) {
    int64_t b = p.n;
    if (P > 0) b = std::min(b, kMaxPointsPerSort / P);
    b = std::min(b, kMaxElementsPerSort / E);
    c.batches = std::max<int64_t>(b, 1);
    c.points = c.batches * P;
  } else {
    c.split_batch = true;
    c.points = kMaxPointsPerSort;
  }
  c.max_elems = c.batches * E;
  return c;
}

// Byte offsets of the cell path's workspace arrays.
struct CellLayout {
  size_t keys_in, keys_out, vals_in, vals_out, start, temp, temp_bytes, bytes;
  int end_bit;
};

inline CellLayout cell_layout(const Params& p) {
  const CellChunking c = cell_chunking(p);
  CellLayout L{};
  WorkspaceOffsets w;
  const auto pts = static_cast<size_t>(c.points);
  L.keys_in = w.take(sizeof(uint32_t) * pts);
  L.keys_out = w.take(sizeof(uint32_t) * pts);
  L.vals_in = w.take(sizeof(int32_t) * pts);
  L.vals_out = w.take(sizeof(int32_t) * pts);
  L.start = w.take(sizeof(int32_t) * static_cast<size_t>(c.max_elems + 1));  // counts, scanned in place
  L.end_bit = bits_for(c.max_elems);  // keys 0 .. max_elems - 1 and `none` = the chunk's cell count
  const size_t sort_bytes = c.points > 0 ? sort_temp_bytes(c.points, L.end_bit) : 0;
  size_t scan_bytes = 0;
  // In place (d_in == d_out), as CUB's own in-place overload calls it; spelled out so that no
  // overload can take the stream for the item count.
  cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                static_cast<int>(c.max_elems + 1));
  L.temp_bytes = std::max(sort_bytes, scan_bytes);
  L.temp = w.take(L.temp_bytes);
  L.bytes = w.end;
  return L;
}

// The smallest in-range index of one axis' taps, or -1 when none is in range.
template <int K>
__device__ __forceinline__ int32_t first_tap(const int32_t (&idx)[K]) {
  int32_t m = -1;
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (idx[k] >= 0 && (m < 0 || idx[k] < m)) m = idx[k];
  return m;
}

// grad_grid of one point whose taps are `pt` (not NaN): sum over channels in order.
template <Mode M, int DIMS, typename T, typename Acc>
__device__ __forceinline__ void grad_grid_point(const Params& p, const T* __restrict__ go,
                                                const T* __restrict__ in, const PointTaps<M, DIMS, Acc>& pt,
                                                T* __restrict__ gg) {
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t gs = p.grad_grid_stride[4];
  if constexpr (M == kNearest) {  // piecewise constant: ATen's gradient is 0 whatever the input holds
    for (int k = 0; k < DIMS; ++k) gg[k * gs] = store_as<T>(Acc(0));
  } else {
    const Offsets<M, DIMS, Acc> o(pt, p.input_stride);
    const int64_t sc = p.input_stride[1], gsc = p.output_stride[1];
    Acc dx[PT::T], dy[PT::T], dz[PT::T];
#pragma unroll
    for (int t = 0; t < PT::T; ++t) {
      dx[t] = pt.dweight_x(t);
      dy[t] = pt.dweight_y(t);
      dz[t] = pt.dweight_z(t);
    }
    Acc sx = Acc(0), sy = Acc(0), sz = Acc(0);
    // Two channels' loads in flight (bilinear 8 taps + 2 grad_output values per step).
#pragma unroll 2
    for (int64_t c = 0; c < p.c; ++c) {
      Acc tx = Acc(0), ty = Acc(0), tz = Acc(0);
#pragma unroll
      for (int t = 0; t < PT::T; ++t) {
        const Acc v = o.ok(t) ? load(in + c * sc + o.at(t)) : Acc(0);
        tx += v * dx[t];
        ty += v * dy[t];
        if (DIMS == 3) tz += v * dz[t];
      }
      const Acc g = load(go + c * gsc);
      sx += tx * g;
      sy += ty * g;
      if (DIMS == 3) sz += tz * g;
    }
    gg[0] = store_as<T>(sx * pt.x.mult);
    gg[gs] = store_as<T>(sy * pt.y.mult);
    if (DIMS == 3) gg[2 * gs] = store_as<T>(sz * pt.z.mult);
  }
}

// One thread per point g0 + j, j < count: the point's cell key relative to batch n0 (when keys
// is not null; `none` for a point that reads nothing), its index j as the sort value and the
// count of its cell; then grad_grid (when ggrid is not null).
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads, backward_min_blocks(M, sizeof(T) > 4))
    point_pass_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ input,
                      const T* __restrict__ grid, T* __restrict__ ggrid, int64_t g0, int64_t count, int64_t n0,
                      uint32_t none, uint32_t* __restrict__ keys, int32_t* __restrict__ vals,
                      int32_t* __restrict__ counts) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const int64_t P = points_per_batch(p), g = g0 + j, n = g / P;
  int64_t od, oh, ow;
  split_point(p, g - n * P, &od, &oh, &ow);
  Acc gx, gy, gz;
  read_grid<DIMS>(p, grid, n, od, oh, ow, &gx, &gy, &gz);
  PT pt;
  const bool ok = point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt);
  if (keys != nullptr) {
    const int32_t cx = first_tap(pt.x.idx), cy = first_tap(pt.y.idx), cz = first_tap(pt.z.idx);
    uint32_t key = none;
    if (ok && cx >= 0 && cy >= 0 && cz >= 0)
      key = static_cast<uint32_t>((n - n0) * elements_per_batch(p) + (int64_t(cz) * p.in[1] + cy) * p.in[2] + cx);
    keys[j] = key;
    vals[j] = static_cast<int32_t>(j);
    if (key != none) atomicAdd(counts + key, 1);
  }
  if (ggrid != nullptr) {
    const int64_t* gs = p.grad_grid_stride;
    T* gg = ggrid + n * gs[0] + od * gs[1] + oh * gs[2] + ow * gs[3];
    if (!ok) {
      for (int k = 0; k < DIMS; ++k) gg[k * gs[4]] = store_as<T>(nan_of<Acc>());
    } else {
      const int64_t* os = p.output_stride;
      grad_grid_point<M, DIMS, T, Acc>(p, gout + n * os[0] + od * os[2] + oh * os[3] + ow * os[4],
                                       input + n * p.input_stride[0], pt, gg);
    }
  }
}

// Sum of one axis' weights over the taps landing on index e; false when none does.
template <int K, typename Acc>
__device__ __forceinline__ bool axis_hit(const AxisTaps<K, Acc>& a, int64_t e, Acc* w) {
  bool hit = false;
  Acc s = Acc(0);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (a.idx[k] == e) {
      s += a.w[k];
      hit = true;
    }
  }
  *w = s;
  return hit;
}

// Points the gather keeps in registers per element: about what a 1:1 smooth grid puts on one
// element (bilinear 4, trilinear 8, bicubic 16) with room for mild downsampling; double keeps 4
// (its registers would spill at 8; float64 on CUDA is not what the speed targets are about).
template <Mode M, int DIMS, typename Acc>
constexpr int gather_cache() {
  return sizeof(Acc) > 4 ? 4 : (M == kCubic ? 2 * kGatherCache : kGatherCache);
}

// One thread per input element k < elems of batches [n0, n0 + elems / E) and channel slice
// blockIdx.y: grad_input = (its previous value if `accumulate`, else 0) + sum over the points
// of the candidate cells (z, y, x order; each cell's points in index order) of grad_output *
// (sum of the weights of the point's taps on this element). Up to gather_cache() such points
// are kept in registers and every channel of the slice sums them; an element reached by more
// walks its cells again per group of kGatherGroup channels.
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads, backward_min_blocks(M, sizeof(T) > 4))
    cell_gather_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ grid,
                       T* __restrict__ ginput, const int32_t* __restrict__ vals, const int32_t* __restrict__ start,
                       int64_t g0, int64_t n0, int64_t elems, bool accumulate, int64_t c_slice) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  constexpr int K = PT::K, KZ = PT::KZ;
  constexpr int kCache = gather_cache<M, DIMS, Acc>();
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= elems) return;
  const int64_t E = elements_per_batch(p), P = points_per_batch(p);
  const int64_t nb = k / E, e = k - nb * E;
  const int64_t W = p.in[2], H = p.in[1];
  const int64_t x = e % W, y = (e / W) % H, z = e / (W * H);
  const int64_t* is = p.grad_input_stride;
  T* gi = ginput + (n0 + nb) * is[0] + z * is[2] + y * is[3] + x * is[4];
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * c_slice;
  const int64_t c1 = c0 + c_slice < p.c ? c0 + c_slice : p.c;
  const int64_t gsc = p.output_stride[1];
  const int64_t x_lo = x - (K - 1) > 0 ? x - (K - 1) : 0;
  const int64_t y_lo = y - (K - 1) > 0 ? y - (K - 1) : 0;
  const int64_t z_lo = z - (KZ - 1) > 0 ? z - (KZ - 1) : 0;
  const int64_t base = nb * E;

  // Calls f(grad_output offset of channel 0, weight) for every point reaching this element,
  // in the fixed order.
  auto visit = [&](auto&& f) {
    for (int64_t cz = z_lo; cz <= z; ++cz) {
      for (int64_t cy = y_lo; cy <= y; ++cy) {
        const int64_t row = base + (cz * H + cy) * W;
        const int32_t b = start[row + x_lo], end = start[row + x + 1];  // cells x_lo .. x of the row
        for (int32_t j = b; j < end; ++j) {
          const int64_t g = g0 + vals[j], n = g / P;
          int64_t od, oh, ow;
          split_point(p, g - n * P, &od, &oh, &ow);
          const int64_t* os = p.output_stride;
          const int64_t off = n * os[0] + od * os[2] + oh * os[3] + ow * os[4];
          if constexpr (M == kNearest) {  // its one cell is this element, its one tap weighs 1
            f(off, Acc(1));
          } else {
            Acc gx, gy, gz;
            read_grid<DIMS>(p, grid, n, od, oh, ow, &gx, &gy, &gz);
            PT pt;
            if (!point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt)) continue;  // never listed; kept for safety
            Acc wx, wy, wz;
            if (!axis_hit(pt.x, x, &wx) || !axis_hit(pt.y, y, &wy) || !axis_hit(pt.z, z, &wz)) continue;
            f(off, wx * wy * wz);
          }
        }
      }
    }
  };

  int cnt = 0;
  int64_t o[kCache];
  Acc w[kCache];
#pragma unroll
  for (int i = 0; i < kCache; ++i) {
    o[i] = 0;
    w[i] = Acc(0);
  }
  visit([&](int64_t off, Acc wt) {
#pragma unroll
    for (int i = 0; i < kCache; ++i) {  // unrolled select: the arrays stay in registers
      if (i == cnt) {
        o[i] = off;
        w[i] = wt;
      }
    }
    ++cnt;
  });
  if (cnt <= kCache) {
    // About 16 loads in flight: bicubic's 16 points one channel at a time, the others two.
    constexpr int kChannelUnroll = kCache >= 16 || sizeof(Acc) > 4 ? 1 : 2;
#pragma unroll kChannelUnroll
    for (int64_t c = c0; c < c1; ++c) {
      Acc s = accumulate ? load(gi + c * is[1]) : Acc(0);
#pragma unroll
      for (int i = 0; i < kCache; ++i)
        if (i < cnt) s += load(gout + c * gsc + o[i]) * w[i];
      gi[c * is[1]] = store_as<T>(s);
    }
    return;
  }
  // Many points on this element (downsampling, degenerate grids): linear in their number per
  // channel group.
  for (int64_t c = c0; c < c1; c += kGatherGroup) {
    Acc s[kGatherGroup];
#pragma unroll
    for (int u = 0; u < kGatherGroup; ++u) s[u] = (accumulate && c + u < c1) ? load(gi + (c + u) * is[1]) : Acc(0);
    visit([&](int64_t off, Acc wt) {
#pragma unroll
      for (int u = 0; u < kGatherGroup; ++u)
        if (c + u < c1) s[u] += load(gout + (c + u) * gsc + off) * wt;
    });
#pragma unroll
    for (int u = 0; u < kGatherGroup; ++u)
      if (c + u < c1) gi[(c + u) * is[1]] = store_as<T>(s[u]);
  }
}

// grad_input (when ginput is not null) and grad_grid (when ggrid is not null) by the cell path;
// p must satisfy uses_cell_path(p) when ginput is set.
template <Mode M, int DIMS, typename T>
cudaError_t backward_cells(const Params& p, const T* gout, const T* input, const T* grid, T* ginput, T* ggrid,
                           void* workspace, cudaStream_t stream) {
  const int64_t P = points_per_batch(p), E = elements_per_batch(p);
  const int64_t points = p.n * P;
  cudaError_t e = cudaSuccess;
  if (ginput == nullptr || p.c == 0) {
    if (ggrid != nullptr && points > 0) {
      point_pass_kernel<M, DIMS, T><<<blocks_for(points), kThreads, 0, stream>>>(
          p, gout, input, grid, ggrid, 0, points, 0, 0, nullptr, nullptr, nullptr);
      e = cudaGetLastError();
    }
    return e;
  }
  const CellChunking ch = cell_chunking(p);
  const CellLayout L = cell_layout(p);
  char* ws = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<uint32_t*>(ws + L.keys_in);
  auto* keys_out = reinterpret_cast<uint32_t*>(ws + L.keys_out);
  auto* vals_in = reinterpret_cast<int32_t*>(ws + L.vals_in);
  auto* vals_out = reinterpret_cast<int32_t*>(ws + L.vals_out);
  auto* start = reinterpret_cast<int32_t*>(ws + L.start);
  const int64_t slice = channel_slice(ch.max_elems, p.c, kGatherGroup, kGatherFillFactor);
  const int64_t slices = (p.c + slice - 1) / slice;
  if (slices > 65535) return cudaErrorInvalidConfiguration;
  // grad_grid rides along with the keys when one sort covers every point.
  const bool fused = ggrid != nullptr && !ch.split_batch && ch.batches >= p.n;
  if (ggrid != nullptr && !fused && points > 0) {
    point_pass_kernel<M, DIMS, T><<<blocks_for(points), kThreads, 0, stream>>>(
        p, gout, input, grid, ggrid, 0, points, 0, 0, nullptr, nullptr, nullptr);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }

  // One sort: points [g0, g0 + count) of batches [n0, n0 + nb).
  auto one_sort = [&](int64_t n0, int64_t nb, int64_t g0, int64_t count, bool accumulate) -> cudaError_t {
    const int64_t elems = nb * E;
    cudaError_t s;
    if ((s = cudaMemsetAsync(start, 0, sizeof(int32_t) * (elems + 1), stream)) != cudaSuccess) return s;
    if (count > 0) {
      point_pass_kernel<M, DIMS, T><<<blocks_for(count), kThreads, 0, stream>>>(
          p, gout, input, grid, fused ? ggrid : nullptr, g0, count, n0, static_cast<uint32_t>(elems), keys_in,
          vals_in, start);
      if ((s = cudaGetLastError()) != cudaSuccess) return s;
      size_t bytes = 0;
      if ((s = cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, vals_in, vals_out,
                                               static_cast<int>(count), 0, L.end_bit, stream)) != cudaSuccess)
        return s;
      if (bytes > L.temp_bytes) return cudaErrorInvalidValue;  // the layout's query covers the largest sort
      bytes = L.temp_bytes;
      if ((s = cub::DeviceRadixSort::SortPairs(ws + L.temp, bytes, keys_in, keys_out, vals_in, vals_out,
                                               static_cast<int>(count), 0, L.end_bit, stream)) != cudaSuccess)
        return s;
    }
    size_t bytes = L.temp_bytes;
    if ((s = cub::DeviceScan::ExclusiveSum(ws + L.temp, bytes, start, start, static_cast<int>(elems + 1), stream)) !=
        cudaSuccess)
      return s;
    const dim3 grid_dim(blocks_for(elems), static_cast<unsigned>(slices));
    cell_gather_kernel<M, DIMS, T><<<grid_dim, kThreads, 0, stream>>>(p, gout, grid, ginput, vals_out, start, g0, n0,
                                                                      elems, accumulate, slice);
    return cudaGetLastError();
  };

  if (!ch.split_batch) {
    for (int64_t n0 = 0; n0 < p.n; n0 += ch.batches) {
      const int64_t nb = std::min(ch.batches, p.n - n0);
      if ((e = one_sort(n0, nb, n0 * P, nb * P, false)) != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t q0 = 0; q0 < P; q0 += ch.points) {
      const int64_t count = std::min(ch.points, P - q0);
      if ((e = one_sort(n, 1, n * P + q0, count, q0 > 0)) != cudaSuccess) return e;
    }
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace grid_sample
}  // namespace twinops
