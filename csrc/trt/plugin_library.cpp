// The exported entry points of libtwinops_trt.so, serving the one creator list
// (op_creators(), plugin_creators.cpp). Every op creator is served as:
//
//   version   interface              TensorRT
//   "1"       IPluginV3              10, 11   <- default node (no plugin_version)
//   "1"       IPluginV2DynamicExt    8.6      <- default node on 8.6
//   "legacy"  IPluginV2DynamicExt    8.6, 10, 11
//
// (a creator marked v3_only, whose output shapes need a size tensor, is IPluginV3 "1" alone, so
// absent on 8.6) in namespace "", and a drop-in of another toolkit's node (OpCreator::node_domain)
// also in the namespace of that node's domain (only there for a name libnvinfer_plugin serves
// too: OpCreator::domain_only). A node selects the IPluginV2 path on any version
// with the node attribute plugin_version="legacy". TensorRT's registry keys creators by (name,
// version, namespace), so "1" can only be one interface per TensorRT version.
//
// Loading paths, all served by `creators()` below:
//   * IPluginRegistry::loadLibrary / trtexec --dynamicPlugins / polygraphy --plugins:
//     dlopen, then getCreators (TRT >= 10) or getPluginCreators (8.6), and setLoggerFinder.
//   * ctypes.CDLL(path) in a process that already loaded libnvinfer: a load-time constructor
//     finds getPluginRegistry at run time (dlsym; no link-time dependency on libnvinfer) and
//     registers every creator. When TensorRT itself then calls getCreators (loadLibrary after a
//     CDLL, or loadLibrary's own dlopen running the constructor first) those registrations are
//     withdrawn first, since loadLibrary fails when any of its creators is already registered.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the IPluginV2 creators

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

#include "op_core.h"
#include "plugin_base.h"
#include "plugin_v2.h"
#include "plugin_v3.h"

#define TWIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace twinops {
namespace trt {
namespace {

#if TWIN_TRT_HAS_V3
using CreatorInterface = nvinfer1::IPluginCreatorInterface;
#else
using CreatorInterface = nvinfer1::IPluginCreator;
#endif

struct Library {
  std::vector<nvinfer1::IPluginCreator*> v2;        // getPluginCreators
  std::vector<CreatorInterface*> all;               // getCreators (V3 first, then V2)
  std::vector<std::string> all_namespaces;          // all[i]'s namespace
  std::vector<CreatorInterface*> self_registered;   // by the load-time constructor
  nvinfer1::IPluginRegistry* registry = nullptr;
  std::mutex mutex;

  Library() {
    std::vector<std::string> v2_namespaces;
    for (const OpCreator& op : op_creators()) {
      std::vector<std::string> namespaces;
      if (!op.domain_only) namespaces.push_back("");
      if (!op.node_domain.empty()) namespaces.push_back(op.node_domain);
      for (const std::string& ns : namespaces) {
#if TWIN_TRT_HAS_V3
        all.push_back(new CreatorV3(op, "1", ns));
        all_namespaces.push_back(ns);
#else
        if (op.v3_only) continue;
        v2.push_back(new CreatorV2(op, "1", ns));
        v2_namespaces.push_back(ns);
#endif
        if (op.v3_only) continue;
        v2.push_back(new CreatorV2(op, "legacy", ns));
        v2_namespaces.push_back(ns);
      }
    }
    for (nvinfer1::IPluginCreator* c : v2) all.push_back(c);
    all_namespaces.insert(all_namespaces.end(), v2_namespaces.begin(), v2_namespaces.end());
  }
};

// Never destroyed: TensorRT may hold creator pointers until process exit.
Library& library() {
  static Library* lib = new Library();
  return *lib;
}

nvinfer1::IPluginRegistry* find_registry() {
  using GetRegistry = nvinfer1::IPluginRegistry* (*)();
  void* sym = dlsym(RTLD_DEFAULT, "getPluginRegistry");
  if (sym == nullptr) {
    // libnvinfer loaded with RTLD_LOCAL (e.g. by the tensorrt Python bindings): ask it directly,
    // without loading it when it is absent.
    const std::string names[] = {"libnvinfer.so." + std::to_string(NV_TENSORRT_MAJOR), "libnvinfer.so"};
    for (const std::string& n : names) {
      if (void* h = dlopen(n.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
        sym = dlsym(h, "getPluginRegistry");
        dlclose(h);  // RTLD_NOLOAD took a reference; the library stays loaded by its owner
        if (sym) break;
      }
    }
  }
  return sym ? reinterpret_cast<GetRegistry>(sym)() : nullptr;
}

void withdraw_self_registration() {
  Library& lib = library();
  std::lock_guard<std::mutex> lock(lib.mutex);
  for (CreatorInterface* c : lib.self_registered) lib.registry->deregisterCreator(*c);
  lib.self_registered.clear();
}

__attribute__((constructor)) void register_at_load() noexcept {
  try {
    Library& lib = library();
    nvinfer1::IPluginRegistry* reg = find_registry();
    if (reg == nullptr) return;  // no TensorRT in the process: loadLibrary / a host will ask
    std::lock_guard<std::mutex> lock(lib.mutex);
    lib.registry = reg;
    for (size_t i = 0; i < lib.all.size(); ++i) {
      if (reg->registerCreator(*lib.all[i], lib.all_namespaces[i].c_str())) lib.self_registered.push_back(lib.all[i]);
    }
  } catch (...) {
    log_error("registering the plugin creators at load time failed");
  }
}

}  // namespace
}  // namespace trt
}  // namespace twinops

namespace {

// getCreators / getPluginCreators: withdraw the load-time registrations, hand out one list.
template <typename Creator>
Creator* const* export_creators(std::vector<Creator*> twinops::trt::Library::*member, int32_t& nbCreators) noexcept {
  try {
    twinops::trt::withdraw_self_registration();
    std::vector<Creator*>& list = twinops::trt::library().*member;
    nbCreators = static_cast<int32_t>(list.size());
    return list.data();
  } catch (...) {
    nbCreators = 0;
    return nullptr;
  }
}

}  // namespace

#if TWIN_TRT_HAS_V3
TWIN_EXPORT nvinfer1::IPluginCreatorInterface* const* getCreators(int32_t& nbCreators) noexcept {
  return export_creators(&twinops::trt::Library::all, nbCreators);
}
#endif

TWIN_EXPORT nvinfer1::IPluginCreator* const* getPluginCreators(int32_t& nbCreators) noexcept {
  return export_creators(&twinops::trt::Library::v2, nbCreators);
}

TWIN_EXPORT void setLoggerFinder(nvinfer1::ILoggerFinder* finder) noexcept { twinops::trt::set_logger_finder(finder); }

// For plugin hosts without a TensorRT logger: the message of the last logged error
// ("" when none). The pointer stays valid until the next call from the same thread.
TWIN_EXPORT const char* twinops_trt_last_error() noexcept {
  thread_local std::string copy;
  try {
    copy = twinops::trt::last_error();
  } catch (...) {
    copy.clear();
  }
  return copy.c_str();
}

// The TensorRT major version the library was compiled against (hosts check it matches).
TWIN_EXPORT int32_t twinops_trt_version() noexcept { return NV_TENSORRT_VERSION; }
