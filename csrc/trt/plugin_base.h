// Infrastructure shared by every twinops TensorRT plugin: logging through TensorRT's logger,
// reading PluginFields, and the versioned byte format of the IPluginV2 path.
//
// Rules every plugin method follows (they are `noexcept`): try / validate / catch, log the
// reason through `log_error`, return an error status or nullptr. Nothing here aborts, exits
// or prints.
#pragma once

#include <NvInferRuntime.h>

#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#define TWIN_TRT_MAJOR NV_TENSORRT_MAJOR
#if NV_TENSORRT_MAJOR >= 10
#define TWIN_TRT_HAS_V3 1
#else
#define TWIN_TRT_HAS_V3 0
#endif
#if NV_TENSORRT_MAJOR >= 9
#define TWIN_TRT_HAS_BF16 1  // DataType::kBF16 / kINT64 and PluginFieldType::kINT64 / kBF16
#else
#define TWIN_TRT_HAS_BF16 0
#endif

namespace twinops {
namespace trt {

// TensorRT >= 10 widens dimensions to int64; 8.6 has int32.
using DimValue = std::remove_reference_t<decltype(nvinfer1::Dims{}.d[0])>;

// ---- logging -------------------------------------------------------------------------

// Installed by the exported setLoggerFinder (TensorRT calls it when loading the library).
void set_logger_finder(nvinfer1::ILoggerFinder* finder) noexcept;
// Logs "twinops: <msg>" at kERROR / kWARNING through the finder's logger, else through
// libnvinfer's global getLogger() when that is loaded, else nowhere. The last error is
// also kept for `twinops_trt_last_error` (plugin hosts without a logger).
void log_error(const std::string& msg) noexcept;
void log_warning(const std::string& msg) noexcept;
std::string last_error() noexcept;

// Runs `body` (returning T) for a noexcept TensorRT method; on an exception logs
// "<where>: <what>" and returns `failed`.
template <typename T, typename F>
T guarded(const std::string& where, T failed, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    try {  // building the message can throw too (bad_alloc)
      log_error(where + ": " + e.what());
    } catch (...) {
    }
  } catch (...) {
    try {
      log_error(where + ": unknown exception");
    } catch (...) {
    }
  }
  return failed;
}

// ---- plugin fields ---------------------------------------------------------------------

// Declared fields of a creator (getFieldNames): names, types and lengths as TensorRT's ONNX
// parser produces them (INT -> kINT32 x1, FLOAT -> kFLOAT32 x1, STRING -> kCHAR,
// INTS -> kINT32 xN, FLOATS -> kFLOAT32 xN).
struct FieldDecl {
  const char* name;
  nvinfer1::PluginFieldType type;
  int32_t length;  // entries; 0 for strings (any length)
};

// Reads a PluginFieldCollection by name. Integers accept kINT8/16/32 (and kINT64 on
// TRT >= 9), floats kFLOAT32 / kFLOAT64 (kFLOAT64 keeps a scale exact), strings kCHAR
// (read up to `length` bytes or the first NUL). Every getter returns "" or a message that
// names the field and says what was expected; a missing field is an error (creators that give
// absent fields a default ask has() first).
class FieldReader {
 public:
  FieldReader(const nvinfer1::PluginFieldCollection* fc, std::string owner);
  const std::string& error() const { return error_; }  // set when the collection itself is bad
  // Whether a field of that name is in the collection (false for a bad collection).
  bool has(const char* name) const;
  std::string get_int(const char* name, int64_t* out) const;
  std::string get_float(const char* name, double* out) const;
  std::string get_floats(const char* name, int32_t count, double* out) const;
  // `count` integers (any integer field type), as get_int reads one.
  std::string get_ints(const char* name, int32_t count, int64_t* out) const;
  // A float list of any length in [1, max_count] (an ONNX FLOATS attribute of no fixed length).
  std::string get_float_list(const char* name, int32_t max_count, std::vector<double>* out) const;
  std::string get_string(const char* name, std::string* out) const;

 private:
  const nvinfer1::PluginField* find(const char* name, std::string* err) const;
  std::string numbers(const char* name, bool integral, int32_t count, double* dbl, int64_t* ints) const;
  const nvinfer1::PluginFieldCollection* fc_;
  std::string owner_;
  std::string error_;
};

// Owned storage for a PluginFieldCollection we hand out (getFieldNames, getFieldsToSerialize).
class FieldStore {
 public:
  void clear();
  void add_int(const char* name, int32_t v);
  void add_float(const char* name, float v);
  void add_floats(const char* name, const double* v, int32_t n);
  void add_ints(const char* name, const int32_t* v, int32_t n);
  void add_string(const char* name, const std::string& v);
  void add_decl(const FieldDecl& d);  // data == nullptr: a declaration for getFieldNames
  void add_raw(std::string name, nvinfer1::PluginFieldType type, int32_t length, const char* bytes, size_t n);
  const nvinfer1::PluginFieldCollection* collection();

 private:
  struct Entry {
    std::string name;
    nvinfer1::PluginFieldType type;
    int32_t length;
    std::vector<char> data;
    bool has_data;
  };
  std::vector<Entry> entries_;
  std::vector<nvinfer1::PluginField> fields_;
  nvinfer1::PluginFieldCollection fc_{};
};

// ---- IPluginV2 serialization -----------------------------------------------------------
// A PluginFieldCollection as bytes: magic "TWOP", format version, payload length, FNV-1a
// checksum of the payload, then per field: name (NUL-terminated), type (int32), length
// (int32), byte count (uint32), bytes. Parsing checks every length against the buffer, so a
// truncated or garbage buffer is an error message, never an out-of-bounds read.
std::vector<char> pack_fields(const nvinfer1::PluginFieldCollection& fc);
// On success fills `store` (whose collection() then views it) and returns "".
std::string unpack_fields(const void* data, size_t length, FieldStore* store);

// Size in bytes of one entry of a PluginFieldType (0 for unknown types).
size_t field_type_size(nvinfer1::PluginFieldType t);

}  // namespace trt
}  // namespace twinops
