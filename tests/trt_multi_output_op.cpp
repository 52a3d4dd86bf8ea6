// A test op for the generic plugin classes (tests/resize/test_resize_plugins.py): TwinopsTestCopies returns
// `copies` copies of its one input (any float type, any rank), so a plugin library built from
// csrc/trt's generic sources and this file has a creator with several outputs. Its field list
// is an attribute list, as a real op's.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "../csrc/trt/op_core.h"

namespace twinops {
namespace trt {
namespace {

#define TWIN_TEST_COPIES_ATTRS(A) A(::twinops::attr::Int, copies, "", ::twinops::attr::kAny, 2)
struct CopiesAttrs {
  TWIN_ATTR_STRUCT(TWIN_TEST_COPIES_ATTRS)
};

size_t elements(const nvinfer1::Dims& d) {
  size_t n = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) n *= static_cast<size_t>(d.d[i]);
  return n;
}

size_t type_size(nvinfer1::DataType t) { return t == nvinfer1::DataType::kFLOAT ? 4 : 2; }

bool float_type(nvinfer1::DataType t) {
  return t == nvinfer1::DataType::kFLOAT || t == nvinfer1::DataType::kHALF;
}

class CopiesCore final : public OpCore {
 public:
  explicit CopiesCore(const CopiesAttrs& a) : a_(a) {}
  static std::unique_ptr<OpCore> make(const CopiesAttrs& a, std::string* error) {
    if (a.copies < 1 || a.copies > 8) {
      *error = "TwinopsTestCopies: field 'copies' must be in [1, 8], got " + std::to_string(a.copies);
      return nullptr;
    }
    return std::make_unique<CopiesCore>(a);
  }
  std::unique_ptr<OpCore> clone() const override { return std::make_unique<CopiesCore>(*this); }
  int32_t nb_outputs() const override { return static_cast<int32_t>(a_.copies); }
  std::string output_types(const nvinfer1::DataType* in, int32_t nb_in, nvinfer1::DataType* out) const override {
    if (nb_in != 1) return "expects 1 input, got " + std::to_string(nb_in);
    for (int32_t i = 0; i < nb_outputs(); ++i) out[i] = in[0];
    return "";
  }
  std::string output_shapes(const nvinfer1::DimsExprs* in, int32_t nb_in, const nvinfer1::DimsExprs*, int32_t,
                            nvinfer1::IExprBuilder&, nvinfer1::DimsExprs* out) const override {
    if (nb_in != 1) return "expects 1 input, got " + std::to_string(nb_in);
    for (int32_t i = 0; i < nb_outputs(); ++i) out[i] = in[0];
    return "";
  }
  bool supports(int32_t pos, const nvinfer1::PluginTensorDesc* io, int32_t, int32_t) const override {
    if (io[pos].format != nvinfer1::TensorFormat::kLINEAR) return false;
    return pos == 0 ? float_type(io[0].type) : io[pos].type == io[0].type;
  }
  std::string configure(const nvinfer1::DynamicPluginTensorDesc*, int32_t nb_in, const nvinfer1::DynamicPluginTensorDesc*,
                        int32_t) const override {
    return nb_in == 1 ? "" : "expects 1 input, got " + std::to_string(nb_in);
  }
  size_t workspace(const nvinfer1::DynamicPluginTensorDesc*, int32_t, const nvinfer1::DynamicPluginTensorDesc*,
                   int32_t) const override {
    return 0;
  }
  int32_t enqueue(const nvinfer1::PluginTensorDesc* in, int32_t, const nvinfer1::PluginTensorDesc*,
                  const void* const* inputs, void* const* outputs, void*, cudaStream_t stream) const override {
    const size_t bytes = elements(in[0].dims) * type_size(in[0].type);
    for (int32_t i = 0; i < nb_outputs(); ++i) {
      const cudaError_t e = cudaMemcpyAsync(outputs[i], inputs[0], bytes, cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess) {
        log_error(std::string("TwinopsTestCopies enqueue: ") + cudaGetErrorString(e));
        return static_cast<int32_t>(e);
      }
    }
    return 0;
  }
  void fields(FieldStore* store) const override { write_attr_fields(a_, store); }

 private:
  CopiesAttrs a_;
};

}  // namespace

const std::vector<OpCreator>& op_creators() {
  static const std::vector<OpCreator>* list =
      new std::vector<OpCreator>{attr_creator<CopiesAttrs>("TwinopsTestCopies", &CopiesCore::make)};
  return *list;
}

}  // namespace trt
}  // namespace twinops
