// CUDA NMS (nms.h has the rules), entirely on the device:
// 1. keys_kernel: each box's score key (score_key) and index;
// 2. CUB's stable radix sort of the keys, descending: the score order, ties by index;
// 3. gather_kernel: the boxes (in Acc) and classes in that order, contiguous;
// 4. mask_kernel: for every pair of sorted positions r < s, one bit "r would suppress s"
//    (same class and IoU > threshold), 64 positions per word: row r holds ceil(K / 64) words,
//    of which only those from r's own block on are written (and read);
// (batched_nms, when the removed bits fit in shared memory: batched_by_segments instead of 3-5.)
// 5. reduce_kernel: one block walks the blocks of 64 positions in order: one thread resolves a
//    block's 64 positions against the removed bits so far and the block's diagonal words (a
//    position is kept when no kept earlier position removed it) while the other threads OR the
//    previous block's kept rows into the removed bits of the later blocks, one (row, word) pair
//    each. It writes the kept indices and their count.
// The result is the CPU loop's (nms_cpu.cpp): the same comparisons, decided alike.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// CUB in a namespace of this file's own: both builds compile every kernel file with -ewp and
// device-link them together, and CUB's kernels that two files instantiate alike (its radix
// sort's scan, its empty kernel; grid_sample.cu sorts too) would otherwise be defined twice.
#define CUB_WRAPPED_NAMESPACE twinops_nms_cub
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../workspace.h"
#include "nms.h"
#include "nms_device.cuh"
#include "nms_passes.h"

namespace twinops {
namespace nms {

// Named, not anonymous: with the device runtime (-ewp) an anonymous namespace's kernels get
// unreadable names in profiles.
namespace kernels {

using namespace ::twinops::nms::device;  // element types, loads, launch arithmetic

// Threads of the one reduce block.
constexpr int kReduceThreads = 1024;
// Words of the removed bits the reduce block keeps in shared memory (above: global memory).
// 44 KiB, so that with the kernel's static shared memory (under 2 KiB) a launch stays within the
// 48 KiB a block may take without opting in: K up to 360,448 boxes.
constexpr int64_t kSharedWords = kMaxSegmentPositions / kBoxesPerWord;

// Byte offsets of the workspace arrays, each 256-byte aligned.
struct Layout {
  size_t keys, keys_sorted, index, order, boxes, classes, mask, removed, sort_scratch, sort_scratch_bytes, bytes;
  // batched_nms by class segments (batched_by_segments): class keys in score order and sorted, ranks,
  // the runs of equal classes, the kept flags by rank.
  size_t class_keys, class_keys_sorted, ranks, seg_rank, run_classes, run_len, run_start, num_runs, flags;
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
  L.class_keys = w.take(sizeof(uint64_t) * K);
  L.class_keys_sorted = w.take(sizeof(uint64_t) * K);
  L.ranks = w.take(sizeof(int32_t) * K);
  L.seg_rank = w.take(sizeof(int32_t) * K);
  L.run_classes = w.take(sizeof(uint64_t) * K);
  L.run_len = w.take(sizeof(int32_t) * K);
  L.run_start = w.take(sizeof(int32_t) * K);
  L.num_runs = w.take(sizeof(int32_t));
  L.flags = w.take(K);
  // One scratch area for CUB's passes, which run one after another on the stream.
  namespace cub = CUB_NS_QUALIFIER;
  const int n = static_cast<int>(p.count);
  size_t scratch = 0, bytes = 0;
  cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const Key*>(nullptr),
                                            static_cast<Key*>(nullptr), static_cast<const int32_t*>(nullptr),
                                            static_cast<int32_t*>(nullptr), n);
  scratch = std::max(scratch, bytes);
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                  static_cast<uint64_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                  static_cast<int32_t*>(nullptr), n);
  scratch = std::max(scratch, bytes);
  cub::DeviceRunLengthEncode::Encode(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                     static_cast<uint64_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                     static_cast<int32_t*>(nullptr), n);
  scratch = std::max(scratch, bytes);
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                n);
  scratch = std::max(scratch, bytes);
  cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const int32_t*>(nullptr),
                             static_cast<const unsigned char*>(nullptr), static_cast<int64_t*>(nullptr),
                             static_cast<int64_t*>(nullptr), n);
  scratch = std::max(scratch, bytes);
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
//
// `segmented`: the positions are sorted by class (ascending), and a block whose columns' first
// class is above its rows' last class holds no pair of one class: it returns unwritten (the
// segmented reduce reads only words of a row's own class run).
//
// `counts` (batched_nms_padded): blockIdx.z is an image whose positions are a region of p.count
// (its capacity) in `sorted`, `classes` and `mask`, of which the first counts[z] are used.
//
// kEfficient: EfficientNMS_TRT's rule (efficient_suppresses) instead of suppresses.
template <typename Acc, bool kEfficient>
__global__ void __launch_bounds__(kBoxesPerWord) mask_kernel(const Params p, const Acc* __restrict__ sorted,
                                                             const int64_t* __restrict__ classes,
                                                             unsigned long long* __restrict__ mask,
                                                             bool segmented, const int32_t* __restrict__ counts) {
  const int64_t rb = blockIdx.y, cb = blockIdx.x, W = words_per_row(p.count);
  if (cb < rb) return;
  int64_t count = p.count;
  if (counts != nullptr) {
    const int64_t z = blockIdx.z;
    count = counts[z];
    sorted += z * p.count * 4;
    if (classes != nullptr) classes += z * p.count;
    mask += z * p.count * W;
  }
  const int64_t c0 = cb * kBoxesPerWord;
  if (c0 >= count) return;
  if (segmented) {
    const int64_t row_last = rb * kBoxesPerWord + kBoxesPerWord - 1 < count ? rb * kBoxesPerWord + kBoxesPerWord - 1
                                                                            : count - 1;
    if (classes[c0] > classes[row_last]) return;
  }
  __shared__ Acc col[kBoxesPerWord * 4];
  __shared__ int64_t col_class[kBoxesPerWord];
  const int64_t cols = count - c0 < kBoxesPerWord ? count - c0 : kBoxesPerWord;
  if (threadIdx.x < cols) {
#pragma unroll
    for (int k = 0; k < 4; ++k) col[4 * threadIdx.x + k] = sorted[4 * (c0 + threadIdx.x) + k];
    if (classes != nullptr) col_class[threadIdx.x] = classes[c0 + threadIdx.x];
  }
  __syncthreads();
  const int64_t r = rb * kBoxesPerWord + threadIdx.x;
  if (r >= count) return;
  Acc row[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) row[k] = sorted[4 * r + k];
  const int64_t row_class = classes != nullptr ? classes[r] : 0;
  unsigned long long bits = 0;
  const int first = cb == rb ? static_cast<int>(threadIdx.x) + 1 : 0;  // later positions only
  for (int c = first; c < cols; ++c) {
    if (classes != nullptr && col_class[c] != row_class) continue;
    const bool gone = kEfficient ? efficient_suppresses(row, &col[4 * c], p.iou_threshold)
                                 : suppresses(row, &col[4 * c], p.iou_threshold);
    if (gone) bits |= 1ull << c;
  }
  mask[r * W + cb] = bits;
}

// Loads in flight per thread in the reduce kernel's OR step.
constexpr int kReduceUnroll = 8;

// Thread 0's serial step over block b: which of its `rows` positions are kept, given the removed
// bits so far (`gone`) and the block's diagonal words. Writes the kept positions (0..63, in order)
// into kept_rows and returns how many; with `next` (the rows' words of block b + 1), also the OR
// of the kept rows' next words into *carry. The words are read in groups of 8 (their loads do
// not depend on the decisions), so the dependent chain is a few integer operations per row.
__device__ __forceinline__ int resolve_block(unsigned long long gone, const unsigned long long* diag,
                                             const unsigned long long* next, int rows, int* kept_rows,
                                             unsigned long long* carry) {
  int n = 0;
  unsigned long long c = 0;
  for (int t0 = 0; t0 < rows; t0 += 8) {
    unsigned long long d[8], a[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      d[u] = diag[t0 + u];  // 64 words, zero past `rows`
      a[u] = next != nullptr ? next[t0 + u] : 0ull;
    }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int t = t0 + u;
      if (t < rows && !((gone >> t) & 1ull)) {
        gone |= d[u];
        c |= a[u];
        kept_rows[n++] = t;
      }
    }
  }
  if (carry != nullptr) *carry = c;
  return n;
}

// The greedy pass over the mask (one block of kReduceThreads): see the file comment. `removed`
// is shared memory when the row's words fit (kSharedWords), else `removed_global`.
//
// Step b runs two things at once, then one barrier:
// - thread 0 resolves block b against removed[b] and the carry word (block b - 1's kept rows'
//   words b, OR-ed by the previous resolve from words loaded one step ahead);
// - the other warps OR block b - 1's kept rows' words b + 1 .. W - 1 into `removed` (one
//   (row, word) pair per thread, consecutive threads on consecutive words, an atomic OR each:
//   order-independent, so the result does not depend on scheduling), write block b - 1's kept
//   indices, and load block b + 1's diagonal and next words.
// So the OR step's global loads overlap the serial resolve instead of following it: a word
// w >= b + 1 is complete when resolve(w) starts, since every block below w - 1 has been OR-ed
// by then and block w - 1 comes through the carry.
__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const Params p, const unsigned long long* __restrict__ mask, const int32_t* __restrict__ order,
                  unsigned long long* removed_global, int64_t* __restrict__ keep, int64_t* __restrict__ kept) {
  extern __shared__ unsigned long long removed_shared[];
  __shared__ unsigned long long diag[2][kBoxesPerWord], next[2][kBoxesPerWord], carry[2];
  __shared__ int kept_rows[2][kBoxesPerWord];
  __shared__ int kept_n[2];
  const int64_t W = words_per_row(p.count);
  unsigned long long* removed = W <= kSharedWords ? removed_shared : removed_global;
  const int tid = static_cast<int>(threadIdx.x);
  // Row t of block b's word w (0 past the last position or the last word).
  auto word_of = [&](int64_t b, int t, int64_t w) -> unsigned long long {
    const int64_t r = b * kBoxesPerWord + t;
    return r < p.count && w < W ? mask[r * W + w] : 0ull;
  };
  for (int64_t w = tid; w < W; w += blockDim.x) removed[w] = 0;
  if (tid < kBoxesPerWord) {
    diag[0][tid] = word_of(0, tid, 0);
    next[0][tid] = word_of(0, tid, 1);
  }
  if (tid == 0) {
    kept_n[1] = 0;  // no block before block 0
    carry[1] = 0;
  }
  __syncthreads();
  constexpr int kWorkers = kReduceThreads - 32;  // warps 1.. (warp 0 holds the resolving thread)
  const int wid = tid - 32;
  int64_t base = 0;  // kept in the blocks before block b - 1
  for (int64_t b = 0; b < W; ++b) {
    const int cur = static_cast<int>(b & 1), prev = cur ^ 1;
    const int n_prev = kept_n[prev];
    if (tid == 0) {
      const int64_t r0 = b * kBoxesPerWord;
      const int rows = static_cast<int>(p.count - r0 < kBoxesPerWord ? p.count - r0 : kBoxesPerWord);
      // volatile: in global memory the atomics of other threads are not in this thread's L1
      const unsigned long long gone = *static_cast<volatile unsigned long long*>(&removed[b]) | carry[prev];
      kept_n[cur] = resolve_block(gone, diag[cur], next[cur], rows, kept_rows[cur], &carry[cur]);
    } else if (wid >= 0) {
      // Block b + 1's words, loaded now, stored after the OR step.
      unsigned long long ahead = 0;
      if (wid < 2 * kBoxesPerWord && b + 1 < W)
        ahead = word_of(b + 1, wid % kBoxesPerWord, b + 1 + wid / kBoxesPerWord);
      if (b > 0) {
        const int64_t rp0 = (b - 1) * kBoxesPerWord;
        if (wid < n_prev) keep[base + wid] = order[rp0 + kept_rows[prev][wid]];
        const uint32_t later = static_cast<uint32_t>(W - b - 1);
        const uint32_t pairs = static_cast<uint32_t>(n_prev) * later;  // <= 64 * 65,533
        for (uint32_t q0 = wid; q0 < pairs; q0 += kWorkers * kReduceUnroll) {
          unsigned long long v[kReduceUnroll];
          uint32_t word[kReduceUnroll];
#pragma unroll
          for (int u = 0; u < kReduceUnroll; ++u) {
            const uint32_t q = q0 + u * kWorkers;
            v[u] = 0;
            word[u] = 0;
            if (q < pairs) {
              word[u] = static_cast<uint32_t>(b + 1) + q % later;
              v[u] = mask[(rp0 + kept_rows[prev][q / later]) * W + word[u]];
            }
          }
#pragma unroll
          for (int u = 0; u < kReduceUnroll; ++u)
            if (v[u] != 0) atomicOr(&removed[word[u]], v[u]);
        }
      }
      if (wid < kBoxesPerWord)
        diag[prev][wid] = ahead;
      else if (wid < 2 * kBoxesPerWord)
        next[prev][wid - kBoxesPerWord] = ahead;
    }
    if (b > 0) base += n_prev;
    __syncthreads();
  }
  // The last block's kept indices (its OR step has no later words).
  const int last = static_cast<int>((W - 1) & 1);
  const int n = kept_n[last];
  if (tid < n) keep[base + tid] = order[(W - 1) * kBoxesPerWord + kept_rows[last][tid]];
  if (tid == 0) *kept = base + n;
}

// batched_nms by class segments. The positions are sorted by (class, score rank): a run of
// equal classes is a segment, and segments never suppress each other, so each is reduced on
// its own, in parallel, by the same greedy pass as reduce_kernel's.

// Each box's class as an unsigned key (ascending = the int64 order), in score order, with its rank.
__global__ void __launch_bounds__(kThreads) class_keys_kernel(const Params p, const int64_t* __restrict__ classes,
                                                              const int32_t* __restrict__ order,
                                                              uint64_t* __restrict__ class_keys,
                                                              int32_t* __restrict__ ranks) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= p.count) return;
  class_keys[r] = static_cast<uint64_t>(classes[order[r] * p.class_stride]) ^ (uint64_t(1) << 63);
  ranks[r] = static_cast<int32_t>(r);
}

// The box index at each position: the box of rank seg_rank[position].
__global__ void __launch_bounds__(kThreads) compose_kernel(const Params p, const int32_t* __restrict__ order,
                                                           const int32_t* __restrict__ seg_rank,
                                                           int32_t* __restrict__ position_order) {
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= p.count) return;
  position_order[q] = order[seg_rank[q]];
}

constexpr int kSegmentThreads = 256;
// Segments per launch at most (each block takes every gridDim.x-th segment).
constexpr int kSegmentBlocks = 1024;

// One block per segment (strided over the runs): the greedy pass over the segment's 64-position
// blocks, its removed bits (words of the segment only) in shared memory. Positions of another
// class that share a boundary block are marked removed before the resolve; the mask words
// between positions of different classes are 0, so the OR step cannot touch another segment.
// Writes flags[rank] = 1 for each kept position (flags start at 0).
//
// Images (batched_nms_padded): positions are regions of p.count = 64 * W per image, each row's
// words local to its image (block b's word is b % W); `tops` (per image) are the used positions,
// so a run starting at or past its image's top is padding and skipped. `limit` > 0: a segment
// stops after the block in which it reached `limit` kept positions (no image takes more).
__global__ void __launch_bounds__(kSegmentThreads)
    segment_reduce_kernel(const Params p, const unsigned long long* __restrict__ mask,
                          const int32_t* __restrict__ run_start, const int32_t* __restrict__ run_len,
                          const int32_t* __restrict__ num_runs, const int32_t* __restrict__ seg_rank,
                          const int32_t* __restrict__ tops, int64_t limit, unsigned char* __restrict__ flags) {
  extern __shared__ unsigned long long removed[];
  __shared__ unsigned long long diag[kBoxesPerWord];
  __shared__ int kept_rows[kBoxesPerWord];
  __shared__ int kept_now;
  const int64_t W = words_per_row(p.count);
  const int tid = static_cast<int>(threadIdx.x);
  const int runs = *num_runs;
  for (int s = blockIdx.x; s < runs; s += gridDim.x) {
    const int64_t start = run_start[s], end = start + run_len[s];
    if (tops != nullptr && start % p.count >= tops[start / p.count]) continue;  // an image's padding
    const int64_t ws = start / kBoxesPerWord, we = (end - 1) / kBoxesPerWord;
    for (int64_t w = tid; w <= we - ws; w += blockDim.x) removed[w] = 0;
    __syncthreads();
    int64_t total = 0;  // kept in this segment so far (every thread tracks it)
    for (int64_t b = ws; b <= we; ++b) {
      const int64_t r0 = b * kBoxesPerWord, local = b % W;
      const int lo = static_cast<int>((start > r0 ? start : r0) - r0);
      const int hi = static_cast<int>((end < r0 + kBoxesPerWord ? end : r0 + kBoxesPerWord) - r0);
      if (tid < kBoxesPerWord) diag[tid] = tid >= lo && tid < hi ? mask[(r0 + tid) * W + local] : 0ull;
      __syncthreads();
      if (tid == 0) {
        const unsigned long long other = lo > 0 ? (1ull << lo) - 1 : 0ull;  // positions before the segment
        kept_now = resolve_block(removed[b - ws] | other, diag, nullptr, hi, kept_rows, nullptr);
      }
      __syncthreads();
      const int n = kept_now;
      if (tid < n) flags[seg_rank[r0 + kept_rows[tid]]] = 1;
      const uint32_t later = static_cast<uint32_t>(we - b);
      const uint32_t pairs = static_cast<uint32_t>(n) * later;
      for (uint32_t q = tid; q < pairs; q += blockDim.x) {
        const uint32_t w = static_cast<uint32_t>(q % later) + 1;  // blocks after b
        const unsigned long long v = mask[(r0 + kept_rows[q / later]) * W + local + w];
        if (v != 0) atomicOr(&removed[b + w - ws], v);
      }
      total += n;
      __syncthreads();
      if (limit > 0 && total >= limit) break;
    }
  }
}

}  // namespace kernels

using namespace kernels;

namespace {
// The Layout of p for scores of `score_bytes` bytes (the key width follows the opmath type).
Layout layout_for(const Params& p, int score_bytes) {
  return score_bytes == 8 ? layout<double>(p) : layout<float>(p);
}
}  // namespace

namespace passes {

template <typename Acc>
cudaError_t launch_mask(const Params& p, int64_t images, const Acc* sorted, const int64_t* classes,
                        const int32_t* counts, unsigned long long* mask, bool segmented, bool efficient,
                        cudaStream_t stream) {
  const auto W = static_cast<unsigned>(words_per_row(p.count));
  if (W == 0 || images <= 0) return cudaSuccess;
  const dim3 grid(W, W, static_cast<unsigned>(images));
  if (efficient)
    mask_kernel<Acc, true><<<grid, kBoxesPerWord, 0, stream>>>(p, sorted, classes, mask, segmented, counts);
  else
    mask_kernel<Acc, false><<<grid, kBoxesPerWord, 0, stream>>>(p, sorted, classes, mask, segmented, counts);
  return cudaGetLastError();
}
template cudaError_t launch_mask<float>(const Params&, int64_t, const float*, const int64_t*, const int32_t*,
                                        unsigned long long*, bool, bool, cudaStream_t);
template cudaError_t launch_mask<double>(const Params&, int64_t, const double*, const int64_t*, const int32_t*,
                                         unsigned long long*, bool, bool, cudaStream_t);

cudaError_t launch_segment_reduce(const Params& p, int64_t positions, const unsigned long long* mask,
                                  const int32_t* run_start, const int32_t* run_len, const int32_t* num_runs,
                                  const int32_t* seg_rank, const int32_t* tops, int64_t limit, unsigned char* flags,
                                  cudaStream_t stream) {
  const int64_t W = words_per_row(p.count);
  if (positions <= 0) return cudaSuccess;
  if (W > kSharedWords) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(positions < kSegmentBlocks ? positions : kSegmentBlocks);
  segment_reduce_kernel<<<grid, kSegmentThreads, sizeof(unsigned long long) * static_cast<size_t>(W), stream>>>(
      p, mask, run_start, run_len, num_runs, seg_rank, tops, limit, flags);
  return cudaGetLastError();
}

}  // namespace passes

size_t workspace_bytes(const Params& p, int score_bytes) {
  return p.count > 0 ? layout_for(p, score_bytes).bytes : 0;
}

namespace {

// batched_nms after the score sort (order: the box index by rank), when a segment's removed bits
// fit in shared memory: the class sort, the mask within class runs, one reduce block per run,
// then the kept boxes in rank order by a stable select of the kept flags.
template <typename T>
cudaError_t batched_by_segments(const Params& p, const Layout& L, const T* boxes, const int64_t* classes,
                                int64_t* keep, int64_t* kept, char* ws, cudaStream_t stream) {
  namespace cub = CUB_NS_QUALIFIER;
  using Acc = AccOf<T>;
  const int64_t K = p.count, W = words_per_row(K);
  const int n = static_cast<int>(K);
  auto* order = reinterpret_cast<int32_t*>(ws + L.order);
  auto* position_order = reinterpret_cast<int32_t*>(ws + L.index);  // the sort's input ranks: free now
  auto* sorted = reinterpret_cast<Acc*>(ws + L.boxes);
  auto* sorted_classes = reinterpret_cast<int64_t*>(ws + L.classes);
  auto* mask = reinterpret_cast<unsigned long long*>(ws + L.mask);
  auto* class_keys = reinterpret_cast<uint64_t*>(ws + L.class_keys);
  auto* class_keys_sorted = reinterpret_cast<uint64_t*>(ws + L.class_keys_sorted);
  auto* ranks = reinterpret_cast<int32_t*>(ws + L.ranks);
  auto* seg_rank = reinterpret_cast<int32_t*>(ws + L.seg_rank);
  auto* run_classes = reinterpret_cast<uint64_t*>(ws + L.run_classes);
  auto* run_len = reinterpret_cast<int32_t*>(ws + L.run_len);
  auto* run_start = reinterpret_cast<int32_t*>(ws + L.run_start);
  auto* num_runs = reinterpret_cast<int32_t*>(ws + L.num_runs);
  auto* flags = reinterpret_cast<unsigned char*>(ws + L.flags);
  void* scratch = ws + L.sort_scratch;
  size_t bytes = L.sort_scratch_bytes;
  cudaError_t e;
  class_keys_kernel<<<blocks_for(K), kThreads, 0, stream>>>(p, classes, order, class_keys, ranks);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  // Stable: each class's positions stay in rank order.
  if ((e = cub::DeviceRadixSort::SortPairs(scratch, bytes, class_keys, class_keys_sorted, ranks, seg_rank, n, 0, 64,
                                           stream)) != cudaSuccess)
    return e;
  compose_kernel<<<blocks_for(K), kThreads, 0, stream>>>(p, order, seg_rank, position_order);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  gather_kernel<T><<<blocks_for(K), kThreads, 0, stream>>>(p, boxes, classes, position_order, sorted, sorted_classes);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = passes::launch_mask<Acc>(p, 1, sorted, sorted_classes, nullptr, mask, true, false, stream);
  if (e != cudaSuccess) return e;
  if ((e = cudaMemsetAsync(run_len, 0, sizeof(int32_t) * K, stream)) != cudaSuccess) return e;
  bytes = L.sort_scratch_bytes;
  if ((e = cub::DeviceRunLengthEncode::Encode(scratch, bytes, class_keys_sorted, run_classes, run_len, num_runs, n,
                                              stream)) != cudaSuccess)
    return e;
  bytes = L.sort_scratch_bytes;
  if ((e = cub::DeviceScan::ExclusiveSum(scratch, bytes, run_len, run_start, n, stream)) != cudaSuccess) return e;
  if ((e = cudaMemsetAsync(flags, 0, K, stream)) != cudaSuccess) return e;
  if ((e = passes::launch_segment_reduce(p, K, mask, run_start, run_len, num_runs, seg_rank, nullptr, 0, flags,
                                         stream)) != cudaSuccess)
    return e;
  bytes = L.sort_scratch_bytes;
  return cub::DeviceSelect::Flagged(scratch, bytes, order, flags, keep, kept, n, stream);
}

}  // namespace

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
  if (classes != nullptr && W <= kSharedWords)
    return batched_by_segments<T>(p, L, boxes, classes, keep, kept, ws, stream);
  gather_kernel<T><<<blocks_for(K), kThreads, 0, stream>>>(p, boxes, classes, order, sorted, sorted_classes);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = passes::launch_mask<Acc>(p, 1, sorted, sorted_classes, nullptr, mask, false, false, stream);
  if (e != cudaSuccess) return e;
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
