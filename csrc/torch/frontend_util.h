// Message helpers shared by the ops' torch frontends (argument checks of every op).
#pragma once

#include <ATen/ATen.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>

namespace twinops {
namespace torch_frontend {

// Throws c10::Error with `msg`. Messages are built as one std::string: some torch builds (seen
// with 2.11) crash while formatting integer arguments passed to TORCH_CHECK from an extension.
[[noreturn]] inline void fail(const std::string& msg) { TORCH_CHECK(false, msg); }

// A double as Python's repr writes it: the shortest decimal that reads back to the same value
// ("0.1", "1.5", "nan", "inf"). Formatted here, not with c10::str, for the reason above.
inline std::string double_str(double v) {
  if (v != v) return "nan";
  if (v == HUGE_VAL || v == -HUGE_VAL) return v > 0 ? "inf" : "-inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s(buf);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// A tensor layout as c10 names it ("Sparse", "SparseCsr"), formatted by this file's code.
inline std::string layout_str(at::Layout layout) {
  std::ostringstream os;
  os << layout;
  return os.str();
}

// What an op's checks read of a tensor: no data, so its fake kernels can pass the same (through
// the op's check op) under FakeTensorMode.
struct Desc {
  at::IntArrayRef shape;
  at::ScalarType dtype;
  c10::Device device;
};

// A tensor's Desc (its shape stays a view of t's sizes).
inline Desc desc_of(const at::Tensor& t) { return Desc{t.sizes(), t.scalar_type(), t.device()}; }

// float32, float64, float16 or bfloat16.
inline bool floating(at::ScalarType s) {
  return s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16;
}

// Whether autograd records anything for a call on these tensors (grad mode on and one of them
// requiring grad): an op's autograd kernel skips its graph node otherwise.
inline bool any_requires_grad(std::initializer_list<const at::Tensor*> ts) {
  if (!at::GradMode::is_enabled()) return false;
  for (const at::Tensor* t : ts)
    if (t->requires_grad()) return true;
  return false;
}

// Calls fn(S{}) with S the c10 storage type of `dtype`: float, c10::Half or c10::BFloat16, plus
// double when `with_double` (CPU kernels; the CUDA kernels run the first three). Any other dtype
// fails naming `who` (the ops' checks refuse such dtypes before their kernels are reached).
template <typename Fn>
void dispatch_floating(at::ScalarType dtype, bool with_double, const Fn& fn, const std::string& who = "twinops") {
  switch (dtype) {
    case at::kFloat: return fn(float{});
    case at::kHalf: return fn(c10::Half{});
    case at::kBFloat16: return fn(c10::BFloat16{});
    case at::kDouble:
      if (with_double) return fn(double{});
      [[fallthrough]];
    default: fail(who + ": no kernel for " + std::string(c10::toString(dtype)));
  }
}

// A shape as "(2, 3, 4)".
inline std::string shape_str(at::IntArrayRef s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace torch_frontend
}  // namespace twinops
