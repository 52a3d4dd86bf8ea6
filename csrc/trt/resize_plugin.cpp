// IPluginV3 resize plugins (see resize_plugin.h). Every method: validate, log, return an error.
#include "resize_plugin.h"

#if TWIN_TRT_HAS_V3

#include <exception>

namespace twinops {
namespace trt {

using namespace nvinfer1;

namespace {

// Runs `body` (returning T); on an exception logs "<where>: <what>" and returns `failed`.
template <typename T, typename F>
T guarded(const char* where, T failed, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    log_error(std::string(where) + ": " + e.what());
  } catch (...) {
    log_error(std::string(where) + ": unknown exception");
  }
  return failed;
}

}  // namespace

IPluginCapability* PluginV3Base::getCapabilityInterface(PluginCapabilityType type) noexcept {
  switch (type) {
    case PluginCapabilityType::kCORE: return static_cast<IPluginV3OneCore*>(this);
    case PluginCapabilityType::kBUILD: return static_cast<IPluginV3OneBuild*>(this);
    case PluginCapabilityType::kRUNTIME: return static_cast<IPluginV3OneRuntime*>(this);
  }
  log_error(name_ + ": unknown plugin capability type " + std::to_string(static_cast<int32_t>(type)));
  return nullptr;
}

ResizePluginV3::ResizePluginV3(const ResizeSpec& spec, std::string version, std::string ns)
    : PluginV3Base(kind_name(spec.kind), std::move(version), std::move(ns)), spec_(spec) {}

IPluginV3* ResizePluginV3::clone() noexcept {
  return guarded<IPluginV3*>("clone", nullptr, [&] { return new ResizePluginV3(spec_, version_, namespace_); });
}

int32_t ResizePluginV3::configurePlugin(const DynamicPluginTensorDesc* in, int32_t nb_inputs,
                                        const DynamicPluginTensorDesc* out, int32_t nb_outputs) noexcept {
  return guarded<int32_t>("configurePlugin", 1, [&] {
    // Shape inputs are not among `in`; the count of regular inputs must still be one we accept.
    const int32_t shape_inputs = spec_.kind == Kind::kTwinopsResize && nb_inputs == 1 ? 1 : 0;
    std::string err = in == nullptr || out == nullptr ? "null tensor descriptions" : check_io(spec_, nb_inputs, shape_inputs, nb_outputs);
    if (err.empty() && in[0].desc.type != out[0].desc.type) err = "output type differs from the input type";
    if (err.empty()) err = check_profile(spec_, in[0].min, in[0].max, out[0].min, out[0].max);
    if (!err.empty()) {
      log_error(name_ + " configurePlugin: " + err);
      return 1;
    }
    return 0;
  });
}

int32_t ResizePluginV3::getOutputDataTypes(DataType* output_types, int32_t nb_outputs, const DataType* input_types,
                                           int32_t nb_inputs) const noexcept {
  return guarded<int32_t>("getOutputDataTypes", 1, [&] {
    std::string err;
    if (output_types == nullptr || input_types == nullptr || nb_outputs != 1 || nb_inputs < 1)
      err = "expects 1 output and at least 1 input, got " + std::to_string(nb_outputs) + " and " +
            std::to_string(nb_inputs);
    else
      err = output_type(input_types[0], &output_types[0]);
    if (!err.empty()) {
      log_error(name_ + " getOutputDataTypes: " + err);
      return 1;
    }
    return 0;
  });
}

int32_t ResizePluginV3::getOutputShapes(const DimsExprs* inputs, int32_t nb_inputs, const DimsExprs* shape_inputs,
                                        int32_t nb_shape_inputs, DimsExprs* outputs, int32_t nb_outputs,
                                        IExprBuilder& builder) noexcept {
  return guarded<int32_t>("getOutputShapes", 1, [&] {
    std::string err;
    if (inputs == nullptr || outputs == nullptr || (nb_shape_inputs > 0 && shape_inputs == nullptr))
      err = "null shape arguments";
    else if (nb_outputs != 1)
      err = "has 1 output, TensorRT asked for " + std::to_string(nb_outputs);
    else
      err = output_dims(spec_, inputs, nb_inputs, shape_inputs, nb_shape_inputs, builder, &outputs[0]);
    if (!err.empty()) {
      log_error(name_ + " getOutputShapes: " + err);
      return 1;
    }
    return 0;
  });
}

bool ResizePluginV3::supportsFormatCombination(int32_t pos, const DynamicPluginTensorDesc* in_out, int32_t nb_inputs,
                                               int32_t nb_outputs) noexcept {
  return guarded<bool>("supportsFormatCombination", false, [&] {
    if (in_out == nullptr || nb_outputs != 1 || pos < 0 || pos > nb_inputs) return false;
    DataType types[8];
    TensorFormat formats[8];
    if (pos >= 8) return false;
    for (int32_t i = 0; i <= pos; ++i) {
      types[i] = in_out[i].desc.type;
      formats[i] = in_out[i].desc.format;
    }
    return supports(spec_, pos, nb_inputs, types, formats);
  });
}

size_t ResizePluginV3::getWorkspaceSize(const DynamicPluginTensorDesc* inputs, int32_t nb_inputs,
                                        const DynamicPluginTensorDesc* outputs, int32_t nb_outputs) const noexcept {
  return guarded<size_t>("getWorkspaceSize", 0, [&] {
    if (inputs == nullptr || outputs == nullptr || nb_inputs < 1 || nb_outputs != 1) return size_t{0};
    return workspace_bound(spec_, inputs[0].min, inputs[0].max, outputs[0].min, outputs[0].max);
  });
}

int32_t ResizePluginV3::onShapeChange(const PluginTensorDesc* in, int32_t nb_inputs, const PluginTensorDesc* out,
                                      int32_t nb_outputs) noexcept {
  return guarded<int32_t>("onShapeChange", 1, [&] {
    if (in == nullptr || out == nullptr || nb_inputs < 1 || nb_outputs != 1) {
      log_error(name_ + " onShapeChange: expects at least 1 input and 1 output");
      return 1;
    }
    // Validate the concrete sizes now, so a bad shape is reported before enqueue.
    resize::Params p;
    const std::string err = in[0].dims.nbDims == 4 && out[0].dims.nbDims == 4
                                ? resize::make_params(in[0].dims.d[2], in[0].dims.d[3], out[0].dims.d[2],
                                                      out[0].dims.d[3], spec_.attrs, &p)
                                : std::string("input and output must be 4-D (N, C, H, W)");
    if (!err.empty()) {
      log_error(name_ + " onShapeChange: " + err);
      return 1;
    }
    return 0;
  });
}

int32_t ResizePluginV3::enqueue(const PluginTensorDesc* input_desc, const PluginTensorDesc* output_desc,
                                const void* const* inputs, void* const* outputs, void* workspace,
                                cudaStream_t stream) noexcept {
  return guarded<int32_t>("enqueue", 1, [&] {
    if (input_desc == nullptr || output_desc == nullptr || inputs == nullptr || outputs == nullptr) {
      log_error(name_ + " enqueue: null tensor descriptions or pointers");
      return 1;
    }
    return run(spec_, input_desc[0], output_desc[0], inputs[0], outputs[0], workspace, stream);
  });
}

IPluginV3* ResizePluginV3::attachToContext(IPluginResourceContext*) noexcept {
  // No per-context resources: the attached plugin is a plain clone.
  return clone();
}

const PluginFieldCollection* ResizePluginV3::getFieldsToSerialize() noexcept {
  return guarded<const PluginFieldCollection*>("getFieldsToSerialize", nullptr, [&] {
    spec_fields(spec_, &serialized_);
    return serialized_.collection();
  });
}

ResizeCreatorV3::ResizeCreatorV3(Kind kind, std::string version)
    : CreatorV3Base(kind_name(kind), std::move(version)), kind_(kind) {
  declare_fields(kind, &declared_);
}

const PluginFieldCollection* ResizeCreatorV3::getFieldNames() noexcept {
  return guarded<const PluginFieldCollection*>("getFieldNames", nullptr, [&] { return declared_.collection(); });
}

IPluginV3* ResizeCreatorV3::createPlugin(const char*, const PluginFieldCollection* fc, TensorRTPhase) noexcept {
  return guarded<IPluginV3*>("createPlugin", nullptr, [&]() -> IPluginV3* {
    ResizeSpec spec;
    const std::string err = parse_spec(kind_, fc, &spec);
    if (!err.empty()) {
      log_error(err);
      return nullptr;
    }
    return new ResizePluginV3(spec, version_, "");
  });
}

}  // namespace trt
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
