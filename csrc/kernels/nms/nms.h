// Non-maximum suppression (torchvision's nms and batched_nms, with a fixed tie rule): the math
// shared by the CPU loop (nms_cpu.cpp) and the CUDA kernels (nms.cu), and their entry points.
// Includes neither torch nor TensorRT headers.
//
// Rules (docs/ops/nms.md):
// - boxes are (x1, y1, x2, y2); a box's area is (x2 - x1) * (y2 - y1), the intersection's
//   sides are clamped at 0, IoU = inter / (area_a + area_b - inter), computed in Acc (float
//   for float32, float16 and bfloat16 boxes, double for float64) with each operation rounded
//   once (no FMA), so the CPU and every CUDA kernel decide alike;
// - box b is suppressed by an earlier kept box a when IoU(a, b) > iou_threshold, compared in
//   double as torchvision's CPU kernel does (a float IoU against the double threshold);
// - the order is decreasing score; equal scores keep the lower index first (ONNX
//   NonMaxSuppression's rule); a NaN score ranks above every number (torch.sort's descending
//   order); -0 and +0 are equal;
// - a box with a NaN coordinate has a NaN area, so its IoU with any box is NaN: it neither
//   suppresses nor is suppressed; infinite coordinates follow the same arithmetic;
// - batched: boxes of different classes never suppress each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../../common/twinops_common.h"

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime.h>
#endif

namespace twinops {
namespace nms {

// std::max / std::min's selection (the second argument only when it compares greater / less),
// as torchvision's CPU kernel takes them: with a NaN neither is chosen by comparison.
template <typename Acc>
TWIN_HD Acc max_of(Acc a, Acc b) {
  return a < b ? b : a;
}
template <typename Acc>
TWIN_HD Acc min_of(Acc a, Acc b) {
  return b < a ? b : a;
}

// Whether box b is suppressed by box a (earlier in the order, kept): IoU(a, b) > threshold.
template <typename Acc>
TWIN_HD bool suppresses(const Acc* a, const Acc* b, double threshold) {
  const Acc area_a = mul_rn(a[2] - a[0], a[3] - a[1]);
  const Acc area_b = mul_rn(b[2] - b[0], b[3] - b[1]);
  const Acc w = max_of(Acc(0), min_of(a[2], b[2]) - max_of(a[0], b[0]));
  const Acc h = max_of(Acc(0), min_of(a[3], b[3]) - max_of(a[1], b[1]));
  const Acc inter = mul_rn(w, h);
  const Acc iou = inter / ((area_a + area_b) - inter);
  return static_cast<double>(iou) > threshold;
}

// Sort keys: an unsigned integer per score whose descending order is the score order above
// (NaN highest, -0 as +0); equal keys keep the index order (a stable sort).
TWIN_HD uint32_t score_key(float s) {
  if (s != s) return 0xFFFFFFFFu;
  if (s == 0.0f) s = 0.0f;
  uint32_t b;
#if defined(__CUDA_ARCH__)
  b = __float_as_uint(s);
#else
  std::memcpy(&b, &s, sizeof(b));
#endif
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
TWIN_HD uint64_t score_key(double s) {
  if (s != s) return ~uint64_t(0);
  if (s == 0.0) s = 0.0;
  uint64_t b;
#if defined(__CUDA_ARCH__)
  b = static_cast<uint64_t>(__double_as_longlong(s));
#else
  std::memcpy(&b, &s, sizeof(b));
#endif
  return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
}

// Boxes per word of the CUDA suppression mask.
constexpr int kBoxesPerWord = 64;
// The most boxes the CUDA kernels take: the mask's blocks of 64 x 64 positions are a grid of
// ceil(K / 64) x ceil(K / 64) blocks (gridDim.y <= 65535). The mask itself, K^2 / 8 bytes
// (2 GB at 131,072 boxes), is the practical limit.
constexpr int64_t kMaxCudaBoxes = int64_t(65535) * kBoxesPerWord;

// One call: `count` boxes (K, 4) with element strides box_stride[0..1], scores (K) with stride
// score_stride, and for batched_nms class ids (K) with stride class_stride (null classes:
// plain nms).
struct Params {
  int64_t count = 0;
  int64_t box_stride[2] = {4, 1};
  int64_t score_stride = 1;
  int64_t class_stride = 1;
  double iou_threshold = 0.5;
};

// CPU (nms_cpu.cpp; T = float or double, Acc = T): the kept boxes' indices, in the order above,
// into keep (room for p.count); returns how many. classes (int64) may be null.
template <typename T>
int64_t nms_cpu(const Params& p, const T* boxes, const T* scores, const int64_t* classes, int64_t* keep);

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
// Device workspace (bytes) nms_cuda needs for p with scores of `score_bytes` bytes (2, 4 or 8):
// sort keys and indices (about 16 bytes per box), CUB's sort scratch, the sorted boxes and
// classes, and the suppression mask (K x ceil(K / 64) words: 8 bytes x K^2 / 64).
size_t workspace_bytes(const Params& p, int score_bytes);

// CUDA (T = float, double, __half, __nv_bfloat16): the kept boxes' indices, in the order above,
// into keep (device, room for p.count) and their number into *kept (device), without a host
// round trip; classes (int64, device) may be null. Returns the first failing CUDA status.
template <typename T>
cudaError_t nms_cuda(const Params& p, const T* boxes, const T* scores, const int64_t* classes, int64_t* keep,
                     int64_t* kept, void* workspace, size_t workspace_size, cudaStream_t stream);
#endif

}  // namespace nms
}  // namespace twinops
