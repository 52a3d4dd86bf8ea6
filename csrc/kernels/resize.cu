// CUDA kernels of the resize op: table builders and the separable gather (forward over the
// input, backward over grad_output with the transposed tables: deterministic, no atomics
// on data).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>

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

// NCHW fast path. A block owns a kTileH x TW tile of one output plane (TW = 128, or 64 when
// shared memory is short) and loops over planes: pass 1 resamples the input rows the tile
// needs along W into shared memory (each input value is read once per tile, not once per tap
// per output), pass 2 resamples them along H. The tile's H table is staged in shared memory once per block and each pass-2
// thread writes kVec adjacent outputs with one vector store, so the loop over planes is
// little more than loads, FMAs and stores. Tiles whose rows do not fit in shared memory
// (extreme downscaling, crops) fall back to the per-element gather.
constexpr int kTileH = 32;
constexpr int kVec = 4;  // pass-2 outputs per thread (one row)
constexpr size_t kTileSmem = 48 * 1024 - 64;  // default dynamic shared memory, less the statics

// Bytes before the row buffers: the tile's row offsets and H weights (16-byte aligned).
template <typename Acc>
TWIN_HD size_t tile_table_bytes(int32_t ty) {
  return kTileH * sizeof(int32_t) + ((kTileH * ty * sizeof(Acc) + 15) & ~size_t(15));
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

template <int TW, int TY, int TX, typename T, typename Acc>
__global__ void __launch_bounds__(kThreads, TY > 8 ? 3 : 4)
    tiled_gather_kernel(Gather<T, Acc> g, int32_t C, int32_t OH, int32_t OW, int64_t planes, int32_t max_rows,
                        bool vec_store, T* __restrict__ dst) {
  constexpr int kGroups = TW / kVec;             // pass-2 threads per tile row
  constexpr int kRowStep2 = kThreads / kGroups;  // pass-2 rows in flight
  constexpr int kRowStep1 = kThreads / TW;       // pass-1 rows in flight
  constexpr int kUnroll1 = TX > 0 && TX <= 4 ? 4 : 1;  // wider taps would spill
  static_assert(kThreads % TW == 0 && kTileH % kRowStep2 == 0 && kVec == 4, "tile shape");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int32_t s_ymin, s_ymax;
  const int32_t ty = TY > 0 ? TY : g.ty;
  const int32_t tx = TX > 0 ? TX : g.tx;
  int32_t* s_off = reinterpret_cast<int32_t*>(smem_raw);  // row of output i in the buffer, -1 extrapolate
  Acc* s_w = reinterpret_cast<Acc*>(smem_raw + kTileH * sizeof(int32_t));
  Acc* rows = reinterpret_cast<Acc*>(smem_raw + tile_table_bytes<Acc>(ty));
  const int tid = threadIdx.x;
  const int32_t oy0 = blockIdx.y * kTileH, ox0 = blockIdx.x * TW;
  const int32_t* __restrict__ fy = g.fy;
  const int32_t* __restrict__ fx = g.fx;

  // The input rows this tile reads: [ymin, ymax + ty).
  if (tid < 32) {
    int32_t lo = INT32_MAX, hi = -1;
    for (int i = tid; i < kTileH && oy0 + i < OH; i += 32) {
      const int32_t f = fy[oy0 + i];
      lo = f >= 0 && f < lo ? f : lo;
      hi = f > hi ? f : hi;
    }
#pragma unroll
    for (int s = 16; s > 0; s /= 2) {
      lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, s));
      hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, s));
    }
    if (tid == 0) {
      s_ymin = lo;
      s_ymax = hi;
    }
  }
  __syncthreads();
  const int32_t ymin = s_ymin;
  const int32_t nrows = s_ymax < 0 ? 0 : s_ymax - ymin + ty;
  const int64_t step = gridDim.z;
  const int64_t plane_size = static_cast<int64_t>(OH) * OW;
  if (nrows > max_rows) {  // block-uniform: the whole block takes the per-element path
    const int j = tid % TW;
    for (int64_t plane = blockIdx.z; plane < planes; plane += step) {
      const int64_t n = plane / C, c = plane % C;
      T* out = dst + plane * plane_size;
      for (int i = tid / TW; i < kTileH; i += kRowStep1) {
        const int32_t oy = oy0 + i, ox = ox0 + j;
        if (oy < OH && ox < OW)
          out[static_cast<int64_t>(oy) * OW + ox] = Convert<T>::template store<Acc>(gather_element<TY, TX>(g, n, c, oy, ox));
      }
    }
    return;
  }
  // The tile's H table, shared by every plane.
  for (int e = tid; e < kTileH * ty; e += kThreads) {
    const int32_t oy = oy0 + e / ty;
    s_w[e] = oy < OH ? g.wy[static_cast<int64_t>(oy) * ty + e % ty] : Acc(0);
  }
  for (int i = tid; i < kTileH; i += kThreads) {
    const int32_t oy = oy0 + i;
    s_off[i] = oy < OH && fy[oy] >= 0 ? fy[oy] - ymin : -1;
  }

  // Pass 1 (one column per thread): the column's W taps are the same for every row and
  // plane, so they live in registers.
  const int j = tid % TW, r1 = tid / TW;
  const bool col_ok = ox0 + j < OW && fx[ox0 + j] >= 0;
  const int32_t x0 = col_ok ? fx[ox0 + j] : 0;
  const Acc* __restrict__ wxr = g.wx + static_cast<int64_t>(col_ok ? ox0 + j : 0) * tx;
  Acc wreg[TX > 0 ? TX : 1];
  int32_t creg[TX > 0 ? TX : 1];  // element offsets in the row (the launcher checks a plane's fit in 32 bits)
  if constexpr (TX > 0) {
#pragma unroll
    for (int b = 0; b < TX; ++b) {
      wreg[b] = wxr[b];
      creg[b] = tap_index(x0, b, g.src_w) * static_cast<int32_t>(g.stride[3]);
    }
  }
  const int32_t row_stride = static_cast<int32_t>(g.stride[2]);
  // Taps x0 .. x0 + TX - 1 unclamped in a dense row (every column but the last few).
  const bool contiguous = g.stride[3] == 1 && x0 + TX <= g.src_w;
  auto resample_rows = [&](int64_t plane, Acc* buf) {
    const T* src = g.src + (plane / C) * g.stride[0] + (plane % C) * g.stride[1];
#pragma unroll kUnroll1
    for (int r = r1; r < nrows; r += kRowStep1) {
      const T* row = src + tap_index(ymin, r, g.src_h) * row_stride;
      Acc v = Acc(0);
      if (col_ok) {
        if constexpr (TX > 0) {
          if (contiguous) {  // one address, immediate offsets
            const T* p = row + x0;
#pragma unroll
            for (int b = 0; b < TX; ++b) v += wreg[b] * Convert<T>::template load<Acc>(p[b]);
          } else {
#pragma unroll
            for (int b = 0; b < TX; ++b) v += wreg[b] * Convert<T>::template load<Acc>(row[creg[b]]);
          }
        } else {
          for (int32_t b = 0; b < tx; ++b)
            v += wxr[b] * Convert<T>::template load<Acc>(row[static_cast<int64_t>(tap_index(x0, b, g.src_w)) * g.stride[3]]);
        }
      }
      buf[r * TW + j] = v;
    }
  };

  // Pass 2 (kVec adjacent columns per thread): along H from shared memory.
  const int q = tid % kGroups, r2 = tid / kGroups;
  const int32_t oxq = ox0 + q * kVec;
  unsigned xmask = 0;  // columns of this thread that are in range and not extrapolated
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    if (oxq + k < OW && fx[oxq + k] >= 0) xmask |= 1u << k;
  const bool full = vec_store && oxq + kVec <= OW;
  const Acc extrapolation = g.extrapolation;
  auto resample_cols = [&](int64_t plane, const Acc* buf) {
    T* out = dst + plane * plane_size + oxq;
#pragma unroll
    for (int i = r2; i < kTileH; i += kRowStep2) {
      const int32_t oy = oy0 + i;
      if (oy >= OH) break;
      const int32_t off = s_off[i];
      Acc v[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) v[k] = off < 0 ? extrapolation : Acc(0);
      if (off >= 0) {
        const Acc* w = s_w + i * ty;
        const Acc* col = buf + off * TW + q * kVec;
#pragma unroll
        for (int32_t a = 0; a < (TY > 0 ? TY : ty); ++a) {
          const Acc wa = w[a];
          const Pack<Acc, kVec> d = *reinterpret_cast<const Pack<Acc, kVec>*>(col + a * TW);
#pragma unroll
          for (int k = 0; k < kVec; ++k) v[k] += wa * d.v[k];
        }
      }
      T* o = out + static_cast<int64_t>(oy) * OW;
      if (full && xmask == (1u << kVec) - 1) {
        store4(o, static_cast<const Acc*>(v));
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k)
          if (oxq + k < OW) o[k] = Convert<T>::template store<Acc>(xmask >> k & 1u ? v[k] : extrapolation);
      }
    }
  };

  // Two buffers: pass 1 of the next plane is issued before pass 2 of this one, so its loads
  // overlap this plane's arithmetic and stores, with one barrier per plane.
  Acc* cur = rows;
  Acc* next = rows + static_cast<int64_t>(max_rows) * TW;
  if (blockIdx.z < planes) resample_rows(blockIdx.z, cur);
  __syncthreads();  // also publishes the tile's H table
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

template <int TW, int TY, int TX, typename T, typename Acc>
cudaError_t launch_tiled(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, int64_t max_rows,
                         T* dst, cudaStream_t stream) {
  const int64_t tiles_x = (W + TW - 1) / TW, tiles_y = (H + kTileH - 1) / kTileH;
  // Enough blocks to fill the GPU a few times over; each loops over planes.
  int64_t z = (4096 + tiles_x * tiles_y - 1) / (tiles_x * tiles_y);
  z = z < N * C ? z : N * C;
  const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y),
                  static_cast<unsigned>(z < 65535 ? (z > 0 ? z : 1) : 65535));
  const bool vec_store = W % kVec == 0 && reinterpret_cast<uintptr_t>(dst) % (kVec * sizeof(T)) == 0;
  const size_t smem = tile_table_bytes<Acc>(g.ty) + 2 * static_cast<size_t>(max_rows) * TW * sizeof(Acc);
  tiled_gather_kernel<TW, TY, TX, T, Acc><<<grid, kThreads, smem, stream>>>(
      g, static_cast<int32_t>(C), static_cast<int32_t>(H), static_cast<int32_t>(W), N * C,
      static_cast<int32_t>(max_rows), vec_store, dst);
  return cudaGetLastError();
}

template <int TY, int TX, typename T, typename Acc>
cudaError_t launch_gather(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last,
                          T* dst, cudaStream_t stream) {
  // Two row buffers sized for the source rows a tile typically spans (the coordinate step
  // is about src_h / H); tiles that need more (crops, flips) take the per-element path.
  const size_t tables = tile_table_bytes<Acc>(g.ty);
  const auto cap = [&](int tw) {
    return tables < kTileSmem ? static_cast<int64_t>((kTileSmem - tables) / (2 * tw * sizeof(Acc))) : 0;
  };
  const double span = static_cast<double>(g.src_h) / static_cast<double>(H);
  const int64_t want = static_cast<int64_t>(kTileH * span * 1.25) + g.ty + 3;
  // Pass 1 keeps 32-bit element offsets within a source plane.
  const bool narrow = (g.src_h - 1) * g.stride[2] + (g.src_w - 1) * g.stride[3] < INT32_MAX;
  const bool tiled = !channels_last && C < INT32_MAX && (H + kTileH - 1) / kTileH <= 65535 && narrow;
  // 128-wide tiles store longer runs and read fewer halo columns; 64 when memory is short.
  if (tiled && W > 64 && want <= cap(128)) return launch_tiled<128, TY, TX>(g, N, C, H, W, want, dst, stream);
  const int64_t rows64 = want < cap(64) ? want : cap(64);
  if (tiled && rows64 >= g.ty + 1) return launch_tiled<64, TY, TX>(g, N, C, H, W, rows64, dst, stream);
  return launch_elementwise<TY, TX>(g, N, C, H, W, channels_last, dst, stream);
}

// Unrolled gathers for the table widths workspace_layout pads to (both axes alike).
template <typename T, typename Acc>
cudaError_t gather(const Gather<T, Acc>& g, int64_t N, int64_t C, int64_t H, int64_t W, bool channels_last, T* dst,
                   cudaStream_t stream) {
  if (g.ty == g.tx) {
    switch (g.ty) {
      case 1: return launch_gather<1, 1>(g, N, C, H, W, channels_last, dst, stream);
      case 2: return launch_gather<2, 2>(g, N, C, H, W, channels_last, dst, stream);
      case 4: return launch_gather<4, 4>(g, N, C, H, W, channels_last, dst, stream);
      case 8: return launch_gather<8, 8>(g, N, C, H, W, channels_last, dst, stream);
      case 12: return launch_gather<12, 12>(g, N, C, H, W, channels_last, dst, stream);
      case 16: return launch_gather<16, 16>(g, N, C, H, W, channels_last, dst, stream);
      default: break;
    }
  }
  return launch_gather<0, 0>(g, N, C, H, W, channels_last, dst, stream);
}

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
