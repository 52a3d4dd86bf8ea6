// CUDA kernels of the grid_sample op over the per-point math of grid_sample.cuh.
//
// Forward: one thread per output point (and channel slice): the point's taps and weights are
// computed once, then every channel of the slice sums its taps, several channels' loads in
// flight at once.
//
// Backward, deterministic (bitwise the same run to run: no atomics on data), for every mode
// and padding:
// - grad_grid: one thread per output point recomputes its taps and sums over the channels in
//   order (grad_grid_kernel).
// - grad_input: every (point, tap) pair gets the key of the input element its padded tap reads
//   (a pair reading nothing, and every tap of a NaN point, gets the key "no element"); the
//   pairs are sorted by key with CUB's stable radix sort, so each element's pairs form one run
//   in (point, tap) order; one thread per input element then sums grad_output * weight over
//   its run for every channel. The order is fixed by the data, not by the schedule, and it is
//   the CPU loop's order (grid_sample_cpu.h). Keying pairs by the padded tap index makes the
//   element <-> pair relation exact for every mode and padding (border's clamped taps,
//   reflection's mirrored ones, cubic's per-tap padding) without a per-padding rule.
//   Binning the points per input cell instead (one sort item per point, each element
//   gathering from its neighbouring cells) is slower in most cases
//   (docs/perf/grid_sample-notes.md, "Deterministic backward: two designs").
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../device_props.h"
#include "grid_sample.cuh"
#include "grid_sample_device.cuh"
#include "grid_sample_tuning.h"

namespace twinops {
namespace grid_sample {

// Named, not anonymous: with the device runtime (-ewp) an anonymous namespace's kernels get
// unreadable names in profiles.
namespace kernels {

// ---------------------------------------------------------------------------------------
// forward
// ---------------------------------------------------------------------------------------

// One output point (and channel slice) per thread: the point's taps and weights once, then
// every channel of the slice sums its taps, U channels' loads in flight at once. Template
// parameters (docs/perf/grid_sample-notes.md, "Forward variants", measured each):
//   MB   __launch_bounds__ min blocks per SM (register cap 65536 / (MB * kThreads)), at most
//        the blocks an SM of the compiled architecture holds (arch_min_blocks);
//   U    channels per step (loads in flight = U * taps);
//   I    index type of the per-point / per-channel math: int64_t, or int32_t (the launcher
//        picks int32_t only when every point index and per-batch input / output span fits);
//        with int32_t the channel offsets are running offsets (+= stride per channel, PTR
//        below), with int64_t products (c+u)*stride: the two pairings measured best.
template <Mode M, int DIMS, typename T, int MB, int U, typename I>
__global__ void __launch_bounds__(kThreads, arch_min_blocks(kThreads, MB))
    forward_kernel(const Params p, const T* __restrict__ input, const T* __restrict__ grid, T* __restrict__ output,
                   int64_t points, int64_t c_slice) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const I i = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x);
  if (i >= points) return;
  const I P = static_cast<I>(points_per_batch(p));
  const I n = i / P;
  int64_t od, oh, ow;
  split_point(p, i - n * P, &od, &oh, &ow);
  const I c0 = static_cast<I>(blockIdx.y) * static_cast<I>(c_slice);
  const I c1 = c0 + static_cast<I>(c_slice) < static_cast<I>(p.c) ? c0 + static_cast<I>(c_slice) : static_cast<I>(p.c);
  Acc gx, gy, gz;
  read_grid<DIMS>(p, grid, n, od, oh, ow, &gx, &gy, &gz);
  const int64_t* os = p.output_stride;
  T* out = output + n * os[0] + od * os[2] + oh * os[3] + ow * os[4];
  PT pt;
  if (!point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt)) {
    for (I c = c0; c < c1; ++c) out[c * static_cast<I>(os[1])] = store_as<T>(nan_of<Acc>());
    return;
  }
  gather_channels<M, DIMS, T, U, I>(p, input + n * p.input_stride[0], pt, out, c0, c1);
}

// The forward's channel slice for U channels per step (channel_slice on the current device)
// and the number of slices.
inline cudaError_t forward_slices(const Params& p, int unroll, int64_t* slice, int64_t* slices) {
  DeviceProps dev;
  if (cudaError_t e = current_device_props(&dev); e != cudaSuccess) return e;
  *slice = channel_slice(p.n * points_per_batch(p), p.c, unroll, kFillFactor, dev);
  *slices = (p.c + *slice - 1) / *slice;
  return cudaSuccess;
}

// The 4-D forward with a block per tile of kPointTileW x kPointTileH output points (and channel
// slice) of one batch instead of kThreads consecutive points: the block's taps fall in a compact
// input box (a few rows of about kPointTileW columns), not two long rows. VG: the grid's two
// coordinates are read with one vector load (the launcher checks their stride and alignment).
// Otherwise forward_kernel's arithmetic (gather_channels), so both give the same bits.
template <Mode M, typename T, int U, bool VG>
__global__ void __launch_bounds__(kPointTileW * kPointTileH, arch_min_blocks(kThreads, kForwardMinBlocks32))
    forward_tiles_kernel(const Params p, const T* __restrict__ input, const T* __restrict__ grid,
                         T* __restrict__ output, int slices, int c_slice) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, 2, Acc>;
  const int ow = static_cast<int>(blockIdx.x) * kPointTileW + static_cast<int>(threadIdx.x) % kPointTileW;
  const int oh = static_cast<int>(blockIdx.y) * kPointTileH + static_cast<int>(threadIdx.x) / kPointTileW;
  if (ow >= p.out[2] || oh >= p.out[1]) return;
  const int n = static_cast<int>(blockIdx.z) / slices, slice = static_cast<int>(blockIdx.z) - n * slices;
  const int c0 = slice * c_slice, c1 = min(c0 + c_slice, static_cast<int>(p.c));
  const int64_t* gs = p.grid_stride;
  const T* g = grid + (static_cast<int64_t>(n) * gs[0] + static_cast<int64_t>(oh) * gs[2] +
                       static_cast<int64_t>(ow) * gs[3]);
  Acc gx, gy;
  if constexpr (VG) {
    struct alignas(2 * sizeof(T)) Pair {
      T x, y;
    };
    const Pair v = *reinterpret_cast<const Pair*>(g);
    gx = load(&v.x);
    gy = load(&v.y);
  } else {
    gx = load(g);
    gy = load(g + gs[4]);
  }
  const int64_t* os = p.output_stride;
  T* out = output + (static_cast<int64_t>(n) * os[0] + static_cast<int64_t>(oh) * os[3] +
                     static_cast<int64_t>(ow) * os[4]);
  PT pt;
  if (!point_taps<M, 2, Acc>(p, gx, gy, Acc(0), &pt)) {
    for (int c = c0; c < c1; ++c) out[c * static_cast<int>(os[1])] = store_as<T>(nan_of<Acc>());
    return;
  }
  gather_channels<M, 2, T, U, int32_t>(p, input + n * p.input_stride[0], pt, out, c0, c1);
}

// Launches forward_tiles_kernel; cudaErrorNotSupported when the tiles or batches x slices
// exceed CUDA's grid limits (the caller then takes forward_kernel).
template <Mode M, typename T, int U>
cudaError_t launch_forward_tiles(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream) {
  int64_t slice = 0, slices = 0;
  if (cudaError_t e = forward_slices(p, U, &slice, &slices); e != cudaSuccess) return e;
  const int64_t tiles_x = (p.out[2] + kPointTileW - 1) / kPointTileW;
  const int64_t tiles_y = (p.out[1] + kPointTileH - 1) / kPointTileH;
  if (tiles_x > INT32_MAX || tiles_y > 65535 || p.n * slices > 65535) return cudaErrorNotSupported;
  const dim3 blocks(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y),
                    static_cast<unsigned>(p.n * slices));
  // One vector load per point: x and y adjacent (stride 1) and every point's pair aligned.
  const int64_t* gs = p.grid_stride;
  const bool vg = gs[4] == 1 && gs[0] % 2 == 0 && gs[2] % 2 == 0 && gs[3] % 2 == 0 &&
                  reinterpret_cast<uintptr_t>(grid) % (2 * sizeof(T)) == 0;
  const int s = static_cast<int>(slices), cs = static_cast<int>(slice);
  constexpr int kBlock = kPointTileW * kPointTileH;
  if (vg)
    forward_tiles_kernel<M, T, U, true><<<blocks, kBlock, 0, stream>>>(p, input, grid, output, s, cs);
  else
    forward_tiles_kernel<M, T, U, false><<<blocks, kBlock, 0, stream>>>(p, input, grid, output, s, cs);
  return cudaGetLastError();
}

// Whether the forward's 32-bit index math is exact for p: every point index, and every
// element offset within one batch of the input (all channels) and of the output, below 2^31.
bool forward_fits_int32(const Params& p) {
  constexpr int64_t kMax = INT32_MAX;
  auto span = [](const int64_t* s, int64_t c, const int64_t* sz) {  // largest offset within a batch
    int64_t v = (c - 1) * s[1];
    for (int k = 0; k < 3; ++k) v += (sz[k] - 1) * s[2 + k];
    return v;
  };
  const int64_t points = p.n * points_per_batch(p);
  if (points + kThreads > kMax || p.c > kMax) return false;
  for (int k = 0; k < 5; ++k)
    if (p.input_stride[k] < 0 || p.output_stride[k] < 0) return false;
  return span(p.input_stride, p.c, p.in) < kMax && span(p.output_stride, p.c, p.out) < kMax &&
         p.input_stride[1] * (p.c + 64) < kMax && p.output_stride[1] * (p.c + 64) < kMax;
}

template <Mode M, int D, typename T, int MB, int U, typename I>
cudaError_t launch_forward_as(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream) {
  const int64_t points = p.n * points_per_batch(p);
  int64_t slice = 0, slices = 0;
  if (cudaError_t e = forward_slices(p, U, &slice, &slices); e != cudaSuccess) return e;
  if (slices > 65535) return cudaErrorInvalidConfiguration;
  const dim3 grid_dim(static_cast<unsigned>((points + kThreads - 1) / kThreads), static_cast<unsigned>(slices));
  forward_kernel<M, D, T, MB, U, I><<<grid_dim, kThreads, 0, stream>>>(p, input, grid, output, points, slice);
  return cudaGetLastError();
}

// The layout TWINOPS_GRID_SAMPLE_FORWARD forces, or kForwardAuto (grid_sample_tuning.h).
ForwardLayout forced_forward_layout() {
  const char* v = std::getenv("TWINOPS_GRID_SAMPLE_FORWARD");
  if (v == nullptr) return kForwardAuto;
  if (std::strcmp(v, "rows") == 0) return kPointRows;
  if (std::strcmp(v, "tiles") == 0) return kPointTiles;
  if (std::strcmp(v, "vectors") == 0) return kChannelVectors;
  return kForwardAuto;
}

template <typename T>
cudaError_t launch_forward(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream) {
  const int64_t points = p.n * points_per_batch(p);
  if (points == 0 || p.c == 0) return cudaSuccess;
  cudaError_t status = cudaSuccess;
  const bool fits32 = forward_fits_int32(p);
  dispatch_mode(p, [&](auto m, auto d) {
    constexpr Mode M = decltype(m)::value;
    constexpr int D = decltype(d)::value;
    constexpr int U = forward_unroll(PointTaps<M, D, float>::T);
    // Linear and nearest in float opmath: 32-bit index math with running channel offsets,
    // kForwardMinBlocks32 blocks per SM and half the unroll (grid_sample_tuning.h). Cubic,
    // float64 and inputs past 32-bit offsets: 64-bit index math at forward_min_blocks.
    constexpr bool kNarrow = M != kCubic && sizeof(typename OpMath<T>::type) == 4;
    constexpr bool kFloatOpmath = sizeof(typename OpMath<T>::type) == 4;
    if constexpr (kFloatOpmath && D == 2) {
      const ForwardLayout forced = forced_forward_layout();
      if ((forced == kForwardAuto || forced == kChannelVectors) &&
          use_vec_forward(p, input, static_cast<int>(sizeof(T)), fits32)) {
        status = forward_vec_cuda<T>(p, input, grid, output, stream);
        return;
      }
      if constexpr (kNarrow) {
        if (fits32 && (forced == kForwardAuto || forced == kPointTiles)) {
          status = launch_forward_tiles<M, T, (U > 1 ? U / 2 : 1)>(p, input, grid, output, stream);
          if (status != cudaErrorNotSupported) return;
          status = cudaSuccess;  // past the launch's grid limits: the row kernel below
        }
      }
    }
    if constexpr (kNarrow) {
      if (fits32) {
        status = launch_forward_as<M, D, T, kForwardMinBlocks32, (U > 1 ? U / 2 : 1), int32_t>(p, input, grid,
                                                                                               output, stream);
        return;
      }
    }
    constexpr int MB = forward_min_blocks(M, sizeof(typename OpMath<T>::type));
    status = launch_forward_as<M, D, T, MB, U, int64_t>(p, input, grid, output, stream);
  });
  return status;
}

// ---------------------------------------------------------------------------------------
// backward: grad_input by sorted (point, tap) pairs
// ---------------------------------------------------------------------------------------

// Which points one sort takes: whole batches while their pairs and elements fit one sort
// (grid_sample_tuning.h), else one batch's points in several sorts whose gathers add up in
// order (the first writes, the next ones add to grad_input).
struct Chunking {
  int64_t batches = 1;  // batches per sort
  int64_t points = 0;   // points per sort
  bool split_batch = false;
  int64_t max_pairs = 0, max_elems = 0;
};

inline int taps_of(const Params& p) {
  int t = axis_taps(p.mode) * axis_taps(p.mode);
  return p.dims == 3 ? t * axis_taps(p.mode) : t;
}

int bits_for(int64_t v) {  // bits holding 0 .. v
  int b = 1;
  while (b < 32 && (int64_t(1) << b) <= v) ++b;
  return b;
}

// A pair's sort key: (batch within the sort << bits) | element within the batch, or `none`
// (batch 0, element E); `bits` holds 0 .. E. The sort orders by the element field alone: the
// pairs come out of pairs_kernel in batch order and the sort is stable, so each (batch,
// element)'s pairs stay one run, in (point, tap) order, and the radix passes cover the bits of
// one batch's elements rather than of all the sort's (15 bits instead of 18 at
// 8 x 128 x 128: two passes, not three). The batch field fits 32 bits without a limit of its
// own: a sort holds nb * E < 2^31 elements (kMaxElementsPerSort) and E >= 2^(bits - 1), so
// nb <= 2^(32 - bits).
struct Keys {
  int bits;       // element field
  uint32_t none;  // the key of a pair that reads nothing (== E)
  uint32_t E;     // elements per batch
  TWIN_HD uint32_t key(uint32_t batch, uint32_t e) const { return (batch << bits) | e; }
  // The element's index among the sort's elements (batch-major), for first / last.
  TWIN_HD uint32_t dense(uint32_t k) const { return (k >> bits) * E + (k & ((1u << bits) - 1u)); }
};

Keys keys_for(const Params& p) {
  const int64_t E = elements_per_batch(p);
  return Keys{bits_for(E), static_cast<uint32_t>(E), static_cast<uint32_t>(E)};
}

Chunking chunking(const Params& p) {
  const int64_t P = points_per_batch(p), E = elements_per_batch(p), taps = taps_of(p);
  Chunking c;
  if (P * taps <= kMaxPairsPerSort) {
    int64_t b = p.n;
    if (P > 0) b = std::min(b, kMaxPairsPerSort / (P * taps));
    b = std::min(b, kMaxElementsPerSort / E);
    c.batches = std::max<int64_t>(b, 1);
    c.points = c.batches * P;
  } else {
    c.split_batch = true;
    c.points = kMaxPairsPerSort / taps;
  }
  c.max_pairs = c.points * taps;
  c.max_elems = c.batches * E;
  return c;
}

// Byte offsets of the backward's workspace arrays.
struct Layout {
  size_t keys_in, keys_out, vals_in, vals_out, weights, point_off, first, last, temp, temp_bytes, bytes;
};

size_t sort_temp_bytes(int64_t pairs, int end_bit) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                                  static_cast<uint32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                  static_cast<int32_t*>(nullptr), static_cast<int>(pairs), 0, end_bit);
  return bytes;
}

Layout layout(const Params& p) {
  const Chunking c = chunking(p);
  Layout L{};
  WorkspaceOffsets w;
  const auto pairs = static_cast<size_t>(c.max_pairs);
  L.keys_in = w.take(sizeof(uint32_t) * pairs);
  L.keys_out = w.take(sizeof(uint32_t) * pairs);
  L.vals_in = w.take(sizeof(int32_t) * pairs);
  L.vals_out = w.take(sizeof(int32_t) * pairs);
  L.weights = w.take(sizeof(double) * pairs);  // opmath: double at most
  L.point_off = w.take(sizeof(int64_t) * static_cast<size_t>(c.points));
  L.first = w.take(sizeof(int32_t) * static_cast<size_t>(c.max_elems));
  L.last = w.take(sizeof(int32_t) * static_cast<size_t>(c.max_elems));
  L.temp_bytes = c.max_pairs > 0 ? sort_temp_bytes(c.max_pairs, 32) : 0;
  L.temp = w.take(L.temp_bytes);
  L.bytes = w.end;
  return L;
}

// Stores a[0 .. N) at p in 16-byte pieces where N values fill whole pieces (p is then
// 16-byte aligned: a thread's pairs start at a multiple of N in 256-byte aligned arrays), so
// that a warp writes whole lines rather than one value of every N-th slot per instruction.
template <int N, typename V>
__device__ __forceinline__ void store_run(V* __restrict__ p, const V (&a)[N]) {
  constexpr int kPer = 16 / sizeof(V);
  if constexpr (N % kPer == 0) {
#pragma unroll
    for (int i = 0; i < N; i += kPer) {
      uint4 u;
      memcpy(&u, a + i, sizeof(u));
      *reinterpret_cast<uint4*>(p + i) = u;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) p[i] = a[i];
  }
}

// Every (point, tap) pair of points [g0, g0 + count) (global point index n * P + q): its key
// (Keys: batch n - n0 and the input element, or `none`), its index, its weight, and per point
// the offset of its grad_output (channel 0).
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads) pairs_kernel(const Params p, const T* __restrict__ grid, int64_t g0,
                                                         int64_t count, int64_t n0, const Keys K,
                                                         uint32_t* __restrict__ keys, int32_t* __restrict__ vals,
                                                         typename OpMath<T>::type* __restrict__ weights,
                                                         int64_t* __restrict__ point_off) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const int64_t P = points_per_batch(p);
  const int64_t g = g0 + j, n = g / P;
  int64_t od, oh, ow;
  split_point(p, g - n * P, &od, &oh, &ow);
  const int64_t* os = p.output_stride;
  point_off[j] = n * os[0] + od * os[2] + oh * os[3] + ow * os[4];
  Acc gx, gy, gz;
  read_grid<DIMS>(p, grid, n, od, oh, ow, &gx, &gy, &gz);
  PT pt;
  const bool ok = point_taps<M, DIMS, Acc>(p, gx, gy, gz, &pt);  // a NaN point reads, and gets, nothing
  const auto batch = static_cast<uint32_t>(n - n0);
  uint32_t key[PT::T];
  int32_t val[PT::T];
  Acc weight[PT::T];
#pragma unroll
  for (int t = 0; t < PT::T; ++t) {
    const bool v = ok && pt.valid(t);
    const int64_t e = (int64_t(pt.z.idx[PT::kz(t)]) * p.in[1] + pt.y.idx[PT::ky(t)]) * p.in[2] + pt.x.idx[PT::kx(t)];
    key[t] = v ? K.key(batch, static_cast<uint32_t>(e)) : K.none;
    val[t] = static_cast<int32_t>(j * PT::T + t);
    weight[t] = v ? pt.weight(t) : Acc(0);
  }
  store_run(keys + j * PT::T, key);
  store_run(vals + j * PT::T, val);
  store_run(weights + j * PT::T, weight);
}

// The run [first, last) of every element present in the sorted keys (other elements keep
// the zeroed, empty run), indexed by Keys::dense.
__global__ void __launch_bounds__(kThreads) runs_kernel(const uint32_t* __restrict__ keys, int64_t pairs,
                                                        const Keys K, int32_t* __restrict__ first,
                                                        int32_t* __restrict__ last) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= pairs) return;
  const uint32_t k = keys[j];
  if (k == K.none) return;
  if (j == 0 || keys[j - 1] != k) first[K.dense(k)] = static_cast<int32_t>(j);
  if (j == pairs - 1 || keys[j + 1] != k) last[K.dense(k)] = static_cast<int32_t>(j + 1);
}

// One thread per input element of batches [n0, n0 + elems / E): grad_input = (the previous
// value if `accumulate`, else 0) + sum over the element's run of grad_output * weight, per
// channel of the slice. elems < 2^31 (kMaxElementsPerSort), so the element's coordinates
// come from 32-bit divisions.
template <int TAPS, typename T>
__global__ void __launch_bounds__(kThreads) gather_kernel(const Params p, const T* __restrict__ gout,
                                                          T* __restrict__ ginput, const int32_t* __restrict__ vals,
                                                          const typename OpMath<T>::type* __restrict__ weights,
                                                          const int64_t* __restrict__ point_off,
                                                          const int32_t* __restrict__ first,
                                                          const int32_t* __restrict__ last, int64_t n0, uint32_t elems,
                                                          bool accumulate, int64_t c_slice) {
  using Acc = typename OpMath<T>::type;
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= elems) return;
  const auto W = static_cast<uint32_t>(p.in[2]), H = static_cast<uint32_t>(p.in[1]);
  const uint32_t r = k / W, x = k - r * W, r2 = r / H, y = r - r2 * H;
  const auto D = static_cast<uint32_t>(p.in[0]);
  const uint32_t nb = r2 / D, z = r2 - nb * D;
  const int64_t* is = p.grad_input_stride;
  T* gi = ginput + (n0 + nb) * is[0] + z * is[2] + y * is[3] + x * is[4];
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * c_slice;
  const int64_t c1 = c0 + c_slice < p.c ? c0 + c_slice : p.c;
  const int64_t gsc = p.output_stride[1];
  const int32_t b = first[k], cnt = last[k] - b;
  if (cnt <= kGatherCache) {
    const T* q[kGatherCache];
    Acc w[kGatherCache];
#pragma unroll
    for (int j = 0; j < kGatherCache; ++j) {
      if (j < cnt) {
        const int32_t v = vals[b + j];
        q[j] = gout + point_off[v / TAPS];
        w[j] = weights[v];
      } else {
        q[j] = gout;
        w[j] = Acc(0);
      }
    }
    for (int64_t c = c0; c < c1; ++c) {
      Acc s = accumulate ? load(gi + c * is[1]) : Acc(0);
#pragma unroll
      for (int j = 0; j < kGatherCache; ++j)
        if (j < cnt) s += load(q[j] + c * gsc) * w[j];
      gi[c * is[1]] = store_as<T>(s);
    }
    return;
  }
  for (int64_t c = c0; c < c1; ++c) {
    Acc s = accumulate ? load(gi + c * is[1]) : Acc(0);
    for (int32_t j = b; j < b + cnt; ++j) {
      const int32_t v = vals[j];
      s += load(gout + c * gsc + point_off[v / TAPS]) * weights[v];
    }
    gi[c * is[1]] = store_as<T>(s);
  }
}

template <Mode M, int DIMS, typename T>
cudaError_t grad_input_sorted(const Params& p, const T* gout, const T* grid, T* ginput, void* workspace,
                              cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  constexpr int TAPS = PointTaps<M, DIMS, Acc>::T;
  const int64_t P = points_per_batch(p), E = elements_per_batch(p);
  if (E > kMaxElementsPerSort) return cudaErrorInvalidValue;  // one batch's input plane over 2^31 - 2 elements
  const Chunking ch = chunking(p);
  const Layout L = layout(p);
  const Keys K = keys_for(p);
  char* ws = static_cast<char*>(workspace);
  auto* keys_in = reinterpret_cast<uint32_t*>(ws + L.keys_in);
  auto* keys_out = reinterpret_cast<uint32_t*>(ws + L.keys_out);
  auto* vals_in = reinterpret_cast<int32_t*>(ws + L.vals_in);
  auto* vals_out = reinterpret_cast<int32_t*>(ws + L.vals_out);
  auto* weights = reinterpret_cast<Acc*>(ws + L.weights);
  auto* point_off = reinterpret_cast<int64_t*>(ws + L.point_off);
  auto* first = reinterpret_cast<int32_t*>(ws + L.first);
  auto* last = reinterpret_cast<int32_t*>(ws + L.last);
  DeviceProps dev;
  if (cudaError_t e = current_device_props(&dev); e != cudaSuccess) return e;
  const int64_t slice = channel_slice(ch.max_elems, p.c, 1, kGatherFillFactor, dev);
  const int64_t slices = (p.c + slice - 1) / slice;
  if (slices > 65535) return cudaErrorInvalidConfiguration;

  // One sort: points [g0, g0 + count) of batches [n0, n0 + nb).
  auto one_sort = [&](int64_t n0, int64_t nb, int64_t g0, int64_t count, bool accumulate) -> cudaError_t {
    const int64_t elems = nb * E, pairs = count * TAPS;
    cudaError_t e;
    if ((e = cudaMemsetAsync(first, 0, sizeof(int32_t) * elems, stream)) != cudaSuccess) return e;
    if ((e = cudaMemsetAsync(last, 0, sizeof(int32_t) * elems, stream)) != cudaSuccess) return e;
    if (pairs > 0) {
      pairs_kernel<M, DIMS, T><<<blocks_for(count), kThreads, 0, stream>>>(p, grid, g0, count, n0, K, keys_in,
                                                                         vals_in, weights, point_off);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
      int end_bit = K.bits;
      if (sort_temp_bytes(pairs, end_bit) > L.temp_bytes) end_bit = 32;  // the layout reserved 32 bits' worth
      size_t temp_bytes = L.temp_bytes;
      if ((e = cub::DeviceRadixSort::SortPairs(ws + L.temp, temp_bytes, keys_in, keys_out, vals_in, vals_out,
                                               static_cast<int>(pairs), 0, end_bit, stream)) != cudaSuccess)
        return e;
      runs_kernel<<<blocks_for(pairs), kThreads, 0, stream>>>(keys_out, pairs, K, first, last);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    const dim3 grid_dim(blocks_for(elems), static_cast<unsigned>(slices));
    gather_kernel<TAPS, T><<<grid_dim, kThreads, 0, stream>>>(p, gout, ginput, vals_out, weights, point_off, first,
                                                           last, n0, static_cast<uint32_t>(elems), accumulate, slice);
    return cudaGetLastError();
  };

  if (!ch.split_batch) {
    for (int64_t n0 = 0; n0 < p.n; n0 += ch.batches) {
      const int64_t nb = std::min(ch.batches, p.n - n0);
      if (cudaError_t e = one_sort(n0, nb, n0 * P, nb * P, false); e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t q0 = 0; q0 < P; q0 += ch.points) {
      const int64_t count = std::min(ch.points, P - q0);
      if (cudaError_t e = one_sort(n, 1, n * P + q0, count, q0 > 0); e != cudaSuccess) return e;
    }
  }
  return cudaSuccess;
}


// ---------------------------------------------------------------------------------------
// backward: grad_grid, one thread per point
// ---------------------------------------------------------------------------------------

// One thread per output point g < count (all batches): grad_grid of the point, NaN for a NaN
// point.
template <Mode M, int DIMS, typename T>
__global__ void __launch_bounds__(kThreads, grad_grid_min_blocks(M, sizeof(T) > 4))
    grad_grid_kernel(const Params p, const T* __restrict__ gout, const T* __restrict__ input,
                     const T* __restrict__ grid, T* __restrict__ ggrid, int64_t count) {
  using Acc = typename OpMath<T>::type;
  using PT = PointTaps<M, DIMS, Acc>;
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= count) return;
  int64_t n, od, oh, ow;
  PT pt;
  const bool ok = point_of<M, DIMS>(p, grid, g, &n, &od, &oh, &ow, &pt);
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

template <Mode M, int DIMS, typename T>
cudaError_t grad_grid_points(const Params& p, const T* gout, const T* input, const T* grid, T* ggrid,
                             cudaStream_t stream) {
  const int64_t points = p.n * points_per_batch(p);
  if (points == 0) return cudaSuccess;
  grad_grid_kernel<M, DIMS, T><<<blocks_for(points), kThreads, 0, stream>>>(p, gout, input, grid, ggrid, points);
  return cudaGetLastError();
}

}  // namespace kernels

using namespace kernels;

size_t backward_workspace_bytes(const Params& p) {
  if (p.n == 0 || p.c == 0) return 0;
  return p.scatter == kFixedPoint ? fixed_workspace_bytes(p) : layout(p).bytes;
}

template <typename T>
cudaError_t forward_cuda(const Params& p, const T* input, const T* grid, T* output, cudaStream_t stream) {
  return launch_forward(p, input, grid, output, stream);
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const T* grad_output, const T* input, const T* grid, T* grad_input,
                          T* grad_grid, void* workspace, cudaStream_t stream) {
  cudaError_t status = cudaSuccess;
  if constexpr (!std::is_same_v<T, double>) {  // float64 keeps the sorted gather (choose_scatter)
    if (grad_input != nullptr && p.n > 0 && p.c > 0 && p.scatter == kFixedPoint)
      return backward_fixed<T>(p, grad_output, input, grid, grad_input, grad_grid, workspace, stream);
  }
  const bool compiled = dispatch_mode(p, [&](auto m, auto d) {
    constexpr Mode M = decltype(m)::value;
    constexpr int D = decltype(d)::value;
    if (grad_grid != nullptr) {
      status = grad_grid_points<M, D, T>(p, grad_output, input, grid, grad_grid, stream);
      if (status != cudaSuccess) return;
    }
    if (grad_input != nullptr && p.n > 0 && p.c > 0)
      status = grad_input_sorted<M, D, T>(p, grad_output, grid, grad_input, workspace, stream);
  });
  return compiled ? status : cudaErrorInvalidValue;
}

#define TWIN_INSTANTIATE(T)                                                                                    \
  template cudaError_t forward_cuda<T>(const Params&, const T*, const T*, T*, cudaStream_t);                   \
  template cudaError_t backward_cuda<T>(const Params&, const T*, const T*, const T*, T*, T*, void*, cudaStream_t);

TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)

#undef TWIN_INSTANTIATE
}  // namespace grid_sample
}  // namespace twinops
