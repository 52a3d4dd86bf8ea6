// PluginFields of an op's attribute list (csrc/common/twinops_attrs.h): the declaration a
// creator returns from getFieldNames, reading a PluginFieldCollection into the attribute
// struct, and the named fields a plugin serializes. Types follow TensorRT's ONNX parser:
// STRING -> kCHAR, INT -> kINT32, FLOAT -> kFLOAT32, FLOATS -> kFLOAT32 x N, INTS -> kINT32 x N. Serialized floats
// are kFLOAT64, so the runtime phase gets back exactly the numbers the build used.
#pragma once

#include <array>
#include <string>

#include "../common/twinops_attrs.h"
#include "plugin_base.h"

namespace twinops {
namespace trt {

namespace field_detail {

inline FieldDecl decl(attr::Str, const char* name) { return {name, nvinfer1::PluginFieldType::kCHAR, 0}; }
inline FieldDecl decl(attr::Int, const char* name) { return {name, nvinfer1::PluginFieldType::kINT32, 1}; }
inline FieldDecl decl(attr::Float, const char* name) { return {name, nvinfer1::PluginFieldType::kFLOAT32, 1}; }
template <int N>
FieldDecl decl(attr::Floats<N>, const char* name) {
  return {name, nvinfer1::PluginFieldType::kFLOAT32, N};
}

template <int N>
FieldDecl decl(attr::Ints<N>, const char* name) {
  return {name, nvinfer1::PluginFieldType::kINT32, N};
}

inline std::string read(const FieldReader& r, const char* name, std::string* v) { return r.get_string(name, v); }
inline std::string read(const FieldReader& r, const char* name, int64_t* v) { return r.get_int(name, v); }
inline std::string read(const FieldReader& r, const char* name, double* v) { return r.get_float(name, v); }
template <size_t N>
std::string read(const FieldReader& r, const char* name, std::array<double, N>* v) {
  return r.get_floats(name, static_cast<int32_t>(N), v->data());
}

template <size_t N>
std::string read(const FieldReader& r, const char* name, std::array<int64_t, N>* v) {
  return r.get_ints(name, static_cast<int32_t>(N), v->data());
}

inline void write(FieldStore* s, const char* name, const std::string& v) { s->add_string(name, v); }
// The parser narrows INT to int32; the value was read from such a field (or range-checked).
inline void write(FieldStore* s, const char* name, int64_t v) { s->add_int(name, static_cast<int32_t>(v)); }
inline void write(FieldStore* s, const char* name, double v) { s->add_floats(name, &v, 1); }
template <size_t N>
void write(FieldStore* s, const char* name, const std::array<double, N>& v) {
  s->add_floats(name, v.data(), static_cast<int32_t>(N));
}

template <size_t N>
void write(FieldStore* s, const char* name, const std::array<int64_t, N>& v) {
  int32_t narrow[N];
  for (size_t k = 0; k < N; ++k) narrow[k] = static_cast<int32_t>(v[k]);  // read from such a field
  s->add_ints(name, narrow, static_cast<int32_t>(N));
}

}  // namespace field_detail

// getFieldNames of a creator whose fields are the members of Attrs.
template <class Attrs>
void declare_attr_fields(FieldStore* store) {
  store->clear();
  Attrs{}.for_each([&](auto kind, const char* name, const char*, const auto&, auto) {
    store->add_decl(field_detail::decl(kind, name));
  });
}

// Reads every field of Attrs into *out; returns "" or the first bad field's message (it names
// the field). A missing field is an error, unless `absent_keeps_default`: then the member keeps
// the value *out holds (the attribute's default), as an ONNX node's absent attribute means.
template <class Attrs>
std::string read_attr_fields(const FieldReader& reader, Attrs* out, bool absent_keeps_default = false) {
  if (!reader.error().empty()) return reader.error();
  std::string err;
  out->for_each([&](auto, const char* name, const char*, auto& member, auto) {
    if (err.empty() && (!absent_keeps_default || reader.has(name))) err = field_detail::read(reader, name, &member);
  });
  return err;
}

// The named fields of `attrs`, in list order (getFieldsToSerialize; the V2 byte format packs them).
template <class Attrs>
void write_attr_fields(const Attrs& attrs, FieldStore* store) {
  store->clear();
  attrs.for_each([&](auto, const char* name, const char*, const auto& member, auto) {
    field_detail::write(store, name, member);
  });
}

}  // namespace trt
}  // namespace twinops
