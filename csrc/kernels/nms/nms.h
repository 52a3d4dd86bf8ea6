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

// EfficientNMS_TRT's rule (its drop-in; csrc/trt/nms/README.md): box b is suppressed by box a
// when their IoU is at least the threshold (compared in Acc), each box's corners put in order
// first; no overlap, or a union of at most 0, is IoU 0 and compared like any other (a threshold
// of 0 suppresses every later box of the class); a NaN that reaches the IoU suppresses nothing.
template <typename Acc>
TWIN_HD Acc efficient_area(Acc x1, Acc y1, Acc x2, Acc y2) {
  const Acc w = x2 - x1, h = y2 - y1;
  return (w <= Acc(0) || h <= Acc(0)) ? Acc(0) : mul_rn(w, h);
}
template <typename Acc>
TWIN_HD bool efficient_suppresses(const Acc* a, const Acc* b, double threshold) {
  // (x1, y1) the smaller corner: swapped only when greater, as EfficientNMS_TRT does
  const Acc ax1 = min_of(a[0], a[2]), ay1 = min_of(a[1], a[3]), ax2 = max_of(a[2], a[0]), ay2 = max_of(a[3], a[1]);
  const Acc bx1 = min_of(b[0], b[2]), by1 = min_of(b[1], b[3]), bx2 = max_of(b[2], b[0]), by2 = max_of(b[3], b[1]);
  const Acc inter = efficient_area(max_of(bx1, ax1), max_of(by1, ay1), min_of(bx2, ax2), min_of(by2, ay2));
  const Acc thr = static_cast<Acc>(threshold);
  if (inter <= Acc(0)) return Acc(0) >= thr;
  const Acc uni = (efficient_area(ax1, ay1, ax2, ay2) + efficient_area(bx1, by1, bx2, by2)) - inter;
  if (uni <= Acc(0)) return Acc(0) >= thr;
  return inter / uni >= thr;
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
// The most positions one reduce block keeps the removed bits of in shared memory (44 KiB of
// words, within the 48 KiB a block may take without opting in): nms's reduce up to this many
// boxes, batched_nms's per-class reduce and batched_nms_padded's candidates per image.
constexpr int64_t kMaxSegmentPositions = int64_t(5632) * kBoxesPerWord;

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

// batched_nms_padded (docs/ops/nms.md): B images of N boxes ((B, N, 4), or (B, N, C, 4) with
// per_class_boxes) and scores (B, N, C), all dense; outputs (B, 1) int32 detections, (B, K, 4)
// boxes, (B, K) scores, int32 classes and int64 box indices, K = max_output.
struct PaddedParams {
  int64_t batch = 0, boxes = 0, classes = 0;
  bool per_class_boxes = false;
  bool class_agnostic = false;
  double score_threshold = 0.0, iou_threshold = 0.5;
  int64_t max_output = 1;
  int64_t pre_nms_top_k = -1;  // -1: every candidate
  // EfficientNMS_TRT's rules (its drop-in; csrc/trt/nms/README.md): a candidate's score is at
  // least score_threshold (compared in Acc; with score_activation the caller passes the
  // threshold's logit) and not of background_class (-1: none); efficient_suppresses; boxes
  // decoded (box_coding 0 corners, 1 center-size; with `anchors`, (anchor_batch = 1 or B, N, 4)
  // of the boxes' type, the boxes are offsets) and written as corners; the written scores
  // sigmoid-activated with score_activation; no indices written (out_indices may be null).
  bool efficient = false;
  int64_t background_class = -1;
  int box_coding = 0;
  bool score_activation = false;
  const void* anchors = nullptr;
  int64_t anchor_batch = 1;
  // TRTBatchedNMS's per-class pass (its drop-in): split_classes = C > 0 makes each (b, c) of
  // (B, N, C) scores one image of N boxes with a single class, numbered b * C + c: the pass then
  // runs with batch = B * C and classes = 1, reading scores at (b, n, c) and boxes at (b, n) or
  // (per_class_boxes) (b, n, c); split_skip_class (-1: none) has no candidate.
  int64_t split_classes = 0;
  int64_t split_skip_class = -1;
};

// The candidates per image that the device pass holds: min(N * C, pre_nms_top_k), rounded up
// to a multiple of 64.
inline int64_t padded_capacity(const PaddedParams& p) {
  int64_t c = p.boxes * p.classes;
  if (p.pre_nms_top_k > 0 && p.pre_nms_top_k < c) c = p.pre_nms_top_k;
  return (c + kBoxesPerWord - 1) / kBoxesPerWord * kBoxesPerWord;
}

// Why the device pass cannot run p (null when it can): its limits on the candidates per image,
// the images and the scores.
inline const char* padded_unsupported(const PaddedParams& p) {
  if (padded_capacity(p) > kMaxSegmentPositions)
    return "more than 360,448 candidates per image (min(N * C, pre_nms_top_k))";
  if (p.batch > 65535) return "more than 65,535 images";
  if (p.batch * p.boxes * p.classes >= (int64_t(1) << 31)) return "2^31 or more scores (B * N * C)";
  if (p.batch * (p.classes + 1) >= (int64_t(1) << 32)) return "B * (C + 1) of 2^32 or more";
  if (p.batch * padded_capacity(p) >= (int64_t(1) << 31))
    return "2^31 or more candidate slots (B * min(N * C, pre_nms_top_k))";
  return nullptr;
}

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

// MMDeploy's TRTBatchedNMS by the rules of its drop-in (csrc/trt/nms/README.md; the reference is
// twinops.library.nms.reference.trt_batched_nms_reference): boxes (B, P, 4) or (B, P, C, 4),
// scores (B, P, C); per image and class (background_class skipped), the priors scoring above
// score_threshold by decreasing score (ties: lower prior first), the first topk (<= 0: all),
// NMS by `suppresses`; the image's survivors by decreasing score (ties: lower class, then the
// class's order), the first keep_topk written: dets (B, keep_topk, 5) = box (clamped to [0, 1]
// with clip_boxes) and score, labels int32 (B, keep_topk), index int32 (B, keep_topk): the prior
// n, or c * P + n for per-class boxes; past the detections dets 0, labels and index -1.
struct TrtBatchedParams {
  int64_t batch = 0, priors = 0, classes = 0;
  bool per_class_boxes = false;
  int64_t background_class = -1;  // outside [0, classes): none
  int64_t topk = -1, keep_topk = 1;
  double score_threshold = 0.0, iou_threshold = 0.5;
  bool clip_boxes = true;
};

// The per-class pass TrtBatchedParams runs (batched_nms_padded's, split by class).
inline PaddedParams trt_batched_pass(const TrtBatchedParams& t) {
  PaddedParams p;
  p.batch = t.batch * t.classes;
  p.boxes = t.priors;
  p.classes = 1;
  p.per_class_boxes = t.per_class_boxes;
  p.class_agnostic = true;  // one class an image
  p.score_threshold = t.score_threshold;
  p.iou_threshold = t.iou_threshold;
  p.max_output = t.keep_topk;  // no class contributes more
  p.pre_nms_top_k = t.topk > 0 && t.topk < t.priors ? t.topk : -1;
  p.split_classes = t.classes;
  p.split_skip_class = t.background_class;
  return p;
}

// Device workspace (bytes) nms_padded_cuda needs for p with scores of `score_bytes` bytes:
// about 28 bytes per score (the sorts), 80 per candidate slot (B x padded_capacity), and the
// mask, B x capacity^2 / 8 bytes.
size_t padded_workspace_bytes(const PaddedParams& p, int score_bytes);

// batched_nms_padded on the device (T = float, double, __half, __nv_bfloat16), without a host
// round trip: every output written, padding included (boxes, scores and classes 0, indices -1
// past num_detections). p must pass padded_unsupported. Returns the first failing CUDA status.
template <typename T>
cudaError_t nms_padded_cuda(const PaddedParams& p, const T* boxes, const T* scores, int32_t* num_detections,
                            T* out_boxes, T* out_scores, int32_t* out_classes, int64_t* out_indices, void* workspace,
                            size_t workspace_size, cudaStream_t stream);

// Device workspace (bytes) nms_trt_batched_cuda needs: the per-class pass's and its outputs.
size_t trt_batched_workspace_bytes(const TrtBatchedParams& t, int score_bytes);

// TRTBatchedNMS on the device (T = float, __half, __nv_bfloat16), without a host round trip;
// index may be null. trt_batched_pass(t) must pass padded_unsupported.
template <typename T>
cudaError_t nms_trt_batched_cuda(const TrtBatchedParams& t, const T* boxes, const T* scores, T* dets,
                                 int32_t* labels, int32_t* index, void* workspace, size_t workspace_size,
                                 cudaStream_t stream);
#endif

}  // namespace nms
}  // namespace twinops
