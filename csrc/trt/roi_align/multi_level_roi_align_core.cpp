// The multi-level RoIAlign plugins' OpCore and creators (see roi_align_core.h). featmap_strides is
// a list of any length, which the attribute X-macros do not express, so the creators declare and
// read their fields here rather than through attr_creator.
#include <memory>
#include <string>
#include <vector>

#include "../../kernels/roi_align/roi_align_attrs.h"
#include "../../kernels/roi_align/roi_align_cuda.h"
#include "../core_util.h"
#include "roi_align_core.h"

namespace twinops {
namespace roi_align {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

namespace {

using nvinfer1::PluginFieldType;

enum class Kind : int32_t { kTwinops = 0, kMMCV = 1 };

const char* kind_name(Kind k) { return k == Kind::kMMCV ? "MMCVMultiLevelRoiAlign" : "TwinopsMultiLevelRoiAlign"; }

void declare(Kind k, FieldStore* s) {
  s->clear();
  const auto i32 = PluginFieldType::kINT32;
  const auto f32 = PluginFieldType::kFLOAT32;
  if (k == Kind::kTwinops) {
    for (const FieldDecl& d : {FieldDecl{"output_height", i32, 1}, FieldDecl{"output_width", i32, 1},
                               FieldDecl{"featmap_strides", f32, 0}, FieldDecl{"sampling_ratio", i32, 1},
                               FieldDecl{"aligned", i32, 1}, FieldDecl{"pool_mode", PluginFieldType::kCHAR, 0},
                               FieldDecl{"finest_scale", f32, 1}, FieldDecl{"roi_scale_factor", f32, 1},
                               FieldDecl{"level_rule", PluginFieldType::kCHAR, 0}})
      s->add_decl(d);
    return;
  }
  // MMDeploy's trt_multi_level_roi_align.cpp, in its order.
  for (const FieldDecl& d : {FieldDecl{"output_height", i32, 1}, FieldDecl{"output_width", i32, 1},
                             FieldDecl{"pool_mode", i32, 1}, FieldDecl{"sampling_ratio", i32, 1},
                             FieldDecl{"featmap_strides", f32, 0}, FieldDecl{"roi_scale_factor", f32, 1},
                             FieldDecl{"finest_scale", i32, 1}, FieldDecl{"aligned", i32, 1}})
    s->add_decl(d);
}

// The fields of a collection into attributes ("" or the first bad field's message). `runtime`:
// the plugin's own serialized fields, whose featmap_strides always has kMaxLevels entries (the
// strides, then zeros), so a truncated list is told from a shorter one; a node's list (build
// phase) has one entry per stride.
std::string read(Kind k, const nvinfer1::PluginFieldCollection* fc, bool runtime, MultiLevelAttrs* a) {
  const FieldReader r(fc, kind_name(k));
  if (!r.error().empty()) return r.error();
  std::string e;
  const auto take = [&](std::string err) {
    if (e.empty()) e = std::move(err);
  };
  take(r.get_int("output_height", &a->output_height));
  take(r.get_int("output_width", &a->output_width));
  if (runtime) {
    a->featmap_strides.assign(kMaxLevels, 0.0);
    take(r.get_floats("featmap_strides", kMaxLevels, a->featmap_strides.data()));
    while (!a->featmap_strides.empty() && a->featmap_strides.back() == 0.0) a->featmap_strides.pop_back();
  } else {
    take(r.get_float_list("featmap_strides", kMaxLevels, &a->featmap_strides));
  }
  take(r.get_int("sampling_ratio", &a->sampling_ratio));
  take(r.get_int("aligned", &a->aligned));
  take(r.get_float("roi_scale_factor", &a->roi_scale_factor));
  if (k == Kind::kTwinops) {
    take(r.get_string("pool_mode", &a->pool_mode));
    take(r.get_float("finest_scale", &a->finest_scale));
    take(r.get_string("level_rule", &a->level_rule));
    return e;
  }
  int64_t pool = 1, finest = 56;
  take(r.get_int("pool_mode", &pool));
  take(r.get_int("finest_scale", &finest));
  if (e.empty() && pool != 0 && pool != 1)
    return std::string(kind_name(k)) + ": field 'pool_mode' must be 0 (max) or 1 (avg), got " + std::to_string(pool);
  a->pool_mode = pool == 0 ? "max" : "avg";
  a->finest_scale = static_cast<double>(finest);
  a->level_rule = "mmdet";
  return e;
}

// The serialized fields, in the declared order (featmap_strides padded to kMaxLevels with zeros).
void write(Kind k, const MultiLevelAttrs& a, FieldStore* s) {
  s->clear();
  std::vector<double> strides(a.featmap_strides);
  strides.resize(kMaxLevels, 0.0);
  const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
  s->add_int("output_height", i32(a.output_height));
  s->add_int("output_width", i32(a.output_width));
  if (k == Kind::kTwinops) {
    s->add_floats("featmap_strides", strides.data(), kMaxLevels);
    s->add_int("sampling_ratio", i32(a.sampling_ratio));
    s->add_int("aligned", i32(a.aligned));
    s->add_string("pool_mode", a.pool_mode);
    s->add_floats("finest_scale", &a.finest_scale, 1);
    s->add_floats("roi_scale_factor", &a.roi_scale_factor, 1);
    s->add_string("level_rule", a.level_rule);
    return;
  }
  s->add_int("pool_mode", a.pool_mode == "max" ? 0 : 1);
  s->add_int("sampling_ratio", i32(a.sampling_ratio));
  s->add_floats("featmap_strides", strides.data(), kMaxLevels);
  s->add_floats("roi_scale_factor", &a.roi_scale_factor, 1);
  s->add_int("finest_scale", i32(static_cast<int64_t>(a.finest_scale)));
  s->add_int("aligned", i32(a.aligned));
}

std::string count_message(int32_t nb_in) {
  return "expects rois and 1 to " + std::to_string(kMaxLevels) + " levels (2 to " + std::to_string(kMaxLevels + 1) +
         " inputs), got " + std::to_string(nb_in);
}

bool count_ok(int32_t nb_in) { return nb_in >= 2 && nb_in <= kMaxLevels + 1; }

std::string check_types(const DataType* in, int32_t nb_in, DataType out) {
  if (!is_float_type(in[0])) return std::string("rois must be ") + kFloatTypes + ", got " + type_name(in[0]);
  for (int32_t i = 1; i < nb_in; ++i)
    if (in[i] != in[0])
      return "level" + std::to_string(i - 1) + " must have rois' type (" + type_name(in[0]) + "), got " +
             type_name(in[i]);
  if (out != in[0]) return "the output must have rois' type (" + type_name(in[0]) + "), got " + type_name(out);
  return "";
}

std::string rank_error(const int32_t* ranks, int32_t nb_in) {
  if (ranks[0] != 2) return "rois must be a 2-D (K, 5) tensor, got " + std::to_string(ranks[0]) + "-D";
  for (int32_t i = 1; i < nb_in; ++i)
    if (ranks[i] != 4)
      return "level" + std::to_string(i - 1) + " must be a 4-D (N, C, H, W) tensor, got " + std::to_string(ranks[i]) +
             "-D";
  return "";
}

// Params from per-input shapes (rois, then the levels); sizes below 0 unknown.
std::string params_of(const MultiLevelAttrs& a, int64_t (*shapes)[4], int32_t nb_in, Params* p) {
  const int64_t* levels[kMaxLevels];
  for (int32_t l = 0; l + 1 < nb_in; ++l) levels[l] = shapes[l + 1];
  return make_multi_params(nb_in - 1, levels, shapes[0], a, p);
}

class MultiLevelCore final : public OpCore {
 public:
  MultiLevelCore(Kind kind, MultiLevelAttrs a) : kind_(kind), a_(std::move(a)) {}

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<MultiLevelCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (!count_ok(nb_in)) return count_message(nb_in);
    out[0] = in[0];
    return check_types(in, nb_in, in[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in,
                            IExprBuilder& builder, DimsExprs* out) const override {
    if (!count_ok(nb_in)) return count_message(nb_in);
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    int32_t ranks[kMaxLevels + 1];
    for (int32_t i = 0; i < nb_in; ++i) ranks[i] = in[i].nbDims;
    if (std::string e = rank_error(ranks, nb_in); !e.empty()) return e;
    int64_t shapes[kMaxLevels + 1][4];
    for (int32_t i = 0; i < nb_in; ++i)
      for (int k = 0; k < in[i].nbDims; ++k) shapes[i][k] = in[i].d[k]->isConstant() ? in[i].d[k]->getConstantValue() : -1;
    Params unused;
    if (std::string e = params_of(a_, shapes, nb_in, &unused); !e.empty()) return e;
    out->nbDims = 4;
    out->d[0] = in[0].d[0];
    out->d[1] = in[1].d[1];
    out->d[2] = builder.constant(static_cast<int32_t>(a_.output_height));
    out->d[3] = builder.constant(static_cast<int32_t>(a_.output_width));
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (!count_ok(nb_in) || pos < 0 || pos > nb_in || io[pos].format != TensorFormat::kLINEAR) return false;
    return pos == 0 ? is_float_type(io[0].type) : io[pos].type == io[0].type;
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (!count_ok(nb_in)) return count_message(nb_in);
    DataType types[kMaxLevels + 1];
    int32_t ranks[kMaxLevels + 1];
    for (int32_t i = 0; i < nb_in; ++i) types[i] = in[i].desc.type, ranks[i] = in[i].min.nbDims;
    if (std::string e = check_types(types, nb_in, out[0].desc.type); !e.empty()) return e;
    return rank_error(ranks, nb_in);
  }

  size_t workspace(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*, int32_t) const override {
    return 0;  // the forward needs none
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (!count_ok(nb_in)) return count_message(nb_in);
    Params p;
    return concrete(in, nb_in, out, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void*, cudaStream_t stream) const override {
    const std::string w = std::string(kind_name(kind_)) + " enqueue: ";
    if (!count_ok(nb_in)) return enqueue_refused(w + count_message(nb_in));
    DataType types[kMaxLevels + 1];
    for (int32_t i = 0; i < nb_in; ++i) {
      if (in[i].format != TensorFormat::kLINEAR) return enqueue_refused(w + "every tensor must be linear");
      types[i] = in[i].type;
    }
    if (out[0].format != TensorFormat::kLINEAR) return enqueue_refused(w + "every tensor must be linear");
    if (std::string e = check_types(types, nb_in, out[0].type); !e.empty()) return enqueue_refused(w + e);
    Params p;
    if (std::string e = concrete(in, nb_in, out, &p); !e.empty()) return enqueue_refused(w + e);
    if (p.k * p.c * p.ph * p.pw == 0) return 0;  // an empty output: nothing to write
    for (int32_t i = 0; i < nb_in; ++i)
      if (inputs[i] == nullptr) return enqueue_refused(w + "null input pointer");
    if (outputs[0] == nullptr) return enqueue_refused(w + "null output pointer");
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            LevelPtrs<const T> feats;
                            for (int32_t l = 0; l + 1 < nb_in; ++l) feats.p[l] = static_cast<const T*>(inputs[l + 1]);
                            return forward_cuda<T, int64_t>(p, feats, static_cast<const T*>(inputs[0]), nullptr,
                                                            static_cast<T*>(outputs[0]), stream);
                          }));
  }

  void fields(FieldStore* store) const override { write(kind_, a_, store); }

 private:
  std::string concrete(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, Params* p) const {
    int32_t ranks[kMaxLevels + 1];
    for (int32_t i = 0; i < nb_in; ++i) ranks[i] = in[i].dims.nbDims;
    if (std::string e = rank_error(ranks, nb_in); !e.empty()) return e;
    int64_t shapes[kMaxLevels + 1][4];
    for (int32_t i = 0; i < nb_in; ++i)
      for (int k = 0; k < in[i].dims.nbDims; ++k) shapes[i][k] = in[i].dims.d[k];
    if (std::string e = params_of(a_, shapes, nb_in, p); !e.empty()) return e;
    const nvinfer1::Dims& y = out[0].dims;
    if (!(y.nbDims == 4 && y.d[0] == p->k && y.d[1] == p->c && y.d[2] == p->ph && y.d[3] == p->pw))
      return "the output's shape differs from (K, C, output_height, output_width) of rois and level0";
    return "";
  }

  Kind kind_;
  MultiLevelAttrs a_;
};

OpCreator creator(Kind kind) {
  OpCreator c;
  c.name = kind_name(kind);
  c.declare = [kind](FieldStore* s) { declare(kind, s); };
  c.make = [kind](const nvinfer1::PluginFieldCollection* fc, bool runtime,
                  std::string* error) -> std::unique_ptr<OpCore> {
    MultiLevelAttrs a;
    *error = read(kind, fc, runtime, &a);
    if (error->empty() && a.featmap_strides.empty())
      *error = std::string(kind_name(kind)) + ": featmap_strides holds no stride";
    if (error->empty()) {
      // The attributes alone, on one level per stride (sizes unknown).
      const int32_t levels = static_cast<int32_t>(a.featmap_strides.size());
      int64_t shapes[kMaxLevels + 1][4];
      for (auto& s : shapes) s[0] = s[1] = s[2] = s[3] = -1;
      Params unused;
      *error = params_of(a, shapes, levels + 1, &unused);
      if (!error->empty()) *error = std::string(kind_name(kind)) + ": " + *error;
    }
    return error->empty() ? std::make_unique<MultiLevelCore>(kind, std::move(a)) : nullptr;
  };
  return c;
}

}  // namespace

OpCreator twinops_multi_level_roi_align_creator() { return creator(Kind::kTwinops); }

OpCreator mmcv_multi_level_roi_align_creator() { return drop_in(creator(Kind::kMMCV), "mmdeploy"); }

}  // namespace plugin
}  // namespace roi_align
}  // namespace twinops
