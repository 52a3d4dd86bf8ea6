// The float32 forward's GEMM on plain operands: out = weight · columns per group, both read as
// row-major matrices (weight's rows of a group, the column matrix im2col_kernel wrote), so
// tiles move as rows and each thread keeps an 8 x 4 block of outputs (BM = 128) or 4 x 4
// (BM = 64) in registers, reading its A and B values from shared memory as 16-byte vectors: one
// shared-memory read per 8 (or 4) FMAs, where gemm_simt's generic loaders read one per 2.7.
// Each output is still one thread's __fmaf_rn sum over the reduction index ascending (padding
// steps add 0 * 0, as many as gemm_simt's), so the bits are gemm_simt's. Double-buffered: the next
// reduction step's tiles are loaded into registers while the current one is multiplied, one
// barrier a step. Included by deform_conv2d.cu inside its `kernels` namespace, after kThreads;
// launch_gemm picks it for the problems that declare kPlain.
#pragma once

constexpr int kPlainBN = 64, kPlainBK = 8;  // output tile columns, reduction step

// Problem: rows(), cols(), r_end(z) (the reduction length; it starts at 0), a_rows(z) / lda()
// (A's row 0 and row stride), b_rows(z) / ldb() (B's), store(z, m, c, acc).
template <int BM, class Problem>
__global__ void __launch_bounds__(kThreads, 2) plain_gemm_kernel(const Problem pr, int64_t z0) {
  constexpr int kA = BM * kPlainBK / kThreads;        // A values a thread loads per step (4 or 2)
  constexpr int kB = kPlainBN * kPlainBK / kThreads;  // B values (2)
  constexpr int kLA = BM + 4;                         // padded A rows: the transposing stores spread over banks
  constexpr int kRG = BM / 64;                        // a thread's groups of 4 rows, 64 rows apart
  static_assert(kA * (kPlainBK / kA) * BM == BM * kPlainBK && kB == 2, "tile shape");
  __shared__ __align__(16) float as[2][kPlainBK][kLA];
  __shared__ __align__(16) float bs[2][kPlainBK][kPlainBN];
  const int64_t z = blockIdx.z + z0;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, c0 = static_cast<int64_t>(blockIdx.x) * kPlainBN;
  const int64_t rows = pr.rows(), cols = pr.cols(), depth = pr.r_end(z);
  const auto* A = pr.a_rows(z);
  const float* B = pr.b_rows(z);
  const int64_t lda = pr.lda(), ldb = pr.ldb();
  // What this thread loads: A row am, reduction offsets ak ... ak + kA - 1; B row bk, columns bc
  // and bc + 32 (a warp's loads are 32 consecutive floats of a row).
  const int am = tid / (kPlainBK / kA), ak = (tid % (kPlainBK / kA)) * kA;
  const int bk = tid >> 5, bc = tid & 31;
  const bool a_row = m0 + am < rows;
  float ra[kA], rb[kB];
  const auto fetch = [&](int64_t r0) {
#pragma unroll
    for (int i = 0; i < kA; ++i) {
      const int64_t r = r0 + ak + i;
      ra[i] = a_row && r < depth ? load(A + (m0 + am) * lda + r) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kB; ++j) {
      const int64_t r = r0 + bk, c = c0 + bc + 32 * j;
      rb[j] = r < depth && c < cols ? B[r * ldb + c] : 0.0f;
    }
  };
  const auto put = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kA; ++i) as[buf][ak + i][am] = ra[i];
#pragma unroll
    for (int j = 0; j < kB; ++j) bs[buf][bk][bc + 32 * j] = rb[j];
  };
  float acc[kRG * 4][4];
#pragma unroll
  for (int i = 0; i < kRG * 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
  // gemm_simt's padded length (a multiple of kBK = 16): the same chain of FMAs, padding included,
  // so even a zero's sign is gemm_simt's
  static_assert(kBK % kPlainBK == 0, "steps within gemm_simt's");
  const int64_t steps = (depth + kBK - 1) / kBK * (kBK / kPlainBK);
  fetch(0);
  put(0);
  __syncthreads();
  for (int64_t s = 0; s < steps; ++s) {
    const int buf = static_cast<int>(s & 1);
    if (s + 1 < steps) fetch((s + 1) * kPlainBK);  // in flight while this step multiplies
#pragma unroll
    for (int k = 0; k < kPlainBK; ++k) {
      float a[kRG * 4], b[4];
#pragma unroll
      for (int g = 0; g < kRG; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&as[buf][k][g * 64 + ty * 4]);
        a[g * 4] = v.x, a[g * 4 + 1] = v.y, a[g * 4 + 2] = v.z, a[g * 4 + 3] = v.w;
      }
      const float4 w = *reinterpret_cast<const float4*>(&bs[buf][k][tx * 4]);
      b[0] = w.x, b[1] = w.y, b[2] = w.z, b[3] = w.w;
#pragma unroll
      for (int i = 0; i < kRG * 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __fmaf_rn(a[i], b[j], acc[i][j]);
    }
    if (s + 1 < steps) put(buf ^ 1);  // the other buffer: its last readers passed the barrier below
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kRG * 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t m = m0 + (i / 4) * 64 + ty * 4 + i % 4, c = c0 + tx * 4 + j;
      if (m < rows && c < cols) pr.store(z, m, c, acc[i][j]);
    }
}
