// The deform_conv2d plugins' OpCore and creators (see deform_conv2d_core.h).
#include "deform_conv2d_core.h"

#include <array>
#include <memory>
#include <string>

#include "../../kernels/deform_conv2d/deform_conv2d_attrs.h"
#include "../../kernels/deform_conv2d/deform_conv2d_cuda.h"
#include "../core_util.h"

namespace twinops {
namespace deform_conv2d {
namespace plugin {

using namespace ::twinops::trt;  // the generic plugin pieces

namespace {

// MMDeploy's MMCVModulatedDeformConv2d fields (its symbolic writes torch's (H, W) pairs).
#define TWIN_MMCV_MDCN_FIELDS(A)                                                 \
  A(::twinops::attr::Ints<2>, stride, "(H, W)", ::twinops::attr::kAny, 1, 1)   \
  A(::twinops::attr::Ints<2>, padding, "(H, W)", ::twinops::attr::kAny, 0, 0)  \
  A(::twinops::attr::Ints<2>, dilation, "(H, W)", ::twinops::attr::kAny, 1, 1) \
  A(::twinops::attr::Int, groups, "", ::twinops::attr::kAny, 1)                \
  A(::twinops::attr::Int, deform_groups, "", ::twinops::attr::kAny, 1)
struct MMCVModulatedFields {
  TWIN_ATTR_STRUCT(TWIN_MMCV_MDCN_FIELDS)
};

// MMDeploy's MMCVDeformConv2d fields: its symbolic writes padding as (pad_h, pad_h, pad_w, pad_w).
#define TWIN_MMCV_DCN_FIELDS(A)                                                                               \
  A(::twinops::attr::Ints<2>, stride, "(H, W)", ::twinops::attr::kAny, 1, 1)                                 \
  A(::twinops::attr::Ints<4>, padding, "(pad_h, pad_h, pad_w, pad_w)", ::twinops::attr::kAny, 0, 0, 0, 0)   \
  A(::twinops::attr::Ints<2>, dilation, "(H, W)", ::twinops::attr::kAny, 1, 1)                               \
  A(::twinops::attr::Int, groups, "", ::twinops::attr::kAny, 1)                                              \
  A(::twinops::attr::Int, deform_groups, "", ::twinops::attr::kAny, 1)
struct MMCVDeformFields {
  TWIN_ATTR_STRUCT(TWIN_MMCV_DCN_FIELDS)
};

// ONNX DeformConv-19's attributes, with its defaults (kernel_shape (0, 0): not given, W's).
#define TWIN_ONNX_DEFORM_CONV_FIELDS(A)                                                                        \
  A(::twinops::attr::Ints<2>, dilations, "(H, W)", ::twinops::attr::kAny, 1, 1)                               \
  A(::twinops::attr::Int, group, "", ::twinops::attr::kAny, 1)                                                \
  A(::twinops::attr::Ints<2>, kernel_shape, "(kh, kw)", ::twinops::attr::kAny, 0, 0)                          \
  A(::twinops::attr::Int, offset_group, "", ::twinops::attr::kAny, 1)                                         \
  A(::twinops::attr::Ints<4>, pads, "(h_begin, w_begin, h_end, w_end)", ::twinops::attr::kAny, 0, 0, 0, 0)   \
  A(::twinops::attr::Ints<2>, strides, "(H, W)", ::twinops::attr::kAny, 1, 1)
struct OnnxFields {
  TWIN_ATTR_STRUCT(TWIN_ONNX_DEFORM_CONV_FIELDS)
};

enum class Kind : int32_t { kTwinops = 0, kMMCVModulated = 1, kMMCVDeform = 2, kOnnx = 3 };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kMMCVModulated: return "MMCVModulatedDeformConv2d";
    case Kind::kMMCVDeform: return "MMCVDeformConv2d";
    case Kind::kOnnx: return "DeformConv";
    case Kind::kTwinops:
    default: return "TwinopsDeformConv2d";
  }
}

// Where each tensor of the op sits among a node's inputs (-1: absent).
struct Slots {
  int input, offset, weight, bias, mask;
};

// The input counts a kind takes and its input list, for messages.
struct Arity {
  int32_t least, most;
  const char* list;
};

Arity arity(Kind k) {
  switch (k) {
    case Kind::kMMCVModulated: return {4, 5, "input, offset, mask, weight and optionally bias"};
    case Kind::kMMCVDeform: return {3, 3, "input, offset, weight"};
    case Kind::kOnnx: return {3, 5, "X, W, offset, then optionally B and mask"};
    case Kind::kTwinops:
    default: return {3, 5, "input, offset, weight, then optionally bias and mask"};
  }
}

Slots slots(Kind k, int32_t nb) {
  switch (k) {
    case Kind::kMMCVModulated: return {0, 1, 3, nb >= 5 ? 4 : -1, 2};
    case Kind::kMMCVDeform: return {0, 1, 2, -1, -1};
    case Kind::kOnnx: return {0, 2, 1, nb >= 4 ? 3 : -1, nb >= 5 ? 4 : -1};
    case Kind::kTwinops:
    default: return {0, 1, 2, nb >= 4 ? 3 : -1, nb >= 5 ? 4 : -1};
  }
}

// A node's geometry and the group counts it states (-1: none stated, the shapes decide).
struct Config {
  Kind kind = Kind::kTwinops;
  Geometry geo;
  int64_t groups = -1, offset_groups = -1, kernel[2] = {0, 0};
};

std::string pair_error(const char* name, const std::array<int64_t, 4>& v) {
  return std::string(name) + " must be (pad_h, pad_h, pad_w, pad_w) as MMDeploy writes it, got (" +
         std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ", " +
         std::to_string(v[3]) + ")";
}

std::string config_of(const DeformConv2dAttrs& a, Config* c) {
  c->kind = Kind::kTwinops;
  c->geo = geometry_of(a);
  return check_geometry(c->geo);
}

std::string config_of(const MMCVModulatedFields& a, Config* c) {
  c->kind = Kind::kMMCVModulated;
  for (int k = 0; k < 2; ++k)
    c->geo.stride[k] = a.stride[k], c->geo.padding[k] = a.padding[k], c->geo.dilation[k] = a.dilation[k];
  c->groups = a.groups, c->offset_groups = a.deform_groups;
  if (a.groups < 1 || a.deform_groups < 1) return "groups and deform_groups must be at least 1";
  return check_geometry(c->geo);
}

std::string config_of(const MMCVDeformFields& a, Config* c) {
  c->kind = Kind::kMMCVDeform;
  if (a.padding[0] != a.padding[1] || a.padding[2] != a.padding[3]) return pair_error("padding", a.padding);
  for (int k = 0; k < 2; ++k) c->geo.stride[k] = a.stride[k], c->geo.dilation[k] = a.dilation[k];
  c->geo.padding[0] = a.padding[0], c->geo.padding[1] = a.padding[2];
  c->groups = a.groups, c->offset_groups = a.deform_groups;
  if (a.groups < 1 || a.deform_groups < 1) return "groups and deform_groups must be at least 1";
  return check_geometry(c->geo);
}

std::string config_of(const OnnxFields& a, Config* c) {
  c->kind = Kind::kOnnx;
  for (int k = 0; k < 2; ++k) {
    c->geo.stride[k] = a.strides[k], c->geo.dilation[k] = a.dilations[k];
    c->geo.padding[k] = a.pads[k], c->geo.padding_end[k] = a.pads[2 + k];
    c->kernel[k] = a.kernel_shape[k];
  }
  if (a.pads[2] < 0 || a.pads[3] < 0) return "pads must be at least 0";
  if ((a.kernel_shape[0] != 0 || a.kernel_shape[1] != 0) && (a.kernel_shape[0] < 1 || a.kernel_shape[1] < 1))
    return "kernel_shape must be at least (1, 1) where given";
  c->groups = a.group, c->offset_groups = a.offset_group;
  if (a.group < 1 || a.offset_group < 1) return "group and offset_group must be at least 1";
  return check_geometry(c->geo);
}

const char* group_names(Kind k) {
  return k == Kind::kOnnx ? "group / offset_group" : "groups / deform_groups";
}

// Params from the inputs' dims (a dim below 0: not known yet; nb within the kind's arity), the
// node's stated groups and kernel checked against the shapes.
std::string params_of(const Config& c, const Dims* dims, int32_t nb, Params* p) {
  const Slots s = slots(c.kind, nb);
  const int slot[5] = {s.input, s.offset, s.weight, s.bias, s.mask};
  const char* names[5] = {"input", "offset", "weight", "bias", "mask"};
  const int32_t ranks[5] = {4, 4, 4, 1, 4};
  int64_t shapes[5][4] = {};
  for (int i = 0; i < 5; ++i) {
    if (slot[i] < 0) continue;
    const Dims& d = dims[slot[i]];
    if (d.nbDims != ranks[i])
      return std::string(names[i]) + " (input " + std::to_string(slot[i]) + ") must be " + std::to_string(ranks[i]) +
             "-D, got " + std::to_string(d.nbDims) + "-D";
    for (int k = 0; k < ranks[i]; ++k) shapes[i][k] = d.d[k];
  }
  if (std::string e = make_params(shapes[0], shapes[1], shapes[2], s.bias >= 0 ? shapes[3] : nullptr,
                                  s.mask >= 0 ? shapes[4] : nullptr, c.geo, p);
      !e.empty())
    return e;
  if ((c.groups > 0 && p->groups > 0 && c.groups != p->groups) ||
      (c.offset_groups > 0 && p->offset_groups > 0 && c.offset_groups != p->offset_groups))
    return std::string("the node's ") + group_names(c.kind) + " (" + std::to_string(c.groups) + " / " +
           std::to_string(c.offset_groups) + ") differ from the shapes' (" + std::to_string(p->groups) + " / " +
           std::to_string(p->offset_groups) + ": C_in / weight's dim 1, offset's channels / (2 * kh * kw))";
  for (int k = 0; k < 2; ++k) {
    const int64_t have = k == 0 ? p->kh : p->kw;
    if (c.kernel[k] > 0 && have >= 0 && c.kernel[k] != have)
      return "kernel_shape (" + std::to_string(c.kernel[0]) + ", " + std::to_string(c.kernel[1]) +
             ") differs from W's kernel size";
  }
  return "";
}

template <class Fields>
class DeformConv2dCore final : public OpCore {
 public:
  DeformConv2dCore(const Fields& f, const Config& c) : fields_(f), cfg_(c) {}

  std::unique_ptr<OpCore> clone() const override { return std::make_unique<DeformConv2dCore>(*this); }
  int32_t nb_outputs() const override { return 1; }

  std::string output_types(const DataType* in, int32_t nb_in, DataType* out) const override {
    if (std::string e = count_error(nb_in); !e.empty()) return e;
    out[0] = in[0];
    return check_types(in, nb_in, in[0]);
  }

  std::string output_shapes(const DimsExprs* in, int32_t nb_in, const DimsExprs*, int32_t nb_shape_in, IExprBuilder&,
                            DimsExprs* out) const override {
    if (std::string e = count_error(nb_in); !e.empty()) return e;
    if (nb_shape_in != 0) return "takes no shape inputs, got " + std::to_string(nb_shape_in);
    // The sizes known when the network is built (constant dims) must agree already; the others
    // are checked per shape (onShapeChange, enqueue).
    Dims known[5];
    for (int i = 0; i < nb_in; ++i) {
      known[i].nbDims = in[i].nbDims;
      for (int k = 0; k < in[i].nbDims && k < Dims::MAX_DIMS; ++k)
        known[i].d[k] = in[i].d[k]->isConstant() ? in[i].d[k]->getConstantValue() : -1;
    }
    Params unused;
    if (std::string e = params_of(cfg_, known, nb_in, &unused); !e.empty()) return e;
    const Slots s = slots(cfg_.kind, nb_in);
    out->nbDims = 4;
    out->d[0] = in[s.input].d[0], out->d[1] = in[s.weight].d[0];
    out->d[2] = in[s.offset].d[2], out->d[3] = in[s.offset].d[3];
    return "";
  }

  bool supports(int32_t pos, const PluginTensorDesc* io, int32_t nb_in, int32_t) const override {
    if (!count_error(nb_in).empty() || pos < 0 || pos > nb_in || io[pos].format != TensorFormat::kLINEAR) return false;
    return pos == 0 ? is_float_type(io[0].type) : io[pos].type == io[0].type;
  }

  std::string configure(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc* out,
                        int32_t) const override {
    if (std::string e = count_error(nb_in); !e.empty()) return e;
    DataType types[5];
    Dims ranks[5];
    for (int i = 0; i < nb_in; ++i) {
      types[i] = in[i].desc.type;
      ranks[i].nbDims = in[i].min.nbDims;
      for (int k = 0; k < ranks[i].nbDims && k < Dims::MAX_DIMS; ++k) ranks[i].d[k] = -1;
    }
    if (std::string e = check_types(types, nb_in, out[0].desc.type); !e.empty()) return e;
    Params unused;
    return params_of(cfg_, ranks, nb_in, &unused);  // ranks here; sizes per shape
  }

  // The sampled columns at the profile's largest shapes. Each factor of forward_workspace_bytes
  // (which grows with every one) is taken from the tensor that bounds it at enqueue: N and C_in
  // from input, C_out and the kernel taps from weight, the output positions from offset (whose
  // last two dims enqueue requires to equal the output's). The profile's maxima need not be
  // consistent with each other (each input's range is set on its own), so no shape rule is
  // applied to them here; 0 where a maximum is not positive.
  size_t workspace(const DynamicPluginTensorDesc* in, int32_t nb_in, const DynamicPluginTensorDesc*,
                   int32_t) const override {
    if (!count_error(nb_in).empty()) return 0;
    const Slots s = slots(cfg_.kind, nb_in);
    const Dims &x = in[s.input].max, &off = in[s.offset].max, &wt = in[s.weight].max;
    if (x.nbDims != 4 || off.nbDims != 4 || wt.nbDims != 4) return 0;
    Params p;
    p.n = x.d[0], p.c_in = x.d[1], p.c_out = wt.d[0], p.kh = wt.d[2], p.kw = wt.d[3];
    p.h_out = off.d[2], p.w_out = off.d[3];
    for (int64_t v : {p.n, p.c_in, p.c_out, p.kh, p.kw, p.h_out, p.w_out})
      if (v <= 0) return 0;
    return forward_workspace_bytes(p);
  }

  std::string shapes_changed(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out,
                             int32_t) const override {
    if (std::string e = count_error(nb_in); !e.empty()) return e;
    Params p;
    return concrete(in, nb_in, out, &p);
  }

  int32_t enqueue(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, const void* const* inputs,
                  void* const* outputs, void* workspace, cudaStream_t stream) const override {
    const std::string w = std::string(kind_name(cfg_.kind)) + " enqueue: ";
    if (std::string e = count_error(nb_in); !e.empty()) return enqueue_refused(w + e);
    for (int i = 0; i <= nb_in; ++i)
      if ((i < nb_in ? in[i] : out[0]).format != TensorFormat::kLINEAR)
        return enqueue_refused(w + "every tensor must be linear");
    DataType types[5];
    for (int i = 0; i < nb_in; ++i) types[i] = in[i].type;
    if (std::string e = check_types(types, nb_in, out[0].type); !e.empty()) return enqueue_refused(w + e);
    Params p;
    if (std::string e = concrete(in, nb_in, out, &p); !e.empty()) return enqueue_refused(w + e);
    if (p.n * p.c_out == 0) return 0;  // an empty output: nothing to write
    for (int i = 0; i < nb_in; ++i)
      if (inputs[i] == nullptr) return enqueue_refused(w + "null input pointer for a non-empty output");
    if (outputs[0] == nullptr) return enqueue_refused(w + "null output pointer");
    if (workspace == nullptr && forward_workspace_bytes(p) > 0) return enqueue_refused(w + "null workspace pointer");
    const Slots s = slots(cfg_.kind, nb_in);
    return enqueue_status(w, with_float_type(in[0].type, [&](auto tag) {
                            using T = typename decltype(tag)::type;
                            const auto at = [&](int slot) {
                              return slot >= 0 ? static_cast<const T*>(inputs[slot]) : nullptr;
                            };
                            return forward_cuda<T>(p, at(s.input), at(s.offset), at(s.mask), at(s.weight), at(s.bias),
                                                   static_cast<T*>(outputs[0]), workspace, stream);
                          }));
  }

  void fields(FieldStore* store) const override { write_attr_fields(fields_, store); }

 private:
  std::string count_error(int32_t nb_in) const {
    const Arity ar = arity(cfg_.kind);
    if (nb_in >= ar.least && nb_in <= ar.most) return "";
    return std::string("expects ") +
           (ar.least == ar.most ? std::to_string(ar.least) : std::to_string(ar.least) + " to " + std::to_string(ar.most)) +
           " inputs (" + ar.list + "), got " + std::to_string(nb_in);
  }

  // Every input and the output of input 0's type, a float type: "" or a message.
  static std::string check_types(const DataType* in, int32_t nb_in, DataType out) {
    if (!is_float_type(in[0])) return std::string("input 0 must be ") + kFloatTypes + ", got " + type_name(in[0]);
    for (int i = 1; i < nb_in; ++i)
      if (in[i] != in[0])
        return "input " + std::to_string(i) + " must have input 0's type (" + type_name(in[0]) + "), got " +
               type_name(in[i]);
    if (out != in[0]) return "the output must have input 0's type (" + type_name(in[0]) + "), got " + type_name(out);
    return "";
  }

  // Params for concrete shapes, the output checked.
  std::string concrete(const PluginTensorDesc* in, int32_t nb_in, const PluginTensorDesc* out, Params* p) const {
    Dims dims[5];
    for (int i = 0; i < nb_in; ++i) dims[i] = in[i].dims;
    if (std::string e = params_of(cfg_, dims, nb_in, p); !e.empty()) return e;
    const Dims& y = out[0].dims;
    if (y.nbDims != 4 || y.d[0] != p->n || y.d[1] != p->c_out || y.d[2] != p->h_out || y.d[3] != p->w_out)
      return "the output's shape differs from (N, C_out, H_out, W_out) of the inputs";
    return "";
  }

  Fields fields_;
  Config cfg_;
};

template <class Fields>
std::unique_ptr<OpCore> make_core(const Fields& f, std::string* error) {
  Config c;
  *error = config_of(f, &c);
  if (!error->empty()) return nullptr;
  return std::make_unique<DeformConv2dCore<Fields>>(f, c);
}

}  // namespace

OpCreator twinops_deform_conv2d_creator() {
  return attr_creator<DeformConv2dAttrs>("TwinopsDeformConv2d", &make_core<DeformConv2dAttrs>);
}

OpCreator mmcv_modulated_deform_conv2d_creator() {
  return drop_in(attr_creator<MMCVModulatedFields>("MMCVModulatedDeformConv2d", &make_core<MMCVModulatedFields>),
                 "mmdeploy");
}

OpCreator mmcv_deform_conv2d_creator() {
  return drop_in(attr_creator<MMCVDeformFields>("MMCVDeformConv2d", &make_core<MMCVDeformFields>), "mmdeploy");
}

OpCreator onnx_deform_conv_creator() {
  return attr_creator<OnnxFields>("DeformConv", &make_core<OnnxFields>, AbsentFields::kDefaultWhenBuilding);
}

}  // namespace plugin
}  // namespace deform_conv2d
}  // namespace twinops
