// An op's attribute list, written once as an X-macro and read by every face of the op: the
// kernel's attribute struct (TWIN_ATTR_STRUCT below), the torch schema and kernel parameters
// (csrc/torch/op_attrs.h) and the TensorRT plugin fields and their serialization
// (csrc/trt/op_fields.h). ONNX attribute names == PluginField names == torch argument names.
//
// An op declares its list in its own header as
//
//   #define TWIN_X_ATTRS(A) A(::twinops::attr::Str, mode, "", ::twinops::x::choices::mode, "linear") ...
//
// (one line per attribute, continued with backslashes), one A(kind, name, what, choices,
// default...) per attribute, in schema order. `what` names the entries of a list attribute in
// messages ("scales must have 2 entries (H, W)"); `choices` is the attribute's table in the op's
// generated <op>_choices.h (tools/gen_choices.py writes it from the declaration's Attr.choices)
// or ::twinops::attr::kAny. Then `struct XAttrs { TWIN_ATTR_STRUCT(TWIN_X_ATTRS) };` gives a
// struct with one member per attribute (initialised to its default), attr_count, for_each(f),
// which calls f(kind, "name", "what", member, index) in list order (index:
// std::integral_constant<int, i>), and check_choices(), the message of the first attribute
// whose value is not one of its choices ("" when all are).
//
// No torch and no TensorRT headers here.
#pragma once

#include <array>
#include <cstddef>
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
template <int N>
struct Ints {  // INTS of length N (TensorRT's parser narrows each to int32)
  using value = std::array<int64_t, N>;
  static constexpr int count = N;
};

// A choice of a string attribute: its name and the kernel's enum value for it.
struct Choice {
  const char* name;
  int32_t value;
};
// The `choices` of an attribute that takes any value of its kind.
struct Any {};
constexpr Any kAny{};

constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
// The enum value of `name` in `table`, or -1 when it is not a choice (constexpr, so an op's
// header can assert that its table and its kernel's enum agree).
template <size_t N>
constexpr int32_t choice_value(const Choice (&table)[N], const char* name) {
  for (size_t i = 0; i < N; ++i)
    if (same_name(table[i].name, name)) return table[i].value;
  return -1;
}
template <size_t N>
int32_t choice_value(const Choice (&table)[N], const std::string& name) {
  return choice_value(table, name.c_str());
}

// The first name of `value` in `table` (its canonical spelling), or "" when none has it.
template <size_t N>
const char* choice_name(const Choice (&table)[N], int32_t value) {
  for (size_t i = 0; i < N; ++i)
    if (table[i].value == value) return table[i].name;
  return "";
}

namespace detail {
// "a or b" for two choices, "one of a, b, c" otherwise (the Python checks' wording, opdef.py).
template <class T, size_t N, class Name>
std::string listed(const T (&table)[N], Name name_of) {
  std::string s = N == 2 ? "" : "one of ";
  for (size_t i = 0; i < N; ++i) s += (i == 0 ? "" : N == 2 ? " or " : ", ") + name_of(table[i]);
  return s;
}
}  // namespace detail

// "" when `value` is one of `table`, else "<name> must be one of a, b, c, got 'x'".
template <size_t N>
std::string check_choice(const char* name, const std::string& value, const Choice (&table)[N]) {
  if (choice_value(table, value) >= 0) return "";
  return std::string(name) + " must be " +
         detail::listed(table, [](const Choice& c) { return std::string(c.name); }) + ", got '" + value + "'";
}
template <size_t N>
std::string check_choice(const char* name, int64_t value, const int64_t (&table)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (table[i] == value) return "";
  return std::string(name) + " must be " + detail::listed(table, [](int64_t c) { return std::to_string(c); }) +
         ", got " + std::to_string(value);
}
template <class V>
std::string check_choice(const char*, const V&, Any) {
  return "";
}

}  // namespace attr
}  // namespace twinops

#define TWIN_ATTR_MEMBER_(K, name, what, choices, ...) K::value name{__VA_ARGS__};
#define TWIN_ATTR_INDEX_(K, name, what, ...) name##_index_,
#define TWIN_ATTR_VISIT_(K, name, what, ...) f(K{}, #name, what, name, std::integral_constant<int, name##_index_>{});
#define TWIN_ATTR_CHOICE_(K, name, what, choices, ...) \
  if (e.empty()) e = ::twinops::attr::check_choice(#name, name, choices);
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
  }                                                 \
  std::string check_choices() const {               \
    std::string e;                                  \
    LIST(TWIN_ATTR_CHOICE_)                         \
    return e;                                       \
  }

// A comma-separated list from an attribute list and a column macro that emits ", item" per
// attribute (the first comma is dropped): TWIN_ATTR_COMMAS(LIST, COLUMN).
#define TWIN_ATTR_DROP_FIRST_(first, ...) __VA_ARGS__
#define TWIN_ATTR_EXPAND_DROP_(...) TWIN_ATTR_DROP_FIRST_(__VA_ARGS__)
#define TWIN_ATTR_COMMAS(LIST, COLUMN) TWIN_ATTR_EXPAND_DROP_(~ LIST(COLUMN))
