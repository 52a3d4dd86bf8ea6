// Device-side pieces of both nms kernel files (nms.cu, nms_padded.cu): the accumulation and key
// types of an element type, its load into Acc, and launch arithmetic. No kernels here, so the
// device link sees each kernel once.
#pragma once

#include <cstdint>

#include "../dtype_convert.cuh"
#include "nms.h"

namespace twinops {
namespace nms {
namespace device {

// Threads of the elementwise launches.
constexpr int kThreads = 256;

// The type IoU is computed in (float for float32 / float16 / bfloat16, double for float64) and
// the score key's type (score_key of an Acc).
template <typename T>
using AccOf = typename OpMath<T>::type;
template <typename T>
using KeyOf = decltype(score_key(AccOf<T>(0)));

template <typename T>
__device__ __forceinline__ AccOf<T> to_acc(T v) {
  return DtypeConvert<T>::template load<AccOf<T>>(v);
}

// Blocks of kThreads for `threads` threads.
inline unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

// Words of 64 positions a mask row of `count` positions holds.
TWIN_HD int64_t words_per_row(int64_t count) { return (count + kBoxesPerWord - 1) / kBoxesPerWord; }

}  // namespace device
}  // namespace nms
}  // namespace twinops
