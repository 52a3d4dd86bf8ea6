// What an op provides to become TensorRT plugins: an OpCore (the computation and its build-time
// rules, independent of the plugin interface) and an OpCreator per plugin name. The generic
// classes PluginV3 (plugin_v3.h, TensorRT >= 10) and PluginV2 (plugin_v2.h, IPluginV2DynamicExt)
// wrap any core; plugin_creators.cpp lists the creators, one line each.
//
// The generic classes validate what needs no op knowledge (null pointers, the output count,
// positions) before calling the core, catch every exception and log each returned message
// prefixed with "<plugin name> <method>: ". Core methods may throw; they never abort or print.
#pragma once

#include <NvInferRuntime.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "op_fields.h"
#include "plugin_base.h"

namespace twinops {
namespace trt {

// The TensorRT types every op core's methods name; an op's core has them through its
// `using namespace ::twinops::trt`.
using nvinfer1::DataType;
using nvinfer1::DimensionOperation;
using nvinfer1::Dims;
using nvinfer1::DimsExprs;
using nvinfer1::DynamicPluginTensorDesc;
using nvinfer1::IDimensionExpr;
using nvinfer1::IExprBuilder;
using nvinfer1::PluginTensorDesc;
using nvinfer1::TensorFormat;

class OpCore {
 public:
  virtual ~OpCore() = default;
  virtual std::unique_ptr<OpCore> clone() const = 0;
  virtual int32_t nb_outputs() const = 0;
  // Output types (nb_outputs() entries) for the input types; "" or a message.
  virtual std::string output_types(const nvinfer1::DataType* in, int32_t nb_in, nvinfer1::DataType* out) const = 0;
  // Output shapes (nb_outputs() entries). shape_in: the values of V3 shape inputs (none on V2).
  virtual std::string output_shapes(const nvinfer1::DimsExprs* in, int32_t nb_in, const nvinfer1::DimsExprs* shape_in,
                                    int32_t nb_shape_in, nvinfer1::IExprBuilder& builder,
                                    nvinfer1::DimsExprs* out) const = 0;
  // supportsFormatCombination at `pos` (inputs, then outputs); io[0..pos] are set.
  virtual bool supports(int32_t pos, const nvinfer1::PluginTensorDesc* io, int32_t nb_in, int32_t nb_out) const = 0;
  // configurePlugin: "" or why the profile cannot run (regular inputs only: V3 shape inputs are not among `in`).
  virtual std::string configure(const nvinfer1::DynamicPluginTensorDesc* in, int32_t nb_in,
                                const nvinfer1::DynamicPluginTensorDesc* out, int32_t nb_out) const = 0;
  // Workspace bytes that serve every shape of the profile [min, max].
  virtual size_t workspace(const nvinfer1::DynamicPluginTensorDesc* in, int32_t nb_in,
                           const nvinfer1::DynamicPluginTensorDesc* out, int32_t nb_out) const = 0;
  // The concrete shapes of the next enqueues (V3 onShapeChange): "" or why they cannot run.
  virtual std::string shapes_changed(const nvinfer1::PluginTensorDesc*, int32_t, const nvinfer1::PluginTensorDesc*,
                                     int32_t) const {
    return "";
  }
  // Runs the op: 0 or a CUDA status, the reason logged with log_error. nb_in: the input count of
  // the plugin's last configurePlugin / onShapeChange (TensorRT's enqueue passes none; a node
  // with an optional input has either count), -1 before either.
  virtual int32_t enqueue(const nvinfer1::PluginTensorDesc* in, int32_t nb_in, const nvinfer1::PluginTensorDesc* out,
                          const void* const* inputs, void* const* outputs, void* workspace,
                          cudaStream_t stream) const = 0;
  // The named fields the creator reads back (V3 getFieldsToSerialize; V2 packs them into bytes).
  virtual void fields(FieldStore* store) const = 0;
};

// enqueue of both plugin interfaces: null pointers refused, the core's status, exceptions logged.
inline int32_t enqueue_core(const std::string& name, const OpCore& core, const nvinfer1::PluginTensorDesc* in,
                            int32_t nb_in, const nvinfer1::PluginTensorDesc* out, const void* const* inputs,
                            void* const* outputs, void* workspace, cudaStream_t stream) noexcept {
  return guarded<int32_t>(name + " enqueue", 1, [&] {
    if (in == nullptr || out == nullptr || inputs == nullptr || outputs == nullptr) {
      log_error(name + " enqueue: null tensor descriptions or pointers");
      return 1;
    }
    return core.enqueue(in, nb_in, out, inputs, outputs, workspace, stream);
  });
}

// One plugin name: its declared fields and the core for a field collection. Served as IPluginV3
// version "1" (TensorRT >= 10) or IPluginV2DynamicExt "1" (8.6), and IPluginV2DynamicExt "legacy";
// a creator marked v3_only as IPluginV3 "1" alone (so not at all on 8.6).
struct OpCreator {
  std::string name;                        // plugin name == ONNX op_type
  // IPluginV3 only: a core whose output shapes need what IPluginV2DynamicExt cannot declare
  // (a size tensor for a data-dependent extent).
  bool v3_only = false;
  // A drop-in's ONNX domain ("mmdeploy" for MMDeploy's nodes; empty for twinops' own and the
  // ONNX standard's): the library registers the creator in namespace "" and in this one, where
  // newer ONNX parsers look up a node that names no plugin_namespace after missing in "".
  std::string node_domain;
  // Registered in node_domain alone, not in "": a drop-in for a node whose name libnvinfer_plugin
  // registers in "" itself, which a node selects by plugin_namespace.
  bool domain_only = false;
  std::function<void(FieldStore*)> declare;  // getFieldNames
  // createPlugin and V2 deserializePlugin: a core, or nullptr and *error set. `runtime`: the
  // fields are the plugin's own serialized ones (V3 runtime phase, V2 deserializePlugin), not
  // the parser's conversion of a node's attributes (build phase).
  std::function<std::unique_ptr<OpCore>(const nvinfer1::PluginFieldCollection*, bool runtime, std::string* error)>
      make;
};

// What a creator does with a declared field that a build-phase collection lacks. TensorRT's ONNX
// parser passes only the attributes a node has; twinops' exporters write every attribute, but a
// creator that runs another tool's or the ONNX standard's node must read an absent attribute as
// its default, as ONNX defines it. The serialized fields (runtime phase) are always complete.
enum class AbsentFields { kRefused, kDefaultWhenBuilding };

// An OpCreator whose fields are the members of Fields (an attribute struct, twinops_attrs.h):
// declared and read by op_fields.h, then make(const Fields&, std::string* error) builds the core.
template <class Fields, class Make>
OpCreator attr_creator(std::string name, Make make, AbsentFields absent = AbsentFields::kRefused) {
  OpCreator c;
  c.name = name;
  c.declare = [](FieldStore* store) { declare_attr_fields<Fields>(store); };
  c.make = [name, make, absent](const nvinfer1::PluginFieldCollection* fc, bool runtime,
                                std::string* error) -> std::unique_ptr<OpCore> {
    Fields f;
    *error = read_attr_fields(FieldReader(fc, name), &f, !runtime && absent == AbsentFields::kDefaultWhenBuilding);
    return error->empty() ? make(f, error) : nullptr;
  };
  return c;
}

// `c` served as IPluginV3 alone (OpCreator::v3_only).
inline OpCreator v3_only(OpCreator c) {
  c.v3_only = true;
  return c;
}

// `c` as the drop-in of another toolkit's node written in ONNX domain `domain`.
inline OpCreator drop_in(OpCreator c, std::string domain) {
  c.node_domain = std::move(domain);
  return c;
}

// `c` as the drop-in of a node that TensorRT's own plugin library also serves: registered in
// namespace `ns` alone (OpCreator::domain_only), so both can be loaded and a node picks one.
inline OpCreator own_namespace_drop_in(OpCreator c, std::string ns) {
  c.node_domain = std::move(ns);
  c.domain_only = true;
  return c;
}

// The library's creators, in registration order (plugin_creators.cpp).
const std::vector<OpCreator>& op_creators();

}  // namespace trt
}  // namespace twinops
