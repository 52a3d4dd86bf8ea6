// MMDeploy's TRTBatchedNMS on the device (nms.h has the rules and the entry point):
// 1. batched_nms_padded's pass with each (image, class) pair as an image (trt_batched_pass): per
//    class, the candidates in score order, the first topk, NMS, at most keep_topk survivors in
//    score order (ties: lower prior first), into the workspace;
// 2. merge_kernel, one thread per survivor: its place among its image's survivors is its rank in
//    its class plus, for every other class, how many of that class's survivors come first (a
//    higher score, or an equal one in a lower class): a binary search in each class's list,
//    which is already in score order; survivors placed before keep_topk are written.
// The outputs are filled with the padding first (dets 0, labels and index -1).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../workspace.h"
#include "nms.h"
#include "nms_device.cuh"

namespace twinops {
namespace nms {
namespace trt_batched_kernels {

using namespace ::twinops::nms::device;  // element types, loads, launch arithmetic

// Byte offsets of the per-class pass's outputs and workspace.
struct Layout {
  size_t num, boxes, scores, classes, indices, pass, pass_bytes, bytes;
};

template <typename T>
Layout layout(const TrtBatchedParams& t, int score_bytes) {
  const PaddedParams p = trt_batched_pass(t);
  const auto lists = static_cast<size_t>(p.batch), K = static_cast<size_t>(t.keep_topk);
  WorkspaceOffsets w;
  Layout L{};
  L.num = w.take(sizeof(int32_t) * lists);
  L.boxes = w.take(sizeof(T) * 4 * lists * K);
  L.scores = w.take(sizeof(T) * lists * K);
  L.classes = w.take(sizeof(int32_t) * lists * K);
  L.indices = w.take(sizeof(int64_t) * lists * K);
  L.pass_bytes = padded_workspace_bytes(p, score_bytes);
  L.pass = w.take(L.pass_bytes);
  L.bytes = w.end;
  return L;
}

// How many of the first n entries of `list` (decreasing scores) come before score s: those
// above it, and with `ties` those equal to it too.
template <typename Acc, typename T>
__device__ int64_t before(const T* list, int64_t n, Acc s, bool ties) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    const Acc v = to_acc(list[mid]);
    if (v > s || (ties && v == s))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    merge_kernel(const TrtBatchedParams t, const int32_t* __restrict__ num, const T* __restrict__ boxes,
                 const T* __restrict__ scores, const int64_t* __restrict__ indices, T* __restrict__ dets,
                 int32_t* __restrict__ labels, int32_t* __restrict__ index) {
  using Acc = AccOf<T>;
  const int64_t K = t.keep_topk, C = t.classes;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;  // (b * C + c) * K + r
  if (i >= t.batch * C * K) return;
  const int64_t list = i / K, r = i % K, b = list / C, c = list % C;
  if (r >= num[list]) return;
  const Acc s = to_acc(scores[i]);
  int64_t at = r;
  for (int64_t o = 0; o < C && at < K; ++o)
    if (o != c) at += before(scores + (b * C + o) * K, num[b * C + o], s, o < c);
  if (at >= K) return;
  const T* box = boxes + 4 * i;
  T* d = dets + (b * K + at) * 5;
  const T zero = DtypeConvert<T>::template store<float>(0.0f), one = DtypeConvert<T>::template store<float>(1.0f);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const Acc v = to_acc(box[k]);
    // clamped to [0, 1]; a NaN coordinate stays NaN
    d[k] = !t.clip_boxes ? box[k] : v < Acc(0) ? zero : v > Acc(1) ? one : box[k];
  }
  d[4] = scores[i];
  labels[b * K + at] = static_cast<int32_t>(c);
  if (index != nullptr) {
    const int64_t n = indices[i];
    index[b * K + at] = static_cast<int32_t>(t.per_class_boxes ? c * t.priors + n : n);
  }
}

}  // namespace trt_batched_kernels

using namespace trt_batched_kernels;

size_t trt_batched_workspace_bytes(const TrtBatchedParams& t, int score_bytes) {
  if (t.batch <= 0) return 0;
  return score_bytes == 2 ? layout<__half>(t, score_bytes).bytes : layout<float>(t, score_bytes).bytes;
}

template <typename T>
cudaError_t nms_trt_batched_cuda(const TrtBatchedParams& t, const T* boxes, const T* scores, T* dets,
                                 int32_t* labels, int32_t* index, void* workspace, size_t workspace_size,
                                 cudaStream_t stream) {
  if (t.batch <= 0) return cudaSuccess;
  const PaddedParams p = trt_batched_pass(t);
  if (padded_unsupported(p) != nullptr || t.keep_topk < 1) return cudaErrorInvalidValue;
  const Layout L = layout<T>(t, static_cast<int>(sizeof(T)));
  if (workspace_size < L.bytes) return cudaErrorInvalidValue;
  char* ws = static_cast<char*>(workspace);
  auto* num = reinterpret_cast<int32_t*>(ws + L.num);
  auto* list_boxes = reinterpret_cast<T*>(ws + L.boxes);
  auto* list_scores = reinterpret_cast<T*>(ws + L.scores);
  auto* list_classes = reinterpret_cast<int32_t*>(ws + L.classes);
  auto* list_indices = reinterpret_cast<int64_t*>(ws + L.indices);
  const size_t slots = static_cast<size_t>(t.batch * t.keep_topk);
  cudaError_t e;
  if ((e = cudaMemsetAsync(dets, 0, sizeof(T) * 5 * slots, stream)) != cudaSuccess) return e;  // 0 in every type
  if ((e = cudaMemsetAsync(labels, 0xFF, sizeof(int32_t) * slots, stream)) != cudaSuccess) return e;  // -1
  if (index != nullptr && (e = cudaMemsetAsync(index, 0xFF, sizeof(int32_t) * slots, stream)) != cudaSuccess) return e;
  if (t.priors == 0 || t.classes == 0) return cudaSuccess;
  if ((e = nms_padded_cuda<T>(p, boxes, scores, num, list_boxes, list_scores, list_classes, list_indices,
                              ws + L.pass, L.pass_bytes, stream)) != cudaSuccess)
    return e;
  merge_kernel<T><<<blocks_for(t.batch * t.classes * t.keep_topk), kThreads, 0, stream>>>(
      t, num, list_boxes, list_scores, list_indices, dets, labels, index);
  return cudaGetLastError();
}

#define TWIN_INSTANTIATE(T)                                                                                \
  template cudaError_t nms_trt_batched_cuda<T>(const TrtBatchedParams&, const T*, const T*, T*, int32_t*, \
                                               int32_t*, void*, size_t, cudaStream_t);
TWIN_INSTANTIATE(float)
TWIN_INSTANTIATE(__half)
TWIN_INSTANTIATE(__nv_bfloat16)
#undef TWIN_INSTANTIATE

}  // namespace nms
}  // namespace twinops
