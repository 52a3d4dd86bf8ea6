// Shared declarations of the TensorRT-free plugin host (plugin_host.cpp: loading, creators,
// serialization round trip; lifecycle.cpp: build-phase queries, runtime and enqueue).
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "expr_builder.h"

namespace twinops_host {

constexpr int kMaxDims = 8;

struct Host;
void log_line(std::string const& s);
// TensorRT 8.6 libraries have no logger finder: log the last error of the library `h` loaded
// (nullptr: none). Per host, never process-wide: several libraries can be open at once, and
// another library's message must not stand in for this one's.
void log_plugin_last_error(Host const* h);
inline void fail(Host const* h, std::string const& what) {
    log_plugin_last_error(h);
    log_line("[host] " + what);
}

struct Creator {
    nvinfer1::IPluginCreator* v2 = nullptr;
#if NV_TENSORRT_MAJOR >= 10
    nvinfer1::IPluginCreatorV3One* v3 = nullptr;
#endif
    int sources = 0;  // bit 1: listed by getCreators, bit 2: by getPluginCreators
    char const* name() const;
    char const* version() const;
    char const* plugin_namespace() const;
    nvinfer1::PluginFieldCollection const* fields() const;
};

struct Host {
    void* handle = nullptr;
    std::vector<Creator> creators;
};

struct Plugin {
    Host* host = nullptr;
    int creator = -1;
    std::string name;
#if NV_TENSORRT_MAJOR >= 10
    nvinfer1::IPluginV3* p3 = nullptr;
#endif
    nvinfer1::IPluginV2DynamicExt* p2 = nullptr;
    bool v2_initialized = false;
    bool built = false;
    std::vector<nvinfer1::PluginTensorDesc> in, out;                // concrete shapes
    std::vector<nvinfer1::DynamicPluginTensorDesc> in_dyn, out_dyn;  // min/opt/max profile
    // Serialized form: V3 named fields (copied), or one V2 byte blob (empty name, kUNKNOWN type).
    std::vector<std::string> ser_names;
    std::vector<std::vector<char>> ser_bytes;
    std::vector<int32_t> ser_types, ser_lengths;

    ~Plugin();
};

nvinfer1::Dims to_dims(int n, int64_t const* v);
void check_identity(Plugin const* p, char const* plugin_name, char const* version);

#if NV_TENSORRT_MAJOR >= 10
// TensorRT checks a capability's interface kind before casting it; so does the host.
template <typename T>
T* capability(nvinfer1::IPluginV3* p, nvinfer1::PluginCapabilityType t, char const* kind) {
    nvinfer1::IPluginCapability* c = p->getCapabilityInterface(t);
    if (!c) throw std::runtime_error(std::string("getCapabilityInterface returned nullptr for ") + kind);
    nvinfer1::InterfaceInfo info = c->getInterfaceInfo();
    if (!info.kind || std::strcmp(info.kind, kind) != 0)
        throw std::runtime_error(std::string("capability has kind '") + (info.kind ? info.kind : "") + "', want " +
                                 kind);
    return static_cast<T*>(c);
}
#endif

}  // namespace twinops_host

extern "C" {
// A PluginField as TensorRT's ONNX parser builds it from a node attribute (plugin_host.py node_fields).
struct th_field {
    char const* name;
    void const* data;
    int32_t type;
    int32_t length;
};

// One tensor: data type, format, concrete dims and the min/opt/max profile. For a shape input
// the "dims" are its values (the way getOutputShapes' shapeInputs describe them). An output
// dimension the plugin declared with declareSizeTensor (a data-dependent extent) has
// size_tensor[j] = 1 + the index of the output holding its value, its dims[j] and max[j] the
// upper bound (what to allocate), min[j] 0 and opt[j] the plugin's opt; 0 elsewhere.
struct th_tensor {
    int32_t type;
    int32_t format;
    int32_t nb_dims;
    int64_t dims[twinops_host::kMaxDims];
    int64_t min[twinops_host::kMaxDims];
    int64_t opt[twinops_host::kMaxDims];
    int64_t max[twinops_host::kMaxDims];
    int32_t size_tensor[twinops_host::kMaxDims];
};
}
