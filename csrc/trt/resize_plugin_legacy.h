// IPluginV2DynamicExt resize plugins: TensorRT 8.6 (version "1") and every version
// (version "legacy"). Same fields and computation as the IPluginV3 plugins (resize_core.h),
// except that a V2 plugin cannot read the values of `sizes`: TwinopsResize takes its output
// size from `scales` (> 0 on both axes) here, DynamicTRTResize from size_tensor's shape.
#pragma once

// IPluginV2* are deprecated since TensorRT 10; this file implements them on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <string>
#include <vector>

#include "plugin_base.h"
#include "resize_core.h"

namespace twinops {
namespace trt {

// Small base under IPluginV2DynamicExt: name / version / namespace and the no-op lifecycle.
class PluginV2Base : public nvinfer1::IPluginV2DynamicExt {
 public:
  PluginV2Base(std::string name, std::string version) : name_(std::move(name)), version_(std::move(version)) {}
  const char* getPluginType() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  void setPluginNamespace(const char* ns) noexcept override;
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  void destroy() noexcept override { delete this; }

 protected:
  std::string name_, version_, namespace_;
};

class ResizePluginV2 final : public PluginV2Base {
 public:
  ResizePluginV2(const ResizeSpec& spec, std::string version);

  nvinfer1::IPluginV2DynamicExt* clone() const noexcept override;
  nvinfer1::DataType getOutputDataType(int32_t index, const nvinfer1::DataType* input_types,
                                       int32_t nb_inputs) const noexcept override;
  nvinfer1::DimsExprs getOutputDimensions(int32_t output_index, const nvinfer1::DimsExprs* inputs, int32_t nb_inputs,
                                          nvinfer1::IExprBuilder& builder) noexcept override;
  bool supportsFormatCombination(int32_t pos, const nvinfer1::PluginTensorDesc* in_out, int32_t nb_inputs,
                                 int32_t nb_outputs) noexcept override;
  void configurePlugin(const nvinfer1::DynamicPluginTensorDesc* in, int32_t nb_inputs,
                       const nvinfer1::DynamicPluginTensorDesc* out, int32_t nb_outputs) noexcept override;
  size_t getWorkspaceSize(const nvinfer1::PluginTensorDesc* inputs, int32_t nb_inputs,
                          const nvinfer1::PluginTensorDesc* outputs, int32_t nb_outputs) const noexcept override;
  int32_t enqueue(const nvinfer1::PluginTensorDesc* input_desc, const nvinfer1::PluginTensorDesc* output_desc,
                  const void* const* inputs, void* const* outputs, void* workspace,
                  cudaStream_t stream) noexcept override;
  size_t getSerializationSize() const noexcept override;
  void serialize(void* buffer) const noexcept override;

 private:
  ResizeSpec spec_;
  std::vector<char> bytes_;  // pack_fields(spec fields), computed once
  // Workspace bound over the profile seen by configurePlugin (V2's getWorkspaceSize only
  // sees one concrete shape).
  size_t workspace_ = 0;
};

// Small base under IPluginCreator (V2).
class CreatorV2Base : public nvinfer1::IPluginCreator {
 public:
  CreatorV2Base(std::string name, std::string version) : name_(std::move(name)), version_(std::move(version)) {}
  const char* getPluginName() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  void setPluginNamespace(const char* ns) noexcept override;
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

 protected:
  std::string name_, version_, namespace_;
};

class ResizeCreatorV2 final : public CreatorV2Base {
 public:
  ResizeCreatorV2(Kind kind, std::string version);
  const nvinfer1::PluginFieldCollection* getFieldNames() noexcept override;
  nvinfer1::IPluginV2* createPlugin(const char* name, const nvinfer1::PluginFieldCollection* fc) noexcept override;
  // nullptr and a logged message for a truncated, padded, corrupt or foreign buffer.
  nvinfer1::IPluginV2* deserializePlugin(const char* name, const void* data, size_t length) noexcept override;

 private:
  nvinfer1::IPluginV2* make(const nvinfer1::PluginFieldCollection* fc, const std::string& where);
  Kind kind_;
  FieldStore declared_;
};

}  // namespace trt
}  // namespace twinops

#pragma GCC diagnostic pop
