// Host helpers for shapes given as (rank, int64 sizes), shared by the ops' host-side checks
// (csrc/kernels/<op>/<op>_host.cpp): the dense strides of a shape and its text in messages.
// No torch and no TensorRT headers; host code only.
#pragma once

#include <cstdint>
#include <string>

namespace twinops {

// Contiguous element strides of a dense tensor of `rank` dims (a size-0 or size-1 dim counts as 1).
inline void dense_strides(int rank, const int64_t* shape, int64_t* strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
}

// A shape as "(2, 3, 4)".
inline std::string shape_str(int rank, const int64_t* s) {
  std::string r = "(";
  for (int i = 0; i < rank; ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace twinops
