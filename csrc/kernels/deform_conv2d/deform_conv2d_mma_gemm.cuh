// The forward's GEMM for the half types on mma.sync (TWINOPS_DEFORM_CONV2D_GEMM=mma; sm_80 and
// later): out[o, q] = sum over k of weight[o, k] * column(k, q) per group, the columns stored by
// im2col_kernel<T, true> as two planes of T (hi, lo: split_column). Every operand tile is then a
// plain copy: 16-byte cp.async chunks into a kStages-deep shared-memory pipeline, fragments by
// ldmatrix (B transposed), m16n8k16 products summed in float32. Each output adds the k16 steps
// in ascending order, hi before lo, as gemm_tensor_cores' 16x16x16 fragments do (two m16n8k16
// products each), so both paths should give the same bits. The chunks need 16-byte rows and
// bases (mma_fits); where they are not, the forward takes gemm_tensor_cores. Included by
// deform_conv2d.cu inside its `kernels` namespace, after ForwardProblem and split_column.
#pragma once

namespace mma_gemm {

constexpr int kBN = 128, kBK = 32, kStages = 3;  // output tile columns, reduction step, pipeline depth
constexpr int kLA = kBK + 8;  // A row in shared memory: 80 bytes (ldmatrix rows 16-byte aligned, 8 rows on 32 banks)
constexpr int kLB = kBN + 8;  // B row: 272 bytes

template <int BM>
constexpr int stage_elems() { return BM * kLA + 2 * kBK * kLB; }  // A, then B hi and lo

template <int BM>
constexpr size_t smem_bytes() { return size_t(kStages) * stage_elems<BM>() * 2; }

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from src, or zeros where !in (src is then only a valid address, not read).
__device__ __forceinline__ void copy16(uint32_t dst, const void* src, bool in) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait_pending() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a (16 x 16, row-major) * b (16 x 8, column-major), float32 sums.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Group z0 + blockIdx.z's BM x kBN output tile. Eight warps of 64 x (kBN / (8 / (BM / 64)))
// outputs: 4 m16 tiles by 4 (BM = 128) or 2 (BM = 64) n8 tiles each. At BM = 64 two blocks per
// SM (at most 128 registers); at 128 one (148 registers: bounded to 128, ptxas spilled 124 bytes).
template <typename T, int BM>
__global__ void __launch_bounds__(kThreads, BM == 64 ? 2 : 1)
    forward_kernel(const ForwardProblem<T> pr, const T* __restrict__ hi, const T* __restrict__ lo, int64_t z0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  constexpr int WM = BM / 64, WN = 8 / WM, kWN = kBN / WN, kNT = kWN / 8;
  static_assert(kNT % 2 == 0 && BM * (kBK / 8) % kThreads == 0 && 2 * kBK * (kBN / 8) % kThreads == 0, "tiles");
  const int64_t g = blockIdx.z + z0, M = pr.rows(), K = pr.p.depth(), N = pr.cols();
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const T* const A = pr.weight + (g * M + m0) * K;  // this tile's first row: (M, K) row-major
  const T* const bh = hi + g * K * N + n0;  // (K, N) row-major, from this tile's first column
  const T* const bl = lo + g * K * N + n0;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp / WN, wn = warp % WN;

  const auto load_stage = [&](int stage, int64_t kt) {
    T* const as = smem + stage * stage_elems<BM>();
    T* const bs = as + BM * kLA;
    const int64_t k0 = kt * kBK;
#pragma unroll
    for (int c = tid; c < BM * (kBK / 8); c += kThreads) {  // rows of 4 chunks
      const int r = c >> 2, kc = (c & 3) * 8;
      const bool in = m0 + r < M && k0 + kc < K;
      copy16(smem_addr(as + r * kLA + kc), in ? A + r * K + k0 + kc : pr.weight, in);
    }
#pragma unroll
    for (int c = tid; c < 2 * kBK * (kBN / 8); c += kThreads) {  // hi, then lo: rows of 16 chunks
      const int h = c / (kBK * (kBN / 8)), e = c % (kBK * (kBN / 8)), r = e / (kBN / 8), nc = (e % (kBN / 8)) * 8;
      const bool in = k0 + r < K && n0 + nc < N;
      copy16(smem_addr(bs + (h * kBK + r) * kLB + nc), in ? (h ? bl : bh) + (k0 + r) * N + nc : hi, in);
    }
  };

  float acc[4][kNT][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  const int64_t steps = (K + kBK - 1) / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load_stage(s, s);
    commit();  // a group per step, empty or not: wait_pending counts them
  }
  for (int64_t kt = 0; kt < steps; ++kt) {
    wait_pending<kStages - 2>();  // step kt has landed
    __syncthreads();              // ... for every thread, and step kt - 1's stage is free
    if (kt + kStages - 1 < steps) load_stage(static_cast<int>((kt + kStages - 1) % kStages), kt + kStages - 1);
    commit();
    const T* const as = smem + static_cast<int>(kt % kStages) * stage_elems<BM>();
    const T* const bs = as + BM * kLA;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      uint32_t a[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)  // lanes 0-15: rows at k, lanes 16-31: the same rows at k + 8
        ldmatrix4(a[i], smem_addr(as + (wm * 64 + i * 16 + (lane & 15)) * kLA + kk + (lane >> 4) * 8));
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t b[kNT][2];
#pragma unroll
        for (int j = 0; j < kNT; j += 2) {  // two n8 tiles: lanes 0-15 rows k.. at n, 16-31 at n + 8
          uint32_t r[4];
          ldmatrix4_trans(r, smem_addr(bs + (h * kBK + kk + (lane & 15)) * kLB + wn * kWN + j * 8 + (lane >> 4) * 8));
          b[j][0] = r[0], b[j][1] = r[1], b[j + 1][0] = r[2], b[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < kNT; ++j) mma16816<T>(acc[i][j], a[i], b[j][0], b[j][1]);
      }
    }
  }
  wait_pending<0>();
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {  // accumulator e: row lane / 4 (+ 8 for e >= 2), column 2 (lane % 4) + e % 2
        const int64_t m = m0 + wm * 64 + i * 16 + (lane >> 2) + (e >> 1) * 8;
        const int64_t c = n0 + wn * kWN + j * 8 + (lane & 3) * 2 + (e & 1);
        if (m < M && c < N) pr.store(g, m, c, acc[i][j][e]);
      }
#endif
}

// Whether forward_kernel can take images [n0, n0 + count): 16-byte rows (depth and the chunk's
// columns multiples of 8) and bases, and a device of sm_80 or later with the shared memory.
template <typename T>
bool fits(const Params& p, const DeviceProps& dev, const T* weight, const void* col, int64_t count) {
  const auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
  return dev.major >= 8 && dev.smem_optin_per_block >= int64_t(smem_bytes<128>()) &&
         p.depth() % 8 == 0 && count * p.positions() % 8 == 0 && aligned(weight) && aligned(col);
}

// The forward GEMM of images [n0, n0 + count) from the split columns at col (mma_fits).
template <typename T>
cudaError_t launch(const ForwardProblem<T>& pr, const float* col, cudaStream_t stream) {
  const int64_t rows = pr.p.group_outputs(), cols = pr.count * pr.p.positions(), problems = pr.p.groups;
  if (rows <= 0 || cols <= 0 || problems <= 0) return cudaSuccess;
  const T* hi = reinterpret_cast<const T*>(col);
  const T* lo = hi + pr.p.c_in * pr.p.taps() * cols;  // as im2col_kernel<T, true> wrote them
  const int64_t gx = (cols + kBN - 1) / kBN;
  const auto run = [&](auto tile_rows) -> cudaError_t {
    constexpr int BM = decltype(tile_rows)::value;
    const auto kernel = forward_kernel<T, BM>;
    const int64_t gy = (rows + BM - 1) / BM;
    if (gx > 2147483647 || gy > 65535) return cudaErrorInvalidConfiguration;
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem_bytes<BM>()));
        e != cudaSuccess)
      return e;
    for (int64_t z0 = 0; z0 < problems; z0 += kMaxGridZ) {
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                      static_cast<unsigned>(std::min(problems - z0, kMaxGridZ)));
      kernel<<<grid, kThreads, smem_bytes<BM>(), stream>>>(pr, hi, lo, z0);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    return cudaSuccess;
  };
  return rows > 64 ? run(std::integral_constant<int, 128>{}) : run(std::integral_constant<int, 64>{});
}

}  // namespace mma_gemm
