// The TRTBatchedNMS drop-in's OpCore and creator (see nms_core.h): MMDeploy's node on
// nms_trt_batched_cuda (kernels/nms/nms_trt_batched.cu).
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

const char kName[] = "TRTBatchedNMS";

class TrtBatchedCore final : public OpCore {
 public:
  explicit TrtBatchedCore(const TrtBatchedFields& f) : fields_(f) {}

  static std::unique_ptr<OpCore> make(const TrtBatchedFields& f, std::string* error) {
    const std::string who = std::string(kName) + ": field ";
    // keep_topk's range is checked with the shapes: a node without it builds no engine, but the
    // plugin is made, as for every absent field
    if (f.num_classes < 0)
      *error = who + "'num_classes' must be at least 1 (0: the scores' class count), got " +
               std::to_string(f.num_classes);
    else if (!std::isfinite(f.score_threshold))
      *error = who + "'score_threshold' must be finite, got " + std::to_string(f.score_threshold);
    else if (!(f.iou_threshold >= 0.0 && f.iou_threshold <= 1.0))  // NaN fails too
      *error = who + "'iou_threshold' must be in [0, 1], got " + std::to_string(f.iou_threshold);
    else if (f.clip_boxes != 0 && f.clip_boxes != 1)
      *error = who + "'clip_boxes' must be 0 or 1, got " + std::to_string(f.clip_boxes);
    else if (f.return_index != 0 && f.return_index != 1)
      *error = who + "'return_index' must be 0 or 1, got " + std::to_string(f.return_index);
    return error->empty() ? std::make_unique<TrtBatchedCore>(f) : nullptr;
  }

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<TrtBatchedCore>(*this); }
  int32_t nb_outputs() const override { return fields_.return_index ? 3 : 2; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    if (std::string e = box_score_types(in[0], in[1]); !e.empty()) return e;
    out[0] = in[0];
    out[1] = DataType::kINT32;
    if (fields_.return_index) out[2] = DataType::kINT32;
    return "";
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    const DimsExprs &b = in[0], &s = in[1];
    if (b.nbDims != 4) return "boxes must be 4-D (N, P, C or 1, 4), got " + std::to_string(b.nbDims) + "-D";
    if (s.nbDims != 3) return "scores must be 3-D (N, P, num_classes), got " + std::to_string(s.nbDims) + "-D";
    if (fields_.keep_topk < 1) return keep_topk_message();
    if (fields_.num_classes > 0 && s.d[2]->isConstant() && s.d[2]->getConstantValue() != fields_.num_classes)
      return "scores must have num_classes (" + std::to_string(fields_.num_classes) + ") classes, got " +
             std::to_string(s.d[2]->getConstantValue());
    if (b.d[3]->isConstant() && b.d[3]->getConstantValue() != 4)
      return "boxes' last dim must be 4, got " + std::to_string(b.d[3]->getConstantValue());
    const nvinfer1::IDimensionExpr* k = builder.constant(fields_.keep_topk);
    const nvinfer1::IDimensionExpr* five = builder.constant(5);
    if (k == nullptr || five == nullptr) return "the expression builder refused a constant";
    out[0].nbDims = 3;
    out[0].d[0] = s.d[0];
    out[0].d[1] = k;
    out[0].d[2] = five;
    for (int32_t i = 1; i < nb_outputs(); ++i) {
      out[i].nbDims = 2;
      out[i].d[0] = s.d[0];
      out[i].d[1] = k;
    }
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t nb_out) const override {
    if (!check_count(nb_in).empty() || nb_out != nb_outputs() || pos < 0 || pos >= 2 + nb_out ||
        io[pos].format != TensorFormat::kLINEAR)
      return false;
    if (pos == 0) return is_float_type(io[0].type);
    if (pos == 1 || pos == 2) return io[pos].type == io[0].type;  // scores, dets
    return io[pos].type == DataType::kINT32;                      // labels, index
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    (void)out;
    if (nb_out != nb_outputs()) return outputs_message(nb_outputs(), nb_out);
    if (fields_.keep_topk < 1) return keep_topk_message();
    if (std::string e = box_score_types(in[0].desc.type, in[1].desc.type); !e.empty()) return e;
    if (in[0].max.nbDims != 4 || in[1].max.nbDims != 3) return "boxes must be 4-D and scores 3-D";
    if (const char* why = padded_unsupported(trt_batched_pass(params(in[0].max, in[1].max))))
      return std::string("the profile's largest shapes give ") + why;
    return "";
  }

  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc*,
                   int32_t) const override {
    if (nb_in != 2 || in[0].max.nbDims != 4 || in[1].max.nbDims != 3) return 0;
    return trt_batched_workspace_bytes(params(in[0].max, in[1].max), in[0].desc.type == DataType::kFLOAT ? 4 : 2);
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t nb_out) const override {
    if (std::string e = check_count(nb_in); !e.empty()) return e;
    return check_concrete(in, out, nb_out);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) const override {
    const std::string w = std::string(kName) + " enqueue: ";
    if (std::string e = check_concrete(in, out, nb_outputs()); !e.empty()) return enqueue_refused(w + e);
    const TrtBatchedParams t = params(in[0].dims, in[1].dims);
    if (t.batch == 0) return 0;
    for (int32_t i = 0; i < nb_outputs(); ++i)
      if (outputs[i] == nullptr) return enqueue_refused(w + "null output pointer " + std::to_string(i));
    if (t.priors * t.classes > 0 && (inputs[0] == nullptr || inputs[1] == nullptr))
      return enqueue_refused(w + "null boxes or scores pointer");
    const size_t bytes = trt_batched_workspace_bytes(t, in[0].type == DataType::kFLOAT ? 4 : 2);
    if (bytes > 0 && workspace == nullptr) return enqueue_refused(w + "null workspace pointer");
    int32_t* index = fields_.return_index ? static_cast<int32_t*>(outputs[2]) : nullptr;
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            return nms_trt_batched_cuda<T>(
                                t, static_cast<const T*>(inputs[0]), static_cast<const T*>(inputs[1]),
                                static_cast<T*>(outputs[0]), static_cast<int32_t*>(outputs[1]), index, workspace,
                                bytes, stream);
                          }));
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  std::string keep_topk_message() const {
    return "field 'keep_topk' must be at least 1, got " + std::to_string(fields_.keep_topk);
  }

  static std::string check_count(int32_t nb_in) {
    return nb_in == 2 ? "" : "expects 2 inputs (boxes, scores), got " + std::to_string(nb_in);
  }

  // The kernels' parameters for boxes b (N, P, C or 1, 4) and scores s (N, P, num_classes).
  TrtBatchedParams params(const Dims& b, const Dims& s) const {
    TrtBatchedParams t;
    t.batch = s.d[0];
    t.priors = s.d[1];
    t.classes = s.d[2];
    t.per_class_boxes = b.d[2] != 1;
    t.background_class = fields_.background_label_id;
    t.topk = fields_.topk;
    t.keep_topk = fields_.keep_topk;
    t.score_threshold = static_cast<float>(fields_.score_threshold);
    t.iou_threshold = static_cast<float>(fields_.iou_threshold);
    t.clip_boxes = fields_.clip_boxes != 0;
    return t;
  }

  std::string check_concrete(const PluginTensorDesc* in, const PluginTensorDesc* out, int32_t nb_out) const {
    if (nb_out != nb_outputs()) return outputs_message(nb_outputs(), nb_out);
    const Dims &b = in[0].dims, &s = in[1].dims;
    if (fields_.keep_topk < 1) return keep_topk_message();
    if (s.nbDims != 3 || (fields_.num_classes > 0 && s.d[2] != fields_.num_classes))
      return "scores must be (N, P, num_classes) with num_classes = " + std::to_string(fields_.num_classes);
    if (b.nbDims != 4 || b.d[0] != s.d[0] || b.d[1] != s.d[1] || (b.d[2] != 1 && b.d[2] != s.d[2]) || b.d[3] != 4)
      return "boxes must be (N, P, num_classes or 1, 4) with the scores' N and P";
    if (const char* why = padded_unsupported(trt_batched_pass(params(b, s)))) return why;
    if (out[0].dims.nbDims != 3 || out[0].dims.d[0] != s.d[0] || out[0].dims.d[1] != fields_.keep_topk)
      return "dets must be (N, keep_topk, 5)";
    return "";
  }

  TrtBatchedFields fields_;
};

std::unique_ptr<OpCore> make_core(const TrtBatchedFields& fields, std::string* error) {
  return TrtBatchedCore::make(fields, error);
}

}  // namespace

OpCreator trt_batched_nms_creator() {
  // MMDeploy's exporters may leave clip_boxes and return_index out: an absent field is its default.
  return drop_in(attr_creator<TrtBatchedFields>(kName, &make_core, AbsentFields::kDefaultWhenBuilding), "mmdeploy");
}

}  // namespace plugin
}  // namespace nms
}  // namespace twinops
