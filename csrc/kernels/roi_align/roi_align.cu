// CUDA kernels of roi_align (the math is roi_align.cuh's, as the CPU loops).
//
// Forward: avg mode by blocks of one roi and a chunk of its channels (`forward_avg_kernel`): the
// roi's frame and each bin's sample taps per axis are computed once per block into shared tables
// (a tap of sample (iy, ix) is the product of its row's and its column's entries, so the tables
// hold PH * grid_h + PW * grid_w entries, not PH * PW * grid_h * grid_w), then each thread sums
// its (channel, bin) from them, in the same order and with the same roundings as bin_value: the
// bits are the per-element path's. A roi whose tables do not fit takes that path in the same
// block. Max mode: one thread per output element (k, c, ph, pw), pw fastest (bin_value).
// Backward, deterministic: each output element adds grad_output * tap weight (/ count for avg)
// into a 64-bit fixed-point accumulator per input element (../fixed_scatter.cuh: integer addition
// is associative, so the sum is bitwise the same whatever the schedule). The scale of channel c's
// planes comes from a bound on what one element can receive: every output element of channel c
// adds at most |grad_output| in all (its samples' tap weights sum to at most count), so max
// |grad_output| over the channel times K * PH * PW (times 2 for the weights' roundings) bounds
// it. Passes: the channel maxima, their fractional bits, the scatter, the conversion to the
// input's dtype.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "../dtype_convert.cuh"
#include "../fixed_scatter.cuh"
#include "../workspace.h"
#include "roi_align.cuh"
#include "roi_align_cuda.h"

namespace twinops {
namespace roi_align {

namespace fs = ::twinops::fixed_scatter;

namespace kernels {

constexpr int kThreads = 256;
constexpr int64_t kMaxRows = 65535;  // gridDim.y

inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

template <typename T, typename I>
__device__ __forceinline__ Roi<typename OpMath<T>::type> roi_at(const Params& p, const T* rois, const I* batch,
                                                                  int64_t k) {
  using Acc = typename OpMath<T>::type;
  return roi_of<Acc>(p, [&](int64_t off) { return static_cast<Acc>(load(rois + off)); }, batch, k);
}

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(const Params p, LevelPtrs<const T> feats, const T* __restrict__ rois, const I* __restrict__ batch,
                   T* __restrict__ out, int64_t count) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t pw = i % p.pw, ph = (i / p.pw) % p.ph, c = (i / (p.pw * p.ph)) % p.c, k = i / (p.pw * p.ph * p.c);
  const Roi<Acc> r = roi_at(p, rois, batch, k);
  const Level& L = p.level[r.level];
  const T* plane = feats.at(r.level) + (r.ok ? r.batch * L.stride[0] + c * L.stride[1] : 0);
  const Acc v = bin_value(p, r, ph, pw, [&](int64_t off) { return static_cast<Acc>(load(plane + off)); });
  const int64_t* os = p.out_stride;
  out[k * os[0] + c * os[1] + ph * os[2] + pw * os[3]] = store_as<T>(v);
}

// ------------------------------------------------------------------ a roi's taps, once per block

constexpr int kAxisCap = 256;  // sample entries per axis in a block's tables
constexpr int kBinCap = 64;    // bins per axis with tables (PH, PW); more take the per-element path

// One sample's position along an axis: its two tap offsets (index times the axis' stride) and
// weights (l toward hi, h = 1 - l); ok false where the sample lies outside [-1, size] (reads 0).
template <typename Acc>
struct AxisEntry {
  int64_t lo, hi;
  Acc l, h;
  int32_t ok;
};

template <typename Acc>
struct RoiTables {
  Roi<Acc> roi;
  bool fits;  // false: the per-element path (bin_value / bin_grad)
  int32_t y_start[kBinCap + 1], x_start[kBinCap + 1];
  int64_t y_first[kBinCap], x_first[kBinCap];  // each bin's first visited sample index (grids may be huge)
  AxisEntry<Acc> y[kAxisCap], x[kAxisCap];
};

template <typename Acc>
__device__ __forceinline__ void axis_entry(Acc v, int64_t size, int64_t stride, AxisEntry<Acc>* e) {
  int64_t lo, hi;
  Acc l;
  e->ok = axis_tap(v, size, &lo, &hi, &l);
  if (!e->ok) return;
  e->lo = lo * stride, e->hi = hi * stride, e->l = l, e->h = Acc(1) - l;
}

// Fills t for roi k on every thread of the block (ends with a barrier); the tables only where
// the roi is on level `lvl` (-1: any). Offsets by the strides of p's level (dense for the
// scatter's accumulators).
template <typename T, typename I>
__device__ void build_tables(const Params& p, const T* rois, const I* batch, int64_t k, int32_t lvl,
                             RoiTables<typename OpMath<T>::type>& t) {
  using Acc = typename OpMath<T>::type;
  const int tid = threadIdx.x;
  if (tid == 0) {
    t.roi = roi_at(p, rois, batch, k);
    t.fits = t.roi.ok && (lvl < 0 || t.roi.level == lvl) && t.roi.grid_h >= Acc(1) && t.roi.grid_w >= Acc(1) &&
             p.ph <= kBinCap && p.pw <= kBinCap;
  }
  __syncthreads();
  const Roi<Acc>& r = t.roi;
  const Level& L = p.level[r.level];
  if (t.fits && tid < p.ph + p.pw) {  // each bin's visited sample range, per axis
    const bool along_y = tid < p.ph;
    const int64_t b = along_y ? tid : tid - p.ph;
    int64_t lo, hi;
    if (along_y) axis_range(r.y0, r.bin_h, b, r.grid_h, L.h, &lo, &hi);
    else axis_range(r.x0, r.bin_w, b, r.grid_w, L.w, &lo, &hi);
    const int64_t n = hi >= lo ? hi - lo + 1 : 0;
    (along_y ? t.y_first : t.x_first)[b] = lo;
    (along_y ? t.y_start : t.x_start)[b + 1] = static_cast<int32_t>(n < kAxisCap ? n : kAxisCap + 1);
  }
  __syncthreads();
  if (tid == 0 && t.fits) {  // counts -> starts; too many entries: the per-element path
    int32_t ys = 0, xs = 0;
    t.y_start[0] = t.x_start[0] = 0;
    for (int b = 1; b <= p.ph; ++b) t.y_start[b] = ys = min(ys + t.y_start[b], kAxisCap + 1);
    for (int b = 1; b <= p.pw; ++b) t.x_start[b] = xs = min(xs + t.x_start[b], kAxisCap + 1);
    t.fits = ys <= kAxisCap && xs <= kAxisCap;
  }
  __syncthreads();
  if (!t.fits) return;
  for (int b = 0; b < p.ph; ++b)
    for (int e = t.y_start[b] + tid; e < t.y_start[b + 1]; e += blockDim.x)
      axis_entry(sample_at(r.y0, r.bin_h, b, r.grid_h, t.y_first[b] + (e - t.y_start[b])), L.h, L.stride[2],
                 &t.y[e]);
  for (int b = 0; b < p.pw; ++b)
    for (int e = t.x_start[b] + tid; e < t.x_start[b + 1]; e += blockDim.x)
      axis_entry(sample_at(r.x0, r.bin_w, b, r.grid_w, t.x_first[b] + (e - t.x_start[b])), L.w, L.stride[3],
                 &t.x[e]);
  __syncthreads();
}

// visit(offsets[4], weights[4]) for every sample of bin (ph, pw) that reads the map, in bin_value's
// (iy, ix) order, with taps_of's offsets and weights.
template <typename Acc, typename Visit>
__device__ __forceinline__ void each_table_sample(const RoiTables<Acc>& t, int ph, int pw, const Visit& visit) {
  const int x0 = t.x_start[pw], x1 = t.x_start[pw + 1];
  for (int ey = t.y_start[ph]; ey < t.y_start[ph + 1]; ++ey) {
    const AxisEntry<Acc> Y = t.y[ey];
    if (!Y.ok) continue;
    for (int ex = x0; ex < x1; ++ex) {
      const AxisEntry<Acc> X = t.x[ex];
      if (!X.ok) continue;
      const int64_t off[4] = {Y.lo + X.lo, Y.lo + X.hi, Y.hi + X.lo, Y.hi + X.hi};
      const Acc w[4] = {mul_rn(Y.h, X.h), mul_rn(Y.h, X.l), mul_rn(Y.l, X.h), mul_rn(Y.l, X.l)};
      visit(off, w);
    }
  }
}

// Channels per block of the table kernels: about kTableOutputs (channel, bin) pairs per block.
constexpr int64_t kTableOutputs = 1024;
inline int64_t channels_per_block(const Params& p) {
  const int64_t bins = p.ph * p.pw;
  return std::max<int64_t>(1, std::min<int64_t>(p.c, (kTableOutputs + bins - 1) / bins));
}

// Avg mode. Block (k, chunk): roi k = blockIdx.x, channels [chunk * cpb, + cpb). Four blocks
// per SM: 64 registers without spills (ptxas -v, sm_90); the scatter's 119 would spill.
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads, 4)
    forward_avg_kernel(const Params p, LevelPtrs<const T> feats, const T* __restrict__ rois,
                       const I* __restrict__ batch, T* __restrict__ out, int64_t cpb) {
  using Acc = typename OpMath<T>::type;
  __shared__ RoiTables<Acc> t;
  const int64_t k = blockIdx.x, c0 = static_cast<int64_t>(blockIdx.y) * cpb;
  const int64_t bins = p.ph * p.pw, n = (cpb < p.c - c0 ? cpb : p.c - c0) * bins;
  build_tables<T, I>(p, rois, batch, k, -1, t);
  const T* feat = feats.at(t.roi.level);
  const Roi<Acc>& r = t.roi;
  const Level& L = p.level[r.level];
  const int64_t* os = p.out_stride;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t c = c0 + i / bins, b = i % bins, ph = b / p.pw, pw = b % p.pw;
    const T* plane = feat + (r.ok ? r.batch * L.stride[0] + c * L.stride[1] : 0);
    const auto read = [&](int64_t off) { return static_cast<Acc>(load(plane + off)); };
    Acc v;
    if (t.fits) {
      Acc sum = Acc(0);
      each_table_sample(t, static_cast<int>(ph), static_cast<int>(pw), [&](const int64_t* o, const Acc* w) {
        sum += mul_rn(w[0], read(o[0])) + mul_rn(w[1], read(o[1])) + mul_rn(w[2], read(o[2])) +
               mul_rn(w[3], read(o[3]));
      });
      v = sum / (r.grid_h * r.grid_w);
    } else {
      v = bin_value(p, r, ph, pw, read);
    }
    out[k * os[0] + c * os[1] + ph * os[2] + pw * os[3]] = store_as<T>(v);
  }
}

// Byte offsets of the backward's workspace: accumulators and flags of every element of the
// level's input, each channel's max |grad_output| (float bits) and its fractional bits.
struct FixedLayout {
  size_t acc, flags, planes, frac, zeroed, bytes;
};

FixedLayout fixed_layout(const Params& p, int32_t lvl) {
  const int64_t elems = p.n * p.c * p.level[lvl].h * p.level[lvl].w;
  WorkspaceOffsets w;
  FixedLayout L{};
  L.acc = w.take(sizeof(unsigned long long) * static_cast<size_t>(elems));
  L.flags = w.take(sizeof(uint32_t) * static_cast<size_t>(fs::flag_words(elems)));
  L.planes = w.take(sizeof(uint32_t) * static_cast<size_t>(p.c));
  L.zeroed = w.end;
  L.frac = w.take(sizeof(int32_t) * static_cast<size_t>(p.c));
  L.bytes = w.end;
  return L;
}

// Channel c0 + blockIdx.y's max |grad_output| over its finite values (one atomic per block).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    channel_max_kernel(const Params p, const T* __restrict__ gout, int64_t c0, uint32_t* __restrict__ planes) {
  const int64_t c = c0 + blockIdx.y, bins = p.ph * p.pw, per = p.k * bins;
  const int64_t* os = p.out_stride;
  uint32_t bits = 0;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < per;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = q / bins, b = q % bins;
    bits = max(bits, fs::abs_bits(static_cast<float>(load(gout + k * os[0] + c * os[1] + (b / p.pw) * os[2] +
                                                           (b % p.pw) * os[3]))));
  }
  fs::block_max_into<kThreads>(bits, planes + c);
}

__global__ void __launch_bounds__(kThreads)
    frac_kernel(const uint32_t* __restrict__ planes, double most, int32_t* __restrict__ frac, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) frac[i] = fs::frac_bits(static_cast<double>(fs::max_of_bits(planes[i])) * most);
}

// One thread per output element (k, c, ph, pw) of a roi on level lvl: its contributions into the
// accumulators of plane (batch, c). q: p with the level's tap offsets dense (y * W + x).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const Params q, int32_t lvl, const T* __restrict__ gout, const T* __restrict__ feat,
                   const T* __restrict__ rois, const I* __restrict__ batch, const int32_t* __restrict__ frac,
                   unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, int64_t count,
                   int64_t in_stride_y, int64_t in_stride_x) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const int64_t pw = i % q.pw, ph = (i / q.pw) % q.ph, c = (i / (q.pw * q.ph)) % q.c, k = i / (q.pw * q.ph * q.c);
  const Roi<Acc> r = roi_at(q, rois, batch, k);
  if (!r.ok || r.level != lvl) return;
  const Level& L = q.level[lvl];
  const int64_t* os = q.out_stride;
  const Acc g = static_cast<Acc>(load(gout + k * os[0] + c * os[1] + ph * os[2] + pw * os[3]));
  const T* src = feat + r.batch * L.stride[0] + c * L.stride[1];
  const int64_t base = (r.batch * q.c + c) * L.h * L.w;
  const int f = frac[c];
  bin_grad(q, r, ph, pw, g,
           [&](int64_t off) {  // max mode re-reads the input: dense offset -> its strides
             const int64_t y = off / L.w, x = off - y * L.w;
             return static_cast<Acc>(load(src + y * in_stride_y + x * in_stride_x));
           },
           [&](int64_t off, Acc v) { fs::add(acc, flags, base + off, static_cast<float>(v), f); });
}

// Avg mode: scatter_kernel by blocks of one roi and a chunk of channels, from the tables (the
// same contributions, so the same sums).
template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    scatter_avg_kernel(const Params q, int32_t lvl, const T* __restrict__ gout, const T* __restrict__ rois,
                       const I* __restrict__ batch, const int32_t* __restrict__ frac,
                       unsigned long long* __restrict__ acc, uint32_t* __restrict__ flags, int64_t cpb) {
  using Acc = typename OpMath<T>::type;
  __shared__ RoiTables<Acc> t;
  const int64_t k = blockIdx.x, c0 = static_cast<int64_t>(blockIdx.y) * cpb;
  build_tables<T, I>(q, rois, batch, k, lvl, t);
  const Roi<Acc>& r = t.roi;
  if (!r.ok || r.level != lvl) return;  // the whole block
  const Level& L = q.level[lvl];
  const int64_t bins = q.ph * q.pw, n = (cpb < q.c - c0 ? cpb : q.c - c0) * bins;
  const int64_t* os = q.out_stride;
  const Acc count = r.grid_h * r.grid_w;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t c = c0 + i / bins, b = i % bins, ph = b / q.pw, pw = b % q.pw;
    const Acc g = static_cast<Acc>(load(gout + k * os[0] + c * os[1] + ph * os[2] + pw * os[3]));
    const int64_t base = (r.batch * q.c + c) * L.h * L.w;
    const int f = frac[c];
    const auto add = [&](int64_t off, Acc v) { fs::add(acc, flags, base + off, static_cast<float>(v), f); };
    if (t.fits) {
      each_table_sample(t, static_cast<int>(ph), static_cast<int>(pw), [&](const int64_t* o, const Acc* w) {
        for (int j = 0; j < 4; ++j) add(o[j], mul_rn(g, w[j]) / count);
      });
    } else {  // avg mode reads no input
      bin_grad(q, r, ph, pw, g, [](int64_t) { return Acc(0); }, add);
    }
  }
}

// The table kernels' grid: (K, channel chunks); false where it does not fit a grid.
inline bool table_grid(const Params& p, dim3* grid, int64_t* cpb) {
  *cpb = channels_per_block(p);
  int64_t chunks = (p.c + *cpb - 1) / *cpb;
  if (chunks > kMaxRows) {
    *cpb = (p.c + kMaxRows - 1) / kMaxRows;
    chunks = (p.c + *cpb - 1) / *cpb;
  }
  if (p.mode != kAvg || p.k > 0x7fffffff) return false;
  *grid = dim3(static_cast<unsigned>(p.k), static_cast<unsigned>(chunks));
  return true;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    finish_kernel(const Params p, int32_t lvl, const unsigned long long* __restrict__ acc,
                  const uint32_t* __restrict__ flags, const int32_t* __restrict__ frac, int64_t count,
                  T* __restrict__ grad) {
  using Acc = typename OpMath<T>::type;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const Level& L = p.level[lvl];
  const int64_t x = i % L.w, y = (i / L.w) % L.h, c = (i / (L.w * L.h)) % p.c, n = i / (L.w * L.h * p.c);
  const T v = store_as<T>(static_cast<Acc>(fs::fixed_value(static_cast<int64_t>(acc[i]), fs::element_flags(flags, i),
                                                           frac[c])));
  const int64_t* gs = p.grad_input_stride;
  grad[n * gs[0] + c * gs[1] + y * gs[2] + x * gs[3]] = v;
}

}  // namespace kernels

template <typename T, typename I>
cudaError_t forward_cuda(const Params& p, LevelPtrs<const T> feats, const T* rois, const I* batch, T* out,
                         cudaStream_t stream) {
  const int64_t count = p.k * p.c * p.ph * p.pw;
  if (count == 0) return cudaSuccess;
  dim3 grid;
  int64_t cpb;
  if (kernels::table_grid(p, &grid, &cpb)) {
    kernels::forward_avg_kernel<T, I><<<grid, kernels::kThreads, 0, stream>>>(p, feats, rois, batch, out, cpb);
    return cudaGetLastError();
  }
  kernels::forward_kernel<T, I><<<kernels::blocks_for(count), kernels::kThreads, 0, stream>>>(p, feats, rois, batch,
                                                                                           out, count);
  return cudaGetLastError();
}

size_t backward_workspace_bytes(const Params& p, int32_t lvl) { return kernels::fixed_layout(p, lvl).bytes; }

template <typename T, typename I>
cudaError_t backward_cuda(const Params& p, int32_t lvl, const T* gout, const T* feat, const T* rois, const I* batch,
                          T* grad, void* workspace, cudaStream_t stream) {
  using namespace kernels;
  const Level& L = p.level[lvl];
  const int64_t elems = p.n * p.c * L.h * L.w;
  if (elems == 0) return cudaSuccess;
  const FixedLayout W = fixed_layout(p, lvl);
  char* ws = static_cast<char*>(workspace);
  auto* acc = reinterpret_cast<unsigned long long*>(ws + W.acc);
  auto* flags = reinterpret_cast<uint32_t*>(ws + W.flags);
  auto* planes = reinterpret_cast<uint32_t*>(ws + W.planes);
  auto* frac = reinterpret_cast<int32_t*>(ws + W.frac);
  cudaError_t e;
  if ((e = cudaMemsetAsync(ws, 0, W.zeroed, stream)) != cudaSuccess) return e;
  const int64_t outs = p.k * p.c * p.ph * p.pw;
  if (outs > 0) {
    const int64_t per = p.k * p.ph * p.pw;
    const unsigned bx = static_cast<unsigned>(std::min<int64_t>(blocks_for(per), 64));
    for (int64_t c0 = 0; c0 < p.c; c0 += kMaxRows) {
      const dim3 grid(bx, static_cast<unsigned>(std::min<int64_t>(p.c - c0, kMaxRows)));
      channel_max_kernel<T><<<grid, kThreads, 0, stream>>>(p, gout, c0, planes);
      if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
  }
  frac_kernel<<<blocks_for(p.c), kThreads, 0, stream>>>(planes, 2.0 * static_cast<double>(p.k * p.ph * p.pw), frac,
                                                        p.c);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  if (outs > 0) {
    Params q = p;
    q.level[lvl].stride[2] = L.w;
    q.level[lvl].stride[3] = 1;
    dim3 grid;
    int64_t cpb;
    if (table_grid(q, &grid, &cpb))
      scatter_avg_kernel<T, I><<<grid, kThreads, 0, stream>>>(q, lvl, gout, rois, batch, frac, acc, flags, cpb);
    else
      scatter_kernel<T, I><<<blocks_for(outs), kThreads, 0, stream>>>(q, lvl, gout, feat, rois, batch, frac, acc,
                                                                      flags, outs, L.stride[2], L.stride[3]);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  finish_kernel<T><<<blocks_for(elems), kThreads, 0, stream>>>(p, lvl, acc, flags, frac, elems, grad);
  return cudaGetLastError();
}

#define TWIN_ROI_ALIGN_INSTANTIATE(T, I)                                                                         \
  template cudaError_t forward_cuda<T, I>(const Params&, LevelPtrs<const T>, const T*, const I*, T*, cudaStream_t); \
  template cudaError_t backward_cuda<T, I>(const Params&, int32_t, const T*, const T*, const T*, const I*, T*, void*, \
                                           cudaStream_t);
TWIN_ROI_ALIGN_INSTANTIATE(float, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(float, int64_t)
TWIN_ROI_ALIGN_INSTANTIATE(__half, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(__half, int64_t)
TWIN_ROI_ALIGN_INSTANTIATE(__nv_bfloat16, int32_t)
TWIN_ROI_ALIGN_INSTANTIATE(__nv_bfloat16, int64_t)
#undef TWIN_ROI_ALIGN_INSTANTIATE

}  // namespace roi_align
}  // namespace twinops
