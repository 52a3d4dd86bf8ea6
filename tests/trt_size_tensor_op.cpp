// A test op for the plugin host's data-dependent outputs (tests/test_plugin_host.py):
// TwinopsTestPrefix returns the first `length` elements of its 1-D float input x (K) and, as a
// second output, that length: output 0's extent is a size tensor (declareSizeTensor, upper bound
// K, opt ceil(K / 2)), so the creator is IPluginV3 only. Fields that break TensorRT's rules on
// purpose: `size_output` (the output index declareSizeTensor names), `size_rank` (output 1's
// rank, 0 when valid) and `size_type` (output 1's type: 0 int64, 1 int32, 2 float32). `length`
// may exceed K: then the copy stops at K but the size tensor claims `length`.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "../csrc/trt/op_core.h"

#if TWIN_TRT_HAS_V3

namespace twinops {
namespace trt {
namespace {

#define TWIN_TEST_PREFIX_ATTRS(A)                                   \
  A(::twinops::attr::Int, length, "", ::twinops::attr::kAny, 1)     \
  A(::twinops::attr::Int, size_output, "", ::twinops::attr::kAny, 1) \
  A(::twinops::attr::Int, size_rank, "", ::twinops::attr::kAny, 0)   \
  A(::twinops::attr::Int, size_type, "", ::twinops::attr::kAny, 0)
struct PrefixAttrs {
  TWIN_ATTR_STRUCT(TWIN_TEST_PREFIX_ATTRS)
};

nvinfer1::DataType size_type(int64_t code) {
  return code == 1 ? nvinfer1::DataType::kINT32 : code == 2 ? nvinfer1::DataType::kFLOAT : nvinfer1::DataType::kINT64;
}

class PrefixCore final : public OpCore {
 public:
  explicit PrefixCore(const PrefixAttrs& a) : a_(a) {}
  static std::unique_ptr<OpCore> make(const PrefixAttrs& a, std::string* error) {
    if (a.length < 0 || a.size_rank < 0 || a.size_rank > 1 || a.size_type < 0 || a.size_type > 2) {
      *error = "TwinopsTestPrefix: fields length >= 0, size_rank 0 or 1, size_type 0, 1 or 2";
      return nullptr;
    }
    return std::make_unique<PrefixCore>(a);
  }
  std::unique_ptr<OpCore> clone() const override { return std::make_unique<PrefixCore>(*this); }
  int32_t nb_outputs() const override { return 2; }
  std::string output_types(const nvinfer1::DataType* in, int32_t nb_in, nvinfer1::DataType* out) const override {
    if (nb_in != 1) return "expects 1 input, got " + std::to_string(nb_in);
    out[0] = in[0];
    out[1] = size_type(a_.size_type);
    return "";
  }
  std::string output_shapes(const nvinfer1::DimsExprs* in, int32_t nb_in, const nvinfer1::DimsExprs*, int32_t,
                            nvinfer1::IExprBuilder& b, nvinfer1::DimsExprs* out) const override {
    if (nb_in != 1 || in[0].nbDims != 1) return "expects one 1-D input";
    const nvinfer1::IDimensionExpr* opt =
        b.operation(nvinfer1::DimensionOperation::kCEIL_DIV, *in[0].d[0], *b.constant(2));
    out[0].nbDims = 1;
    out[0].d[0] = b.declareSizeTensor(static_cast<int32_t>(a_.size_output), *opt, *in[0].d[0]);
    if (out[0].d[0] == nullptr) return "declareSizeTensor returned nullptr";
    out[1].nbDims = static_cast<int32_t>(a_.size_rank);
    if (a_.size_rank == 1) out[1].d[0] = b.constant(1);
    return "";
  }
  bool supports(int32_t pos, const nvinfer1::PluginTensorDesc* io, int32_t, int32_t) const override {
    if (io[pos].format != nvinfer1::TensorFormat::kLINEAR) return false;
    if (pos == 2) return io[2].type == size_type(a_.size_type);
    return io[pos].type == nvinfer1::DataType::kFLOAT;
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
    const int64_t k = in[0].dims.d[0];
    const int64_t n = a_.length < k ? a_.length : k;
    cudaError_t e = cudaMemcpyAsync(outputs[0], inputs[0], sizeof(float) * static_cast<size_t>(n),
                                    cudaMemcpyDeviceToDevice, stream);
    // The claimed length from this object's own members: they outlive the copy.
    if (e == cudaSuccess)
      e = a_.size_type == 1 ? cudaMemcpyAsync(outputs[1], &length32_, sizeof(length32_), cudaMemcpyHostToDevice, stream)
                            : cudaMemcpyAsync(outputs[1], &a_.length, sizeof(a_.length), cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) log_error(std::string("TwinopsTestPrefix enqueue: ") + cudaGetErrorString(e));
    return static_cast<int32_t>(e);
  }
  void fields(FieldStore* store) const override { write_attr_fields(a_, store); }

 private:
  PrefixAttrs a_;
  int32_t length32_ = static_cast<int32_t>(a_.length);
};

}  // namespace

const std::vector<OpCreator>& op_creators() {
  static const std::vector<OpCreator>* list =
      new std::vector<OpCreator>{v3_only(attr_creator<PrefixAttrs>("TwinopsTestPrefix", &PrefixCore::make))};
  return *list;
}

}  // namespace trt
}  // namespace twinops

#endif  // TWIN_TRT_HAS_V3
