// CPU NMS: torchvision's greedy loop over the boxes in score order, each kept box suppressing
// the later ones it overlaps (nms.h has the rules). O(K^2) comparisons at worst.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "nms.h"

namespace twinops {
namespace nms {

template <typename T>
int64_t nms_cpu(const Params& p, const T* boxes, const T* scores, const int64_t* classes, int64_t* keep) {
  const int64_t K = p.count;
  using Key = decltype(score_key(T(0)));
  std::vector<Key> key(static_cast<size_t>(K));
  for (int64_t i = 0; i < K; ++i) key[i] = score_key(scores[i * p.score_stride]);
  std::vector<int64_t> order(static_cast<size_t>(K));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] > key[b]; });
  // The boxes in order, contiguous (4 values each).
  std::vector<T> box(static_cast<size_t>(4 * K));
  for (int64_t r = 0; r < K; ++r)
    for (int k = 0; k < 4; ++k) box[4 * r + k] = boxes[order[r] * p.box_stride[0] + k * p.box_stride[1]];
  std::vector<char> suppressed(static_cast<size_t>(K), 0);
  int64_t kept = 0;
  for (int64_t r = 0; r < K; ++r) {
    if (suppressed[r]) continue;
    keep[kept++] = order[r];
    const int64_t ci = classes ? classes[order[r] * p.class_stride] : 0;
    for (int64_t s = r + 1; s < K; ++s) {
      if (suppressed[s]) continue;
      if (classes && classes[order[s] * p.class_stride] != ci) continue;
      if (suppresses(&box[4 * r], &box[4 * s], p.iou_threshold)) suppressed[s] = 1;
    }
  }
  return kept;
}

template int64_t nms_cpu<float>(const Params&, const float*, const float*, const int64_t*, int64_t*);
template int64_t nms_cpu<double>(const Params&, const double*, const double*, const int64_t*, int64_t*);

}  // namespace nms
}  // namespace twinops
