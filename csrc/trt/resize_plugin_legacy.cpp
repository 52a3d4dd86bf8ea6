// IPluginV2DynamicExt resize plugins (see resize_plugin_legacy.h).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "resize_plugin_legacy.h"

#include <algorithm>
#include <cstring>
#include <exception>

namespace twinops {
namespace trt {

using namespace nvinfer1;

namespace {

template <typename T, typename F>
T guarded(const std::string& where, T failed, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    log_error(where + ": " + e.what());
  } catch (...) {
    log_error(where + ": unknown exception");
  }
  return failed;
}

}  // namespace

void PluginV2Base::setPluginNamespace(const char* ns) noexcept {
  guarded<int>("setPluginNamespace", 0, [&] {
    namespace_ = ns ? ns : "";
    return 0;
  });
}

void CreatorV2Base::setPluginNamespace(const char* ns) noexcept {
  guarded<int>("setPluginNamespace", 0, [&] {
    namespace_ = ns ? ns : "";
    return 0;
  });
}

ResizePluginV2::ResizePluginV2(const ResizeSpec& spec, std::string version)
    : PluginV2Base(kind_name(spec.kind), std::move(version)), spec_(spec) {
  FieldStore fields;
  spec_fields(spec_, &fields);
  bytes_ = pack_fields(*fields.collection());
}

IPluginV2DynamicExt* ResizePluginV2::clone() const noexcept {
  return guarded<IPluginV2DynamicExt*>(name_ + " clone", nullptr, [&] {
    auto* p = new ResizePluginV2(spec_, version_);
    p->namespace_ = namespace_;
    p->workspace_ = workspace_;
    return p;
  });
}

DataType ResizePluginV2::getOutputDataType(int32_t index, const DataType* input_types, int32_t nb_inputs) const noexcept {
  return guarded<DataType>(name_ + " getOutputDataType", DataType::kFLOAT, [&] {
    DataType out = DataType::kFLOAT;
    std::string err = index != 0 || input_types == nullptr || nb_inputs < 1
                          ? "expects output index 0 and at least 1 input type"
                          : output_type(input_types[0], &out);
    if (!err.empty()) log_error(name_ + " getOutputDataType: " + err);
    return out;
  });
}

DimsExprs ResizePluginV2::getOutputDimensions(int32_t output_index, const DimsExprs* inputs, int32_t nb_inputs,
                                              IExprBuilder& builder) noexcept {
  // A V2 plugin has no error status here: TensorRT treats nbDims = -1 as a failure.
  DimsExprs failed{};
  failed.nbDims = -1;
  return guarded<DimsExprs>(name_ + " getOutputDimensions", failed, [&] {
    DimsExprs out{};
    std::string err = output_index != 0 || inputs == nullptr ? "expects output index 0 and input shapes"
                                                             : output_dims(spec_, inputs, nb_inputs, nullptr, 0, builder, &out);
    if (!err.empty()) {
      log_error(name_ + " getOutputDimensions: " + err);
      return failed;
    }
    return out;
  });
}

bool ResizePluginV2::supportsFormatCombination(int32_t pos, const PluginTensorDesc* in_out, int32_t nb_inputs,
                                               int32_t nb_outputs) noexcept {
  return guarded<bool>(name_ + " supportsFormatCombination", false, [&] {
    if (in_out == nullptr || nb_outputs != 1 || pos < 0 || pos > nb_inputs || pos >= 8) return false;
    DataType types[8];
    TensorFormat formats[8];
    for (int32_t i = 0; i <= pos; ++i) {
      types[i] = in_out[i].type;
      formats[i] = in_out[i].format;
    }
    return supports(spec_, pos, nb_inputs, types, formats);
  });
}

void ResizePluginV2::configurePlugin(const DynamicPluginTensorDesc* in, int32_t nb_inputs,
                                     const DynamicPluginTensorDesc* out, int32_t nb_outputs) noexcept {
  guarded<int>(name_ + " configurePlugin", 0, [&] {
    std::string err = in == nullptr || out == nullptr ? "null tensor descriptions" : check_io(spec_, nb_inputs, 0, nb_outputs);
    // V2's configurePlugin has no status: the error is logged, and workspace_bound gives such a
    // profile no workspace.
    if (err.empty()) err = check_profile(spec_, in[0].min, in[0].max, out[0].min, out[0].max);
    if (!err.empty()) {
      log_error(name_ + " configurePlugin: " + err);
      return 0;
    }
    workspace_ = std::max(workspace_, workspace_bound(spec_, in[0].min, in[0].max, out[0].min, out[0].max));
    return 0;
  });
}

size_t ResizePluginV2::getWorkspaceSize(const PluginTensorDesc* inputs, int32_t nb_inputs,
                                        const PluginTensorDesc* outputs, int32_t nb_outputs) const noexcept {
  return guarded<size_t>(name_ + " getWorkspaceSize", 0, [&] {
    if (inputs == nullptr || outputs == nullptr || nb_inputs < 1 || nb_outputs != 1) return workspace_;
    const size_t here = workspace_bound(spec_, inputs[0].dims, inputs[0].dims, outputs[0].dims, outputs[0].dims);
    return std::max(workspace_, here);
  });
}

int32_t ResizePluginV2::enqueue(const PluginTensorDesc* input_desc, const PluginTensorDesc* output_desc,
                                const void* const* inputs, void* const* outputs, void* workspace,
                                cudaStream_t stream) noexcept {
  return guarded<int32_t>(name_ + " enqueue", 1, [&] {
    if (input_desc == nullptr || output_desc == nullptr || inputs == nullptr || outputs == nullptr) {
      log_error(name_ + " enqueue: null tensor descriptions or pointers");
      return 1;
    }
    return run(spec_, input_desc[0], output_desc[0], inputs[0], outputs[0], workspace, stream);
  });
}

size_t ResizePluginV2::getSerializationSize() const noexcept { return bytes_.size(); }

void ResizePluginV2::serialize(void* buffer) const noexcept {
  if (buffer == nullptr) {
    log_error(name_ + " serialize: null buffer");
    return;
  }
  std::memcpy(buffer, bytes_.data(), bytes_.size());
}

ResizeCreatorV2::ResizeCreatorV2(Kind kind, std::string version)
    : CreatorV2Base(kind_name(kind), std::move(version)), kind_(kind) {
  declare_fields(kind, &declared_);
}

const PluginFieldCollection* ResizeCreatorV2::getFieldNames() noexcept {
  return guarded<const PluginFieldCollection*>(name_ + " getFieldNames", nullptr,
                                               [&] { return declared_.collection(); });
}

IPluginV2* ResizeCreatorV2::make(const PluginFieldCollection* fc, const std::string& where) {
  ResizeSpec spec;
  const std::string err = parse_spec(kind_, fc, &spec);
  if (!err.empty()) {
    log_error(where + err);
    return nullptr;
  }
  auto* p = new ResizePluginV2(spec, version_);
  p->setPluginNamespace(namespace_.c_str());
  return p;
}

IPluginV2* ResizeCreatorV2::createPlugin(const char*, const PluginFieldCollection* fc) noexcept {
  return guarded<IPluginV2*>(name_ + " createPlugin", nullptr, [&] { return make(fc, ""); });
}

IPluginV2* ResizeCreatorV2::deserializePlugin(const char*, const void* data, size_t length) noexcept {
  return guarded<IPluginV2*>(name_ + " deserializePlugin", nullptr, [&]() -> IPluginV2* {
    FieldStore store;
    const std::string err = unpack_fields(data, length, &store);
    if (!err.empty()) {
      log_error(name_ + " deserializePlugin: " + err);
      return nullptr;
    }
    return make(store.collection(), name_ + " deserializePlugin: ");
  });
}

}  // namespace trt
}  // namespace twinops
