// TensorRT-free plugin host, part 1: loading a plugin library the way IPluginRegistry::loadLibrary
// does, creators, plugin creation, and the serialization round trip into the runtime phase.
//
// Nothing here needs libnvinfer: the TensorRT interfaces are abstract classes (plus the
// IExprBuilder wrappers of expr_builder.h). A C API driven through ctypes (twinops.plugin_host)
// keeps the host free of torch headers, so it compiles in seconds. Every entry point returns a
// status (0 = ok) or nullptr and appends what went wrong to one process-wide log, which also
// receives the plugin library's own messages through its setLoggerFinder export.
#include <dlfcn.h>

#include <mutex>

#include "plugin_host.h"

using namespace nvinfer1;

namespace twinops_host {

namespace {
std::mutex g_mutex;
std::string g_log;

class Logger final : public ILogger {
public:
    void log(Severity severity, AsciiChar const* msg) noexcept override {
        static char const* names[] = {"INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE"};
        int s = static_cast<int>(severity);
        log_line(std::string("[plugin ") + (s >= 0 && s < 5 ? names[s] : "?") + "] " + (msg ? msg : "(null)"));
    }
};
Logger g_logger;

#if NV_TENSORRT_MAJOR >= 10
class LoggerFinder final : public ILoggerFinder {
public:
    ILogger* findLogger() override { return &g_logger; }
};
LoggerFinder g_finder;

// What an execution context hands attachToContext (no allocator or error recorder here).
class ResourceContext final : public IPluginResourceContext {
public:
    IGpuAllocator* getGpuAllocator() const noexcept override { return nullptr; }
    IErrorRecorder* getErrorRecorder() const noexcept override { return nullptr; }
};
ResourceContext g_resource_context;
#endif
}  // namespace

void log_plugin_last_error(Host const* h) {
#if NV_TENSORRT_MAJOR < 10
    if (!h || !h->handle) return;
    if (auto last = reinterpret_cast<char const* (*)()>(dlsym(h->handle, "twinops_trt_last_error")))
        if (char const* msg = last()) log_line(std::string("[plugin last error, possibly an older one] ") + msg);
#else
    (void)h;
#endif
}

void log_line(std::string const& s) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_log += s;
    g_log += '\n';
}

#if NV_TENSORRT_MAJOR >= 10
#define TH_PICK(v2expr, v3expr) (v2 ? (v2expr) : (v3expr))
#else
#define TH_PICK(v2expr, v3expr) (v2expr)
#endif
char const* Creator::name() const { return TH_PICK(v2->getPluginName(), v3->getPluginName()); }
char const* Creator::version() const { return TH_PICK(v2->getPluginVersion(), v3->getPluginVersion()); }
char const* Creator::plugin_namespace() const { return TH_PICK(v2->getPluginNamespace(), v3->getPluginNamespace()); }
PluginFieldCollection const* Creator::fields() const { return TH_PICK(v2->getFieldNames(), v3->getFieldNames()); }

Plugin::~Plugin() {
#if NV_TENSORRT_MAJOR >= 10
    delete p3;  // TensorRT owns and deletes IPluginV3 objects
#endif
    if (p2) {
        if (v2_initialized) p2->terminate();
        p2->destroy();
    }
}

Dims to_dims(int n, int64_t const* v) {
    Dims d{};
    d.nbDims = n;
    for (int i = 0; i < n; ++i) d.d[i] = static_cast<std::remove_reference_t<decltype(d.d[0])>>(v[i]);
    return d;
}

void check_identity(Plugin const* p, char const* plugin_name, char const* version) {
    Creator const& c = p->host->creators[p->creator];
    if (!plugin_name || !version || std::strcmp(plugin_name, c.name()) || std::strcmp(version, c.version()))
        throw std::runtime_error("plugin reports name/version '" + std::string(plugin_name ? plugin_name : "(null)") +
                                 "'/'" + (version ? version : "(null)") + "', its creator '" + c.name() + "'/'" +
                                 c.version() + "'");
}

namespace {

Plugin* new_plugin(Host* h, int idx, char const* name) {
    auto* p = new Plugin;
    p->host = h;
    p->creator = idx;
    p->name = name ? name : "";
    return p;
}

bool valid(Host* h, int idx) { return h && idx >= 0 && idx < static_cast<int>(h->creators.size()); }

void add_creator(Host* h, Creator c, int source) {
    for (auto& e : h->creators) {
        bool same = e.v2 == c.v2;
#if NV_TENSORRT_MAJOR >= 10
        same = same && e.v3 == c.v3;
#endif
        if (same) {
            e.sources |= source;
            return;
        }
    }
    c.sources = source;
    h->creators.push_back(c);
}

// Copies the fields (names and bytes) so they outlive the plugin that produced them.
[[maybe_unused]] void store_fields(Plugin* p, PluginFieldCollection const* fc) {
    if (!fc) throw std::runtime_error("getFieldsToSerialize returned nullptr");
    if (fc->nbFields < 0 || (fc->nbFields > 0 && !fc->fields)) throw std::runtime_error("malformed serialized fields");
    p->ser_names.clear(), p->ser_bytes.clear(), p->ser_types.clear(), p->ser_lengths.clear();
    for (int i = 0; i < fc->nbFields; ++i) {
        PluginField const& f = fc->fields[i];
        size_t elem = 1;
        switch (f.type) {
        case PluginFieldType::kFLOAT64: elem = 8; break;
#if NV_TENSORRT_MAJOR >= 10
        case PluginFieldType::kINT64: elem = 8; break;
#endif
        case PluginFieldType::kFLOAT32: case PluginFieldType::kINT32: elem = 4; break;
        case PluginFieldType::kFLOAT16: case PluginFieldType::kINT16:
#if NV_TENSORRT_MAJOR >= 10
        case PluginFieldType::kBF16:
#endif
            elem = 2; break;
        default: elem = 1;
        }
        if (!f.name || f.length < 0 || (f.length > 0 && !f.data))
            throw std::runtime_error("serialized field " + std::to_string(i) + " has no name, data or length");
        p->ser_names.emplace_back(f.name);
        auto const* bytes = static_cast<char const*>(f.data);
        p->ser_bytes.emplace_back(bytes, bytes + elem * static_cast<size_t>(f.length));
        p->ser_types.push_back(static_cast<int32_t>(f.type));
        p->ser_lengths.push_back(f.length);
    }
}

std::vector<PluginField> fields_of(Plugin const* p) {
    std::vector<PluginField> out;
    for (size_t i = 0; i < p->ser_names.size(); ++i)
        out.emplace_back(p->ser_names[i].c_str(), p->ser_bytes[i].data(),
                         static_cast<PluginFieldType>(p->ser_types[i]), p->ser_lengths[i]);
    return out;
}

}  // namespace
}  // namespace twinops_host

using namespace twinops_host;

extern "C" {

char const* th_log() {
    static std::string copy;
    std::lock_guard<std::mutex> lock(g_mutex);
    copy = g_log;
    return copy.c_str();
}

void th_log_clear() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_log.clear();
}

int th_trt_major() { return NV_TENSORRT_MAJOR; }
int th_num_types() { return EnumMax<DataType>(); }
int th_num_formats() { return EnumMax<TensorFormat>(); }

// dlopen + setLoggerFinder + getCreators / getPluginCreators, like IPluginRegistry::loadLibrary.
void* th_open(char const* path) {
    void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
        char const* e = dlerror();
        fail(nullptr, std::string("dlopen(") + path + ") failed: " + (e ? e : "unknown error"));
        return nullptr;
    }
    // The host and the library must agree on the interfaces' layout: same TensorRT major version.
    if (auto version = reinterpret_cast<int32_t (*)()>(dlsym(handle, "twinops_trt_version"))) {
        auto major = [](long v) { return v >= 100000 ? v / 10000 : v / 1000; };  // 10.x: M*10000, 8.x: M*1000
        long lib = version(), host = static_cast<long>(NV_TENSORRT_VERSION);
        if (major(lib) != major(host)) {
            fail(nullptr, std::string(path) + " was compiled against TensorRT " + std::to_string(lib) +
                 " headers, the host against " + std::to_string(host) +
                 " (set TWINOPS_TRT_HEADERS to the include dir the library was built with)");
            dlclose(handle);
            return nullptr;
        }
    }
    auto* h = new Host;
    h->handle = handle;
    using V2CreatorsFn = IPluginCreator* const* (*)(int32_t&);
#if NV_TENSORRT_MAJOR >= 10
    using CreatorsFn = IPluginCreatorInterface* const* (*)(int32_t&);
    if (auto set_finder = reinterpret_cast<void (*)(ILoggerFinder*)>(dlsym(handle, "setLoggerFinder")))
        set_finder(&g_finder);
    else
        fail(h, "the library exports no setLoggerFinder (its messages cannot reach TensorRT's logger)");
    if (auto get = reinterpret_cast<CreatorsFn>(dlsym(handle, "getCreators"))) {
        int32_t n = 0;
        IPluginCreatorInterface* const* list = get(n);
        for (int32_t i = 0; list && i < n; ++i) {
            IPluginCreatorInterface* c = list[i];
            if (!c) { fail(h, "getCreators returned a null creator at " + std::to_string(i)); continue; }
            char const* kind = c->getInterfaceInfo().kind;
            Creator cr;
            if (kind && !std::strcmp(kind, "PLUGIN CREATOR_V3ONE")) cr.v3 = static_cast<IPluginCreatorV3One*>(c);
            else if (kind && !std::strcmp(kind, "PLUGIN CREATOR_V1")) cr.v2 = static_cast<IPluginCreator*>(c);
            else { fail(h, std::string("getCreators: unknown creator kind ") + (kind ? kind : "(null)")); continue; }
            add_creator(h, cr, 1);
        }
    }
#endif
    if (auto get = reinterpret_cast<V2CreatorsFn>(dlsym(handle, "getPluginCreators"))) {
        int32_t n = 0;
        IPluginCreator* const* list = get(n);
        for (int32_t i = 0; list && i < n; ++i) {
            if (!list[i]) { fail(h, "getPluginCreators returned a null creator at " + std::to_string(i)); continue; }
            Creator cr;
            cr.v2 = list[i];
            add_creator(h, cr, 2);
        }
    }
    if (h->creators.empty()) fail(h, std::string("no creators found in ") + path + " (getCreators / getPluginCreators)");
    return h;
}

int th_num_creators(void* hp) { return hp ? static_cast<int>(static_cast<Host*>(hp)->creators.size()) : 0; }

// interface: 3 = IPluginCreatorV3One, 2 = IPluginCreator (V2)
int th_creator(void* hp, int idx, char const** name, char const** version, char const** ns, int* interface,
               int* sources) {
    auto* h = static_cast<Host*>(hp);
    if (!valid(h, idx)) return 1;
    Creator const& c = h->creators[idx];
    *name = c.name(), *version = c.version(), *ns = c.plugin_namespace();
    *interface = c.v2 ? 2 : 3;
    *sources = c.sources;
    return 0;
}

int th_num_fields(void* hp, int idx) {
    auto* h = static_cast<Host*>(hp);
    if (!valid(h, idx)) return -1;
    PluginFieldCollection const* fc = h->creators[idx].fields();
    return fc ? fc->nbFields : -1;
}

int th_field_decl(void* hp, int idx, int j, char const** name, int* type, int* length) {
    auto* h = static_cast<Host*>(hp);
    if (!valid(h, idx)) return 1;
    PluginFieldCollection const* fc = h->creators[idx].fields();
    if (!fc || j < 0 || j >= fc->nbFields) return 1;
    *name = fc->fields[j].name, *type = static_cast<int>(fc->fields[j].type), *length = fc->fields[j].length;
    return 0;
}

// createPlugin from fields; phase 0 = build, 1 = runtime (V3 only; V2 ignores it).
void* th_create(void* hp, int idx, char const* name, th_field const* f, int n, int phase) {
    auto* h = static_cast<Host*>(hp);
    if (!valid(h, idx) || n < 0) return nullptr;
    std::vector<PluginField> fields;
    for (int i = 0; i < n; ++i)
        fields.emplace_back(f[i].name, f[i].data, static_cast<PluginFieldType>(f[i].type), f[i].length);
    PluginFieldCollection fc;
    fc.nbFields = n;
    fc.fields = fields.data();
    Creator const& c = h->creators[idx];
    Plugin* p = new_plugin(h, idx, name);
    if (c.v2) {
        IPluginV2* raw = c.v2->createPlugin(name, &fc);
        if (raw && (raw->getTensorRTVersion() >> 24) != static_cast<int>(PluginVersion::kV2_DYNAMICEXT)) {
            fail(h, "createPlugin returned an IPluginV2 that is not an IPluginV2DynamicExt");
            raw->destroy();
            raw = nullptr;
        }
        p->p2 = static_cast<IPluginV2DynamicExt*>(raw);  // TensorRT tells the V2 kinds apart the same way
        if (p->p2) p->p2->setPluginNamespace(c.plugin_namespace());
    }
#if NV_TENSORRT_MAJOR >= 10
    else {
        p->p3 = c.v3->createPlugin(name, &fc, phase == 1 ? TensorRTPhase::kRUNTIME : TensorRTPhase::kBUILD);
    }
    bool ok = p->p2 || p->p3;
#else
    (void)phase;
    bool ok = p->p2;
#endif
    if (!ok) {
        log_plugin_last_error(h);
        delete p;
        return nullptr;
    }
    return p;
}

// V2 deserializePlugin.
void* th_deserialize(void* hp, int idx, char const* name, void const* data, size_t length) {
    auto* h = static_cast<Host*>(hp);
    if (!valid(h, idx) || !h->creators[idx].v2) return nullptr;
    IPluginV2* raw = h->creators[idx].v2->deserializePlugin(name, data, length);
    if (!raw) {
        log_plugin_last_error(h);
        return nullptr;
    }
    Plugin* p = new_plugin(h, idx, name);
    if ((raw->getTensorRTVersion() >> 24) != static_cast<int>(PluginVersion::kV2_DYNAMICEXT)) {
        fail(h, "deserializePlugin returned an IPluginV2 that is not an IPluginV2DynamicExt");
        raw->destroy();
        delete p;
        return nullptr;
    }
    p->p2 = static_cast<IPluginV2DynamicExt*>(raw);
    p->p2->setPluginNamespace(h->creators[idx].plugin_namespace());
    return p;
}

void th_destroy(void* pp) { delete static_cast<Plugin*>(pp); }

// Serializes the plugin (V3 getFieldsToSerialize of the runtime capability, V2 serialize) into
// a copy read with th_ser_field. Returns the number of fields (1 for V2), -1 on error.
int th_serialize(void* pp) {
    auto* p = static_cast<Plugin*>(pp);
    if (!p) return -1;
    try {
#if NV_TENSORRT_MAJOR >= 10
        if (p->p3) {
            auto* rt = capability<IPluginV3OneRuntime>(p->p3, PluginCapabilityType::kRUNTIME, "PLUGIN_V3ONE_RUNTIME");
            store_fields(p, rt->getFieldsToSerialize());
            return static_cast<int>(p->ser_names.size());
        }
#endif
        size_t n = p->p2->getSerializationSize();
        if (n > (size_t(1) << 30)) throw std::runtime_error("getSerializationSize is implausibly large");
        std::vector<char> blob(n + 64, '\x5a');  // guard bytes: serialize must write exactly n
        p->p2->serialize(blob.data());
        for (size_t i = n; i < blob.size(); ++i)
            if (blob[i] != '\x5a') throw std::runtime_error("serialize wrote past getSerializationSize()");
        blob.resize(n);
        p->ser_names = {""};
        p->ser_bytes = {blob};
        p->ser_types = {static_cast<int32_t>(PluginFieldType::kUNKNOWN)};
        p->ser_lengths = {static_cast<int32_t>(n)};
        return 1;
    } catch (std::exception const& e) {
        fail(p->host, std::string("serialize: ") + e.what());
        return -1;
    }
}

int th_ser_field(void* pp, int j, th_field* out) {
    auto* p = static_cast<Plugin*>(pp);
    if (!p || j < 0 || j >= static_cast<int>(p->ser_names.size())) return 1;
    out->name = p->ser_names[j].c_str();
    out->data = p->ser_bytes[j].data();
    out->type = p->ser_types[j];
    out->length = p->ser_lengths[j];
    return 0;
}

// Build phase -> runtime phase, the way an engine is saved and loaded: serialize, recreate (V3
// createPlugin(kRUNTIME) / V2 deserializePlugin), check the recreated plugin serializes to the
// same bytes, clone, attach to a resource context (V3) / attachToContext + configurePlugin +
// initialize (V2), then onShapeChange with the concrete shapes. Returns the plugin to enqueue.
void* th_runtime(void* pp) {
    auto* p = static_cast<Plugin*>(pp);
    if (!p || !p->built) {
        fail(p ? p->host : nullptr, "th_runtime: build the plugin first");
        return nullptr;
    }
    Plugin* loaded = nullptr;
    try {
        if (th_serialize(p) < 0) return nullptr;
        std::vector<PluginField> fields = fields_of(p);
        if (p->p2) {
            loaded = static_cast<Plugin*>(th_deserialize(p->host, p->creator, p->name.c_str(),
                                                          p->ser_bytes[0].data(), p->ser_bytes[0].size()));
        } else {
            std::vector<th_field> tf;
            for (auto const& f : fields) tf.push_back({f.name, f.data, static_cast<int32_t>(f.type), f.length});
            loaded = static_cast<Plugin*>(th_create(p->host, p->creator, p->name.c_str(), tf.data(),
                                                    static_cast<int>(tf.size()), 1));
        }
        if (!loaded) throw std::runtime_error("the creator rejected the plugin's own serialized form");
        if (th_serialize(loaded) < 0) throw std::runtime_error("the recreated plugin does not serialize");
        if (loaded->ser_bytes != p->ser_bytes || loaded->ser_names != p->ser_names || loaded->ser_types != p->ser_types)
            throw std::runtime_error("serialize -> recreate -> serialize changed the serialized form");
        auto* rt = new_plugin(p->host, p->creator, p->name.c_str());
        rt->in = p->in, rt->out = p->out, rt->in_dyn = p->in_dyn, rt->out_dyn = p->out_dyn, rt->built = true;
        int nin = static_cast<int>(p->in.size()), nout = static_cast<int>(p->out.size());
#if NV_TENSORRT_MAJOR >= 10
        if (loaded->p3) {
            IPluginV3* c = loaded->p3->clone();
            if (!c) { delete rt; throw std::runtime_error("runtime clone() returned nullptr"); }
            auto* crt = capability<IPluginV3OneRuntime>(c, PluginCapabilityType::kRUNTIME, "PLUGIN_V3ONE_RUNTIME");
            rt->p3 = crt->attachToContext(&g_resource_context);
            delete c;
            if (!rt->p3) { delete rt; throw std::runtime_error("attachToContext returned nullptr"); }
            auto* core = capability<IPluginV3OneCore>(rt->p3, PluginCapabilityType::kCORE, "PLUGIN_V3ONE_CORE");
            check_identity(rt, core->getPluginName(), core->getPluginVersion());
            auto* art = capability<IPluginV3OneRuntime>(rt->p3, PluginCapabilityType::kRUNTIME, "PLUGIN_V3ONE_RUNTIME");
            if (int s = art->onShapeChange(rt->in.data(), nin, rt->out.data(), nout)) {
                delete rt;
                throw std::runtime_error("onShapeChange returned " + std::to_string(s));
            }
        } else
#endif
        {
            IPluginV2DynamicExt* c = loaded->p2->clone();
            if (!c) { delete rt; throw std::runtime_error("runtime clone() returned nullptr"); }
            rt->p2 = c;
            c->setPluginNamespace(p->host->creators[p->creator].plugin_namespace());
            check_identity(rt, c->getPluginType(), c->getPluginVersion());
            c->attachToContext(nullptr, nullptr, nullptr);
            std::vector<DynamicPluginTensorDesc> din(p->in_dyn), dout(p->out_dyn);
            for (int i = 0; i < nin; ++i) din[i].desc = p->in[i];  // execution: concrete shapes
            for (int i = 0; i < nout; ++i) dout[i].desc = p->out[i];
            c->configurePlugin(din.data(), nin, dout.data(), nout);
            if (int s = c->initialize()) {
                delete rt;
                throw std::runtime_error("initialize returned " + std::to_string(s));
            }
            rt->v2_initialized = true;
        }
        delete loaded;
        return rt;
    } catch (std::exception const& e) {
        delete loaded;
        fail(p->host, std::string("runtime phase: ") + e.what());
        return nullptr;
    }
}

}  // extern "C"
