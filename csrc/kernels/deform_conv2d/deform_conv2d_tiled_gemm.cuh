// The float32 GEMMs in register tiles (gemm_simt_tiled): the forward, the columns' gradient and
// grad_weight, through the same problem loaders as gemm_simt. Each thread keeps an 8 x 4 block
// of outputs (BM = 128) or 4 x 4 (BM = 64) in registers and reads its A and B values from shared
// memory as 16-byte vectors: one shared-memory read per 8 (or 4) FMAs, where gemm_simt's scalar
// reads give one per 2.7. A rows are padded by 4 floats, so the transposing stores spread over
// the banks (gemm_simt's hit one bank 16 times). Double-buffered: the next reduction step's
// values are loaded into registers while the current one is multiplied, one barrier a step.
// Each output is still one thread's __fmaf_rn chain over the reduction index ascending, padded
// with 0 * 0 to gemm_simt's multiple of kBK, so the bits are gemm_simt's. Included by
// deform_conv2d.cu inside its `kernels` namespace, after gemm_simt (whose kThreads, kBN and kBK
// it shares).
#pragma once

// Reduction step: 16 (gemm_simt's) gives each step's loads 512 FMAs of a warp to hide behind
// (8 left the loads exposed at one or two blocks per SM).
constexpr int kTiledBK = 16;
static_assert(kBK % kTiledBK == 0, "gemm_simt's padded length is a whole number of steps");

// C[m, c] = sum over r in [r_begin(z), r_end(z)) of A(m, r) * B(r, c) on a BM x kBN tile, as
// gemm_simt computes it.
template <int BM, class Problem>
__device__ __forceinline__ void gemm_simt_tiled(const Problem& pr, int64_t z) {
  constexpr int kA = BM * kTiledBK / kThreads;   // A values a thread loads per step (8 or 4)
  constexpr int kB = kBN * kTiledBK / kThreads;  // B values (4), one column, rows kBR apart
  constexpr int kBR = kThreads / kBN;
  constexpr int kLA = BM + 4;                    // padded A rows
  constexpr int kRG = BM / 64;                   // a thread's groups of 4 rows, 64 rows apart
  static_assert(kTiledBK % kA == 0 && kTiledBK % kBR == 0 && kBN == 64, "tile shape");
  __shared__ __align__(16) float as[2][kTiledBK][kLA];
  __shared__ __align__(16) float bs[2][kTiledBK][kBN];
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, c0 = static_cast<int64_t>(blockIdx.x) * kBN;
  const int64_t rows = pr.rows(), cols = pr.cols(), rb = pr.r_begin(z), re = pr.r_end(z);
  // What this thread loads each step: A row am at reduction offsets ak ... ak + kA - 1; B column
  // bc (a warp's 32 consecutive columns of one row) at offsets bk, bk + kBR, ...
  const int am = tid / (kTiledBK / kA), ak = (tid % (kTiledBK / kA)) * kA;
  const int bc = tid % kBN, bk = tid / kBN;
  const bool a_in = m0 + am < rows, b_in = c0 + bc < cols;
  const auto bctx = pr.b_context(z, c0 + bc);  // every B element this thread loads is in that column
  float ra[kA], rbv[kB];
  const auto fetch = [&](int64_t r0) {
#pragma unroll
    for (int i = 0; i < kA; ++i) {
      const int64_t r = r0 + ak + i;
      ra[i] = a_in && r < re ? pr.a(z, m0 + am, r) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kB; ++j) {
      const int64_t r = r0 + bk + kBR * j;
      rbv[j] = b_in && r < re ? pr.b(z, r, bctx) : 0.0f;
    }
  };
  const auto put = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kA; ++i) as[buf][ak + i][am] = ra[i];
#pragma unroll
    for (int j = 0; j < kB; ++j) bs[buf][bk + kBR * j][bc] = rbv[j];
  };
  float acc[kRG * 4][4];
#pragma unroll
  for (int i = 0; i < kRG * 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
  const int64_t steps = (re - rb + kBK - 1) / kBK * (kBK / kTiledBK);  // gemm_simt's padded length
  fetch(rb);
  put(0);
  __syncthreads();
  for (int64_t s = 0; s < steps; ++s) {
    const int buf = static_cast<int>(s & 1);
    if (s + 1 < steps) fetch(rb + (s + 1) * kTiledBK);  // in flight while this step multiplies
#pragma unroll
    for (int k = 0; k < kTiledBK; ++k) {
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
