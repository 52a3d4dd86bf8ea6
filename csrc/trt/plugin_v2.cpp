// IPluginV2DynamicExt around an OpCore (see plugin_v2.h). Every method: validate, log, return an error.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "plugin_v2.h"

#include <algorithm>
#include <cstring>

namespace twinops {
namespace trt {

using namespace nvinfer1;

PluginV2::PluginV2(std::string name, std::string version, std::unique_ptr<OpCore> core)
    : name_(std::move(name)), version_(std::move(version)), core_(std::move(core)) {
  FieldStore fields;
  core_->fields(&fields);
  bytes_ = pack_fields(*fields.collection());
}

void PluginV2::setPluginNamespace(const char* ns) noexcept {
  guarded<int>(name_ + " setPluginNamespace", 0, [&] {
    namespace_ = ns ? ns : "";
    return 0;
  });
}

int32_t PluginV2::getNbOutputs() const noexcept {
  return guarded<int32_t>(name_ + " getNbOutputs", 0, [&] { return core_->nb_outputs(); });
}

IPluginV2DynamicExt* PluginV2::clone() const noexcept {
  return guarded<IPluginV2DynamicExt*>(name_ + " clone", nullptr, [&] {
    auto* p = new PluginV2(name_, version_, core_->clone());
    p->namespace_ = namespace_;
    p->workspace_ = workspace_;
    p->nb_inputs_ = nb_inputs_;
    return p;
  });
}

DataType PluginV2::getOutputDataType(int32_t index, const DataType* input_types, int32_t nb_inputs) const noexcept {
  return guarded<DataType>(name_ + " getOutputDataType", DataType::kFLOAT, [&] {
    // V2 has no error status here: the message is logged and kFLOAT returned.
    const int32_t n = core_->nb_outputs();
    std::vector<DataType> out(static_cast<size_t>(std::max(n, 1)), DataType::kFLOAT);
    std::string err = index < 0 || index >= n || (nb_inputs > 0 && input_types == nullptr)
                          ? "expects an output index in [0, " + std::to_string(n) + ") and the input types"
                          : core_->output_types(input_types, nb_inputs, out.data());
    if (!err.empty()) {
      log_error(name_ + " getOutputDataType: " + err);
      return DataType::kFLOAT;
    }
    return out[index];
  });
}

DimsExprs PluginV2::getOutputDimensions(int32_t output_index, const DimsExprs* inputs, int32_t nb_inputs,
                                        IExprBuilder& builder) noexcept {
  // A V2 plugin has no error status here: TensorRT treats nbDims = -1 as a failure.
  DimsExprs failed{};
  failed.nbDims = -1;
  return guarded<DimsExprs>(name_ + " getOutputDimensions", failed, [&] {
    const int32_t n = core_->nb_outputs();
    std::vector<DimsExprs> out(static_cast<size_t>(std::max(n, 1)));
    std::string err = output_index < 0 || output_index >= n || (nb_inputs > 0 && inputs == nullptr)
                          ? "expects an output index in [0, " + std::to_string(n) + ") and the input shapes"
                          : core_->output_shapes(inputs, nb_inputs, nullptr, 0, builder, out.data());
    if (!err.empty()) {
      log_error(name_ + " getOutputDimensions: " + err);
      return failed;
    }
    return out[output_index];
  });
}

bool PluginV2::supportsFormatCombination(int32_t pos, const PluginTensorDesc* in_out, int32_t nb_inputs,
                                         int32_t nb_outputs) noexcept {
  return guarded<bool>(name_ + " supportsFormatCombination", false, [&] {
    if (in_out == nullptr || nb_outputs != core_->nb_outputs() || nb_inputs < 0 || pos < 0 ||
        pos >= nb_inputs + nb_outputs)
      return false;
    return core_->supports(pos, in_out, nb_inputs, nb_outputs);
  });
}

void PluginV2::configurePlugin(const DynamicPluginTensorDesc* in, int32_t nb_inputs, const DynamicPluginTensorDesc* out,
                               int32_t nb_outputs) noexcept {
  guarded<int>(name_ + " configurePlugin", 0, [&] {
    nb_inputs_ = nb_inputs;
    const int32_t n = core_->nb_outputs();
    std::string err = in == nullptr || out == nullptr ? "null tensor descriptions"
                      : nb_outputs != n ? "has " + std::to_string(n) + " output(s), TensorRT asked for " +
                                              std::to_string(nb_outputs)
                                        : core_->configure(in, nb_inputs, out, nb_outputs);
    // V2's configurePlugin has no status: the error is logged, and such a profile gets no workspace.
    if (!err.empty()) {
      log_error(name_ + " configurePlugin: " + err);
      return 0;
    }
    workspace_ = std::max(workspace_, core_->workspace(in, nb_inputs, out, nb_outputs));
    return 0;
  });
}

size_t PluginV2::getWorkspaceSize(const PluginTensorDesc* inputs, int32_t nb_inputs, const PluginTensorDesc* outputs,
                                  int32_t nb_outputs) const noexcept {
  return guarded<size_t>(name_ + " getWorkspaceSize", 0, [&] {
    if (inputs == nullptr || outputs == nullptr || nb_inputs < 0 || nb_outputs != core_->nb_outputs())
      return workspace_;
    // One concrete shape: the profile [dims, dims].
    auto point = [](const PluginTensorDesc* d, int32_t n) {
      std::vector<DynamicPluginTensorDesc> r(static_cast<size_t>(n));
      for (int32_t i = 0; i < n; ++i) {
        r[i].desc = d[i];
        r[i].min = r[i].max = d[i].dims;
      }
      return r;
    };
    const std::vector<DynamicPluginTensorDesc> in = point(inputs, nb_inputs), out = point(outputs, nb_outputs);
    return std::max(workspace_, core_->workspace(in.data(), nb_inputs, out.data(), nb_outputs));
  });
}

int32_t PluginV2::enqueue(const PluginTensorDesc* input_desc, const PluginTensorDesc* output_desc,
                          const void* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) noexcept {
  return enqueue_core(name_, *core_, input_desc, nb_inputs_, output_desc, inputs, outputs, workspace, stream);
}

size_t PluginV2::getSerializationSize() const noexcept { return bytes_.size(); }

void PluginV2::serialize(void* buffer) const noexcept {
  if (buffer == nullptr) {
    guarded<int>(name_ + " serialize", 0, [&] {
      log_error(name_ + " serialize: null buffer");
      return 0;
    });
    return;
  }
  std::memcpy(buffer, bytes_.data(), bytes_.size());
}

CreatorV2::CreatorV2(const OpCreator& op, std::string version, std::string ns)
    : op_(op), version_(std::move(version)), namespace_(std::move(ns)) {
  op_.declare(&declared_);
}

void CreatorV2::setPluginNamespace(const char* ns) noexcept {
  guarded<int>(op_.name + " setPluginNamespace", 0, [&] {
    namespace_ = ns ? ns : "";
    return 0;
  });
}

const PluginFieldCollection* CreatorV2::getFieldNames() noexcept {
  return guarded<const PluginFieldCollection*>(op_.name + " getFieldNames", nullptr,
                                               [&] { return declared_.collection(); });
}

IPluginV2* CreatorV2::make(const PluginFieldCollection* fc, bool runtime, const std::string& where) {
  std::string err;
  std::unique_ptr<OpCore> core = op_.make(fc, runtime, &err);
  if (core == nullptr) {
    log_error(where + (err.empty() ? op_.name + ": createPlugin failed" : err));
    return nullptr;
  }
  auto* p = new PluginV2(op_.name, version_, std::move(core));
  p->setPluginNamespace(namespace_.c_str());
  return p;
}

IPluginV2* CreatorV2::createPlugin(const char*, const PluginFieldCollection* fc) noexcept {
  return guarded<IPluginV2*>(op_.name + " createPlugin", nullptr, [&] { return make(fc, false, ""); });
}

IPluginV2* CreatorV2::deserializePlugin(const char*, const void* data, size_t length) noexcept {
  return guarded<IPluginV2*>(op_.name + " deserializePlugin", nullptr, [&]() -> IPluginV2* {
    FieldStore store;
    const std::string err = unpack_fields(data, length, &store);
    if (!err.empty()) {
      log_error(op_.name + " deserializePlugin: " + err);
      return nullptr;
    }
    return make(store.collection(), true, op_.name + " deserializePlugin: ");
  });
}

}  // namespace trt
}  // namespace twinops
