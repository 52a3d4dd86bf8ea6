// IPluginV3 resize plugins (TensorRT >= 10): TwinopsResize, DynamicTRTResize and
// TRTBicubicInterpolate, version "1", namespace "". See resize_core.h for the computation
// and plugin_library.cpp for the full name / version table.
#pragma once

#include "plugin_base.h"

#if TWIN_TRT_HAS_V3

#include <string>

#include "resize_core.h"

namespace twinops {
namespace trt {

// Small base under IPluginV3: one object provides the core, build and runtime capabilities;
// name / version / namespace are fixed at construction.
class PluginV3Base : public nvinfer1::IPluginV3,
                     public nvinfer1::IPluginV3OneCore,
                     public nvinfer1::IPluginV3OneBuild,
                     public nvinfer1::IPluginV3OneRuntime {
 public:
  PluginV3Base(std::string name, std::string version, std::string ns)
      : name_(std::move(name)), version_(std::move(version)), namespace_(std::move(ns)) {}
  nvinfer1::IPluginCapability* getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept override;
  const char* getPluginName() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t setTactic(int32_t) noexcept override { return 0; }

 protected:
  std::string name_, version_, namespace_;
};

class ResizePluginV3 final : public PluginV3Base {
 public:
  ResizePluginV3(const ResizeSpec& spec, std::string version, std::string ns);

  nvinfer1::IPluginV3* clone() noexcept override;
  // build
  int32_t configurePlugin(const nvinfer1::DynamicPluginTensorDesc* in, int32_t nb_inputs,
                          const nvinfer1::DynamicPluginTensorDesc* out, int32_t nb_outputs) noexcept override;
  int32_t getOutputDataTypes(nvinfer1::DataType* output_types, int32_t nb_outputs,
                             const nvinfer1::DataType* input_types, int32_t nb_inputs) const noexcept override;
  int32_t getOutputShapes(const nvinfer1::DimsExprs* inputs, int32_t nb_inputs, const nvinfer1::DimsExprs* shape_inputs,
                          int32_t nb_shape_inputs, nvinfer1::DimsExprs* outputs, int32_t nb_outputs,
                          nvinfer1::IExprBuilder& builder) noexcept override;
  bool supportsFormatCombination(int32_t pos, const nvinfer1::DynamicPluginTensorDesc* in_out, int32_t nb_inputs,
                                 int32_t nb_outputs) noexcept override;
  size_t getWorkspaceSize(const nvinfer1::DynamicPluginTensorDesc* inputs, int32_t nb_inputs,
                          const nvinfer1::DynamicPluginTensorDesc* outputs, int32_t nb_outputs) const noexcept override;
  // runtime
  int32_t onShapeChange(const nvinfer1::PluginTensorDesc* in, int32_t nb_inputs, const nvinfer1::PluginTensorDesc* out,
                        int32_t nb_outputs) noexcept override;
  int32_t enqueue(const nvinfer1::PluginTensorDesc* input_desc, const nvinfer1::PluginTensorDesc* output_desc,
                  const void* const* inputs, void* const* outputs, void* workspace,
                  cudaStream_t stream) noexcept override;
  nvinfer1::IPluginV3* attachToContext(nvinfer1::IPluginResourceContext* context) noexcept override;
  const nvinfer1::PluginFieldCollection* getFieldsToSerialize() noexcept override;

 private:
  ResizeSpec spec_;
  FieldStore serialized_;
};

// Small base under IPluginCreatorV3One.
class CreatorV3Base : public nvinfer1::IPluginCreatorV3One {
 public:
  CreatorV3Base(std::string name, std::string version) : name_(std::move(name)), version_(std::move(version)) {}
  const char* getPluginName() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  const char* getPluginNamespace() const noexcept override { return ""; }

 protected:
  std::string name_, version_;
};

class ResizeCreatorV3 final : public CreatorV3Base {
 public:
  ResizeCreatorV3(Kind kind, std::string version);
  const nvinfer1::PluginFieldCollection* getFieldNames() noexcept override;
  // Both phases read the same named fields (getFieldsToSerialize returns them); nullptr and
  // a logged message on any bad field.
  nvinfer1::IPluginV3* createPlugin(const char* name, const nvinfer1::PluginFieldCollection* fc,
                                    nvinfer1::TensorRTPhase phase) noexcept override;

 private:
  Kind kind_;
  FieldStore declared_;
};

}  // namespace trt
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
