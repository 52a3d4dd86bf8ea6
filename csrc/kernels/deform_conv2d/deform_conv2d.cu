// CUDA kernels of deform_conv2d (deform_conv2d_cuda.h).
//
// Every product of the op is one tiled GEMM (gemm_kernel) whose operands are read through a
// problem's loaders:
// - forward: out[o, q] = sum over k of weight[o, k] * column(k, q), q = (n, pos), per group, the
//   columns sampled first by im2col_kernel (a thread per column position, its rows in turn: many
//   independent gathers) into a float column matrix of a chunk of images (the workspace), then
//   read as plain tiles;
// - the columns' gradient: gcol[k, q] = sum over o of weight[o, k] * gout[o, q], per group, for a
//   chunk of images at a time (stored: the samples' gradients read it per offset group);
// - grad_weight: sum over q of gout[o, q] * column(k, q), the columns of each chunk of images
//   sampled by im2col_kernel as for the forward, in fixed slices of the chunk's q whose partial
//   sums are then added in slice order.
// float32 GEMMs are float32 FMAs, each output one thread's sum over its reduction index
// ascending (in register tiles, deform_conv2d_tiled_gemm.cuh); the half types' run on
// tensor cores (a sampled column as two values of T, products summed in float32; see
// gemm_tensor_cores), in a fixed order too, so every result is bitwise the same run to run.
// grad_input adds every sample's corners through the fixed-point scatter (../fixed_scatter.cuh):
// one plane per image, its scale from max |gcol| and max |mask| of the image and the most samples
// one element can receive (taps * positions).
// grad_offset and grad_mask sum a sample's channels in one thread, in channel order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mma.h>
#include <type_traits>

#include "../device_props.h"
#include "../divider.cuh"
#include "../dtype_convert.cuh"
#include "../fixed_scatter.cuh"
#include "../workspace.h"
#include "deform_conv2d_cuda.h"

namespace twinops {
namespace deform_conv2d {
namespace kernels {

namespace fs = ::twinops::fixed_scatter;

constexpr int kThreads = 256;                  // a 16 x 16 thread tile
constexpr int kBN = 64, kBK = 16;  // output tile columns, reduction step (float)
constexpr int kTcBK = 32;          // reduction step on tensor cores
static_assert(kThreads % kBN == 0, "a thread loads one B column throughout");
constexpr int64_t kMaxGridZ = 65535;
constexpr size_t kColumnBudget = size_t(256) << 20;  // bytes of a column matrix per chunk of images
constexpr int64_t kSliceLength = 8192;          // reduction length of one grad_weight slice

// C[m, c] = sum over r in [r_begin(z), r_end(z)) of A(m, r) * B(r, c), m < rows, c < cols, for
// problem z, on a BM x 64 output tile: float operands in shared memory and float32 FMAs. Thread
// (tx, ty) keeps rows ty + 16 i and columns tx + 16 j, each a sum over r ascending.
template <int BM, class Problem>
__device__ __forceinline__ void gemm_simt(const Problem& pr, int64_t z) {
  constexpr int RI = BM / 16;
  __shared__ float as[kBK][BM];
  __shared__ float bs[kBK][kBN];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, c0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const int64_t rows = pr.rows(), cols = pr.cols(), rb = pr.r_begin(z), re = pr.r_end(z);
  const auto bctx = pr.b_context(z, c0 + (tid % kBN));  // every B element this thread loads is in that column
  float acc[RI][4];
#pragma unroll
  for (int i = 0; i < RI; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
  for (int64_t r0 = rb; r0 < re; r0 += kBK) {
#pragma unroll
    for (int e = tid; e < BM * kBK; e += kThreads) {
      const int am = e / kBK, ar = e % kBK;
      const int64_t m = m0 + am, r = r0 + ar;
      as[ar][am] = m < rows && r < re ? pr.a(z, m, r) : 0.0f;
    }
#pragma unroll
    for (int e = tid; e < kBN * kBK; e += kThreads) {
      const int br = e / kBN, bc = e % kBN;
      const int64_t c = c0 + bc, r = r0 + br;
      bs[br][bc] = c < cols && r < re ? pr.b(z, r, bctx) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[RI], b[4];
#pragma unroll
      for (int i = 0; i < RI; ++i) a[i] = as[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = bs[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < RI; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __fmaf_rn(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < RI; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t m = m0 + ty + 16 * i, c = c0 + tx + 16 * j;
      if (m < rows && c < cols) pr.store(z, m, c, acc[i][j]);
    }
}

#include "deform_conv2d_tiled_gemm.cuh"  // gemm_simt_tiled, on gemm_simt's tiling

// The smallest positive subnormal of T, as a float (exact): float16 2^-24, bfloat16 2^-133.
template <typename T>
constexpr float kSmallestSubnormal = 0.0f;
template <>
constexpr float kSmallestSubnormal<__half> = 5.9604644775390625e-08f;
template <>
constexpr float kSmallestSubnormal<__nv_bfloat16> = 9.183549615799121e-41f;

// A sampled column value v as two values of T: hi = T(v) and lo = T(v - hi) (see
// gemm_tensor_cores). hi infinite (v infinite, or beyond T's range): lo 0, not inf - inf. lo is
// never 0 for a nonzero v: an infinite A would add A * 0 = NaN where the float path's A * v is
// infinite; T's smallest subnormal instead adds at most 2^-24 |A| (float16).
template <typename T>
__device__ __forceinline__ void split_column(float v, T& hi, T& lo) {
  hi = store_as<T>(v);
  const float h = load(&hi);
  lo = store_as<T>(isinf(h) ? 0.0f : v - h);
  if (v != 0.0f && load(&lo) == 0.0f) lo = store_as<T>(copysignf(kSmallestSubnormal<T>, v));
}

// The same product on tensor cores for T = __half / __nv_bfloat16 (sm_80 and later; earlier
// architectures take gemm_simt), products summed in float32 by mma (wmma 16x16x16 fragments).
// A is exact in T (weight or grad_output). B is too where Problem::kExactB; else (a sampled
// column, computed in float) it enters as two values of T, hi = T(v) and lo = T(v - hi), both
// multiplied: v to about 2^-22 (float16) or 2^-16 (bfloat16) of itself, so the result keeps the
// float32 path's accuracy instead of one rounding to T per column element. A column beyond T's
// range (float16: an input near 65504 times a mask above 1) is infinite, as in a T column
// matrix. Eight warps of (BM / 4) x 32 outputs; the float results go through shared memory to
// pr.store.
template <int BM, class Problem>
__device__ __forceinline__ void gemm_tensor_cores(const Problem& pr, int64_t z) {
  using T = typename Problem::Elem;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  namespace wm = nvcuda::wmma;
  constexpr int FI = BM / 64;          // a warp's 16-row fragments
  constexpr int LA = kTcBK + 8, LB = kBN + 8, LC = kBN + 4;  // padded leading dims (wmma: 16-byte multiples)
  constexpr int kParts = Problem::kExactB ? 1 : 2;  // B as hi (+ lo)
  constexpr int kOperandBytes = (BM * LA + kParts * kTcBK * LB) * int(sizeof(T));
  constexpr int kResultBytes = BM * LC * int(sizeof(float));
  __shared__ __align__(128) unsigned char smem[kOperandBytes > kResultBytes ? kOperandBytes : kResultBytes];
  T* as = reinterpret_cast<T*>(smem);  // (BM, kTcBK) row-major
  T* bs = as + BM * LA;                // kParts x (kTcBK, 64) row-major
  float* cs = reinterpret_cast<float*>(smem);
  const int tid = threadIdx.x, warp = tid >> 5, wr = warp >> 1, wc = warp & 1;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, c0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const int64_t rows = pr.rows(), cols = pr.cols(), rb = pr.r_begin(z), re = pr.r_end(z);
  const auto bctx = pr.b_context(z, c0 + (tid % kBN));  // every B element this thread loads is in that column
  wm::fragment<wm::accumulator, 16, 16, 16, float> acc[FI][2];
#pragma unroll
  for (int i = 0; i < FI; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wm::fill_fragment(acc[i][j], 0.0f);
  for (int64_t r0 = rb; r0 < re; r0 += kTcBK) {
#pragma unroll
    for (int e = tid; e < BM * kTcBK; e += kThreads) {
      const int am = e / kTcBK, ar = e % kTcBK;
      const int64_t m = m0 + am, r = r0 + ar;
      as[am * LA + ar] = store_as<T>(m < rows && r < re ? pr.a(z, m, r) : 0.0f);
    }
#pragma unroll
    for (int e = tid; e < kBN * kTcBK; e += kThreads) {
      const int br = e / kBN, bc = e % kBN;
      const int64_t c = c0 + bc, r = r0 + br;
      const float v = c < cols && r < re ? pr.b(z, r, bctx) : 0.0f;
      if constexpr (kParts == 2) {
        T hi, lo;
        split_column(v, hi, lo);
        bs[br * LB + bc] = hi;
        bs[kTcBK * LB + br * LB + bc] = lo;
      } else {
        bs[br * LB + bc] = store_as<T>(v);
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTcBK; k += 16) {
      wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major> b[kParts][2];
#pragma unroll
      for (int h = 0; h < kParts; ++h)
#pragma unroll
        for (int j = 0; j < 2; ++j) wm::load_matrix_sync(b[h][j], bs + (h * kTcBK + k) * LB + wc * 32 + j * 16, LB);
#pragma unroll
      for (int i = 0; i < FI; ++i) {
        wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major> a;
        wm::load_matrix_sync(a, as + (wr * FI * 16 + i * 16) * LA + k, LA);
#pragma unroll
        for (int h = 0; h < kParts; ++h)
#pragma unroll
          for (int j = 0; j < 2; ++j) wm::mma_sync(acc[i][j], a, b[h][j], acc[i][j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < FI; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wm::store_matrix_sync(cs + (wr * FI * 16 + i * 16) * LC + wc * 32 + j * 16, acc[i][j], LC, wm::mem_row_major);
  __syncthreads();
  for (int e = tid; e < BM * kBN; e += kThreads) {
    const int64_t m = m0 + e / kBN, c = c0 + e % kBN;
    if (m < rows && c < cols) pr.store(z, m, c, cs[(e / kBN) * LC + e % kBN]);
  }
#else
  gemm_simt<BM>(pr, z);
#endif
}

// Tensor cores for the half types, float32 FMAs for float (TF32 would change its results): in
// register tiles (kTiled) or gemm_simt's, the same bits.
template <int BM, class Problem, bool kTiled>
__global__ void __launch_bounds__(kThreads) gemm_kernel(const Problem pr, int64_t z0) {
  const int64_t z = blockIdx.z + z0;
  if constexpr (!std::is_same_v<typename Problem::Elem, float>) gemm_tensor_cores<BM>(pr, z);
  else if constexpr (kTiled) gemm_simt_tiled<BM>(pr, z);
  else gemm_simt<BM>(pr, z);
}

// The divisors of a sample's coordinates: taps, kw and output width, each below 2^31 (the
// frontends bound every dimension).
struct Dividers {
  Divider taps, kw, w_out;
  explicit Dividers(const Params& p) : taps(p.taps()), kw(p.kw), w_out(p.w_out) {}
};

// Where output column q = n * P + pos reads: its image and position, and the undeformed corner.
struct Position {
  int64_t n, pos;
  int64_t y, x;  // oy * stride_h - pad_h, ox * stride_w - pad_w
};

__device__ __forceinline__ Position position_of(const Params& p, const Dividers& dv, int64_t q) {
  const int64_t P = p.positions(), n = q / P, pos = q - n * P;
  const uint32_t oy = dv.w_out.div(static_cast<uint32_t>(pos)), ox = static_cast<uint32_t>(pos) - oy * dv.w_out.d;
  return Position{n, pos, int64_t(oy) * p.stride_h - p.pad_h, int64_t(ox) * p.stride_w - p.pad_w};
}

// The GEMM loaders: a(z, m, r) and b(z, r, ctx) with ctx = b_context(z, c), since a thread
// loads the same B column c at every reduction step (see gemm_simt), so what depends on the
// column alone is computed once per kernel.

// The forward of images [n0, n0 + count), group z: rows o of the group, columns q = (n - n0) * P +
// pos, reduction k, B from the column matrix im2col_kernel wrote (col[g * K + k, q]).
template <typename T>
struct ForwardProblem {
  using Elem = T;
  static constexpr bool kExactB = false;  // sampled columns, in float
  Params p;
  const float* col;
  const T *weight, *bias;
  T* out;
  int64_t n0, count;
  __device__ int64_t rows() const { return p.group_outputs(); }
  __device__ int64_t cols() const { return count * p.positions(); }
  __device__ int64_t r_begin(int64_t) const { return 0; }
  __device__ int64_t r_end(int64_t) const { return p.depth(); }
  __device__ float a(int64_t g, int64_t o, int64_t k) const {
    return load(weight + (g * p.group_outputs() + o) * p.depth() + k);
  }
  // Column q of the group's first row.
  __device__ const float* b_context(int64_t g, int64_t q) const { return col + g * p.depth() * cols() + q; }
  __device__ float b(int64_t, int64_t k, const float* at) const { return at[k * cols()]; }
  __device__ void store(int64_t g, int64_t o, int64_t q, float acc) const {
    const int64_t nl = q / p.positions(), oc = g * p.group_outputs() + o;
    const float b = p.has_bias ? load(bias + oc) : 0.0f;
    out[((n0 + nl) * p.c_out + oc) * p.positions() + q - nl * p.positions()] = store_as<T>(acc + b);
  }
};

// Channels of one offset group that an im2col thread samples at each tap: they share the tap's
// offset, mask and corner weights, computed once for them. Eight measured fastest of 1, 2, 4
// and 8 at every bench shape (docs/perf/deform_conv2d-notes.md).
constexpr int kIm2colChannels = 8;

// col[k_abs, q] = column(k_abs, q) for the images [n0, n0 + count): k_abs = c * kh * kw + t over
// every channel, q = (n - n0) * P + pos. Thread x of the grid is column q (its position computed
// once); grid rows r = blockIdx.y, + gridDim.y, ... are runs of up to kIm2colChannels channels of
// one offset group, whose taps the thread walks in turn (unrolled, so the taps' offset and corner
// loads are in flight together), each tap's corners serving the run's channels (the masked
// bilinear sample, in float, as the CPU kernel computes it). A warp's lanes are consecutive
// positions, so the offset and mask reads and the column writes are contiguous. kSplit (the half types' mma GEMMs): the columns as two planes of T, hi
// then lo (split_column), each rows x cols, in the same bytes as the float matrix.
template <typename T, bool kSplit>
__global__ void __launch_bounds__(kThreads) im2col_kernel(const Params p, const Dividers dv,
                                                          const T* __restrict__ input, const T* __restrict__ offset,
                                                          const T* __restrict__ mask, int64_t n0, int64_t count,
                                                          float* __restrict__ col) {
  const int64_t P = p.positions(), cols = count * P, q = blockIdx.x * int64_t(kThreads) + threadIdx.x;
  if (q >= cols) return;
  const Position ps = position_of(p, dv, n0 * P + q);
  const uint32_t taps = dv.taps.d;
  const int64_t oc = p.offset_channels(), runs = (oc + kIm2colChannels - 1) / kIm2colChannels;
  T* const hi_plane = reinterpret_cast<T*>(col);  // kSplit only
  T* const lo_plane = hi_plane + p.c_in * taps * cols;
  const T* const image = input + ps.n * p.c_in * p.h * p.w;
  for (int64_t r = blockIdx.y; r < p.offset_groups * runs; r += gridDim.y) {
    const int64_t og = r / runs, c0 = og * oc + (r - og * runs) * kIm2colChannels;
    const int64_t nc = std::min<int64_t>(kIm2colChannels, (og + 1) * oc - c0);
    const int64_t row0 = (ps.n * p.offset_groups + og) * taps;  // offset and mask rows (n, og, t)
#pragma unroll 3
    for (uint32_t t = 0; t < taps; ++t) {
      const uint32_t i = dv.kw.div(t), j = t - i * dv.kw.d;
      const int64_t row = row0 + t;
      const float y = float(ps.y + int64_t(i) * p.dil_h) + load(offset + 2 * row * P + ps.pos);
      const float x = float(ps.x + int64_t(j) * p.dil_w) + load(offset + (2 * row + 1) * P + ps.pos);
      const Corners<float> cs = corners<float>(y, x, p.h, p.w);
      const float m = p.has_mask ? load(mask + row * P + ps.pos) : 1.0f;
#pragma unroll
      for (int u = 0; u < kIm2colChannels; ++u) {
        if (u >= nc) break;
        const T* const plane = image + (c0 + u) * p.h * p.w;
        const float v0 = corner_value(cs, [&](int64_t k) { return load(plane + k); });
        const float v = p.has_mask ? __fmul_rn(m, v0) : v0;
        const int64_t at = ((c0 + u) * taps + t) * cols + q;
        if constexpr (kSplit) {
          T hi, lo;  // in registers: split_column reads hi back
          split_column(v, hi, lo);
          hi_plane[at] = hi;
          lo_plane[at] = lo;
        } else {
          col[at] = v;
        }
      }
    }
  }
}

// The columns' gradient of images [n0, n0 + count), group z: rows k of the group, columns
// q = (n - n0) * P + pos, reduction o; gcol[(n - n0), g * K + k, pos].
template <typename T>
struct ColumnGradProblem {
  using Elem = T;
  static constexpr bool kExactB = true;  // grad_output
  Params p;
  const T *gout, *weight;
  float* gcol;
  int64_t n0, count;
  __device__ int64_t rows() const { return p.depth(); }
  __device__ int64_t cols() const { return count * p.positions(); }
  __device__ int64_t r_begin(int64_t) const { return 0; }
  __device__ int64_t r_end(int64_t) const { return p.group_outputs(); }
  __device__ float a(int64_t g, int64_t k, int64_t o) const {
    return load(weight + (g * p.group_outputs() + o) * p.depth() + k);
  }
  // gout's element of output channel 0 of the group at column q.
  __device__ int64_t b_context(int64_t g, int64_t q) const {
    const int64_t n = q / p.positions();
    return ((n0 + n) * p.c_out + g * p.group_outputs()) * p.positions() + q - n * p.positions();
  }
  __device__ float b(int64_t, int64_t o, int64_t at) const { return load(gout + at + o * p.positions()); }
  __device__ void store(int64_t g, int64_t k, int64_t q, float acc) const {
    const int64_t n = q / p.positions();
    gcol[(n * p.c_in * p.taps() + g * p.depth() + k) * p.positions() + q - n * p.positions()] = acc;
  }
};

// grad_weight's slice s of group g (z = g * slices + s) over the columns im2col_kernel wrote for
// images [n0, n0 + count): rows o of the group, columns k, reduction q in the slice (q = (n - n0) *
// P + pos); partial[s0 + s, g * C_out / groups + o, k].
template <typename T>
struct WeightGradProblem {
  using Elem = T;
  static constexpr bool kExactB = false;  // sampled columns, in float
  Params p;
  const T* gout;
  const float* col;
  float* partial;
  int64_t n0, count, slices, slice_length, s0;
  __device__ int64_t length() const { return count * p.positions(); }
  __device__ int64_t rows() const { return p.group_outputs(); }
  __device__ int64_t cols() const { return p.depth(); }
  __device__ int64_t r_begin(int64_t z) const { return (z % slices) * slice_length; }
  __device__ int64_t r_end(int64_t z) const {
    const int64_t e = (z % slices + 1) * slice_length;
    return e < length() ? e : length();
  }
  __device__ float a(int64_t z, int64_t o, int64_t q) const {
    const int64_t g = z / slices, nl = q / p.positions();
    return load(gout + ((n0 + nl) * p.c_out + g * p.group_outputs() + o) * p.positions() + q - nl * p.positions());
  }
  // Row k of the group's columns.
  __device__ const float* b_context(int64_t z, int64_t k) const {
    return col + ((z / slices) * p.depth() + (k < p.depth() ? k : 0)) * length();
  }
  __device__ float b(int64_t, int64_t q, const float* row) const { return row[q]; }
  __device__ void store(int64_t z, int64_t o, int64_t k, float acc) const {
    const int64_t g = z / slices, s = z % slices;
    partial[((s0 + s) * p.c_out + g * p.group_outputs() + o) * p.depth() + k] = acc;
  }
};

#include "deform_conv2d_mma_gemm.cuh"  // the half types' GEMMs on mma.sync

// Tiles of 128 rows where a problem has more than 64 (each B tile is then read once per 128
// outputs), else of 64; float32 in register tiles unless `tiled` is false.
template <class Problem>
cudaError_t launch_gemm(const Problem& pr, int64_t rows, int64_t cols, int64_t problems, cudaStream_t stream,
                        bool tiled) {
  if (rows <= 0 || cols <= 0 || problems <= 0) return cudaSuccess;
  const int bm = rows > 64 ? 128 : 64;
  const int64_t gx = (cols + kBN - 1) / kBN, gy = (rows + bm - 1) / bm;
  if (gx > 2147483647 || gy > 65535) return cudaErrorInvalidConfiguration;
  for (int64_t z0 = 0; z0 < problems; z0 += kMaxGridZ) {
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                    static_cast<unsigned>(std::min(problems - z0, kMaxGridZ)));
    const auto launch = [&](auto tile_rows) {
      constexpr int BM = decltype(tile_rows)::value;
      if constexpr (std::is_same_v<typename Problem::Elem, float>) {  // the half types: one kernel
        if (tiled) {
          gemm_kernel<BM, Problem, true><<<grid, kThreads, 0, stream>>>(pr, z0);
          return;
        }
      }
      gemm_kernel<BM, Problem, false><<<grid, kThreads, 0, stream>>>(pr, z0);
    };
    if (bm == 128) launch(std::integral_constant<int, 128>{});
    else launch(std::integral_constant<int, 64>{});
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// grad_weight[i] = the sum of its slices' partials in slice order.
template <typename T>
__global__ void __launch_bounds__(kThreads) slice_sum_kernel(const float* __restrict__ partial, int64_t slices,
                                                             int64_t count, T* __restrict__ out) {
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < count; i += int64_t(gridDim.x) * kThreads) {
    float s = 0.0f;
    for (int64_t k = 0; k < slices; ++k) s += partial[k * count + i];
    out[i] = store_as<T>(s);
  }
}

// grad_bias[o] = the sum of gout over (n, pos): the block's threads stride over it, then a fixed
// tree sums their partials.
template <typename T>
__global__ void __launch_bounds__(kThreads) bias_grad_kernel(const Params p, const T* __restrict__ gout,
                                                             T* __restrict__ gbias) {
  const int64_t o = blockIdx.x, P = p.positions(), total = p.n * P;
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < total; i += kThreads) {
    const int64_t n = i / P;
    s += load(gout + (n * p.c_out + o) * P + i - n * P);
  }
  __shared__ float part[kThreads];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) gbias[o] = store_as<T>(part[0]);
}

// Per image of the chunk (blockIdx.y): max |gcol| over it and max |mask| over the image's mask.
template <typename T>
__global__ void __launch_bounds__(kThreads) image_max_kernel(const Params p, const float* __restrict__ gcol,
                                                             const T* __restrict__ mask, int64_t n0,
                                                             uint32_t* __restrict__ gmax, uint32_t* __restrict__ mmax) {
  const int64_t nl = blockIdx.y, per = p.c_in * p.taps() * p.positions();
  const int64_t first = blockIdx.x * int64_t(kThreads) + threadIdx.x, stride = int64_t(gridDim.x) * kThreads;
  uint32_t bits = 0;
  for (int64_t i = first; i < per; i += stride) bits = max(bits, fs::abs_bits(gcol[nl * per + i]));
  fs::block_max_into<kThreads>(bits, gmax + nl);
  if (!p.has_mask) return;
  const int64_t mper = p.offset_groups * p.taps() * p.positions();
  bits = 0;
  for (int64_t i = first; i < mper; i += stride) bits = max(bits, fs::abs_bits(load(mask + (n0 + nl) * mper + i)));
  fs::block_max_into<kThreads>(bits, mmax + nl);
}

__global__ void frac_kernel(const uint32_t* __restrict__ gmax, const uint32_t* __restrict__ mmax, bool has_mask,
                            double most, int32_t* __restrict__ frac, int64_t count) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < count) {
    const double m = has_mask ? double(fs::max_of_bits(mmax[i])) : 1.0;
    frac[i] = fs::frac_bits(double(fs::max_of_bits(gmax[i])) * m * most);
  }
}

// Sample (n, offset group, t, pos) of the chunk: its channels' gradients summed in channel order
// into grad_offset and grad_mask, and each channel's corners added to grad_input's accumulators.
template <typename T>
__global__ void __launch_bounds__(kThreads) sample_grad_kernel(
    const Params p, const float* __restrict__ gcol, const T* __restrict__ input, const T* __restrict__ offset,
    const T* __restrict__ mask, int64_t n0, int64_t count, const int32_t* __restrict__ frac,
    unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, T* __restrict__ goffset,
    T* __restrict__ gmask) {
  const int64_t P = p.positions(), kk = p.taps(), oc = p.offset_channels(), plane = p.h * p.w;
  const int64_t total = count * p.offset_groups * kk * P;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads) {
    const int64_t pos = i % P, t = (i / P) % kk, g = (i / (P * kk)) % p.offset_groups, nl = i / (P * kk * p.offset_groups);
    const int64_t n = n0 + nl;
    const SampleAt s = sample_at(p, n, g * oc, t, pos);
    const float y = float(s.base_y) + load(offset + s.offset);
    const float x = float(s.base_x) + load(offset + s.offset + P);
    const Corners<float> cs = corners<float>(y, x, p.h, p.w);
    const float m = p.has_mask ? load(mask + s.mask) : 1.0f;
    const bool scatter = acc != nullptr && !cs.nan && !cs.outside;
    const int f = acc != nullptr ? frac[nl] : 0;
    float sy = 0.0f, sx = 0.0f, sm = 0.0f;
    for (int64_t c = g * oc; c < (g + 1) * oc; ++c) {
      const T* in = input + (n * p.c_in + c) * plane;
      const auto read = [&](int64_t k) { return load(in + k); };
      const float gc = gcol[(nl * p.c_in * kk + c * kk + t) * P + pos];
      if (goffset != nullptr) {
        float dy, dx;
        corner_grads(cs, read, &dy, &dx);
        sy = __fmaf_rn(gc, dy, sy);
        sx = __fmaf_rn(gc, dx, sx);
      }
      if (gmask != nullptr) sm = __fmaf_rn(gc, corner_value(cs, read), sm);
      if (scatter) {
        const float v = p.has_mask ? __fmul_rn(gc, m) : gc;
        for (int k = 0; k < 4; ++k)
          if (scatters(cs, k)) fs::add(acc, flags, (nl * p.c_in + c) * plane + cs.idx[k], __fmul_rn(cs.w[k], v), f);
      }
    }
    if (goffset != nullptr) {
      goffset[s.offset] = store_as<T>(p.has_mask ? __fmul_rn(sy, m) : sy);
      goffset[s.offset + P] = store_as<T>(p.has_mask ? __fmul_rn(sx, m) : sx);
    }
    if (gmask != nullptr) gmask[s.mask] = store_as<T>(sm);
  }
}

// grad_input of the chunk's images from the accumulators.
template <typename T>
__global__ void __launch_bounds__(kThreads) finish_kernel(const Params p, const unsigned long long* __restrict__ acc,
                                                          const uint32_t* __restrict__ flags,
                                                          const int32_t* __restrict__ frac, int64_t count,
                                                          T* __restrict__ ginput) {
  const int64_t per = p.c_in * p.h * p.w, total = count * per;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < total; i += int64_t(gridDim.x) * kThreads)
    ginput[i] = store_as<T>(static_cast<float>(
        fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i), frac[i / per])));
}

unsigned blocks_for(int64_t work) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((work + kThreads - 1) / kThreads, 65536)));
}

// Images per chunk of a column matrix (the forward's columns; the backward's columns, then their
// gradient).
int64_t chunk_images(const Params& p) {
  const int64_t per = std::max<int64_t>(1, p.c_in * p.taps() * p.positions() * int64_t(sizeof(float)));
  const int64_t fit = std::min<int64_t>(static_cast<int64_t>(kColumnBudget) / per, 65535);  // grid.y of the maxima
  return std::max<int64_t>(1, std::min<int64_t>(p.n, fit));
}

// grad_weight's slices of a chunk of `count` images, and of all chunks.
int64_t chunk_slices(const Params& p, int64_t count) {
  return (count * p.positions() + kSliceLength - 1) / kSliceLength;
}

int64_t weight_slices(const Params& p) {
  const int64_t chunk = chunk_images(p), full = p.n / chunk, rest = p.n - full * chunk;
  return full * chunk_slices(p, chunk) + (rest > 0 ? chunk_slices(p, rest) : 0);
}

// col: a chunk's column matrix, first its sampled columns (grad_weight), then their gradient
// (the samples' gradients).
struct Layout {
  size_t col, zero_begin, acc, flags, gmax, mmax, zero_end, frac, partial, bytes;
};

Layout layout(const Params& p, const Wanted& want) {
  WorkspaceOffsets w;
  Layout L{};
  const int64_t nc = chunk_images(p);
  if (want.input || want.offset || want.mask || want.weight)
    L.col = w.take(sizeof(float) * static_cast<size_t>(nc * p.c_in * p.taps() * p.positions()));
  if (want.input || want.offset || want.mask) {
    L.zero_begin = w.end;  // acc, flags and the maxima start at zero; frac is written whole
    L.acc = w.take(want.input ? sizeof(unsigned long long) * static_cast<size_t>(nc * p.c_in * p.h * p.w) : 0);
    L.flags = w.take(want.input ? sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(nc * p.c_in * p.h * p.w)) : 0);
    L.gmax = w.take(sizeof(uint32_t) * static_cast<size_t>(nc));
    L.mmax = w.take(sizeof(uint32_t) * static_cast<size_t>(nc));
    L.zero_end = w.end;
    L.frac = w.take(sizeof(int32_t) * static_cast<size_t>(nc));
  }
  if (want.weight) L.partial = w.take(sizeof(float) * static_cast<size_t>(weight_slices(p) * p.c_out * p.depth()));
  L.bytes = w.end;
  return L;
}

}  // namespace kernels

using namespace kernels;

size_t backward_workspace_bytes(const Params& p, const Wanted& want) { return layout(p, want).bytes; }

// im2col_kernel over images [n0, n0 + count) (mask: null without p.has_mask).
template <typename T, bool kSplit = false>
cudaError_t launch_im2col(const Params& p, const Dividers& dv, const T* input, const T* offset, const T* mask,
                          int64_t n0, int64_t count, float* col, cudaStream_t stream) {
  const int64_t cols = count * p.positions();
  if (p.c_in * p.taps() <= 0 || cols <= 0) return cudaSuccess;
  // A block row per run of channels (up to the grid's limit).
  const int64_t gx = (cols + kThreads - 1) / kThreads;
  const int64_t runs = (p.offset_channels() + kIm2colChannels - 1) / kIm2colChannels;
  const int64_t gy = std::min<int64_t>(p.offset_groups * runs, kMaxGridZ);
  if (gx > 2147483647) return cudaErrorInvalidConfiguration;
  im2col_kernel<T, kSplit><<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy)), kThreads, 0, stream>>>(
      p, dv, input, offset, p.has_mask ? mask : nullptr, n0, count, col);
  return cudaGetLastError();
}

// A bound, not the exact use (chunk_images(p) images' columns), so that it grows with every
// dimension: the plugins ask for it at the profile's largest shapes, and a smaller shape's chunk
// may hold more images (min(N * per, max(per, budget)) is never below chunk_images * per).
size_t forward_workspace_bytes(const Params& p) {
  if (p.n * p.c_out * p.positions() == 0) return 0;
  const size_t per = sizeof(float) * static_cast<size_t>(p.c_in * p.taps() * p.positions());
  return std::min(static_cast<size_t>(p.n) * per, std::max(per, kColumnBudget));
}

// TWINOPS_DEFORM_CONV2D_GEMM (read per call, to compare them): unset or any other value, the
// half types' three GEMMs on mma_gemm where they fit (else gemm_tensor_cores) and the float32
// GEMMs in register tiles (gemm_simt_tiled); "tiled", the same but the half types' GEMMs always
// on gemm_tensor_cores (the same bits as mma_gemm); "simple", gemm_simt's float32 GEMMs (the
// same bits as the tiles).
enum class Gemm { kMma, kTiled, kSimple };
static Gemm gemm_choice() {
  const char* v = std::getenv("TWINOPS_DEFORM_CONV2D_GEMM");
  if (v != nullptr && std::strcmp(v, "simple") == 0) return Gemm::kSimple;
  if (v != nullptr && std::strcmp(v, "tiled") == 0) return Gemm::kTiled;
  return Gemm::kMma;
}

template <typename T>
cudaError_t forward_cuda(const Params& p, const T* input, const T* offset, const T* mask, const T* weight,
                         const T* bias, T* out, void* workspace, cudaStream_t stream) {
  if (p.n * p.c_out * p.positions() == 0) return cudaSuccess;  // an empty output
  if (workspace == nullptr) return cudaErrorInvalidValue;
  float* col = static_cast<float*>(workspace);
  const Dividers dv(p);
  const int64_t chunk = chunk_images(p);
  const Gemm gemm = gemm_choice();
  DeviceProps dev;
  if (!std::is_same_v<T, float> && gemm == Gemm::kMma) {
    if (cudaError_t e = current_device_props(&dev); e != cudaSuccess) return e;
  }
  for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
    const int64_t count = std::min(chunk, p.n - n0), cols = count * p.positions();
    const ForwardProblem<T> pr{p, col, weight, p.has_bias ? bias : nullptr, out, n0, count};
    if constexpr (!std::is_same_v<T, float>) {  // chunks of 8 along the reduction and the columns
      if (gemm == Gemm::kMma && mma_gemm::fits<T>(dev, p.depth() % 8 == 0 && cols % 8 == 0, {weight, col})) {
        if (cudaError_t e = launch_im2col<T, true>(p, dv, input, offset, mask, n0, count, col, stream);
            e != cudaSuccess)
          return e;
        const int64_t rows = p.c_in * p.taps();
        const mma_gemm::Forward<T> op{pr, mma_gemm::plane<T>(col, rows, cols, 0), mma_gemm::plane<T>(col, rows, cols, 1)};
        if (cudaError_t e = mma_gemm::launch(op, p.group_outputs(), cols, p.groups, dev, stream); e != cudaSuccess)
          return e;
        continue;
      }
    }
    if (cudaError_t e = launch_im2col(p, dv, input, offset, mask, n0, count, col, stream); e != cudaSuccess) return e;
    if (cudaError_t e = launch_gemm(pr, p.group_outputs(), cols, p.groups, stream, gemm != Gemm::kSimple);
        e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const T* gout, const T* input, const T* offset, const T* mask,
                          const T* weight, T* ginput, T* goffset, T* gmask, T* gweight, T* gbias, void* workspace,
                          cudaStream_t stream) {
  Wanted want;
  want.input = ginput != nullptr, want.offset = goffset != nullptr, want.mask = gmask != nullptr && p.has_mask;
  want.weight = gweight != nullptr, want.bias = gbias != nullptr && p.has_bias;
  const Layout L = layout(p, want);
  char* ws = static_cast<char*>(workspace);
  const T* m = p.has_mask ? mask : nullptr;
  if (want.bias && p.c_out > 0) {
    bias_grad_kernel<T><<<static_cast<unsigned>(std::min<int64_t>(p.c_out, 2147483647)), kThreads, 0, stream>>>(
        p, gout, gbias);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  const bool samples = want.input || want.offset || want.mask, weights = want.weight && p.c_out > 0;
  const int64_t P = p.positions(), kk = p.taps();
  if (weights && p.n * P == 0) {  // no columns: grad_weight is 0
    if (cudaError_t e = cudaMemsetAsync(gweight, 0, sizeof(T) * p.c_out * p.depth(), stream); e != cudaSuccess)
      return e;
  }
  if (!(samples || weights) || p.n == 0) return cudaSuccess;
  float* col = reinterpret_cast<float*>(ws + L.col);
  float* partial = reinterpret_cast<float*>(ws + L.partial);
  auto* acc = want.input ? reinterpret_cast<unsigned long long*>(ws + L.acc) : nullptr;
  auto* flags = want.input ? reinterpret_cast<uint32_t*>(ws + L.flags) : nullptr;
  auto* gmax = reinterpret_cast<uint32_t*>(ws + L.gmax);
  auto* mmax = reinterpret_cast<uint32_t*>(ws + L.mmax);
  auto* frac = reinterpret_cast<int32_t*>(ws + L.frac);
  const Dividers dv(p);
  const int64_t chunk = chunk_images(p);
  const Gemm gemm = gemm_choice();
  const bool tiled = gemm != Gemm::kSimple;
  // The half types' GEMMs on mma_gemm: chunks of 8 along the reduction and the positions (so
  // that none of grad_output's spans two images), aligned bases.
  bool mma = false;
  DeviceProps dev;
  if constexpr (!std::is_same_v<T, float>) {
    if (gemm == Gemm::kMma && P > 0) {
      if (cudaError_t e = current_device_props(&dev); e != cudaSuccess) return e;
      mma = mma_gemm::fits<T>(dev, p.depth() % 8 == 0 && P % 8 == 0, {gout, weight, col});
    }
  }
  int64_t s0 = 0;  // grad_weight's slices so far
  for (int64_t n0 = 0; n0 < p.n; n0 += chunk) {
    const int64_t count = std::min(chunk, p.n - n0), cols = count * P;
    if (weights && P > 0) {
      const int64_t slices = chunk_slices(p, count);
      const WeightGradProblem<T> pr{p, gout, col, partial, n0, count, slices, kSliceLength, s0};
      bool done = false;
      if constexpr (!std::is_same_v<T, float>) {
        if (mma) {
          if (cudaError_t e = launch_im2col<T, true>(p, dv, input, offset, m, n0, count, col, stream); e != cudaSuccess)
            return e;
          const int64_t rows = p.c_in * kk;
          const mma_gemm::WeightGrad<T> op{pr, mma_gemm::plane<T>(col, rows, cols, 0),
                                           mma_gemm::plane<T>(col, rows, cols, 1)};
          if (cudaError_t e = mma_gemm::launch(op, p.group_outputs(), p.depth(), p.groups * slices, dev, stream);
              e != cudaSuccess)
            return e;
          done = true;
        }
      }
      if (!done) {
        if (cudaError_t e = launch_im2col(p, dv, input, offset, m, n0, count, col, stream); e != cudaSuccess)
          return e;
        if (cudaError_t e = launch_gemm(pr, p.group_outputs(), p.depth(), p.groups * slices, stream, tiled);
            e != cudaSuccess)
          return e;
      }
      s0 += slices;
    }
    if (!samples) continue;
    if (cudaError_t e = cudaMemsetAsync(ws + L.zero_begin, 0, L.zero_end - L.zero_begin, stream); e != cudaSuccess) return e;
    if (p.c_out == 0) {
      if (cudaError_t e = cudaMemsetAsync(col, 0, sizeof(float) * cols * p.c_in * kk, stream); e != cudaSuccess)
        return e;
    } else {
      const ColumnGradProblem<T> pr{p, gout, weight, col, n0, count};
      cudaError_t e = cudaSuccess;
      if constexpr (!std::is_same_v<T, float>) {
        if (mma) e = mma_gemm::launch(mma_gemm::ColumnGrad<T>{pr}, p.depth(), cols, p.groups, dev, stream);
      }
      if (!mma) e = launch_gemm(pr, p.depth(), cols, p.groups, stream, tiled);
      if (e != cudaSuccess) return e;
    }
    if (want.input) {
      const int64_t per = std::max(p.c_in * kk * P, p.offset_groups * kk * P);
      const dim3 grid(std::min<unsigned>(blocks_for(per), 1024u), static_cast<unsigned>(count));
      image_max_kernel<T><<<grid, kThreads, 0, stream>>>(p, col, m, n0, gmax, mmax);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      frac_kernel<<<blocks_for(count), kThreads, 0, stream>>>(gmax, mmax, p.has_mask, double(kk * P), frac, count);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    sample_grad_kernel<T><<<blocks_for(count * p.offset_groups * kk * P), kThreads, 0, stream>>>(
        p, col, input, offset, m, n0, count, frac, acc, flags, goffset, want.mask ? gmask : nullptr);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (want.input) {
      finish_kernel<T><<<blocks_for(count * p.c_in * p.h * p.w), kThreads, 0, stream>>>(
          p, acc, flags, frac, count, ginput + n0 * p.c_in * p.h * p.w);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
  }
  if (weights && s0 > 0) {
    const int64_t count = p.c_out * p.depth();
    slice_sum_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(partial, s0, count, gweight);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

#define TWIN_DEFORM_CONV2D_INSTANTIATE(T)                                                                        \
  template cudaError_t forward_cuda<T>(const Params&, const T*, const T*, const T*, const T*, const T*, T*,     \
                                       void*, cudaStream_t);                                                    \
  template cudaError_t backward_cuda<T>(const Params&, const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                        T*, T*, T*, void*, cudaStream_t);
TWIN_DEFORM_CONV2D_INSTANTIATE(float)
TWIN_DEFORM_CONV2D_INSTANTIATE(__half)
TWIN_DEFORM_CONV2D_INSTANTIATE(__nv_bfloat16)
#undef TWIN_DEFORM_CONV2D_INSTANTIATE

}  // namespace deform_conv2d
}  // namespace twinops
