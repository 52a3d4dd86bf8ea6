// CUDA kernels of the resize op: table builders and the separable gather (forward over the
// input, backward over grad_output with the transposed tables: deterministic, no atomics
// on data).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

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

template <typename Acc>
__global__ void build_tables_kernel(Params p, Workspace L, char* ws) {
  int k;
  int64_t d;
  if (!axis_thread(p.h.out, p.w.out, &k, &d)) return;
  const Axis& a = k == 0 ? p.h : p.w;
  resize_axis_entry<Acc>(p, a, d, L.taps[k], reinterpret_cast<int32_t*>(ws + L.first[k]),
                         reinterpret_cast<Acc*>(ws + L.weight[k]));
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

// NCHW fast path. A block owns a kTileH x kTileW tile of one output plane: pass 1 resamples
// the input rows the tile needs along W into shared memory (each input value is read once
// per tile instead of once per tap per output), pass 2 resamples them along H. Falls back to
// the per-element gather when the rows do not fit (extreme downscaling).
constexpr int kTileW = 64;
constexpr int kTileH = 32;
constexpr size_t kTileSmem = 48 * 1024 - 64;  // default dynamic shared memory, less the statics

template <typename Acc>
constexpr int32_t tile_max_rows() {
  return static_cast<int32_t>(kTileSmem / (kTileW * sizeof(Acc)));
}

template <int TY, int TX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, 6) tiled_gather_kernel(Gather<T, Acc> g, int32_t C, int32_t OH, int32_t OW,
                                                                int64_t planes, int32_t max_rows, T* __restrict__ dst) {
  static_assert(kThreads % kTileW == 0, "a thread keeps one tile column");
  constexpr int kRowStep = kThreads / kTileW;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Acc* rows = reinterpret_cast<Acc*>(smem_raw);
  __shared__ int32_t s_ymin, s_ymax;
  const int32_t* __restrict__ fy = g.fy;
  const int32_t* __restrict__ fx = g.fx;
  const Acc* __restrict__ wy = g.wy;
  const int tid = threadIdx.x;
  const int j = tid % kTileW, r0 = tid / kTileW;  // this thread's column, first row
  const int32_t oy0 = blockIdx.y * kTileH, ox = blockIdx.x * kTileW + j;
  const int32_t ty = TY > 0 ? TY : g.ty;
  const int32_t tx = TX > 0 ? TX : g.tx;
  // The column's W taps are the same for every row and plane: keep them in registers.
  const bool col_ok = ox < OW && fx[ox] >= 0;
  const int32_t x0 = col_ok ? fx[ox] : 0;
  const Acc* __restrict__ wxr = g.wx + static_cast<int64_t>(col_ok ? ox : 0) * tx;
  Acc wreg[TX > 0 ? TX : 1];
  int64_t creg[TX > 0 ? TX : 1];
  if constexpr (TX > 0) {
#pragma unroll
    for (int b = 0; b < TX; ++b) {
      wreg[b] = wxr[b];
      creg[b] = static_cast<int64_t>(tap_index(x0, b, g.src_w)) * g.stride[3];
    }
  }
  if (tid == 0) {
    int32_t lo = INT32_MAX, hi = -1;
    for (int i = 0; i < kTileH && oy0 + i < OH; ++i) {
      const int32_t f = fy[oy0 + i];
      if (f >= 0) {
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
      }
    }
    s_ymin = lo;
    s_ymax = hi;
  }
  __syncthreads();
  const int32_t ymin = s_ymin;
  const int32_t nrows = s_ymax < 0 ? 0 : s_ymax - ymin + ty;
  const int64_t step = gridDim.z;
  if (nrows > max_rows) {  // block-uniform: the whole block takes the per-element path
    for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
      const int64_t n = plane / C, c = plane % C;
      T* out = dst + plane * static_cast<int64_t>(OH) * OW;
      for (int i = r0; i < kTileH; i += kRowStep) {
        const int32_t oy = oy0 + i;
        if (oy < OH && ox < OW)
          out[static_cast<int64_t>(oy) * OW + ox] = Convert<T>::template store<Acc>(gather_element<TY, TX>(g, n, c, oy, ox));
      }
    }
    return;
  }
  // Pass 1: the rows [ymin, ymin + nrows) of one plane resampled along W for this tile's columns.
  auto resample_rows = [&](int64_t plane, Acc* buf) {
    const T* src = g.src + (plane / C) * g.stride[0] + (plane % C) * g.stride[1];
#pragma unroll 4
    for (int r = r0; r < nrows; r += kRowStep) {
      const T* row = src + static_cast<int64_t>(tap_index(ymin, r, g.src_h)) * g.stride[2];
      Acc v = Acc(0);
      if (col_ok) {
        if constexpr (TX > 0) {
#pragma unroll
          for (int b = 0; b < TX; ++b) v += wreg[b] * Convert<T>::template load<Acc>(row[creg[b]]);
        } else {
          for (int32_t b = 0; b < tx; ++b)
            v += wxr[b] * Convert<T>::template load<Acc>(row[static_cast<int64_t>(tap_index(x0, b, g.src_w)) * g.stride[3]]);
        }
      }
      buf[r * kTileW + j] = v;
    }
  };
  // Pass 2: along H from shared memory, written to the plane's output tile.
  auto resample_cols = [&](int64_t plane, const Acc* buf) {
    T* out = dst + plane * static_cast<int64_t>(OH) * OW;
#pragma unroll 4
    for (int i = r0; i < kTileH; i += kRowStep) {
      const int32_t oy = oy0 + i;
      if (oy < OH && ox < OW) {
        const int32_t y0 = fy[oy];
        Acc v = g.extrapolation;
        if (y0 >= 0 && col_ok) {
          const Acc* w = wy + static_cast<int64_t>(oy) * ty;
          const Acc* col = buf + (y0 - ymin) * kTileW + j;
          v = Acc(0);
#pragma unroll
          for (int32_t a = 0; a < (TY > 0 ? TY : ty); ++a) v += w[a] * col[a * kTileW];
        }
        out[static_cast<int64_t>(oy) * OW + ox] = Convert<T>::template store<Acc>(v);
      }
    }
  };
  // Two buffers: pass 1 of the next plane is issued before pass 2 of this one, so its loads
  // overlap this plane's arithmetic and stores, with one barrier per plane.
  Acc* cur = rows;
  Acc* next = rows + static_cast<int64_t>(max_rows) * kTileW;
  if (blockIdx.z < planes) resample_rows(blockIdx.z, cur);
  __syncthreads();
  for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
    if (plane + step < planes) resample_rows(plane + step, next);
    resample_cols(plane, cur);
    __syncthreads();  // the next plane's rows are complete; this plane's buffer may be reused
    Acc* t = cur;
    cur = next;
    next = t;
  }
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < (1 << 20) ? (b > 0 ? b : 1) : (1 << 20));
}

template <int TY, int TX, typename T, typename Acc>
cudaError_t launch_gather(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last,
                          T* dst, cudaStream_t stream) {
  const int64_t total = N * C * H * W;
  if (!channels_last && C < INT32_MAX) {
    // Enough blocks to fill the GPU a few times over; each loops over planes with its
    // column taps in registers.
    const int64_t tiles = ((W + kTileW - 1) / kTileW) * ((H + kTileH - 1) / kTileH);
    int64_t z = (4096 + tiles - 1) / tiles;
    z = z < N * C ? z : N * C;
    const dim3 grid(static_cast<unsigned>((W + kTileW - 1) / kTileW), static_cast<unsigned>((H + kTileH - 1) / kTileH),
                    static_cast<unsigned>(z < 65535 ? (z > 0 ? z : 1) : 65535));
    // Shared memory for the source rows a tile typically spans (the coordinate step is about
    // src_h / H); tiles that need more (crops, flips) take the per-element path in-kernel.
    const double step = static_cast<double>(g.src_h) / static_cast<double>(H);
    const int64_t want = static_cast<int64_t>(kTileH * step * 1.25) + g.ty + 3;
    const int32_t cap = tile_max_rows<Acc>() / 2;  // two buffers
    const int32_t max_rows = static_cast<int32_t>(want < cap ? want : cap);
    if (grid.y <= 65535) {
      tiled_gather_kernel<TY, TX, T, Acc><<<grid, kThreads, 2 * max_rows * kTileW * sizeof(Acc), stream>>>(
          g, static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W), N * C, max_rows, dst);
      return cudaGetLastError();
    }
  }
  if (total < INT32_MAX) {  // 32-bit index decomposition; element offsets stay 64-bit
    gather_kernel<TY, TX, T, Acc, int32_t><<<blocks_for(total), kThreads, 0, stream>>>(
        g, static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W), static_cast<int32_t>(total),
        channels_last, dst);
  } else {
    gather_kernel<TY, TX, T, Acc, int64_t><<<blocks_for(total), kThreads, 0, stream>>>(g, C, H, W, total,
                                                                                       channels_last, dst);
  }
  return cudaGetLastError();
}

// Unrolled gathers for the fixed tap counts of nearest (1), linear (2) and cubic (4).
template <typename T, typename Acc>
cudaError_t gather(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last, T* dst,
                   cudaStream_t stream) {
  if (g.ty == g.tx) {
    switch (g.ty) {
      case 1: return launch_gather<1, 1>(g, N, C, H, W, channels_last, dst, stream);
      case 2: return launch_gather<2, 2>(g, N, C, H, W, channels_last, dst, stream);
      case 4: return launch_gather<4, 4>(g, N, C, H, W, channels_last, dst, stream);
      default: break;
    }
  }
  return launch_gather<0, 0>(g, N, C, H, W, channels_last, dst, stream);
}

template <typename Acc>
cudaError_t build_tables(const Params& p, const Workspace& L, char* ws, bool backward, cudaStream_t stream) {
  const int64_t entries = p.h.out + p.w.out;
  build_tables_kernel<Acc><<<blocks_for(entries), kThreads, 0, stream>>>(p, L, ws);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (!backward) return cudaSuccess;
  for (int k = 0; k < 2; ++k) {
    const int64_t in = k == 0 ? p.h.in : p.w.in;
    if (cudaError_t e = cudaMemsetAsync(ws + L.lo[k], 0x7f, sizeof(int32_t) * in, stream); e != cudaSuccess) return e;
    if (cudaError_t e = cudaMemsetAsync(ws + L.hi[k], 0xff, sizeof(int32_t) * in, stream); e != cudaSuccess) return e;
  }
  scatter_ranges_kernel<Acc><<<blocks_for(entries), kThreads, 0, stream>>>(p, L, ws);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  inverse_tables_kernel<Acc><<<blocks_for(p.h.in + p.w.in), kThreads, 0, stream>>>(p, L, ws);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
cudaError_t forward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* input, T* output,
                         bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  if (cudaError_t e = build_tables<Acc>(p, L, ws, false, stream); e != cudaSuccess) return e;
  const Gather<T, Acc> g = forward_gather<T, Acc>(p, tables_at<Acc>(L, ws), input, geo.in_stride);
  return gather(g, geo.n, geo.c, p.h.out, p.w.out, channels_last, output, stream);
}

template <typename T>
cudaError_t backward_cuda(const Params& p, const Workspace& L, const Geometry& geo, const T* grad_output,
                          T* grad_input, bool channels_last, void* workspace, cudaStream_t stream) {
  using Acc = typename OpMath<T>::type;
  if (geo.n * geo.c == 0) return cudaSuccess;
  char* ws = static_cast<char*>(workspace);
  if (cudaError_t e = build_tables<Acc>(p, L, ws, true, stream); e != cudaSuccess) return e;
  const Gather<T, Acc> g = backward_gather<T, Acc>(p, tables_at<Acc>(L, ws), grad_output, geo.out_stride);
  return gather(g, geo.n, geo.c, p.h.in, p.w.in, channels_last, grad_input, stream);
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
