// The plugin face of the test-tree op tests/kinds_op.py (TwinopsTestKindsGather), for the generic
// plugin classes (tests/test_op_kinds.py): an int32/int64 index input whose values the kernel
// (tests/trt_kinds_op_kernels.cu) reads on the device, an optional third input (a node with 2 or
// 3 inputs: the core's enqueue is told which), and two outputs of different types (rows: data's
// type; counts: int64, int32 on TensorRT 8.6, which has no int64 tensors). An index outside
// [0, N) gives NaN rows and is not counted: the plugin never aborts.
#include <cuda_runtime_api.h>

#include <cmath>
#include <memory>
#include <string>

#include "../csrc/trt/op_core.h"

namespace twinops_test {
cudaError_t kinds_gather(bool half, bool int64_index, bool int64_counts, const void* data, const void* index,
                         const void* weight, float scale, void* rows, void* counts, int64_t n, int64_t m, int64_t c,
                         cudaStream_t stream);
}  // namespace twinops_test

namespace twinops {
namespace trt {
namespace {

#define TWIN_TEST_KINDS_ATTRS(A) A(::twinops::attr::Float, scale, "", ::twinops::attr::kAny, 1.0)
struct KindsAttrs {
  TWIN_ATTR_STRUCT(TWIN_TEST_KINDS_ATTRS)
};

#if NV_TENSORRT_MAJOR >= 10
constexpr nvinfer1::DataType kCountType = nvinfer1::DataType::kINT64;
#else
constexpr nvinfer1::DataType kCountType = nvinfer1::DataType::kINT32;
#endif

bool float_type(nvinfer1::DataType t) { return t == nvinfer1::DataType::kFLOAT || t == nvinfer1::DataType::kHALF; }
bool index_type(nvinfer1::DataType t) {
#if NV_TENSORRT_MAJOR >= 10
  if (t == nvinfer1::DataType::kINT64) return true;
#endif
  return t == nvinfer1::DataType::kINT32;
}

class KindsCore final : public OpCore {
 public:
  explicit KindsCore(const KindsAttrs& a) : a_(a) {}
  static std::unique_ptr<OpCore> make(const KindsAttrs& a, std::string* error) {
    if (!std::isfinite(a.scale)) {
      *error = "TwinopsTestKindsGather: field 'scale' must be finite";
      return nullptr;
    }
    return std::make_unique<KindsCore>(a);
  }
  std::unique_ptr<OpCore> clone() const override { return std::make_unique<KindsCore>(*this); }
  int32_t nb_outputs() const override { return 2; }
  static std::string input_count_error(int32_t nb_in) {
    return nb_in == 2 || nb_in == 3 ? ""
                                    : "expects 2 or 3 inputs (data, index[, weight]), got " + std::to_string(nb_in);
  }
  std::string output_types(const nvinfer1::DataType* in, int32_t nb_in, nvinfer1::DataType* out) const override {
    if (std::string e = input_count_error(nb_in); !e.empty()) return e;
    out[0] = in[0];
    out[1] = kCountType;
    return "";
  }
  std::string output_shapes(const nvinfer1::DimsExprs* in, int32_t nb_in, const nvinfer1::DimsExprs*, int32_t,
                            nvinfer1::IExprBuilder&, nvinfer1::DimsExprs* out) const override {
    if (std::string e = input_count_error(nb_in); !e.empty()) return e;
    if (in[0].nbDims != 2 || in[1].nbDims != 1 || (nb_in == 3 && in[2].nbDims != 1))
      return "expects data (N, C), index (M,) and weight (C,)";
    out[0].nbDims = 2;
    out[0].d[0] = in[1].d[0];
    out[0].d[1] = in[0].d[1];
    out[1].nbDims = 1;
    out[1].d[0] = in[0].d[0];
    return "";
  }
  bool supports(int32_t pos, const nvinfer1::PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (io[pos].format != nvinfer1::TensorFormat::kLINEAR) return false;
    if (pos == 0) return float_type(io[0].type);
    if (pos == 1) return index_type(io[1].type);
    if (pos == nb_in + 1) return io[pos].type == kCountType;
    return io[pos].type == io[0].type;  // weight (pos 2 of 3 inputs) and rows
  }
  static std::string weight_error(int64_t c, int64_t weight) {
    return c >= 0 && weight >= 0 && weight != c
               ? "weight must have C = " + std::to_string(c) + " entries, got " + std::to_string(weight)
               : "";
  }
  std::string configure(const nvinfer1::DynamicPluginTensorDesc* in, int32_t nb_in,
                        const nvinfer1::DynamicPluginTensorDesc*, int32_t) const override {
    if (std::string e = input_count_error(nb_in); !e.empty()) return e;
    return nb_in == 3 ? weight_error(in[0].desc.dims.d[1], in[2].desc.dims.d[0]) : "";
  }
  std::string shapes_changed(const nvinfer1::PluginTensorDesc* in, int32_t nb_in, const nvinfer1::PluginTensorDesc*,
                             int32_t) const override {
    if (std::string e = input_count_error(nb_in); !e.empty()) return e;
    return nb_in == 3 ? weight_error(in[0].dims.d[1], in[2].dims.d[0]) : "";
  }
  size_t workspace(const nvinfer1::DynamicPluginTensorDesc*, int32_t, const nvinfer1::DynamicPluginTensorDesc*,
                   int32_t) const override {
    return 0;
  }
  int32_t enqueue(const nvinfer1::PluginTensorDesc* in, int32_t nb_in, const nvinfer1::PluginTensorDesc*,
                  const void* const* inputs, void* const* outputs, void*, cudaStream_t stream) const override {
    if (nb_in != 2 && nb_in != 3) {
      log_error("TwinopsTestKindsGather enqueue: " + input_count_error(nb_in));
      return 1;
    }
    const int64_t n = in[0].dims.d[0], c = in[0].dims.d[1], m = in[1].dims.d[0];
    const bool weighted = nb_in == 3;
    const cudaError_t e = twinops_test::kinds_gather(
        in[0].type == nvinfer1::DataType::kHALF, in[1].type != nvinfer1::DataType::kINT32,
        kCountType != nvinfer1::DataType::kINT32, inputs[0], inputs[1], weighted ? inputs[2] : nullptr,
        static_cast<float>(a_.scale), outputs[0], outputs[1], n, m, c, stream);
    if (e != cudaSuccess) {
      log_error(std::string("TwinopsTestKindsGather enqueue: ") + cudaGetErrorString(e));
      return static_cast<int32_t>(e);
    }
    return 0;
  }
  void fields(FieldStore* store) const override { write_attr_fields(a_, store); }

 private:
  KindsAttrs a_;
};

}  // namespace

const std::vector<OpCreator>& op_creators() {
  static const std::vector<OpCreator>* list =
      new std::vector<OpCreator>{attr_creator<KindsAttrs>("TwinopsTestKindsGather", &KindsCore::make)};
  return *list;
}

}  // namespace trt
}  // namespace twinops
