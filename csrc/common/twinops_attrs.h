// An op's attribute list, written once as an X-macro and read by every face of the op: the
// kernel's attribute struct (TWIN_ATTR_STRUCT below), the torch schema and kernel parameters
// (csrc/torch/op_attrs.h) and the TensorRT plugin fields and their serialization
// (csrc/trt/op_fields.h). ONNX attribute names == PluginField names == torch argument names.
//
// An op declares its list in its own header as
//
//   #define TWIN_X_ATTRS(A) A(::twinops::attr::Str, mode, "", "linear") A(...) ...
//
// (one line per attribute, continued with backslashes), one A(kind, name, what, default...) per attribute, in schema order; `what` names the
// entries of a list attribute in messages ("scales must have 2 entries (H, W)"). Then
// `struct XAttrs { TWIN_ATTR_STRUCT(TWIN_X_ATTRS) };` gives a struct with one member per
// attribute (initialised to its default), attr_count, and for_each(f), which calls
// f(kind, "name", "what", member, index) in list order (index: std::integral_constant<int, i>).
//
// No torch and no TensorRT headers here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

namespace twinops {
namespace attr {

// The attribute kinds, as ONNX types node attributes. A list has a fixed length: the
// plugin fields and the torch schema both check it.
struct Str {  // STRING
  using value = std::string;
};
struct Int {  // INT (TensorRT's parser narrows it to int32)
  using value = int64_t;
};
struct Float {  // FLOAT; double here so a value given as double is kept exactly
  using value = double;
};
template <int N>
struct Floats {  // FLOATS of length N
  using value = std::array<double, N>;
  static constexpr int count = N;
};

}  // namespace attr
}  // namespace twinops

#define TWIN_ATTR_MEMBER_(K, name, what, ...) K::value name{__VA_ARGS__};
#define TWIN_ATTR_INDEX_(K, name, what, ...) name##_index_,
#define TWIN_ATTR_VISIT_(K, name, what, ...) f(K{}, #name, what, name, std::integral_constant<int, name##_index_>{});
#define TWIN_ATTR_STRUCT(LIST)                      \
  LIST(TWIN_ATTR_MEMBER_)                           \
  enum : int { LIST(TWIN_ATTR_INDEX_) attr_count }; \
  template <class F>                                \
  void for_each(F&& f) {                            \
    LIST(TWIN_ATTR_VISIT_)                          \
  }                                                 \
  template <class F>                                \
  void for_each(F&& f) const {                      \
    LIST(TWIN_ATTR_VISIT_)                          \
  }

// A comma-separated list from an attribute list and a column macro that emits ", item" per
// attribute (the first comma is dropped): TWIN_ATTR_COMMAS(LIST, COLUMN).
#define TWIN_ATTR_DROP_FIRST_(first, ...) __VA_ARGS__
#define TWIN_ATTR_EXPAND_DROP_(...) TWIN_ATTR_DROP_FIRST_(__VA_ARGS__)
#define TWIN_ATTR_COMMAS(LIST, COLUMN) TWIN_ATTR_EXPAND_DROP_(~ LIST(COLUMN))
