// IPluginV3 around an OpCore (see plugin_v3.h). Every method: validate, log, return an error.
#include "plugin_v3.h"

#if TWIN_TRT_HAS_V3

#include <vector>

namespace twinops {
namespace trt {

using namespace nvinfer1;

PluginV3::PluginV3(std::string name, std::string version, std::string ns, std::unique_ptr<OpCore> core)
    : name_(std::move(name)), version_(std::move(version)), namespace_(std::move(ns)), core_(std::move(core)) {}

std::string PluginV3::check_outputs(int32_t nb_outputs) const {
  const int32_t n = core_->nb_outputs();
  if (nb_outputs == n) return "";
  return "has " + std::to_string(n) + " output(s), TensorRT asked for " + std::to_string(nb_outputs);
}

bool PluginV3::ok(const char* method, const std::string& err) const {
  if (err.empty()) return true;
  log_error(name_ + " " + method + ": " + err);
  return false;
}

IPluginCapability* PluginV3::getCapabilityInterface(PluginCapabilityType type) noexcept {
  switch (type) {
    case PluginCapabilityType::kCORE: return static_cast<IPluginV3OneCore*>(this);
    case PluginCapabilityType::kBUILD: return static_cast<IPluginV3OneBuild*>(this);
    case PluginCapabilityType::kRUNTIME: return static_cast<IPluginV3OneRuntime*>(this);
  }
  guarded<int>(name_, 0, [&] {
    log_error(name_ + ": unknown plugin capability type " + std::to_string(static_cast<int32_t>(type)));
    return 0;
  });
  return nullptr;
}

IPluginV3* PluginV3::clone() noexcept {
  return guarded<IPluginV3*>(name_ + " clone", nullptr,
                             [&] {
                               auto* p = new PluginV3(name_, version_, namespace_, core_->clone());
                               p->nb_inputs_ = nb_inputs_;
                               return p;
                             });
}

int32_t PluginV3::getNbOutputs() const noexcept {
  return guarded<int32_t>(name_ + " getNbOutputs", 0, [&] { return core_->nb_outputs(); });
}

int32_t PluginV3::configurePlugin(const DynamicPluginTensorDesc* in, int32_t nb_inputs,
                                  const DynamicPluginTensorDesc* out, int32_t nb_outputs) noexcept {
  return guarded<int32_t>(name_ + " configurePlugin", 1, [&] {
    std::string err = in == nullptr || out == nullptr ? "null tensor descriptions" : check_outputs(nb_outputs);
    if (err.empty()) err = core_->configure(in, nb_inputs, out, nb_outputs);
    nb_inputs_ = nb_inputs;
    return ok("configurePlugin", err) ? 0 : 1;
  });
}

int32_t PluginV3::getOutputDataTypes(DataType* output_types, int32_t nb_outputs, const DataType* input_types,
                                     int32_t nb_inputs) const noexcept {
  return guarded<int32_t>(name_ + " getOutputDataTypes", 1, [&] {
    std::string err = output_types == nullptr || (nb_inputs > 0 && input_types == nullptr) ? "null type arrays"
                                                                                           : check_outputs(nb_outputs);
    if (err.empty()) err = core_->output_types(input_types, nb_inputs, output_types);
    return ok("getOutputDataTypes", err) ? 0 : 1;
  });
}

int32_t PluginV3::getOutputShapes(const DimsExprs* inputs, int32_t nb_inputs, const DimsExprs* shape_inputs,
                                  int32_t nb_shape_inputs, DimsExprs* outputs, int32_t nb_outputs,
                                  IExprBuilder& builder) noexcept {
  return guarded<int32_t>(name_ + " getOutputShapes", 1, [&] {
    std::string err = (nb_inputs > 0 && inputs == nullptr) || outputs == nullptr ||
                              (nb_shape_inputs > 0 && shape_inputs == nullptr)
                          ? "null shape arguments"
                          : check_outputs(nb_outputs);
    if (err.empty()) err = core_->output_shapes(inputs, nb_inputs, shape_inputs, nb_shape_inputs, builder, outputs);
    return ok("getOutputShapes", err) ? 0 : 1;
  });
}

bool PluginV3::supportsFormatCombination(int32_t pos, const DynamicPluginTensorDesc* in_out, int32_t nb_inputs,
                                         int32_t nb_outputs) noexcept {
  return guarded<bool>(name_ + " supportsFormatCombination", false, [&] {
    if (in_out == nullptr || !check_outputs(nb_outputs).empty() || nb_inputs < 0 || pos < 0 ||
        pos >= nb_inputs + nb_outputs)
      return false;
    std::vector<PluginTensorDesc> io(static_cast<size_t>(pos) + 1);
    for (int32_t i = 0; i <= pos; ++i) io[i] = in_out[i].desc;
    return core_->supports(pos, io.data(), nb_inputs, nb_outputs);
  });
}

size_t PluginV3::getWorkspaceSize(const DynamicPluginTensorDesc* inputs, int32_t nb_inputs,
                                  const DynamicPluginTensorDesc* outputs, int32_t nb_outputs) const noexcept {
  return guarded<size_t>(name_ + " getWorkspaceSize", 0, [&] {
    if (inputs == nullptr || outputs == nullptr || !check_outputs(nb_outputs).empty()) return size_t{0};
    return core_->workspace(inputs, nb_inputs, outputs, nb_outputs);
  });
}

int32_t PluginV3::onShapeChange(const PluginTensorDesc* in, int32_t nb_inputs, const PluginTensorDesc* out,
                                int32_t nb_outputs) noexcept {
  return guarded<int32_t>(name_ + " onShapeChange", 1, [&] {
    std::string err = in == nullptr || out == nullptr ? "null tensor descriptions" : check_outputs(nb_outputs);
    // Validate the concrete sizes now, so a bad shape is reported before enqueue.
    if (err.empty()) err = core_->shapes_changed(in, nb_inputs, out, nb_outputs);
    nb_inputs_ = nb_inputs;
    return ok("onShapeChange", err) ? 0 : 1;
  });
}

int32_t PluginV3::enqueue(const PluginTensorDesc* input_desc, const PluginTensorDesc* output_desc,
                          const void* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) noexcept {
  return enqueue_core(name_, *core_, input_desc, nb_inputs_, output_desc, inputs, outputs, workspace, stream);
}

IPluginV3* PluginV3::attachToContext(IPluginResourceContext*) noexcept {
  // No per-context resources: the attached plugin is a plain clone.
  return clone();
}

const PluginFieldCollection* PluginV3::getFieldsToSerialize() noexcept {
  return guarded<const PluginFieldCollection*>(name_ + " getFieldsToSerialize", nullptr, [&] {
    core_->fields(&serialized_);
    return serialized_.collection();
  });
}

CreatorV3::CreatorV3(const OpCreator& op, std::string version, std::string ns)
    : op_(op), version_(std::move(version)), namespace_(std::move(ns)) {
  op_.declare(&declared_);
}

const PluginFieldCollection* CreatorV3::getFieldNames() noexcept {
  return guarded<const PluginFieldCollection*>(op_.name + " getFieldNames", nullptr,
                                               [&] { return declared_.collection(); });
}

IPluginV3* CreatorV3::createPlugin(const char*, const PluginFieldCollection* fc, TensorRTPhase phase) noexcept {
  return guarded<IPluginV3*>(op_.name + " createPlugin", nullptr, [&]() -> IPluginV3* {
    std::string err;
    std::unique_ptr<OpCore> core = op_.make(fc, phase == TensorRTPhase::kRUNTIME, &err);
    if (core == nullptr) {
      log_error(err.empty() ? op_.name + ": createPlugin failed" : err);
      return nullptr;
    }
    return new PluginV3(op_.name, version_, namespace_, std::move(core));
  });
}

}  // namespace trt
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
