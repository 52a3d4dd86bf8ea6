// The torch face of an op's attribute list (csrc/common/twinops_attrs.h): schema text, kernel
// parameters, and the conversion of the kernel's arguments into the op's attribute struct.
// An op X with list TWIN_X_ATTRS and struct XAttrs writes
//
//   at::Tensor x_cpu(const at::Tensor& input TWIN_TORCH_PARAMS(TWIN_X_ATTRS)) {
//     const TorchAttrs<XAttrs> a = torch_attrs<XAttrs>(TWIN_TORCH_ARGS(TWIN_X_ATTRS));
//   m.def(("x(Tensor input, " + schema_args<XAttrs>() + ") -> Tensor").c_str());
#pragma once

#include <ATen/core/ivalue.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/string_view.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../common/twinops_attrs.h"

namespace twinops {
namespace torch_frontend {

// Per kind: the schema type, the kernel parameter's C++ type (`type`) and an owning type the
// autograd node can keep (`owned`).
template <class K>
struct TorchArg;
template <>
struct TorchArg<attr::Str> {
  using type = c10::string_view;
  using owned = std::string;
  static std::string schema(bool) { return "str"; }
};
template <>
struct TorchArg<attr::Int> {
  using type = int64_t;
  using owned = int64_t;
  static std::string schema(bool) { return "int"; }
};
template <>
struct TorchArg<attr::Float> {
  using type = double;
  using owned = double;
  static std::string schema(bool) { return "float"; }
};
template <int N>
struct TorchArg<attr::Floats<N>> {
  using type = c10::ArrayRef<double>;
  using owned = std::vector<double>;
  // torch does not check a float[N] argument's length: the kernels do (torch_attrs).
  static std::string schema(bool sized) { return sized ? "float[" + std::to_string(N) + "]" : "float[]"; }
};

template <int N>
struct TorchArg<attr::Ints<N>> {
  using type = c10::ArrayRef<int64_t>;
  using owned = std::vector<int64_t>;
  // torch does not check an int[N] argument's length either: the kernels do (torch_attrs).
  static std::string schema(bool sized) { return sized ? "int[" + std::to_string(N) + "]" : "int[]"; }
};

// ", <type> <name>" per attribute: the kernel parameters after the op's own (tensors, sizes).
#define TWIN_TORCH_PARAM_(K, name, what, ...) , ::twinops::torch_frontend::TorchArg<K>::type name
#define TWIN_TORCH_PARAMS(LIST) LIST(TWIN_TORCH_PARAM_)
// ", <type>" per attribute: the same parameters in a function type.
#define TWIN_TORCH_TYPE_(K, name, what, ...) , ::twinops::torch_frontend::TorchArg<K>::type
#define TWIN_TORCH_TYPES(LIST) LIST(TWIN_TORCH_TYPE_)
// The parameters' names, comma-separated: the arguments of torch_attrs / own_args.
#define TWIN_TORCH_ARG_(K, name, what, ...) , name
#define TWIN_TORCH_ARGS(LIST) TWIN_ATTR_COMMAS(LIST, TWIN_TORCH_ARG_)
// std::tuple of owning values of an attribute list (kept by autograd nodes).
#define TWIN_TORCH_OWNED_(K, name, what, ...) , ::twinops::torch_frontend::TorchArg<K>::owned
#define TWIN_TORCH_OWNED_TUPLE(LIST) std::tuple<TWIN_ATTR_COMMAS(LIST, TWIN_TORCH_OWNED_)>
// The kernel parameters as that tuple's values (own() below), comma-separated.
#define TWIN_TORCH_OWN_(K, name, what, ...) , ::twinops::torch_frontend::own(name)
#define TWIN_TORCH_OWN(LIST) TWIN_ATTR_COMMAS(LIST, TWIN_TORCH_OWN_)

// "str mode, ..., int pytorch": the attribute arguments of a schema, in list order. `sized`
// writes lists as float[N] (the op's schema) rather than float[] (a check op that reports a
// wrong length itself).
template <class Attrs>
std::string schema_args(bool sized = true) {
  std::string s;
  Attrs{}.for_each([&](auto kind, const char* name, const char*, const auto&, auto) {
    s += (s.empty() ? "" : ", ") + TorchArg<decltype(kind)>::schema(sized) + " " + name;
  });
  return s;
}

// The attribute struct of a kernel's arguments. `error` holds the first list argument of the
// wrong length ("scales must have 2 entries (H, W), got 3"); the op raises it where its
// argument checks put it.
template <class Attrs>
struct TorchAttrs {
  Attrs attrs;
  std::string error;
};

namespace detail {
inline void assign(const char*, const char*, c10::string_view v, std::string* out, std::string*) {
  *out = std::string(v);
}
inline void assign(const char*, const char*, int64_t v, int64_t* out, std::string*) { *out = v; }
inline void assign(const char*, const char*, double v, double* out, std::string*) { *out = v; }
// A list attribute (float[N] or int[N]) of exactly N entries.
template <typename E, size_t N>
void assign(const char* name, const char* what, c10::ArrayRef<E> v, std::array<E, N>* out, std::string* error) {
  if (v.size() != N) {
    if (error->empty())
      *error = std::string(name) + " must have " + std::to_string(N) + " entries " + what + ", got " +
               std::to_string(v.size());
    return;
  }
  for (size_t k = 0; k < N; ++k) (*out)[k] = v[k];
}
}  // namespace detail

template <class Attrs, class... Args>
TorchAttrs<Attrs> torch_attrs(const Args&... args) {
  static_assert(sizeof...(Args) == Attrs::attr_count, "one argument per attribute");
  TorchAttrs<Attrs> r;
  const auto values = std::forward_as_tuple(args...);
  r.attrs.for_each([&](auto, const char* name, const char* what, auto& member, auto index) {
    detail::assign(name, what, std::get<decltype(index)::value>(values), &member, &r.error);
  });
  return r;
}

// Owning copies of the kernel's arguments (and of an attribute struct's members), and back to
// the argument types (autograd).
inline std::string own(c10::string_view v) { return std::string(v); }
inline std::string own(const std::string& v) { return v; }
inline std::vector<double> own(c10::ArrayRef<double> v) { return v.vec(); }
template <size_t N>
std::vector<double> own(const std::array<double, N>& v) {
  return std::vector<double>(v.begin(), v.end());
}
inline std::vector<int64_t> own(c10::ArrayRef<int64_t> v) { return v.vec(); }
template <size_t N>
std::vector<int64_t> own(const std::array<int64_t, N>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}
inline int64_t own(int64_t v) { return v; }
inline double own(double v) { return v; }
inline c10::string_view view(const std::string& v) { return v; }
inline c10::ArrayRef<double> view(const std::vector<double>& v) { return v; }
inline c10::ArrayRef<int64_t> view(const std::vector<int64_t>& v) { return v; }
inline int64_t view(int64_t v) { return v; }
inline double view(double v) { return v; }

// The owned tuple of an attribute struct (an op that calls another with attributes it sets).
template <class Attrs, class Tuple>
Tuple owned_tuple(const Attrs& a) {
  Tuple t;
  a.for_each([&](auto, const char*, const char*, const auto& member, auto index) {
    std::get<decltype(index)::value>(t) = own(member);
  });
  return t;
}

// Keeps an owned tuple in / restores it from an autograd context's saved_data, one entry per
// attribute under its name.
template <class Attrs, class Tuple, class SavedData>
void save_owned(const Tuple& t, SavedData* saved) {
  Attrs{}.for_each([&](auto, const char* name, const char*, const auto&, auto index) {
    (*saved)[name] = std::get<decltype(index)::value>(t);
  });
}
template <class Attrs, class Tuple, class SavedData>
Tuple restore_owned(SavedData* saved) {
  Tuple t;
  Attrs{}.for_each([&](auto, const char* name, const char*, const auto&, auto index) {
    auto& v = std::get<decltype(index)::value>(t);
    v = (*saved)[name].template to<std::decay_t<decltype(v)>>();
  });
  return t;
}

}  // namespace torch_frontend
}  // namespace twinops
