// Logging, PluginField reading and the V2 byte format (see plugin_base.h).
#include "plugin_base.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

namespace twinops {
namespace trt {

using nvinfer1::PluginField;
using nvinfer1::PluginFieldCollection;
using nvinfer1::PluginFieldType;

// ---- logging -----------------------------------------------------------------------------

namespace {

std::atomic<nvinfer1::ILoggerFinder*> g_finder{nullptr};  // constant-initialized
std::mutex g_last_mutex;                                    // constexpr constructor

// Function-local: usable from load-time constructors whatever the static initialization order.
std::string& last_error_storage() {
  static std::string* s = new std::string();
  return *s;
}

nvinfer1::ILogger* current_logger() noexcept {
  try {
    if (nvinfer1::ILoggerFinder* f = g_finder.load()) {
      if (nvinfer1::ILogger* l = f->findLogger()) return l;
    }
  } catch (...) {
  }
  // libnvinfer's global logger, looked up at run time: no link-time dependency on libnvinfer.
  using GetLogger = nvinfer1::ILogger* (*)();
  static const GetLogger global = reinterpret_cast<GetLogger>(dlsym(RTLD_DEFAULT, "getLogger"));
  return global ? global() : nullptr;
}

void emit(nvinfer1::ILogger::Severity s, const std::string& msg) noexcept {
  try {
    const std::string line = "twinops: " + msg;
    if (nvinfer1::ILogger* l = current_logger()) l->log(s, line.c_str());
  } catch (...) {
  }
}

}  // namespace

void set_logger_finder(nvinfer1::ILoggerFinder* finder) noexcept { g_finder.store(finder); }

void log_error(const std::string& msg) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_last_mutex);
    last_error_storage() = msg;
  } catch (...) {
  }
  emit(nvinfer1::ILogger::Severity::kERROR, msg);
}

void log_warning(const std::string& msg) noexcept { emit(nvinfer1::ILogger::Severity::kWARNING, msg); }

std::string last_error() noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_last_mutex);
    return last_error_storage();
  } catch (...) {
    return {};
  }
}

// ---- field reading ---------------------------------------------------------------------

size_t field_type_size(PluginFieldType t) {
  switch (t) {
    case PluginFieldType::kFLOAT16: return 2;
    case PluginFieldType::kFLOAT32: return 4;
    case PluginFieldType::kFLOAT64: return 8;
    case PluginFieldType::kINT8: return 1;
    case PluginFieldType::kINT16: return 2;
    case PluginFieldType::kINT32: return 4;
    case PluginFieldType::kCHAR: return 1;
#if TWIN_TRT_HAS_BF16
    case PluginFieldType::kINT64: return 8;
#endif
    default: return 0;
  }
}

namespace {

const char* type_name(PluginFieldType t) {
  switch (t) {
    case PluginFieldType::kFLOAT16: return "kFLOAT16";
    case PluginFieldType::kFLOAT32: return "kFLOAT32";
    case PluginFieldType::kFLOAT64: return "kFLOAT64";
    case PluginFieldType::kINT8: return "kINT8";
    case PluginFieldType::kINT16: return "kINT16";
    case PluginFieldType::kINT32: return "kINT32";
    case PluginFieldType::kCHAR: return "kCHAR";
    case PluginFieldType::kDIMS: return "kDIMS";
    case PluginFieldType::kUNKNOWN: return "kUNKNOWN";
#if TWIN_TRT_HAS_BF16
    case PluginFieldType::kINT64: return "kINT64";
#endif
    default: return "an unsupported type";
  }
}

}  // namespace

FieldReader::FieldReader(const PluginFieldCollection* fc, std::string owner) : fc_(fc), owner_(std::move(owner)) {
  if (fc == nullptr) {
    error_ = owner_ + ": the PluginFieldCollection is null";
  } else if (fc->nbFields < 0 || (fc->nbFields > 0 && fc->fields == nullptr)) {
    error_ = owner_ + ": the PluginFieldCollection has nbFields=" + std::to_string(fc->nbFields) +
             " and fields=" + (fc->fields ? "non-null" : "null");
  }
}

const PluginField* FieldReader::find(const char* name, std::string* err) const {
  if (!error_.empty()) {
    *err = error_;
    return nullptr;
  }
  const PluginField* hit = nullptr;
  for (int32_t i = 0; i < fc_->nbFields; ++i) {
    const PluginField& f = fc_->fields[i];
    if (f.name == nullptr || std::strcmp(f.name, name) != 0) continue;
    if (hit != nullptr) {
      *err = owner_ + ": field '" + name + "' is given twice";
      return nullptr;
    }
    hit = &f;
  }
  if (hit == nullptr) {
    *err = owner_ + ": required field '" + name + "' is missing";
    return nullptr;
  }
  if (hit->length < 0 || (hit->length > 0 && hit->data == nullptr)) {
    *err = owner_ + ": field '" + name + "' has length " + std::to_string(hit->length) + " and " +
           (hit->data ? "data" : "no data");
    return nullptr;
  }
  return hit;
}

std::string FieldReader::numbers(const char* name, bool integral, int32_t count, double* dbl, int64_t* ints) const {
  std::string err;
  const PluginField* f = find(name, &err);
  if (f == nullptr) return err;
  const char* expected = integral ? "an integer type (kINT32)" : "a float type (kFLOAT32 or kFLOAT64)";
  bool ok_type = false;
  switch (f->type) {
    case PluginFieldType::kINT8:
    case PluginFieldType::kINT16:
    case PluginFieldType::kINT32:
#if TWIN_TRT_HAS_BF16
    case PluginFieldType::kINT64:
#endif
      ok_type = integral;
      break;
    case PluginFieldType::kFLOAT32:
    case PluginFieldType::kFLOAT64:
      ok_type = !integral;
      break;
    default: break;
  }
  if (!ok_type) return owner_ + ": field '" + name + "' must have " + expected + ", got " + type_name(f->type);
  if (f->length != count)
    return owner_ + ": field '" + name + "' must have " + std::to_string(count) + " entr" + (count == 1 ? "y" : "ies") +
           ", got " + std::to_string(f->length);
  for (int32_t i = 0; i < count; ++i) {
    switch (f->type) {
      case PluginFieldType::kINT8: ints[i] = static_cast<const int8_t*>(f->data)[i]; break;
      case PluginFieldType::kINT16: ints[i] = static_cast<const int16_t*>(f->data)[i]; break;
      case PluginFieldType::kINT32: ints[i] = static_cast<const int32_t*>(f->data)[i]; break;
#if TWIN_TRT_HAS_BF16
      case PluginFieldType::kINT64: ints[i] = static_cast<const int64_t*>(f->data)[i]; break;
#endif
      case PluginFieldType::kFLOAT32: dbl[i] = static_cast<const float*>(f->data)[i]; break;
      case PluginFieldType::kFLOAT64: dbl[i] = static_cast<const double*>(f->data)[i]; break;
      default: break;
    }
    if (!integral && !std::isfinite(dbl[i])) return owner_ + ": field '" + name + "' must be finite";
  }
  return "";
}

bool FieldReader::has(const char* name) const {
  if (!error_.empty()) return false;
  for (int32_t i = 0; i < fc_->nbFields; ++i)
    if (fc_->fields[i].name != nullptr && std::strcmp(fc_->fields[i].name, name) == 0) return true;
  return false;
}

std::string FieldReader::get_int(const char* name, int64_t* out) const { return numbers(name, true, 1, nullptr, out); }

std::string FieldReader::get_float(const char* name, double* out) const {
  return numbers(name, false, 1, out, nullptr);
}

std::string FieldReader::get_floats(const char* name, int32_t count, double* out) const {
  return numbers(name, false, count, out, nullptr);
}

std::string FieldReader::get_ints(const char* name, int32_t count, int64_t* out) const {
  return numbers(name, true, count, nullptr, out);
}

std::string FieldReader::get_float_list(const char* name, int32_t max_count, std::vector<double>* out) const {
  std::string err;
  const PluginField* f = find(name, &err);
  if (f == nullptr) return err;
  if (f->length < 1 || f->length > max_count)
    return owner_ + ": field '" + name + "' must have 1 to " + std::to_string(max_count) + " entries, got " +
           std::to_string(f->length);
  out->assign(static_cast<size_t>(f->length), 0.0);
  return numbers(name, false, f->length, out->data(), nullptr);
}

std::string FieldReader::get_string(const char* name, std::string* out) const {
  std::string err;
  const PluginField* f = find(name, &err);
  if (f == nullptr) return err;
  if (f->type != PluginFieldType::kCHAR)
    return owner_ + ": field '" + name + "' must be a string (kCHAR), got " + type_name(f->type);
  const char* s = static_cast<const char*>(f->data);
  *out = s ? std::string(s, strnlen(s, static_cast<size_t>(f->length))) : std::string();
  return "";
}

// ---- owned collections -------------------------------------------------------------------

void FieldStore::clear() {
  entries_.clear();
  fields_.clear();
}

void FieldStore::add_raw(std::string name, PluginFieldType type, int32_t length, const char* bytes, size_t n) {
  entries_.push_back(Entry{std::move(name), type, length, std::vector<char>(bytes, bytes + n), true});
}

void FieldStore::add_int(const char* name, int32_t v) {
  add_raw(name, PluginFieldType::kINT32, 1, reinterpret_cast<const char*>(&v), sizeof(v));
}

void FieldStore::add_float(const char* name, float v) {
  add_raw(name, PluginFieldType::kFLOAT32, 1, reinterpret_cast<const char*>(&v), sizeof(v));
}

void FieldStore::add_floats(const char* name, const double* v, int32_t n) {
  // kFLOAT64: the values stay exactly what the plugin computes with (no float32 narrowing).
  add_raw(name, PluginFieldType::kFLOAT64, n, reinterpret_cast<const char*>(v), sizeof(double) * n);
}

void FieldStore::add_ints(const char* name, const int32_t* v, int32_t n) {
  add_raw(name, PluginFieldType::kINT32, n, reinterpret_cast<const char*>(v), sizeof(int32_t) * n);
}

void FieldStore::add_string(const char* name, const std::string& v) {
  add_raw(name, PluginFieldType::kCHAR, static_cast<int32_t>(v.size() + 1), v.c_str(), v.size() + 1);
}

void FieldStore::add_decl(const FieldDecl& d) {
  entries_.push_back(Entry{d.name, d.type, d.length, {}, false});
}

const PluginFieldCollection* FieldStore::collection() {
  fields_.clear();
  for (const Entry& e : entries_) {
    fields_.emplace_back(e.name.c_str(), e.has_data ? e.data.data() : nullptr, e.type, e.length);
  }
  fc_.nbFields = static_cast<int32_t>(fields_.size());
  fc_.fields = fields_.data();
  return &fc_;
}

// ---- V2 byte format ----------------------------------------------------------------------

namespace {

constexpr char kMagic[4] = {'T', 'W', 'O', 'P'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeader = 16;  // magic, version, payload length, checksum
constexpr uint32_t kMaxName = 1024;

uint32_t fnv1a(const char* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 16777619u;
  return h;
}

template <typename T>
void put(std::vector<char>* b, T v) {
  const char* p = reinterpret_cast<const char*>(&v);
  b->insert(b->end(), p, p + sizeof(T));
}

template <typename T>
bool take(const char* data, size_t size, size_t* off, T* v) {
  if (size - *off < sizeof(T)) return false;
  std::memcpy(v, data + *off, sizeof(T));
  *off += sizeof(T);
  return true;
}

}  // namespace

std::vector<char> pack_fields(const PluginFieldCollection& fc) {
  std::vector<char> payload;
  for (int32_t i = 0; i < fc.nbFields; ++i) {
    const PluginField& f = fc.fields[i];
    const size_t bytes = field_type_size(f.type) * static_cast<size_t>(f.length);
    payload.insert(payload.end(), f.name, f.name + std::strlen(f.name) + 1);
    put<int32_t>(&payload, static_cast<int32_t>(f.type));
    put<int32_t>(&payload, f.length);
    put<uint32_t>(&payload, static_cast<uint32_t>(bytes));
    const char* d = static_cast<const char*>(f.data);
    payload.insert(payload.end(), d, d + bytes);
  }
  std::vector<char> out(kMagic, kMagic + 4);
  put<uint32_t>(&out, kFormatVersion);
  put<uint32_t>(&out, static_cast<uint32_t>(payload.size()));
  put<uint32_t>(&out, fnv1a(payload.data(), payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::string unpack_fields(const void* data, size_t length, FieldStore* store) {
  const std::string what = "serialized plugin data";
  if (data == nullptr) return what + " is null";
  const char* p = static_cast<const char*>(data);
  if (length < kHeader) return what + " is truncated: " + std::to_string(length) + " bytes, the header alone has 16";
  if (std::memcmp(p, kMagic, 4) != 0) return what + " does not start with the twinops magic 'TWOP'";
  size_t off = 4;
  uint32_t version = 0, payload = 0, checksum = 0;
  take(p, length, &off, &version);
  take(p, length, &off, &payload);
  take(p, length, &off, &checksum);
  if (version != kFormatVersion)
    return what + " has format version " + std::to_string(version) + ", this library reads version " +
           std::to_string(kFormatVersion);
  if (payload != length - kHeader)
    return what + " is " + std::to_string(length) + " bytes but its header announces " +
           std::to_string(payload + kHeader) + " (truncated or padded)";
  if (fnv1a(p + kHeader, payload) != checksum) return what + " is corrupt (checksum mismatch)";
  store->clear();
  while (off < length) {
    const char* name = p + off;
    const size_t name_len = strnlen(name, std::min<size_t>(length - off, kMaxName));
    if (name_len == 0 || name_len >= length - off || name_len == kMaxName) return what + " has a bad field name";
    off += name_len + 1;
    int32_t type = 0, count = 0;
    uint32_t bytes = 0;
    if (!take(p, length, &off, &type) || !take(p, length, &off, &count) || !take(p, length, &off, &bytes))
      return what + " is truncated inside field '" + std::string(name, name_len) + "'";
    const size_t unit = field_type_size(static_cast<PluginFieldType>(type));
    if (unit == 0 || count < 0 || static_cast<uint64_t>(unit) * static_cast<uint64_t>(count) != bytes ||
        bytes > length - off)
      return what + " has an inconsistent field '" + std::string(name, name_len) + "'";
    store->add_raw(std::string(name, name_len), static_cast<PluginFieldType>(type), count, p + off, bytes);
    off += bytes;
  }
  return "";
}

}  // namespace trt
}  // namespace twinops
