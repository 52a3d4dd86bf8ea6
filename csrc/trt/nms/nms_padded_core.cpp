// The padded nms plugins' OpCore and creators (see nms_core.h): TwinopsBatchedNMSPadded and the
// EfficientNMS_TRT drop-in, one core over batched_nms_padded's device pass.
#include <cmath>
#include <memory>
#include <string>

#include "../../kernels/nms/nms.h"
#include "../core_util.h"
#include "nms_core.h"

namespace twinops {
namespace nms {
namespace plugin {

namespace {

// detection_indices' type: int64 where TensorRT has it (>= 9), else int32 (8.6 narrows the ONNX
// node's int64 output).
constexpr DataType kIndexType =
#if TWIN_TRT_HAS_BF16
    DataType::kINT64;
#else
    DataType::kINT32;
#endif

// The drop-in's candidate cut: EfficientNMS_TRT takes the best 5,000 candidates per image (after
// its initialize on devices with 64 Ki registers per block; csrc/trt/nms/README.md).
constexpr int64_t kEfficientCandidates = 5000;

class PaddedCore final : public OpCore {
 public:
  // TwinopsBatchedNMSPadded: 2 inputs, 5 outputs (the indices last), twinops' rules.
  explicit PaddedCore(const PaddedFields& f) : name_("TwinopsBatchedNMSPadded"), padded_(f) {
    base_.class_agnostic = f.class_agnostic != 0;
    base_.score_threshold = f.score_threshold;
    base_.iou_threshold = f.iou_threshold;
    base_.max_output = f.max_output_boxes;
    base_.pre_nms_top_k = f.pre_nms_top_k;
  }
  // EfficientNMS_TRT: boxes, scores and optional anchors, 4 outputs, its rules.
  explicit PaddedCore(const EfficientFields& f) : name_("EfficientNMS_TRT"), efficient_(f), is_efficient_(true) {
    base_.efficient = true;
    base_.class_agnostic = f.class_agnostic != 0;
    base_.background_class = f.background_class;
    base_.box_coding = static_cast<int>(f.box_coding);
    base_.score_activation = f.score_activation != 0;
    // With the activation the raw scores are compared with the threshold's logit, in float as
    // EfficientNMS_TRT computes it; a threshold of at most 0 admits every score.
    const float t = static_cast<float>(f.score_threshold);
    base_.score_threshold = !base_.score_activation ? t : t <= 0.0f ? -32768.0f : std::log(t / (1.0f - t));
    base_.iou_threshold = static_cast<float>(f.iou_threshold);
    base_.max_output = f.max_output_boxes;
    base_.pre_nms_top_k = kEfficientCandidates;
  }

  static std::unique_ptr<OpCore> make(const PaddedFields& f, std::string* error) {
    const std::string who = "TwinopsBatchedNMSPadded: field ";
    if (!std::isfinite(f.score_threshold))
      *error = who + "'score_threshold' must be finite, got " + std::to_string(f.score_threshold);
    else if (!(f.iou_threshold >= 0.0 && f.iou_threshold <= 1.0))  // NaN fails too
      *error = who + "'iou_threshold' must be in [0, 1], got " + std::to_string(f.iou_threshold);
    else if (f.max_output_boxes < 1)
      *error = who + "'max_output_boxes' must be at least 1, got " + std::to_string(f.max_output_boxes);
    else if (f.pre_nms_top_k != -1 && f.pre_nms_top_k < 1)
      *error = who + "'pre_nms_top_k' must be -1 (every candidate) or at least 1, got " +
               std::to_string(f.pre_nms_top_k);
    else if (f.class_agnostic != 0 && f.class_agnostic != 1)
      *error = who + "'class_agnostic' must be 0 or 1, got " + std::to_string(f.class_agnostic);
    return error->empty() ? std::make_unique<PaddedCore>(f) : nullptr;
  }

  static std::unique_ptr<OpCore> make(const EfficientFields& f, std::string* error) {
    const std::string who = "EfficientNMS_TRT: field ";
    if (!(f.score_threshold >= 0.0) || !std::isfinite(f.score_threshold))
      *error = who + "'score_threshold' must be finite and at least 0, got " + std::to_string(f.score_threshold);
    else if (!(f.iou_threshold >= 0.0 && f.iou_threshold <= 1.0))
      *error = who + "'iou_threshold' must be in [0, 1], got " + std::to_string(f.iou_threshold);
    else if (f.max_output_boxes < 1)
      *error = who + "'max_output_boxes' must be at least 1, got " + std::to_string(f.max_output_boxes);
    else if (f.background_class < -1)
      *error = who + "'background_class' must be -1 (none) or a class, got " + std::to_string(f.background_class);
    else if (f.score_activation != 0 && f.score_activation != 1)
      *error = who + "'score_activation' must be 0 or 1, got " + std::to_string(f.score_activation);
    else if (f.class_agnostic != 0 && f.class_agnostic != 1)
      *error = who + "'class_agnostic' must be 0 or 1, got " + std::to_string(f.class_agnostic);
    else if (f.box_coding != 0 && f.box_coding != 1)
      *error = who + "'box_coding' must be 0 (corners) or 1 (center-size), got " + std::to_string(f.box_coding);
    return error->empty() ? std::make_unique<PaddedCore>(f) : nullptr;
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<PaddedCore>(*this); }
  int32_t nb_outputs() const override { return outputs(); }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (std::string e = box_score_types(in[0], in[1]); !e.empty()) return e;
    if (nb_in == 3 && in[2] != in[0])
      return "anchors must have the boxes' type (" + type_name(in[0]) + "), got " + type_name(in[2]);
    out[0] = DataType::kINT32;
    out[1] = out[2] = in[0];
    out[3] = DataType::kINT32;
    if (!is_efficient_) out[4] = kIndexType;
    return "";
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    const DimsExprs &b = in[0], &s = in[1];
    if (b.nbDims != 3 && b.nbDims != 4)
      return "boxes must be 3-D (B, N, 4) or 4-D (B, N, C, 4), got " + std::to_string(b.nbDims) + "-D";
    if (b.d[b.nbDims - 1]->isConstant() && b.d[b.nbDims - 1]->getConstantValue() != 4)
      return "boxes' last dim must be 4, got " + std::to_string(b.d[b.nbDims - 1]->getConstantValue());
    if (s.nbDims != 3) return "scores must be 3-D (B, N, C), got " + std::to_string(s.nbDims) + "-D";
    const char* names[] = {"B", "N", "C"};
    for (int32_t i = 0; i < b.nbDims - 1; ++i) {
      const nvinfer1::IDimensionExpr *x = b.d[i], *y = s.d[i];
      if (x->isConstant() && y->isConstant() && x->getConstantValue() != y->getConstantValue())
        return std::string("boxes and scores must have one ") + names[i] + ", got " +
               std::to_string(x->getConstantValue()) + " and " + std::to_string(y->getConstantValue());
    }
    if (nb_in == 3 && (in[2].nbDims != 3 || (in[2].d[2]->isConstant() && in[2].d[2]->getConstantValue() != 4)))
      return "anchors must be 3-D (1 or B, N, 4)";
    const nvinfer1::IDimensionExpr* k = builder.constant(base_.max_output);
    const nvinfer1::IDimensionExpr* one = builder.constant(1);
    const nvinfer1::IDimensionExpr* four = builder.constant(4);
    if (k == nullptr || one == nullptr || four == nullptr) return "the expression builder refused a constant";
    out[0].nbDims = 2;
    out[0].d[0] = s.d[0];
    out[0].d[1] = one;
    out[1].nbDims = 3;
    out[1].d[0] = s.d[0];
    out[1].d[1] = k;
    out[1].d[2] = four;
    for (int32_t i = 2; i < outputs(); ++i) {
      out[i].nbDims = 2;
      out[i].d[0] = s.d[0];
      out[i].d[1] = k;
    }
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t nb_out) const override {
    if (!check_count(nb_in).empty() || nb_out != outputs() || pos < 0 || pos >= nb_in + nb_out ||
        io[pos].format != TensorFormat::kLINEAR)
      return false;
    if (pos == 0) return is_float_type(io[0].type);
    if (pos < nb_in) return io[pos].type == io[0].type;  // scores, anchors
    switch (pos - nb_in) {
      case 1: case 2: return io[pos].type == io[0].type;  // detection boxes and scores
      case 4: return io[pos].type == kIndexType;          // detection indices
      default: return io[pos].type == DataType::kINT32;   // num_detections, detection_classes
    }
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (nb_out != outputs()) return outputs_message(outputs(), nb_out);
    if (std::string e = box_score_types(in[0].desc.type, in[1].desc.type); !e.empty()) return e;
    if (!is_efficient_ && out[4].desc.type != kIndexType) return "detection_indices must be " + type_name(kIndexType);
    const Dims& b = in[0].max;
    if ((b.nbDims != 3 && b.nbDims != 4) || in[0].min.d[b.nbDims - 1] > 4 || b.d[b.nbDims - 1] < 4)
      return "boxes must be (B, N, 4) or (B, N, C, 4); the profile's range excludes a last dim of 4";
    if (in[1].max.nbDims != 3) return "scores must be 3-D (B, N, C)";
    if (const char* why = padded_unsupported(params(in[1].max)))
      return std::string("the profile's largest shapes give ") + why +
             (is_efficient_ ? std::string() : std::string("; bound the candidates with pre_nms_top_k"));
    return "";
  }

  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc*,
                   int32_t) const override {
    if (nb_in < 2 || in[1].max.nbDims != 3) return 0;
    const PaddedParams p = params(in[1].max);
    return bytes_for(p, kernel_bytes(p, in[0].desc.type));
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    return check_concrete(in, nb_in, out, nb_out);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs_, void* workspace, cudaStream_t stream) const override {
    const std::string w = name_ + " enqueue: ";
    // TensorRT's enqueue passes no input count: the last configured one (anchors are optional).
    const int32_t n_in = nb_in >= 0 ? nb_in : 2;
    if (std::string e = check_count(n_in); !e.empty()) return enqueue_refused(w + e);
    if (std::string e = check_concrete(in, n_in, out, outputs()); !e.empty()) return enqueue_refused(w + e);
    PaddedParams p = params_of(in);
    if (p.batch == 0) return 0;
    for (int32_t i = 0; i < outputs(); ++i)
      if (outputs_[i] == nullptr) return enqueue_refused(w + "null output pointer " + std::to_string(i));
    const bool null_input = inputs[0] == nullptr || inputs[1] == nullptr || (n_in == 3 && inputs[2] == nullptr);
    if (p.boxes * p.classes > 0 && null_input) return enqueue_refused(w + "null boxes, scores or anchors pointer");
    if (n_in == 3) {
      p.anchors = inputs[2];
      p.anchor_batch = in[2].dims.d[0];
    }
    const size_t bytes = kernel_bytes(p, in[0].type);
    if (bytes_for(p, bytes) > 0 && workspace == nullptr) return enqueue_refused(w + "null workspace pointer");
    const bool narrow = !is_efficient_ && kIndexType == DataType::kINT32;
    int64_t* indices = is_efficient_ ? nullptr
                       : narrow      ? reinterpret_cast<int64_t*>(static_cast<char*>(workspace) + after_kernels(bytes))
                                     : static_cast<int64_t*>(outputs_[4]);
    cudaError_t e = with_float_type(in[0].type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return nms_padded_cuda<T>(p, static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]),
                                static_cast<int32_t*>(outputs_[0]), static_cast<T*>(outputs_[1]),
                                static_cast<T*>(outputs_[2]), static_cast<int32_t*>(outputs_[3]), indices, workspace,
                                bytes, stream);
    });
    if (e == cudaSuccess && narrow)  // each index's low 4 bytes (little-endian; -1 stays -1)
      e = cudaMemcpy2DAsync(outputs_[4], sizeof(int32_t), indices, sizeof(int64_t), sizeof(int32_t),
                            static_cast<size_t>(p.batch * p.max_output), cudaMemcpyDeviceToDevice, stream);
    return enqueue_status(w, e);
  }

  void fields(FieldStore* store) const override {
    if (is_efficient_)
      write_attr_fields(efficient_, store);
    else
      write_attr_fields(padded_, store);
  }

 private:
  int32_t outputs() const { return is_efficient_ ? 4 : 5; }

  std::string check_count(int32_t nb_in) const {
    if (nb_in == 2 || (is_efficient_ && nb_in == 3)) return "";
    const char* want =
        is_efficient_ ? "expects 2 or 3 inputs (boxes, scores, anchors)" : "expects 2 inputs (boxes, scores)";
    return std::string(want) + ", got " + std::to_string(nb_in);
  }

  // The kernels' parameters for scores of shape s (B, N, C); boxes' rank and anchors are read at enqueue.
  PaddedParams params(const Dims& s) const {
    PaddedParams p = base_;
    p.batch = s.d[0];
    p.boxes = s.d[1];
    p.classes = s.d[2];
    return p;
  }

  PaddedParams params_of(const PluginTensorDesc* in) const {
    PaddedParams p = params(in[1].dims);
    p.per_class_boxes = in[0].dims.nbDims == 4;
    return p;
  }

  // The concrete shapes of one call.
  std::string check_concrete(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const {
    if (nb_out != outputs()) return outputs_message(outputs(), nb_out);
    const Dims &b = in[0].dims, &s = in[1].dims;
    if (s.nbDims != 3) return "scores must be (B, N, C)";
    const bool per_class = b.nbDims == 4;
    if (!((b.nbDims == 3 || per_class) && b.d[b.nbDims - 1] == 4 && b.d[0] == s.d[0] && b.d[1] == s.d[1] &&
          (!per_class || b.d[2] == s.d[2])))
      return "boxes must be (B, N, 4) or (B, N, C, 4) with the scores' B, N (and C)";
    if (nb_in == 3) {
      const Dims& a = in[2].dims;
      if (a.nbDims != 3 || (a.d[0] != 1 && a.d[0] != s.d[0]) || a.d[1] != s.d[1] || a.d[2] != 4)
        return "anchors must be (1 or B, N, 4) with the scores' B and N";
    }
    if (const char* why = padded_unsupported(params(s))) return std::string(why);
    if (out[1].dims.nbDims != 3 || out[1].dims.d[0] != s.d[0] || out[1].dims.d[1] != base_.max_output)
      return "detection_boxes must be (B, max_output_boxes, 4)";
    return "";
  }

  // The kernels' workspace for p with boxes of type `boxes`.
  static size_t kernel_bytes(const PaddedParams& p, DataType boxes) {
    return p.batch <= 0 ? 0 : padded_workspace_bytes(p, boxes == DataType::kFLOAT ? 4 : 2);
  }

  // The whole workspace: the kernels' (`kernels` bytes), then (int32 indices) the int64 indices
  // before narrowing.
  size_t bytes_for(const PaddedParams& p, size_t kernels) const {
    if (p.batch <= 0) return 0;
    return !is_efficient_ && kIndexType == DataType::kINT32
               ? after_kernels(kernels) + sizeof(int64_t) * static_cast<size_t>(p.batch * p.max_output)
               : kernels;
  }

  std::string name_;
  PaddedParams base_;  // the fields as the kernels take them (shapes filled in per call)
  PaddedFields padded_;
  EfficientFields efficient_;
  bool is_efficient_ = false;
};

template <class Fields>
std::unique_ptr<OpCore> make_core(const Fields& fields, std::string* error) {
  return PaddedCore::make(fields, error);
}

}  // namespace

OpCreator twinops_batched_nms_padded_creator() {
  return attr_creator<PaddedFields>("TwinopsBatchedNMSPadded", &make_core<PaddedFields>);
}

OpCreator efficient_nms_creator() {
  // TensorRT's parser passes only the attributes a node has: an absent one takes the plugin's
  // default, as EfficientNMS_TRT's creator does; namespace "twinops" alone (see nms_core.h).
  return own_namespace_drop_in(attr_creator<EfficientFields>("EfficientNMS_TRT", &make_core<EfficientFields>,
                                                             AbsentFields::kDefaultWhenBuilding),
                               "twinops");
}

}  // namespace plugin
}  // namespace nms
}  // namespace twinops
