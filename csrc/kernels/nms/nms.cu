// CUDA NMS (nms.h has the rules), entirely on the device:
// 1. keys_kernel: each box's score key (score_key) and index;
// 2. CUB's stable radix sort of the keys, descending: the score order, ties by index;
// 3. gather_kernel: the boxes (in Acc) and classes in that order, contiguous;
// 4. mask_kernel: for every pair of sorted positions r < s, one bit "r would suppress s"
//    (same class and IoU > threshold), 64 positions per word: row r holds ceil(K / 64) words,
//    of which only those from r's own block on are written (and read);
// 5. reduce_kernel: one block walks the blocks of 64 positions in order: one thread resolves a
//    block's 64 positions against the removed bits so far and the block's diagonal words (a
//    position is kept when no kept earlier position removed it), then all threads OR the kept
//    rows' words into the removed bits of the later blocks, one (row, word) pair each. It
//    writes the kept indices and their count.
// The result is the CPU loop's (nms_cpu.cpp): the same comparisons, decided alike.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// CUB in a namespace of this file's own: both builds compile every kernel file with -ewp and
// device-link them together, and CUB's kernels that two files instantiate alike (its radix
// sort's scan, its empty kernel; grid_sample.cu sorts too) would otherwise be defined twice.
#define CUB_WRAPPED_NAMESPACE twinops_nms_cub
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../dtype_convert.cuh"
#include "../workspace.h"
#include "nms.h"

namespace twinops {
namespace nms {

// Named, not anonymous: with the device runtime (-ewp) an anonymous namespace's kernels get
// unreadable names in profiles.
namespace kernels {

constexpr int kThreads = 256;
// Threads of the one reduce block.
constexpr int kReduceThreads = 1024;
// Words of the removed bits the reduce block keeps in shared memory (above: global memory).
// 44 KiB, so that with the kernel's static shared memory (under 2 KiB) a launch stays within the
// 48 KiB a block may take without opting in: K up to 360,448 boxes.
constexpr int64_t kSharedWords = 5632;

template <typename T>
using AccOf = typename OpMath<T>::type;
template <typename T>
using KeyOf = decltype(score_key(AccOf<T>(0)));

template <typename T>
__device__ __forceinline__ AccOf<T> to_acc(T v) {
  return DtypeConvert<T>::template load<AccOf<T>>(v);
}

inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }
TWIN_HD int64_t words_per_row(int64_t count) { return (count + kBoxesPerWord - 1) / kBoxesPerWord; }

// Byte offsets of the workspace arrays, each 256-byte aligned.
struct Layout {
  size_t keys, keys_sorted, index, order, boxes, classes, mask, removed, sort_scratch, sort_scratch_bytes, bytes;
};

template <typename T>
Layout layout(const Params& p) {
  using Key = KeyOf<T>;
  const auto K = static_cast<size_t>(p.count), W = static_cast<size_t>(words_per_row(p.count));
  WorkspaceOffsets w;
  Layout L{};
  L.keys = w.take(sizeof(Key) * K);
  L.keys_sorted = w.take(sizeof(Key) * K);
  L.index = w.take(sizeof(int32_t) * K);
  L.order = w.take(sizeof(int32_t) * K);
  L.boxes = w.take(sizeof(AccOf<T>) * 4 * K);
  L.classes = w.take(sizeof(int64_t) * K);
  L.mask = w.take(sizeof(unsigned long long) * K * W);
  L.removed = w.take(sizeof(unsigned long long) * W);
  size_t scratch = 0;
  CUB_NS_QUALIFIER::DeviceRadixSort::SortPairsDescending(
      nullptr, scratch, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
      static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), static_cast<int>(p.count));
  L.sort_scratch = w.take(scratch);
  L.sort_scratch_bytes = scratch;
  L.bytes = w.end;
  return L;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) keys_kernel(const Params p, const T* __restrict__ scores,
                                                        KeyOf<T>* __restrict__ keys, int32_t* __restrict__ index) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.count) return;
  keys[i] = score_key(to_acc(scores[i * p.score_stride]));
  index[i] = static_cast<int32_t>(i);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) gather_kernel(const Params p, const T* __restrict__ boxes,
                                                          const int64_t* __restrict__ classes,
                                                          const int32_t* __restrict__ order,
                                                          AccOf<T>* __restrict__ sorted,
                                                          int64_t* __restrict__ sorted_classes) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= p.count) return;
  const int64_t i = order[r];
  const T* b = boxes + i * p.box_stride[0];
#pragma unroll
  for (int k = 0; k < 4; ++k) sorted[4 * r + k] = to_acc(b[k * p.box_stride[1]]);
  if (classes != nullptr) sorted_classes[r] = classes[i * p.class_stride];
}

// Block (column block x, row block y) of the mask, one thread per row of the row block: the
// column block's boxes in shared memory, one bit per later position that the row's box would
// suppress. Blocks left of the diagonal return at once.
template <typename Acc>
__global__ void __launch_bounds__(kBoxesPerWord) mask_kernel(const Params p, const Acc* __restrict__ sorted,
                                                             const int64_t* __restrict__ classes,
                                                             unsigned long long* __restrict__ mask) {
  const int64_t rb = blockIdx.y, cb = blockIdx.x, W = words_per_row(p.count);
  if (cb < rb) return;
  __shared__ Acc col[kBoxesPerWord * 4];
  __shared__ int64_t col_class[kBoxesPerWord];
  const int64_t c0 = cb * kBoxesPerWord;
  const int64_t cols = p.count - c0 < kBoxesPerWord ? p.count - c0 : kBoxesPerWord;
  if (threadIdx.x < cols) {
#pragma unroll
    for (int k = 0; k < 4; ++k) col[4 * threadIdx.x + k] = sorted[4 * (c0 + threadIdx.x) + k];
    if (classes != nullptr) col_class[threadIdx.x] = classes[c0 + threadIdx.x];
  }
  __syncthreads();
  const int64_t r = rb * kBoxesPerWord + threadIdx.x;
  if (r >= p.count) return;
  Acc row[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) row[k] = sorted[4 * r + k];
  const int64_t row_class = classes != nullptr ? classes[r] : 0;
  unsigned long long bits = 0;
  const int first = cb == rb ? static_cast<int>(threadIdx.x) + 1 : 0;  // later positions only
  for (int c = first; c < cols; ++c) {
    if (classes != nullptr && col_class[c] != row_class) continue;
    if (suppresses(row, &col[4 * c], p.iou_threshold)) bits |= 1ull << c;
  }
  mask[r * W + cb] = bits;
}

// Loads in flight per thread in the reduce kernel's OR step.
constexpr int kReduceUnroll = 4;

// Thread 0's serial step over block b: which of its `rows` positions are kept, given the removed
// bits so far (`gone`) and the block's diagonal words. Writes the kept positions (0..63, in order)
// into kept_rows and returns how many. The diagonal words are read in groups of 8 (their loads
// do not depend on the decisions), so the dependent chain is a few integer operations per row.
__device__ __forceinline__ int resolve_block(unsigned long long gone, const unsigned long long* diag, int rows,
                                             int* kept_rows) {
  int n = 0;
  for (int t0 = 0; t0 < rows; t0 += 8) {
    unsigned long long d[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) d[u] = diag[t0 + u];  // diag holds 64 words, zero past `rows`
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int t = t0 + u;
      if (t < rows && !((gone >> t) & 1ull)) {
        gone |= d[u];
        kept_rows[n++] = t;
      }
    }
  }
  return n;
}

// The greedy pass over the mask (one block of kReduceThreads): see the file comment. `removed`
// is shared memory when the row's words fit (kSharedWords), else `removed_global`. Per block of
// 64 positions the dependent steps are thread 0's serial resolve and one round of OR loads: the
// (kept row, later word) pairs are spread over all threads, consecutive threads on consecutive
// words of a row (coalesced), each OR-ing its word into `removed` with an atomic (OR is
// order-independent, so the result does not depend on scheduling). The next block's diagonal
// words are loaded during the OR step.
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const Params p, const unsigned long long* __restrict__ mask, const int32_t* __restrict__ order,
                  unsigned long long* removed_global, int64_t* __restrict__ keep, int64_t* __restrict__ kept) {
  extern __shared__ unsigned long long removed_shared[];
  __shared__ unsigned long long diag[2][kBoxesPerWord];
  __shared__ int kept_rows[kBoxesPerWord];
  __shared__ int kept_now;
  const int64_t W = words_per_row(p.count);
  unsigned long long* removed = W <= kSharedWords ? removed_shared : removed_global;
  for (int64_t w = threadIdx.x; w < W; w += blockDim.x) removed[w] = 0;
  const int tid = static_cast<int>(threadIdx.x);
  // Block b's diagonal word of row r0 + t (0 past the last position).
  auto diag_word = [&](int64_t b, int t) -> unsigned long long {
    const int64_t r = b * kBoxesPerWord + t;
    return r < p.count ? mask[r * W + b] : 0ull;
  };
  if (tid < kBoxesPerWord) diag[0][tid] = diag_word(0, tid);
  __syncthreads();
  int64_t count = 0;  // kept so far (every thread tracks it)
  for (int64_t b = 0; b < W; ++b) {
    const int64_t r0 = b * kBoxesPerWord;
    const int rows = static_cast<int>(p.count - r0 < kBoxesPerWord ? p.count - r0 : kBoxesPerWord);
    if (tid == 0) kept_now = resolve_block(removed[b], diag[b & 1], rows, kept_rows);
    __syncthreads();
    const int n = kept_now;
    // The next block's diagonal, loaded while this block's OR step runs.
    const unsigned long long next = tid < kBoxesPerWord && b + 1 < W ? diag_word(b + 1, tid) : 0ull;
    if (tid < n) keep[count + tid] = order[r0 + kept_rows[tid]];
    const uint32_t later = static_cast<uint32_t>(W - b - 1);
    const uint32_t pairs = static_cast<uint32_t>(n) * later;  // <= 64 * 65,534
    for (uint32_t q0 = tid; q0 < pairs; q0 += kReduceThreads * kReduceUnroll) {
      unsigned long long v[kReduceUnroll];
      uint32_t word[kReduceUnroll];
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u) {
        const uint32_t q = q0 + u * kReduceThreads;
        v[u] = 0;
        word[u] = 0;
        if (q < pairs) {
          word[u] = static_cast<uint32_t>(b + 1) + q % later;
          v[u] = mask[(r0 + kept_rows[q / later]) * W + word[u]];
        }
      }
#pragma unroll
      for (int u = 0; u < kReduceUnroll; ++u)
        if (v[u] != 0) atomicOr(&removed[word[u]], v[u]);
    }
    if (tid < kBoxesPerWord) diag[(b + 1) & 1][tid] = next;
    count += n;
    __syncthreads();
  }
  if (tid == 0) *kept = count;
}

}  // namespace kernels

using namespace kernels;

namespace {
// The Layout of p for scores of `score_bytes` bytes (the key width follows the opmath type).
Layout layout_for(const Params& p, int score_bytes) {
  return score_bytes == 8 ? layout<double>(p) : layout<float>(p);
}
}  // namespace

size_t workspace_bytes(const Params& p, int score_bytes) {
  return p.count > 0 ? layout_for(p, score_bytes).bytes : 0;
}

template <typename T>
cudaError_t nms_cuda(const Params& p, const T* boxes, const T* scores, const int64_t* classes, int64_t* keep,
                     int64_t* kept, void* workspace, size_t workspace_size, cudaStream_t stream) {
  using Acc = AccOf<T>;
  using Key = KeyOf<T>;
  cudaError_t e;
  if (p.count <= 0) return cudaMemsetAsync(kept, 0, sizeof(int64_t), stream);
  if (p.count > kMaxCudaBoxes) return cudaErrorInvalidValue;
  const Layout L = layout<T>(p);
  if (workspace_size < L.bytes) return cudaErrorInvalidValue;
  char* ws = static_cast<char*>(workspace);
  auto* key = reinterpret_cast<Key*>(ws + L.keys);
  auto* key_sorted = reinterpret_cast<Key*>(ws + L.keys_sorted);
  auto* index = reinterpret_cast<int32_t*>(ws + L.index);
  auto* order = reinterpret_cast<int32_t*>(ws + L.order);
  auto* sorted = reinterpret_cast<Acc*>(ws + L.boxes);
  auto* sorted_classes = classes != nullptr ? reinterpret_cast<int64_t*>(ws + L.classes) : nullptr;
  auto* mask = reinterpret_cast<unsigned long long*>(ws + L.mask);
  auto* removed = reinterpret_cast<unsigned long long*>(ws + L.removed);
  const int64_t K = p.count, W = words_per_row(K);
  keys_kernel<T><<<blocks_for(K), kThreads, 0, stream>>>(p, scores, key, index);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  size_t scratch = L.sort_scratch_bytes;
  if ((e = CUB_NS_QUALIFIER::DeviceRadixSort::SortPairsDescending(ws + L.sort_scratch, scratch, key, key_sorted,
                                                                 index, order, static_cast<int>(K), 0,
                                                                 static_cast<int>(8 * sizeof(Key)), stream)) !=
      cudaSuccess)
    return e;
  gather_kernel<T><<<blocks_for(K), kThreads, 0, stream>>>(p, boxes, classes, order, sorted, sorted_classes);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  mask_kernel<Acc><<<dim3(static_cast<unsigned>(W), static_cast<unsigned>(W)), kBoxesPerWord, 0, stream>>>(
      p, sorted, sorted_classes, mask);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  const size_t shared = W <= kSharedWords ? sizeof(unsigned long long) * static_cast<size_t>(W) : 0;
  reduce_kernel<<<1, kReduceThreads, shared, stream>>>(p, mask, order, removed, keep, kept);
  return cudaGetLastError();
}

#define TWIN_INSTANTIATE(T)                                                                                  \
  template cudaError_t nms_cuda<T>(const Params&, const T*, const T*, const int64_t*, int64_t*, int64_t*, void*, \
                                   size_t, cudaStream_t);
TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)
#undef TWIN_INSTANTIATE

}  // namespace nms
}  // namespace twinops
