// The kernels of the test-tree plugin tests/trt_kinds_op.cpp (TwinopsTestKindsGather): a gather
// whose index values are read on the device, and per-row counts without atomics. Compiled by nvcc
// without TensorRT headers, as the real ops' kernels are.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace twinops_test {
namespace {

__device__ float load(const float* p, int64_t i) { return p[i]; }
__device__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ void store(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }

// rows[r, col] = data[index[r], col] * scale (* weight[col]); NaN where index[r] is outside [0, n).
template <typename T, typename I>
__global__ void gather_rows(const T* data, const I* index, const T* weight, float scale, T* rows, int64_t n, int64_t m,
                            int64_t c) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m * c) return;
  const int64_t r = i / c, col = i % c;
  const int64_t k = static_cast<int64_t>(index[r]);  // read on the device
  float v = k >= 0 && k < n ? load(data, k * c + col) * scale : NAN;
  if (weight != nullptr) v *= load(weight, col);
  store(rows, i, v);
}

// counts[j] = how many indices are j: one thread per row j, a loop over the indices (no atomics,
// so the result is deterministic).
template <typename I, typename C>
__global__ void count_rows(const I* index, C* counts, int64_t n, int64_t m) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  C count = 0;
  for (int64_t r = 0; r < m; ++r) count += static_cast<int64_t>(index[r]) == j;
  counts[j] = count;
}

unsigned blocks(int64_t work) { return static_cast<unsigned>((work + 255) / 256); }

template <typename T, typename I>
cudaError_t launch(const void* data, const void* index, const void* weight, float scale, void* rows, void* counts,
                   bool int64_counts, int64_t n, int64_t m, int64_t c, cudaStream_t stream) {
  const auto* idx = static_cast<const I*>(index);
  if (m * c > 0)
    gather_rows<T, I><<<blocks(m * c), 256, 0, stream>>>(static_cast<const T*>(data), idx,
                                                         static_cast<const T*>(weight), scale, static_cast<T*>(rows),
                                                         n, m, c);
  if (n > 0) {
    if (int64_counts)
      count_rows<I, int64_t><<<blocks(n), 256, 0, stream>>>(idx, static_cast<int64_t*>(counts), n, m);
    else
      count_rows<I, int32_t><<<blocks(n), 256, 0, stream>>>(idx, static_cast<int32_t*>(counts), n, m);
  }
  return cudaGetLastError();
}

}  // namespace

// data (n, c) float or half, index (m,) int64 or int32, weight (c,) of data's type or null,
// rows (m, c) of data's type, counts (n,) int64 or int32.
cudaError_t kinds_gather(bool half, bool int64_index, bool int64_counts, const void* data, const void* index,
                         const void* weight, float scale, void* rows, void* counts, int64_t n, int64_t m, int64_t c,
                         cudaStream_t stream) {
  auto run = [&](auto t, auto i) {
    return launch<decltype(t), decltype(i)>(data, index, weight, scale, rows, counts, int64_counts, n, m, c, stream);
  };
  if (half) return int64_index ? run(__half(), int64_t()) : run(__half(), int32_t());
  return int64_index ? run(float(), int64_t()) : run(float(), int32_t());
}

}  // namespace twinops_test
