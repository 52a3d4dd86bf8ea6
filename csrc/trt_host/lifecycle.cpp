// TensorRT-free plugin host, part 2: the build-phase queries in the order a builder makes them
// (output types -> output shapes through the symbolic IExprBuilder -> supportsFormatCombination
// over every (type, format) pair -> configurePlugin -> workspace size -> clone) and enqueue.
#include "plugin_host.h"

using namespace nvinfer1;
using namespace twinops_host;
using twinops_host::dim_t;

namespace {

// Symbolic input dimensions: a dim whose min == max is a build-time constant (TensorRT gives
// those as constants too), any other one a symbol bound per profile point.
struct Symbols {
    ExprBuilder builder;
    std::vector<int64_t> at[4];  // bindings: min, opt, max, concrete
    std::vector<DimsExprs> make(th_tensor const* t, int n) {
        std::vector<DimsExprs> out(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            if (t[i].nb_dims < 0 || t[i].nb_dims > kMaxDims) throw std::runtime_error("bad nb_dims");
            out[i].nbDims = t[i].nb_dims;
            for (int j = 0; j < t[i].nb_dims; ++j) {
                if (t[i].min[j] == t[i].max[j]) {
                    out[i].d[j] = builder.literal(t[i].min[j]);
                    continue;
                }
                out[i].d[j] = builder.symbol(static_cast<int>(at[0].size()));
                at[0].push_back(t[i].min[j]), at[1].push_back(t[i].opt[j]), at[2].push_back(t[i].max[j]);
                at[3].push_back(t[i].dims[j]);
            }
        }
        return out;
    }
};

// Concrete shapes only: every dimension a constant, the way shapes are known at execution.
std::vector<DimsExprs> constants(ExprBuilder& b, th_tensor const* t, int n) {
    std::vector<DimsExprs> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        out[i].nbDims = t[i].nb_dims;
        for (int j = 0; j < t[i].nb_dims; ++j) out[i].d[j] = b.literal(t[i].dims[j]);
    }
    return out;
}

// Evaluates the plugin's output expressions under every binding into `out`.
void evaluate(ExprBuilder const& b, Symbols const& s, DimsExprs const* e, int n, th_tensor* out, char const* what) {
    for (int i = 0; i < n; ++i) {
        if (e[i].nbDims < 0 || e[i].nbDims > kMaxDims)
            throw std::runtime_error(std::string(what) + ": output " + std::to_string(i) + " has nbDims " +
                                     std::to_string(e[i].nbDims));
        out[i].nb_dims = e[i].nbDims;
        for (int j = 0; j < e[i].nbDims; ++j) {
            Expr const* x = b.find(e[i].d[j]);
            if (!x) throw std::runtime_error(std::string(what) + ": output " + std::to_string(i) + " dim " +
                                             std::to_string(j) + " is null or not made by the expression builder");
            int64_t* dst[4] = {out[i].min, out[i].opt, out[i].max, out[i].dims};
            out[i].size_tensor[j] = 0;
            if (x->size_tensor_output() >= 0) {  // data-dependent: 0 .. upper bound, the buffer at the bound
                out[i].size_tensor[j] = 1 + x->size_tensor_output();
                out[i].min[j] = 0;
                out[i].opt[j] = x->opt()->eval(s.at[1]);
                out[i].max[j] = x->upper()->eval(s.at[2]);
                out[i].dims[j] = x->upper()->eval(s.at[3]);
            } else {
                for (int k = 0; k < 4; ++k) dst[k][j] = x->eval(s.at[k]);
            }
            if (out[i].dims[j] < 0) throw std::runtime_error(std::string(what) + ": negative output dimension");
        }
    }
}

PluginTensorDesc desc_of(th_tensor const& t, int64_t const* dims) {
    PluginTensorDesc d{};
    d.dims = to_dims(t.nb_dims, dims);
    d.type = static_cast<DataType>(t.type);
    d.format = static_cast<TensorFormat>(t.format);
    d.scale = 1.0F;
    return d;
}

DynamicPluginTensorDesc dyn_of(th_tensor const& t, DimsExprs const* symbolic) {
    DynamicPluginTensorDesc d{};
    d.desc = desc_of(t, t.dims);
    for (int j = 0; j < t.nb_dims; ++j)  // -1 where the dimension is only known at runtime
        if (symbolic && !symbolic->d[j]->isConstant()) d.desc.dims.d[j] = -1;
    d.min = to_dims(t.nb_dims, t.min), d.max = to_dims(t.nb_dims, t.max);
#if NV_TENSORRT_MAJOR >= 10
    d.opt = to_dims(t.nb_dims, t.opt);  // 8.6 descriptors carry no opt
#endif
    return d;
}

PluginTensorDesc& desc_ref(PluginTensorDesc& d) { return d; }
[[maybe_unused]] PluginTensorDesc& desc_ref(DynamicPluginTensorDesc& d) { return d.desc; }

// Every (type, format) at every position, the others held at the requested combination.
template <typename Desc, typename Query>
void probe_formats(std::vector<Desc> const& chosen, int nin, int nout, uint64_t* mask, Query query) {
    int ntypes = EnumMax<DataType>(), nformats = EnumMax<TensorFormat>();
    for (int pos = 0; pos < nin + nout; ++pos) {
        for (int t = 0; t < ntypes; ++t) {
            uint64_t bits = 0;
            for (int f = 0; f < nformats; ++f) {
                std::vector<Desc> io(chosen);
                auto& d = desc_ref(io[pos]);
                d.type = static_cast<DataType>(t), d.format = static_cast<TensorFormat>(f);
                if (query(pos, io.data())) bits |= uint64_t(1) << f;
            }
            mask[pos * ntypes + t] = bits;
        }
        std::vector<Desc> io(chosen);
        if (!query(pos, io.data()))
            throw std::runtime_error("supportsFormatCombination rejects the requested type/format at position " +
                                     std::to_string(pos));
    }
}
}  // namespace

extern "C" {

// Build phase. `in`: the regular inputs; `shape_in`: V3 shape inputs (values as dims). Fills
// out[0..*nout) (type and concrete/min/opt/max dims; out_cap entries available), the accepted
// formats mask[(nin + *nout) * th_num_types()] (bit f: TensorFormat f accepted for that type at
// that position) and the workspace size. Returns 0 or 1 (message in th_log).
int th_build(void* pp, th_tensor const* in, int nin, th_tensor const* shape_in, int nshape, th_tensor* out,
             int out_cap, int* nout, uint64_t* mask, size_t* workspace) {
    auto* p = static_cast<Plugin*>(pp);
    if (!p || nin < 0 || nshape < 0 || out_cap < 1) return 1;
    try {
        std::vector<DataType> in_types;
        for (int i = 0; i < nin; ++i) in_types.push_back(static_cast<DataType>(in[i].type));
        Symbols sym;
        std::vector<DimsExprs> in_e = sym.make(in, nin), shape_e = sym.make(shape_in, nshape);
        ExprBuilder fixed;
        std::vector<DimsExprs> in_c = constants(fixed, in, nin), shape_c = constants(fixed, shape_in, nshape);
        std::vector<DimsExprs> out_e(static_cast<size_t>(out_cap)), out_c(static_cast<size_t>(out_cap));
        int n = 0;
#if NV_TENSORRT_MAJOR >= 10
        if (p->p3) {
            auto* core = capability<IPluginV3OneCore>(p->p3, PluginCapabilityType::kCORE, "PLUGIN_V3ONE_CORE");
            check_identity(p, core->getPluginName(), core->getPluginVersion());
            auto* b = capability<IPluginV3OneBuild>(p->p3, PluginCapabilityType::kBUILD, "PLUGIN_V3ONE_BUILD");
            n = b->getNbOutputs();
            if (n < 1 || n > out_cap)
                throw std::runtime_error("getNbOutputs returned " + std::to_string(n) + " (the host takes 1 to " +
                                         std::to_string(out_cap) + ")");
            std::vector<DataType> types(static_cast<size_t>(n), static_cast<DataType>(-1));
            if (int s = b->getOutputDataTypes(types.data(), n, in_types.data(), nin))
                throw std::runtime_error("getOutputDataTypes returned " + std::to_string(s));
            for (int i = 0; i < n; ++i) out[i].type = static_cast<int32_t>(types[i]), out[i].format = 0;
            if (int s = b->getOutputShapes(in_e.data(), nin, shape_e.data(), nshape, out_e.data(), n, sym.builder))
                throw std::runtime_error("getOutputShapes (symbolic) returned " + std::to_string(s));
            if (int s = b->getOutputShapes(in_c.data(), nin, shape_c.data(), nshape, out_c.data(), n, fixed))
                throw std::runtime_error("getOutputShapes (concrete) returned " + std::to_string(s));
        } else
#endif
        {
            if (nshape) throw std::runtime_error("a V2 plugin has no shape inputs");
            check_identity(p, p->p2->getPluginType(), p->p2->getPluginVersion());
            n = p->p2->getNbOutputs();
            if (n < 1 || n > out_cap)
                throw std::runtime_error("getNbOutputs returned " + std::to_string(n) + " (the host takes 1 to " +
                                         std::to_string(out_cap) + ")");
            for (int i = 0; i < n; ++i) {
                out[i].type = static_cast<int32_t>(p->p2->getOutputDataType(i, in_types.data(), nin));
                out[i].format = 0;
                out_e[i] = p->p2->getOutputDimensions(i, in_e.data(), nin, sym.builder);
                out_c[i] = p->p2->getOutputDimensions(i, in_c.data(), nin, fixed);
            }
        }
        *nout = n;
        evaluate(sym.builder, sym, out_e.data(), n, out, "symbolic output shape");
        std::vector<th_tensor> check(static_cast<size_t>(n));
        Symbols none;
        evaluate(fixed, none, out_c.data(), n, check.data(), "concrete output shape");
        auto size_type = [](int32_t type) {
#if NV_TENSORRT_MAJOR >= 10
            if (type == static_cast<int32_t>(DataType::kINT64)) return true;
#endif
            return type == static_cast<int32_t>(DataType::kINT32);
        };
        for (int i = 0; i < n; ++i)  // TensorRT's rule for a size tensor: a 0-D int32 / int64 output
            for (int j = 0; j < out[i].nb_dims; ++j) {
                const int t = out[i].size_tensor[j] - 1;
                if (t < 0) continue;
                if (t >= n || out[t].nb_dims != 0 || !size_type(out[t].type))
                    throw std::runtime_error("output " + std::to_string(i) + " dim " + std::to_string(j) +
                                             ": declareSizeTensor names output " + std::to_string(t) +
                                             ", which must be a 0-D int32 or int64 output of the plugin");
            }
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < out[i].nb_dims; ++j)
                if (check[i].nb_dims != out[i].nb_dims || check[i].dims[j] != out[i].dims[j])
                    throw std::runtime_error("output " + std::to_string(i) +
                                             ": the symbolic shape evaluated at the concrete input differs from the "
                                             "shape computed from constant inputs");

        p->in.clear(), p->out.clear(), p->in_dyn.clear(), p->out_dyn.clear();
        for (int i = 0; i < nin; ++i) p->in.push_back(desc_of(in[i], in[i].dims)), p->in_dyn.push_back(dyn_of(in[i], &in_e[i]));
        for (int i = 0; i < n; ++i)
            p->out.push_back(desc_of(out[i], out[i].dims)), p->out_dyn.push_back(dyn_of(out[i], &out_e[i]));

#if NV_TENSORRT_MAJOR >= 10
        if (p->p3) {
            auto* b = capability<IPluginV3OneBuild>(p->p3, PluginCapabilityType::kBUILD, "PLUGIN_V3ONE_BUILD");
            std::vector<DynamicPluginTensorDesc> io(p->in_dyn);
            io.insert(io.end(), p->out_dyn.begin(), p->out_dyn.end());
            probe_formats(io, nin, n, mask, [&](int pos, DynamicPluginTensorDesc const* d) {
                return b->supportsFormatCombination(pos, d, nin, n);
            });
            if (int s = b->configurePlugin(p->in_dyn.data(), nin, p->out_dyn.data(), n))
                throw std::runtime_error("configurePlugin returned " + std::to_string(s));
            *workspace = b->getWorkspaceSize(p->in_dyn.data(), nin, p->out_dyn.data(), n);
            IPluginV3* c = p->p3->clone();
            if (!c) throw std::runtime_error("build-phase clone() returned nullptr");
            auto* cc = capability<IPluginV3OneCore>(c, PluginCapabilityType::kCORE, "PLUGIN_V3ONE_CORE");
            bool same = !std::strcmp(cc->getPluginName(), p->host->creators[p->creator].name());
            delete c;
            if (!same) throw std::runtime_error("the clone reports another plugin name");
        } else
#endif
        {
            std::vector<PluginTensorDesc> io;
            for (auto const& d : p->in_dyn) io.push_back(d.desc);
            for (auto const& d : p->out_dyn) io.push_back(d.desc);
            probe_formats(io, nin, n, mask, [&](int pos, PluginTensorDesc const* d) {
                return p->p2->supportsFormatCombination(pos, d, nin, n);
            });
            p->p2->configurePlugin(p->in_dyn.data(), nin, p->out_dyn.data(), n);
            std::vector<PluginTensorDesc> wi, wo;  // the builder sizes the workspace for the max shapes
            for (auto const& d : p->in_dyn) wi.push_back(d.desc), wi.back().dims = d.max;
            for (auto const& d : p->out_dyn) wo.push_back(d.desc), wo.back().dims = d.max;
            *workspace = p->p2->getWorkspaceSize(wi.data(), nin, wo.data(), n);
            IPluginV2DynamicExt* c = p->p2->clone();
            if (!c) throw std::runtime_error("build-phase clone() returned nullptr");
            bool same = !std::strcmp(c->getPluginType(), p->p2->getPluginType());
            c->destroy();
            if (!same) throw std::runtime_error("the clone reports another plugin type");
        }
        for (auto const& e : sym.builder.errors()) fail(p->host, "expression builder: " + e);
        p->built = true;
        return 0;
    } catch (std::exception const& e) {
        fail(p->host, std::string("build phase: ") + e.what());
        return 1;
    }
}

// enqueue with the concrete descriptors of th_build; returns the plugin's status.
int th_enqueue(void* pp, void const* const* inputs, void* const* outputs, void* workspace, void* stream) {
    auto* p = static_cast<Plugin*>(pp);
    if (!p || !p->built) return -1;
    auto s = static_cast<cudaStream_t>(stream);
#if NV_TENSORRT_MAJOR >= 10
    if (p->p3) {
        try {
            auto* rt = capability<IPluginV3OneRuntime>(p->p3, PluginCapabilityType::kRUNTIME, "PLUGIN_V3ONE_RUNTIME");
            return rt->enqueue(p->in.data(), p->out.data(), inputs, outputs, workspace, s);
        } catch (std::exception const& e) {
            fail(p->host, std::string("enqueue: ") + e.what());
            return -1;
        }
    }
#endif
    return p->p2->enqueue(p->in.data(), p->out.data(), inputs, outputs, workspace, s);
}

}  // extern "C"

extern "C" {

// Self-test of the expression builder through the IExprBuilder wrapper a plugin calls:
// op(first, constant(b)) with first = a symbol bound to `a` (symbolic != 0) or constant(a).
// Writes the evaluated value and whether the result folded to a constant; returns 0, or 1 when
// the builder returned nullptr or evaluation failed (e.g. division by zero).
int th_expr_selftest(int op, int64_t a, int64_t b, int symbolic, int64_t* value, int* is_constant) {
    ExprBuilder builder;
    IExprBuilder& ib = builder;
    IDimensionExpr const* first = symbolic ? builder.symbol(0) : ib.constant(static_cast<dim_t>(a));
    IDimensionExpr const* e = ib.operation(static_cast<DimensionOperation>(op), *first, *ib.constant(static_cast<dim_t>(b)));
    Expr const* x = builder.find(e);
    if (!x) return 1;
    try {
        *value = x->eval({a});
    } catch (std::exception const&) {
        return 1;
    }
    *is_constant = e->isConstant() ? 1 : 0;
    if (*is_constant && e->getConstantValue() != *value) return 1;
    return 0;
}

}  // extern "C"
