// The half types' three GEMMs on mma.sync (the default on sm_80 and later;
// TWINOPS_DEFORM_CONV2D_GEMM=tiled takes gemm_tensor_cores instead): the forward (weight x
// columns), the columns' gradient (weight^T x grad_output) and grad_weight's slices (grad_output x
// columns^T). The sampled columns come from im2col_kernel<T, true> as two planes of T (hi, lo:
// split_column), so every operand is a plain array of T: 16-byte cp.async chunks into a
// kStages-deep shared-memory pipeline, fragments by ldmatrix, m16n8k16 products summed in
// float32. Each output adds the k16 steps of its reduction in ascending order from the same
// first index, hi before lo, as gemm_tensor_cores' 16x16x16 fragments do (two m16n8k16 products
// each), so both paths give the same bits. A chunk is 8 elements along an operand's contiguous
// axis that lie wholly inside or wholly outside the problem (fits); where they would not, or the
// bases are not 16-byte aligned, the GEMM takes gemm_tensor_cores. Included by deform_conv2d.cu
// inside its `kernels` namespace, after the problems and split_column.
#pragma once

namespace mma_gemm {

constexpr int kBN = 128, kBK = 32, kStages = 3;  // output tile columns, reduction step, pipeline depth
constexpr int kPad = 8;  // elements added to a shared row: rows stay 16-byte aligned and 8 rows span the 32 banks

// An operand tile of `rows` (output rows or columns) by kBK in shared memory: K-contiguous
// operands (the reduction index fastest in memory) as rows x (kBK + kPad), the others as
// kBK x (rows + kPad).
template <bool kKContiguous, int rows>
constexpr int tile_elems() { return kKContiguous ? rows * (kBK + kPad) : kBK * (rows + kPad); }

template <class Op, int BM>
constexpr int stage_elems() {
  return tile_elems<Op::kAK, BM>() + (Op::kSplit ? 2 : 1) * tile_elems<Op::kBK, kBN>();
}

template <class Op, int BM>
constexpr size_t smem_bytes() { return size_t(kStages) * stage_elems<Op, BM>() * 2; }

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

template <bool kTrans>
__device__ __forceinline__ void ldmatrix4(uint32_t (&r)[4], uint32_t addr) {
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
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

// ldmatrix.x4 loads four 8 x 8 matrices of a 16 x 16 block, lane l giving the address of row
// l % 8 of matrix l / 8. Lanes is that row's (x, k) offset in the block, x along the operand's
// outputs (m of A, n of B): a K-contiguous tile's rows are x (read as they are), the others'
// rows are k (read transposed). The matrices' order is the fragments' below.
struct Lanes {
  int x, k;
};
// A fragment a0..a3 = (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15).
template <bool kKContiguous>
__device__ __forceinline__ Lanes a_lanes(int lane) {
  if constexpr (kKContiguous) return {lane & 15, (lane >> 4) * 8};
  else return {((lane >> 3) & 1) * 8, (lane & 7) + (lane >> 4) * 8};
}
// Two B fragments (n 0-7 and n 8-15), each (k 0-7), (k 8-15).
template <bool kKContiguous>
__device__ __forceinline__ Lanes b_lanes(int lane) {
  if constexpr (kKContiguous) return {(lane & 7) + (lane >> 4) * 8, ((lane >> 3) & 1) * 8};
  else return {(lane >> 4) * 8, lane & 15};
}

// Element (x, k) of a tile of `rows`.
template <bool kKContiguous, int rows>
__device__ __forceinline__ int at(int x, int k) {
  return kKContiguous ? x * (kBK + kPad) + k : k * (rows + kPad) + x;
}

// Problem z's BM x kBN output tile. Op: rows(), cols(), r_begin(z), r_end(z); a(z, m, r) and
// b(z, h, r, n), the first of 8 elements along the operand's contiguous axis (kAK / kBK: the
// reduction, else m or n); store(z, m, n, v). Eight warps of 64 x (kBN / (8 / (BM / 64)))
// outputs: 4 m16 tiles by 4 (BM = 128) or 2 (BM = 64) n8 tiles each. At BM = 64 two blocks per
// SM (at most 128 registers); at 128 one.
template <class Op, int BM>
__global__ void __launch_bounds__(kThreads, arch_min_blocks(kThreads, BM == 64 ? 2 : 1))
    gemm_kernel(const Op op, int64_t z0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using T = typename Op::Elem;
  static_assert(!std::is_same_v<T, float>, "the half types only");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* const smem = reinterpret_cast<T*>(smem_raw);
  constexpr int kParts = Op::kSplit ? 2 : 1;
  constexpr int WM = BM / 64, WN = 8 / WM, kWN = kBN / WN, kNT = kWN / 8;
  constexpr int kAElems = tile_elems<Op::kAK, BM>(), kBElems = tile_elems<Op::kBK, kBN>();
  static_assert(kNT % 2 == 0 && BM * (kBK / 8) % kThreads == 0 && kBN * (kBK / 8) % kThreads == 0, "tiles");
  const int64_t z = blockIdx.z + z0, M = op.rows(), N = op.cols(), rb = op.r_begin(z), re = op.r_end(z);
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wm = warp / WN, wn = warp % WN;

  // A tile: BM x kBK chunks of 8 along the contiguous axis; then each B part likewise.
  const auto load_stage = [&](int stage, int64_t r0) {
    T* const as = smem + stage * stage_elems<Op, BM>();
#pragma unroll
    for (int c = tid; c < BM * (kBK / 8); c += kThreads) {
      const int x = Op::kAK ? c / (kBK / 8) : (c % (BM / 8)) * 8, k = Op::kAK ? (c % (kBK / 8)) * 8 : c / (BM / 8);
      const bool in = m0 + x < M && r0 + k < re;
      copy16(smem_addr(as + at<Op::kAK, BM>(x, k)), op.a(z, in ? m0 + x : 0, in ? r0 + k : rb), in);
    }
#pragma unroll
    for (int h = 0; h < kParts; ++h) {
      T* const bs = as + kAElems + h * kBElems;
#pragma unroll
      for (int c = tid; c < kBN * (kBK / 8); c += kThreads) {
        const int x = Op::kBK ? c / (kBK / 8) : (c % (kBN / 8)) * 8, k = Op::kBK ? (c % (kBK / 8)) * 8 : c / (kBN / 8);
        const bool in = n0 + x < N && r0 + k < re;
        copy16(smem_addr(bs + at<Op::kBK, kBN>(x, k)), op.b(z, h, in ? r0 + k : rb, in ? n0 + x : 0), in);
      }
    }
  };

  float acc[4][kNT][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  const int64_t steps = (re - rb + kBK - 1) / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < steps) load_stage(s, rb + s * kBK);
    commit();  // a group per step, empty or not: wait_pending counts them
  }
  const Lanes la = a_lanes<Op::kAK>(lane), lb = b_lanes<Op::kBK>(lane);
  for (int64_t kt = 0; kt < steps; ++kt) {
    wait_pending<kStages - 2>();  // step kt has landed
    __syncthreads();              // ... for every thread, and step kt - 1's stage is free
    if (kt + kStages - 1 < steps)
      load_stage(static_cast<int>((kt + kStages - 1) % kStages), rb + (kt + kStages - 1) * kBK);
    commit();
    const T* const as = smem + static_cast<int>(kt % kStages) * stage_elems<Op, BM>();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      uint32_t a[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        ldmatrix4<!Op::kAK>(a[i], smem_addr(as + at<Op::kAK, BM>(wm * 64 + i * 16 + la.x, kk + la.k)));
#pragma unroll
      for (int h = 0; h < kParts; ++h) {
        const T* const bs = as + kAElems + h * kBElems;
        uint32_t b[kNT][2];
#pragma unroll
        for (int j = 0; j < kNT; j += 2) {
          uint32_t r[4];
          ldmatrix4<!Op::kBK>(r, smem_addr(bs + at<Op::kBK, kBN>(wn * kWN + j * 8 + lb.x, kk + lb.k)));
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
        if (m < M && c < N) op.store(z, m, c, acc[i][j][e]);
      }
#endif
}

// The split columns' planes in a column buffer of `rows` x `cols` (as im2col_kernel<T, true>
// wrote them).
template <typename T>
__host__ __device__ __forceinline__ const T* plane(const float* col, int64_t rows, int64_t cols, int h) {
  return reinterpret_cast<const T*>(col) + h * rows * cols;
}

// out = weight (M x K per group, K-contiguous) x columns (K x Q, rows of the reduction).
template <typename T>
struct Forward {
  using Elem = T;
  static constexpr bool kAK = true, kBK = false, kSplit = true;
  ForwardProblem<T> pr;
  const T *hi, *lo;
  __device__ int64_t rows() const { return pr.p.group_outputs(); }
  __device__ int64_t cols() const { return pr.count * pr.p.positions(); }
  __device__ int64_t r_begin(int64_t) const { return 0; }
  __device__ int64_t r_end(int64_t) const { return pr.p.depth(); }
  __device__ const T* a(int64_t g, int64_t o, int64_t k) const {
    return pr.weight + (g * rows() + o) * pr.p.depth() + k;
  }
  __device__ const T* b(int64_t g, int h, int64_t k, int64_t q) const {
    return (h ? lo : hi) + (g * pr.p.depth() + k) * cols() + q;
  }
  __device__ void store(int64_t g, int64_t o, int64_t q, float v) const { pr.store(g, o, q, v); }
};

// gcol = weight^T (K x M per group: weight's rows are the reduction) x grad_output (M x Q, an
// image's positions contiguous).
template <typename T>
struct ColumnGrad {
  using Elem = T;
  static constexpr bool kAK = false, kBK = false, kSplit = false;
  ColumnGradProblem<T> pr;
  __device__ int64_t rows() const { return pr.p.depth(); }
  __device__ int64_t cols() const { return pr.count * pr.p.positions(); }
  __device__ int64_t r_begin(int64_t) const { return 0; }
  __device__ int64_t r_end(int64_t) const { return pr.p.group_outputs(); }
  __device__ const T* a(int64_t g, int64_t k, int64_t o) const {
    return pr.weight + (g * pr.p.group_outputs() + o) * pr.p.depth() + k;
  }
  __device__ const T* b(int64_t g, int, int64_t o, int64_t q) const {
    const uint32_t P = static_cast<uint32_t>(pr.p.positions()), n = static_cast<uint32_t>(q) / P;
    return pr.gout + ((pr.n0 + n) * pr.p.c_out + g * pr.p.group_outputs() + o) * P + (q - int64_t(n) * P);
  }
  __device__ void store(int64_t g, int64_t k, int64_t q, float v) const { pr.store(g, k, q, v); }
};

// grad_weight's slice partials = grad_output (M x Q, K-contiguous along positions) x columns^T
// (the columns' rows are the outputs, K-contiguous); z = group * slices + slice.
template <typename T>
struct WeightGrad {
  using Elem = T;
  static constexpr bool kAK = true, kBK = true, kSplit = true;
  WeightGradProblem<T> pr;
  const T *hi, *lo;
  __device__ int64_t rows() const { return pr.rows(); }
  __device__ int64_t cols() const { return pr.p.depth(); }
  __device__ int64_t r_begin(int64_t z) const { return pr.r_begin(z); }
  __device__ int64_t r_end(int64_t z) const { return pr.r_end(z); }
  __device__ const T* a(int64_t z, int64_t o, int64_t q) const {
    const uint32_t P = static_cast<uint32_t>(pr.p.positions()), n = static_cast<uint32_t>(q) / P;
    const int64_t g = z / pr.slices;
    return pr.gout + ((pr.n0 + n) * pr.p.c_out + g * pr.p.group_outputs() + o) * P + (q - int64_t(n) * P);
  }
  __device__ const T* b(int64_t z, int h, int64_t q, int64_t k) const {
    return (h ? lo : hi) + ((z / pr.slices) * pr.p.depth() + k) * pr.length() + q;
  }
  __device__ void store(int64_t z, int64_t o, int64_t k, float v) const { pr.store(z, o, k, v); }
};

// Whether a GEMM can run here: a device of sm_80 or later with the shared memory, `shapes` (the
// caller's: every chunk of 8 wholly inside or outside its operand, and none of grad_output's
// spanning two images) and 16-byte aligned bases.
template <typename T>
bool fits(const DeviceProps& dev, bool shapes, std::initializer_list<const void*> bases) {
  for (const void* q : bases)
    if (reinterpret_cast<uintptr_t>(q) % 16 != 0) return false;
  return shapes && dev.major >= 8 && dev.smem_optin_per_block >= int64_t(smem_bytes<WeightGrad<T>, 128>());
}

// Problems [0, problems) of op over rows x cols outputs. Tiles of 128 rows where there are more
// than 64, unless that grid leaves multiprocessors idle (r50-c4's forward at N = 1: 60 blocks of
// one per SM on 132 SMs); 64-row tiles then double the blocks. Each output's sum is the same at
// either size.
template <class Op>
cudaError_t launch(const Op& op, int64_t rows, int64_t cols, int64_t problems, const DeviceProps& dev,
                   cudaStream_t stream) {
  if (rows <= 0 || cols <= 0 || problems <= 0) return cudaSuccess;
  const int64_t gx = (cols + kBN - 1) / kBN;
  const auto run = [&](auto tile_rows) -> cudaError_t {
    constexpr int BM = decltype(tile_rows)::value;
    const auto kernel = gemm_kernel<Op, BM>;
    const int64_t gy = (rows + BM - 1) / BM;
    if (gx > 2147483647 || gy > 65535) return cudaErrorInvalidConfiguration;
    if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem_bytes<Op, BM>()));
        e != cudaSuccess)
      return e;
    for (int64_t z0 = 0; z0 < problems; z0 += kMaxGridZ) {
      const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                      static_cast<unsigned>(std::min(problems - z0, kMaxGridZ)));
      kernel<<<grid, kThreads, smem_bytes<Op, BM>(), stream>>>(op, z0);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    return cudaSuccess;
  };
  const bool tall = rows > 64 && gx * ((rows + 127) / 128) * problems >= dev.sm_count;
  return tall ? run(std::integral_constant<int, 128>{}) : run(std::integral_constant<int, 64>{});
}

}  // namespace mma_gemm
