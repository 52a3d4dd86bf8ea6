// Message helpers shared by the ops' torch frontends (argument checks of every op).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <string>

namespace twinops {
namespace torch_frontend {

// Throws c10::Error with `msg`. Messages are built as one std::string: some torch builds (seen
// with 2.11) crash while formatting integer arguments passed to TORCH_CHECK from an extension.
[[noreturn]] inline void fail(const std::string& msg) { TORCH_CHECK(false, msg); }

// A shape as "(2, 3, 4)".
inline std::string shape_str(at::IntArrayRef s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace torch_frontend
}  // namespace twinops
