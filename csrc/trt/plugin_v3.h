// IPluginV3 (TensorRT >= 10) around any OpCore (op_core.h), and its creator. One object provides
// the core, build and runtime capabilities; name / version / namespace are fixed at construction.
#pragma once

#include "plugin_base.h"

#if TWIN_TRT_HAS_V3

#include <memory>
#include <string>

#include "op_core.h"

namespace twinops {
namespace trt {

class PluginV3 final : public nvinfer1::IPluginV3,
                       public nvinfer1::IPluginV3OneCore,
                       public nvinfer1::IPluginV3OneBuild,
                       public nvinfer1::IPluginV3OneRuntime {
 public:
  PluginV3(std::string name, std::string version, std::string ns, std::unique_ptr<OpCore> core);

  nvinfer1::IPluginCapability* getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept override;
  nvinfer1::IPluginV3* clone() noexcept override;
  const char* getPluginName() const noexcept override { return name_.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  // build
  int32_t getNbOutputs() const noexcept override;
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
  int32_t setTactic(int32_t) noexcept override { return 0; }
  // runtime
  int32_t onShapeChange(const nvinfer1::PluginTensorDesc* in, int32_t nb_inputs, const nvinfer1::PluginTensorDesc* out,
                        int32_t nb_outputs) noexcept override;
  int32_t enqueue(const nvinfer1::PluginTensorDesc* input_desc, const nvinfer1::PluginTensorDesc* output_desc,
                  const void* const* inputs, void* const* outputs, void* workspace,
                  cudaStream_t stream) noexcept override;
  nvinfer1::IPluginV3* attachToContext(nvinfer1::IPluginResourceContext* context) noexcept override;
  const nvinfer1::PluginFieldCollection* getFieldsToSerialize() noexcept override;

 private:
  // "" when TensorRT asks for the core's number of outputs, else the message.
  std::string check_outputs(int32_t nb_outputs) const;
  // Logs "<name> <method>: <err>" and returns whether err was empty.
  bool ok(const char* method, const std::string& err) const;

  std::string name_, version_, namespace_;
  std::unique_ptr<OpCore> core_;
  FieldStore serialized_;
  int32_t nb_inputs_ = -1;  // of the last configurePlugin / onShapeChange: the core's enqueue needs it
};

class CreatorV3 final : public nvinfer1::IPluginCreatorV3One {
 public:
  CreatorV3(const OpCreator& op, std::string version, std::string ns = "");
  const char* getPluginName() const noexcept override { return op_.name.c_str(); }
  const char* getPluginVersion() const noexcept override { return version_.c_str(); }
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }
  const nvinfer1::PluginFieldCollection* getFieldNames() noexcept override;
  // Both phases read the same named fields (getFieldsToSerialize returns them); nullptr and
  // a logged message on any bad field.
  nvinfer1::IPluginV3* createPlugin(const char* name, const nvinfer1::PluginFieldCollection* fc,
                                    nvinfer1::TensorRTPhase phase) noexcept override;

 private:
  OpCreator op_;
  std::string version_, namespace_;
  FieldStore declared_;
};

}  // namespace trt
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
