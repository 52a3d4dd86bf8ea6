// Load-time registration check of libtwinops_trt.so against TensorRT 10 headers (no TensorRT):
// this executable exports a fake getPluginRegistry (-rdynamic), as libnvinfer would when loaded
// before a ctypes.CDLL of the library. dlopen must register every creator once; a later
// getCreators (what IPluginRegistry::loadLibrary calls) must withdraw those registrations so
// loadLibrary's own registration does not collide. Prints "OK ..." or "FAIL: ...".
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <NvInferRuntime.h>
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <string>

using namespace nvinfer1;

namespace {

struct FakeRegistry : IPluginRegistry {
  // As TensorRT's registry: keyed by (name, version, namespace), a registered creator withdrawn by identity.
  std::map<std::string, IPluginCreatorInterface const*> live;
  int registered = 0, deregistered = 0;
  static std::string key(IPluginCreatorInterface const& c, std::string const& ns) {
    // Every creator of the library implements getPluginName/Version through one of the two creator bases.
    if (std::string(c.getInterfaceInfo().kind) == "PLUGIN CREATOR_V3ONE") {
      auto const& v3 = static_cast<IPluginCreatorV3One const&>(c);
      return std::string(v3.getPluginName()) + "/" + v3.getPluginVersion() + "/" + ns;
    }
    auto const& v2 = static_cast<IPluginCreator const&>(c);
    return std::string(v2.getPluginName()) + "/" + v2.getPluginVersion() + "/" + ns;
  }
  bool registerCreator(IPluginCreatorInterface& c, AsciiChar const* const ns) noexcept override {
    ++registered;
    return live.emplace(key(c, ns ? ns : ""), &c).second;
  }
  bool deregisterCreator(IPluginCreatorInterface const& c) noexcept override {
    ++deregistered;
    for (auto it = live.begin(); it != live.end(); ++it) {
      if (it->second == &c) {
        live.erase(it);
        return true;
      }
    }
    return false;
  }
  bool registerCreator(IPluginCreator&, AsciiChar const* const) noexcept override { return false; }
  IPluginCreator* const* getPluginCreatorList(int32_t* const n) const noexcept override { *n = 0; return nullptr; }
  IPluginCreator* getPluginCreator(AsciiChar const* const, AsciiChar const* const, AsciiChar const* const) noexcept override { return nullptr; }
  void setErrorRecorder(IErrorRecorder* const) noexcept override {}
  IErrorRecorder* getErrorRecorder() const noexcept override { return nullptr; }
  bool deregisterCreator(IPluginCreator const&) noexcept override { return false; }
  bool isParentSearchEnabled() const override { return false; }
  void setParentSearchEnabled(bool const) override {}
  PluginLibraryHandle loadLibrary(AsciiChar const*) noexcept override { return nullptr; }
  void deregisterLibrary(PluginLibraryHandle) noexcept override {}
  IPluginCreatorInterface* const* getAllCreators(int32_t* const n) const noexcept override { *n = 0; return nullptr; }
  IPluginCreatorInterface* getCreator(AsciiChar const* const, AsciiChar const* const, AsciiChar const* const) noexcept override { return nullptr; }
  IPluginResource* acquirePluginResource(AsciiChar const*, IPluginResource*) noexcept override { return nullptr; }
  int32_t releasePluginResource(AsciiChar const*) noexcept override { return 0; }
  IPluginCreatorInterface* const* getAllCreatorsRecursive(int32_t* const n) noexcept override { *n = 0; return nullptr; }
};

FakeRegistry g_registry;

}  // namespace

extern "C" __attribute__((visibility("default"))) IPluginRegistry* getPluginRegistry() noexcept { return &g_registry; }

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { std::printf("FAIL: %s\n", dlerror()); return 1; }
  // Every creator of the list (V3 "1" and V2 "legacy" per op creator and namespace; resize's alone give 10).
  const int all = g_registry.registered;
  if (static_cast<int>(g_registry.live.size()) != all || all < 10 || all % 2 != 0) {
    std::printf("FAIL: load-time registration: %zu live, %d calls (expected an even number >= 10, all live)\n",
                g_registry.live.size(), all);
    return 1;
  }
  // MMDeploy's drop-ins also in their nodes' domain
  for (const char* k : {"TwinopsResize/1/", "TwinopsResize/legacy/", "DynamicTRTResize/1/", "DynamicTRTResize/1/mmdeploy",
                        "TRTBicubicInterpolate/legacy/", "TRTBicubicInterpolate/legacy/mmdeploy"})
    if (!g_registry.live.count(k)) { std::printf("FAIL: %s not registered\n", k); return 1; }
  using GetAll = IPluginCreatorInterface* const* (*)(int32_t&);
  int32_t n = 0;
  reinterpret_cast<GetAll>(dlsym(h, "getCreators"))(n);
  if (n != all || !g_registry.live.empty() || g_registry.deregistered != all) {
    std::printf("FAIL: getCreators must withdraw the load-time registrations: %zu left\n", g_registry.live.size());
    return 1;
  }
  std::printf("OK registered %d at load, withdrew %d on getCreators\n", all, all);
  return 0;
}
