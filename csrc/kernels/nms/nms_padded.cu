// batched_nms_padded on the device (nms.h has the rules and the entry point), B images at once,
// no host round trip. Scores are numbered g = (b * N + n) * C + c.
// 1. keys_kernel: each score's key (score_key) when it is a candidate (score > threshold), else
//    0, below every candidate's;
// 2. CUB's stable radix sort of the keys, descending, then a stable sort by image (candidates:
//    b, others: B): each image's candidates are one run in score order, ties by g, whose start
//    and length bounds_kernel finds by binary search;
// 3. slots_kernel: the first min(count, pre_nms_top_k) of each image into a region of
//    `capacity` slots (padded_capacity), keyed by (image, class) (class 0 when class-agnostic;
//    unused slots after the image's classes), and a stable sort by that key: each class of an
//    image is a run in score order;
// 4. gather_kernel: those positions' boxes (in Acc) and classes;
// 5. nms.cu's mask per image (passes::launch_mask) and its per-run reduce
//    (passes::launch_segment_reduce, runs found by CUB's run-length encode), a run stopping
//    once it kept max_output boxes: the kept flags by rank;
// 6. emit_kernel, a block per image: the first max_output kept ranks, in rank order, into the
//    outputs, the rest of each image's rows padded.
// The result is the torch op's on the CPU (csrc/torch/nms/nms_padded.cpp): the same candidates
// in the same order, and batched_nms's decisions (the same mask bits) on them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// CUB in a namespace of this file's own (see nms.cu).
#define CUB_WRAPPED_NAMESPACE twinops_nms_padded_cub
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>

#include "../workspace.h"
#include "nms.h"
#include "nms_device.cuh"
#include "nms_passes.h"

namespace twinops {
namespace nms {
namespace padded_kernels {

namespace cub = CUB_NS_QUALIFIER;

using namespace ::twinops::nms::device;  // element types, loads, launch arithmetic

// Bits of the unsigned values 0 .. v (at least 1).
inline int bits_for(uint64_t v) {
  int b = 1;
  while (b < 64 && (v >> b) != 0) ++b;
  return b;
}

// The sizes of one call.
struct Sizes {
  int64_t B, C, G, cap, Q, W;  // G scores, Q = B * cap slots, W = cap / 64 words a mask row
  explicit Sizes(const PaddedParams& p)
      : B(p.batch), C(p.classes), G(p.batch * p.boxes * p.classes), cap(padded_capacity(p)), Q(B * cap),
        W(cap / kBoxesPerWord) {}
};

// Byte offsets of the workspace arrays (256-byte aligned). After the score sort its input keys
// hold the image keys and its input indices the image sort's output.
struct Layout {
  size_t keys, keys_sorted, index, order, image_keys_sorted, starts, tops, slot, seg_key, seg_key_sorted,
      seg_val, seg_rank, boxes, classes, mask, run_keys, run_len, run_start, num_runs, flags, scratch, scratch_bytes,
      bytes;
};

template <typename T>
Layout layout(const PaddedParams& p) {
  using Key = KeyOf<T>;
  const Sizes z(p);
  const auto G = static_cast<size_t>(z.G), Q = static_cast<size_t>(z.Q), B = static_cast<size_t>(z.B);
  WorkspaceOffsets w;
  Layout L{};
  L.keys = w.take(sizeof(Key) * G);
  L.keys_sorted = w.take(sizeof(Key) * G);
  L.index = w.take(sizeof(int32_t) * G);
  L.order = w.take(sizeof(int32_t) * G);
  L.image_keys_sorted = w.take(sizeof(uint32_t) * G);
  L.starts = w.take(sizeof(int32_t) * B);
  L.tops = w.take(sizeof(int32_t) * B);
  L.slot = w.take(sizeof(int32_t) * Q);
  L.seg_key = w.take(sizeof(uint32_t) * Q);
  L.seg_key_sorted = w.take(sizeof(uint32_t) * Q);
  L.seg_val = w.take(sizeof(int32_t) * Q);
  L.seg_rank = w.take(sizeof(int32_t) * Q);
  L.boxes = w.take(sizeof(AccOf<T>) * 4 * Q);
  L.classes = w.take(sizeof(int64_t) * Q);
  L.mask = w.take(sizeof(unsigned long long) * Q * static_cast<size_t>(z.W));
  L.run_keys = w.take(sizeof(uint32_t) * Q);
  L.run_len = w.take(sizeof(int32_t) * Q);
  L.run_start = w.take(sizeof(int32_t) * Q);
  L.num_runs = w.take(sizeof(int32_t));
  L.flags = w.take(Q);
  // One scratch area for CUB's passes, which run one after another on the stream.
  const int g = static_cast<int>(G), q = static_cast<int>(Q);
  size_t scratch = 0, bytes = 0;
  cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const Key*>(nullptr),
                                            static_cast<Key*>(nullptr), static_cast<const int32_t*>(nullptr),
                                            static_cast<int32_t*>(nullptr), g);
  scratch = std::max(scratch, bytes);
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                                  static_cast<uint32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                  static_cast<int32_t*>(nullptr), std::max(g, q));
  scratch = std::max(scratch, bytes);
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                q);
  scratch = std::max(scratch, bytes);
  cub::DeviceRunLengthEncode::Encode(nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                                     static_cast<uint32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                     static_cast<int32_t*>(nullptr), q);
  scratch = std::max(scratch, bytes);
  L.scratch = w.take(scratch);
  L.scratch_bytes = scratch;
  L.bytes = w.end;
  return L;
}

// Where score g of the pass's numbering is in the input, and its box (split_classes: g is
// (b * C + c) * N + n over (B, N, C) scores; otherwise the input's own numbering).
__device__ __forceinline__ int64_t score_index(const PaddedParams& p, int64_t g) {
  if (p.split_classes == 0) return g;
  const int64_t C = p.split_classes, image = g / p.boxes, n = g % p.boxes;
  return ((image / C) * p.boxes + n) * C + image % C;
}
__device__ __forceinline__ int64_t box_index(const PaddedParams& p, int64_t g) {
  if (p.split_classes == 0) return p.per_class_boxes ? g : g / p.classes;
  return p.per_class_boxes ? score_index(p, g) : (g / p.boxes / p.split_classes) * p.boxes + g % p.boxes;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) keys_kernel(const PaddedParams p, const T* __restrict__ scores,
                                                        KeyOf<T>* __restrict__ keys, int32_t* __restrict__ index) {
  const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= p.batch * p.boxes * p.classes) return;
  const AccOf<T> s = to_acc(scores[score_index(p, g)]);
  // In double, as the op compares on the CPU: every score widens exactly; NaN never passes.
  const bool candidate =
      p.efficient ? s >= static_cast<AccOf<T>>(p.score_threshold) && g % p.classes != p.background_class
                  : static_cast<double>(s) > p.score_threshold &&
                        !(p.split_classes > 0 && (g / p.boxes) % p.split_classes == p.split_skip_class);
  keys[g] = candidate ? score_key(s) : KeyOf<T>(0);
  index[g] = static_cast<int32_t>(g);
}

// The image of each score in score order (B for non-candidates: after every image).
template <typename Key>
__global__ void __launch_bounds__(kThreads) image_keys_kernel(const PaddedParams p, const Key* __restrict__ keys_sorted,
                                                              const int32_t* __restrict__ order,
                                                              uint32_t* __restrict__ image_keys) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.batch * p.boxes * p.classes) return;
  image_keys[i] = keys_sorted[i] != Key(0) ? static_cast<uint32_t>(order[i] / (p.boxes * p.classes))
                                           : static_cast<uint32_t>(p.batch);
}

// The first position of image key v in the ascending `keys` (n of them): a binary search.
__device__ __forceinline__ int64_t lower_bound(const uint32_t* keys, int64_t n, uint32_t v) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (keys[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Image b's candidates: where they start in the image-sorted order and how many NMS considers,
// min(count, pre_nms_top_k). Counted from the sorted keys, not by atomics on one counter.
__global__ void bounds_kernel(const PaddedParams p, const uint32_t* __restrict__ image_keys_sorted,
                              int32_t* __restrict__ starts, int32_t* __restrict__ tops) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= p.batch) return;
  const int64_t G = p.batch * p.boxes * p.classes;
  const int64_t start = lower_bound(image_keys_sorted, G, static_cast<uint32_t>(b));
  const int64_t count = lower_bound(image_keys_sorted, G, static_cast<uint32_t>(b + 1)) - start;
  starts[b] = static_cast<int32_t>(start);
  tops[b] = static_cast<int32_t>(p.pre_nms_top_k > 0 && p.pre_nms_top_k < count ? p.pre_nms_top_k : count);
}

// Slot q = b * cap + r: image b's candidate of rank r (its g), keyed by (image, class).
__global__ void __launch_bounds__(kThreads) slots_kernel(const PaddedParams p, int64_t cap,
                                                         const int32_t* __restrict__ order,
                                                         const int32_t* __restrict__ starts,
                                                         const int32_t* __restrict__ tops, int32_t* __restrict__ slot,
                                                         uint32_t* __restrict__ seg_key,
                                                         int32_t* __restrict__ seg_val) {
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= p.batch * cap) return;
  const int64_t b = q / cap, r = q % cap;
  const auto base = static_cast<uint32_t>(b * (p.classes + 1));
  if (r < tops[b]) {
    const int32_t g = order[starts[b] + r];
    slot[q] = g;
    seg_key[q] = base + (p.class_agnostic ? 0u : static_cast<uint32_t>(g % p.classes));
  } else {
    slot[q] = -1;
    seg_key[q] = base + static_cast<uint32_t>(p.classes);  // after the image's classes
  }
  seg_val[q] = static_cast<int32_t>(q);
}

// The box of score g in Acc: the input's (x1, y1, x2, y2), or in efficient mode decoded (anchors,
// box_coding) into corners, in Acc with each operation rounded once (no FMA).
template <typename T>
__device__ void box_of(const PaddedParams& p, const T* __restrict__ boxes, int64_t g, AccOf<T>* v) {
  using Acc = AccOf<T>;
  const T* box = boxes + 4 * box_index(p, g);
#pragma unroll
  for (int k = 0; k < 4; ++k) v[k] = to_acc(box[k]);
  if (!p.efficient) return;
  if (p.anchors != nullptr) {
    const int64_t n = (g / p.classes) % p.boxes, b = g / (p.classes * p.boxes);
    const T* an = static_cast<const T*>(p.anchors) + 4 * ((p.anchor_batch == 1 ? 0 : b) * p.boxes + n);
    Acc a[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) a[k] = to_acc(an[k]);
    if (p.box_coding == 0) {
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = v[k] + a[k];
    } else {  // (center, size): offset * anchor size + anchor center, anchor size * exp(offset)
      const Acc cx = mul_rn(v[0], a[2]) + a[0], cy = mul_rn(v[1], a[3]) + a[1];
      v[2] = mul_rn(a[2], exp(v[2]));
      v[3] = mul_rn(a[3], exp(v[3]));
      v[0] = cx;
      v[1] = cy;
    }
  }
  if (p.box_coding == 1) {  // corners: center -/+ size / 2
    const Acc hw = mul_rn(v[2], Acc(0.5)), hh = mul_rn(v[3], Acc(0.5)), cx = v[0], cy = v[1];
    v[0] = cx - hw;
    v[1] = cy - hh;
    v[2] = cx + hw;
    v[3] = cy + hh;
  }
}

// Position q (image b, local l < tops[b]) holds slot seg_rank[q]: its box (in Acc) and class.
template <typename T>
__global__ void __launch_bounds__(kThreads) gather_kernel(const PaddedParams p, int64_t cap,
                                                          const T* __restrict__ boxes,
                                                          const int32_t* __restrict__ slot,
                                                          const int32_t* __restrict__ seg_rank,
                                                          const int32_t* __restrict__ tops,
                                                          AccOf<T>* __restrict__ sorted,
                                                          int64_t* __restrict__ classes) {
  const int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= p.batch * cap || q % cap >= tops[q / cap]) return;
  const int64_t g = slot[seg_rank[q]];
  box_of(p, boxes, g, &sorted[4 * q]);
  classes[q] = p.class_agnostic ? 0 : g % p.classes;
}

constexpr int kEmitThreads = 256;

// One block per image: the kept ranks in order, the first max_output written, then padding.
template <typename T>
__global__ void __launch_bounds__(kEmitThreads)
    emit_kernel(const PaddedParams p, int64_t cap, const T* __restrict__ boxes, const T* __restrict__ scores,
                const int32_t* __restrict__ slot, const int32_t* __restrict__ tops,
                const unsigned char* __restrict__ flags, int32_t* __restrict__ num, T* __restrict__ out_boxes,
                T* __restrict__ out_scores, int32_t* __restrict__ out_classes, int64_t* __restrict__ out_indices) {
  using Scan = cub::BlockScan<int, kEmitThreads>;
  __shared__ typename Scan::TempStorage scan;
  const int64_t b = blockIdx.x, K = p.max_output;
  const int64_t top = tops[b];
  T* ob = out_boxes + b * K * 4;
  T* os = out_scores + b * K;
  int32_t* oc = out_classes + b * K;
  int64_t* oi = out_indices != nullptr ? out_indices + b * K : nullptr;
  int64_t written = 0;  // every thread tracks it
  for (int64_t r0 = 0; r0 < top && written < K; r0 += kEmitThreads) {
    const int64_t r = r0 + threadIdx.x;
    const int kept = r < top && flags[b * cap + r] ? 1 : 0;
    int before = 0, total = 0;
    Scan(scan).ExclusiveSum(kept, before, total);
    const int64_t at = written + before;
    if (kept && at < K) {
      const int64_t g = slot[b * cap + r];
      if (p.efficient) {  // the decoded corners; the score sigmoid-activated on request
        AccOf<T> v[4];
        box_of(p, boxes, g, v);
#pragma unroll
        for (int k = 0; k < 4; ++k) ob[4 * at + k] = DtypeConvert<T>::template store<AccOf<T>>(v[k]);
        const AccOf<T> s = to_acc(scores[g]), one(1);
        os[at] = p.score_activation ? DtypeConvert<T>::template store<AccOf<T>>(one / (one + exp(-s))) : scores[g];
      } else {  // the input's values
        const T* box = boxes + 4 * box_index(p, g);
#pragma unroll
        for (int k = 0; k < 4; ++k) ob[4 * at + k] = box[k];
        os[at] = scores[score_index(p, g)];
      }
      oc[at] = static_cast<int32_t>(g % p.classes);
      if (oi != nullptr) oi[at] = (g / p.classes) % p.boxes;
    }
    written += total;
    __syncthreads();  // the scan's storage is reused
  }
  const int64_t n = written < K ? written : K;
  const T zero = DtypeConvert<T>::template store<float>(0.0f);
  for (int64_t i = n + threadIdx.x; i < K; i += kEmitThreads) {
#pragma unroll
    for (int k = 0; k < 4; ++k) ob[4 * i + k] = zero;
    os[i] = zero;
    oc[i] = 0;
    if (oi != nullptr) oi[i] = -1;
  }
  if (threadIdx.x == 0) num[b] = static_cast<int32_t>(n);
}

}  // namespace padded_kernels

using namespace padded_kernels;

size_t padded_workspace_bytes(const PaddedParams& p, int score_bytes) {
  if (p.batch <= 0) return 0;
  return score_bytes == 8 ? layout<double>(p).bytes : layout<float>(p).bytes;
}

template <typename T>
cudaError_t nms_padded_cuda(const PaddedParams& p, const T* boxes, const T* scores, int32_t* num_detections,
                            T* out_boxes, T* out_scores, int32_t* out_classes, int64_t* out_indices, void* workspace,
                            size_t workspace_size, cudaStream_t stream) {
  using Acc = AccOf<T>;
  using Key = KeyOf<T>;
  if (p.batch <= 0) return cudaSuccess;
  if (padded_unsupported(p) != nullptr || p.max_output < 1) return cudaErrorInvalidValue;
  const Sizes z(p);
  const Layout L = layout<T>(p);
  if (workspace_size < L.bytes) return cudaErrorInvalidValue;
  char* ws = static_cast<char*>(workspace);
  auto* keys = reinterpret_cast<Key*>(ws + L.keys);
  auto* keys_sorted = reinterpret_cast<Key*>(ws + L.keys_sorted);
  auto* index = reinterpret_cast<int32_t*>(ws + L.index);
  auto* order = reinterpret_cast<int32_t*>(ws + L.order);
  auto* image_keys = reinterpret_cast<uint32_t*>(ws + L.keys);  // the score keys are sorted by then
  auto* image_keys_sorted = reinterpret_cast<uint32_t*>(ws + L.image_keys_sorted);
  auto* by_image = index;  // the score sort's input indices are free by then
  auto* starts = reinterpret_cast<int32_t*>(ws + L.starts);
  auto* tops = reinterpret_cast<int32_t*>(ws + L.tops);
  auto* slot = reinterpret_cast<int32_t*>(ws + L.slot);
  auto* seg_key = reinterpret_cast<uint32_t*>(ws + L.seg_key);
  auto* seg_key_sorted = reinterpret_cast<uint32_t*>(ws + L.seg_key_sorted);
  auto* seg_val = reinterpret_cast<int32_t*>(ws + L.seg_val);
  auto* seg_rank = reinterpret_cast<int32_t*>(ws + L.seg_rank);
  auto* sorted = reinterpret_cast<Acc*>(ws + L.boxes);
  auto* classes = reinterpret_cast<int64_t*>(ws + L.classes);
  auto* mask = reinterpret_cast<unsigned long long*>(ws + L.mask);
  auto* run_keys = reinterpret_cast<uint32_t*>(ws + L.run_keys);
  auto* run_len = reinterpret_cast<int32_t*>(ws + L.run_len);
  auto* run_start = reinterpret_cast<int32_t*>(ws + L.run_start);
  auto* num_runs = reinterpret_cast<int32_t*>(ws + L.num_runs);
  auto* flags = reinterpret_cast<unsigned char*>(ws + L.flags);
  void* scratch = ws + L.scratch;
  size_t bytes = 0;
  cudaError_t e;
  const unsigned images = static_cast<unsigned>(z.B);
  if (z.G > 0 && z.cap > 0) {
    const int g = static_cast<int>(z.G), q = static_cast<int>(z.Q);
    keys_kernel<T><<<blocks_for(z.G), kThreads, 0, stream>>>(p, scores, keys, index);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    bytes = L.scratch_bytes;
    if ((e = cub::DeviceRadixSort::SortPairsDescending(scratch, bytes, keys, keys_sorted, index, order, g, 0,
                                                       static_cast<int>(8 * sizeof(Key)), stream)) != cudaSuccess)
      return e;
    image_keys_kernel<Key><<<blocks_for(z.G), kThreads, 0, stream>>>(p, keys_sorted, order, image_keys);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    // Stable: each image's candidates stay in score order.
    bytes = L.scratch_bytes;
    if ((e = cub::DeviceRadixSort::SortPairs(scratch, bytes, image_keys, image_keys_sorted, order, by_image, g, 0,
                                             bits_for(static_cast<uint64_t>(z.B)), stream)) != cudaSuccess)
      return e;
    bounds_kernel<<<blocks_for(z.B), kThreads, 0, stream>>>(p, image_keys_sorted, starts, tops);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    slots_kernel<<<blocks_for(z.Q), kThreads, 0, stream>>>(p, z.cap, by_image, starts, tops, slot, seg_key, seg_val);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    // Stable: each (image, class) run stays in rank order; images keep their regions.
    bytes = L.scratch_bytes;
    if ((e = cub::DeviceRadixSort::SortPairs(scratch, bytes, seg_key, seg_key_sorted, seg_val, seg_rank, q, 0,
                                             bits_for(static_cast<uint64_t>(z.B * (z.C + 1) - 1)), stream)) !=
        cudaSuccess)
      return e;
    gather_kernel<T><<<blocks_for(z.Q), kThreads, 0, stream>>>(p, z.cap, boxes, slot, seg_rank, tops, sorted,
                                                               classes);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    Params mp;  // the shared passes' view: regions of cap positions
    mp.count = z.cap;
    mp.iou_threshold = p.iou_threshold;
    if ((e = passes::launch_mask<Acc>(mp, z.B, sorted, p.class_agnostic ? nullptr : classes, tops, mask,
                                      !p.class_agnostic, p.efficient, stream)) != cudaSuccess)
      return e;
    if ((e = cudaMemsetAsync(run_len, 0, sizeof(int32_t) * z.Q, stream)) != cudaSuccess) return e;
    bytes = L.scratch_bytes;
    if ((e = cub::DeviceRunLengthEncode::Encode(scratch, bytes, seg_key_sorted, run_keys, run_len, num_runs, q,
                                                stream)) != cudaSuccess)
      return e;
    bytes = L.scratch_bytes;
    if ((e = cub::DeviceScan::ExclusiveSum(scratch, bytes, run_len, run_start, q, stream)) != cudaSuccess) return e;
    if ((e = cudaMemsetAsync(flags, 0, z.Q, stream)) != cudaSuccess) return e;
    if ((e = passes::launch_segment_reduce(mp, z.Q, mask, run_start, run_len, num_runs, seg_rank, tops, p.max_output,
                                           flags, stream)) != cudaSuccess)
      return e;
  } else {
    if ((e = cudaMemsetAsync(tops, 0, sizeof(int32_t) * z.B, stream)) != cudaSuccess) return e;
  }
  emit_kernel<T><<<images, kEmitThreads, 0, stream>>>(p, z.cap, boxes, scores, slot, tops, flags, num_detections,
                                                      out_boxes, out_scores, out_classes, out_indices);
  return cudaGetLastError();
}

#define TWIN_INSTANTIATE(T)                                                                                   \
  template cudaError_t nms_padded_cuda<T>(const PaddedParams&, const T*, const T*, int32_t*, T*, T*, int32_t*, \
                                          int64_t*, void*, size_t, cudaStream_t);
TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(double)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)
#undef TWIN_INSTANTIATE

}  // namespace nms
}  // namespace twinops
