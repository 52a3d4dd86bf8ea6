// IPluginV2DynamicExt around any OpCore (op_core.h), and its creator: TensorRT 8.6 (version "1")
// and every version (version "legacy"). A V2 plugin has no shape inputs: cores see none here.
#pragma once

// IPluginV2* are deprecated since TensorRT 10; this file implements them on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <memory>
#include <string>
#include <vector>

#include "op_core.h"
#include "plugin_base.h"

namespace twinops {
namespace trt {

class PluginV2 final : public nvinfer1::IPluginV2DynamicExt {
 public:
  PluginV2(std::string name, std::string version, std::unique_ptr<OpCore> core);

  const char* getPluginType() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  void setPluginNamespace(const char* ns) noexcept override;
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  int32_t getNbOutputs() const noexcept override;
  int32_t initialize() noexcept override { return 0; }
  void terminate() noexcept override {}
  void destroy() noexcept override { delete this; }

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
  std::string name_, version_, namespace_;
  std::unique_ptr<OpCore> core_;
  std::vector<char> bytes_;  // pack_fields(core fields), computed once
  int32_t nb_inputs_ = -1;   // of the last configurePlugin: the core's enqueue needs it
  // Workspace bound over the profiles seen by configurePlugin (V2's getWorkspaceSize only
  // sees one concrete shape).
  size_t workspace_ = 0;
};

class CreatorV2 final : public nvinfer1::IPluginCreator {
 public:
  CreatorV2(const OpCreator& op, std::string version, std::string ns = "");
  const char* getPluginName() const noexcept override { return op_.name.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  void setPluginNamespace(const char* ns) noexcept override;
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  const nvinfer1::PluginFieldCollection* getFieldNames() noexcept override;
  nvinfer1::IPluginV2* createPlugin(const char* name, const nvinfer1::PluginFieldCollection* fc) noexcept override;
  // nullptr and a logged message for a truncated, padded, corrupt or foreign buffer.
  nvinfer1::IPluginV2* deserializePlugin(const char* name, const void* data, size_t length) noexcept override;

 private:
  nvinfer1::IPluginV2* make(const nvinfer1::PluginFieldCollection* fc, bool runtime, const std::string& where);
  OpCreator op_;
  std::string version_, namespace_;
  FieldStore declared_;
};

}  // namespace trt
}  // namespace twinops

#pragma GCC diagnostic pop
