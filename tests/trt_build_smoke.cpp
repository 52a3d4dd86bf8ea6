// CPU-only smoke driver of libtwinops_trt.so for tests/test_trt_build.py (no TensorRT runtime):
// loads the library like IPluginRegistry::loadLibrary (dlopen + entry points), creates each
// plugin from parser-style fields, round-trips serialization and checks that bad fields and
// bad buffers give nullptr plus a logged message. Prints "OK <n checks>" or "FAIL: <why>".
// The full lifecycle (shapes, formats, enqueue) is the plugin host's job (csrc/trt_host).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <NvInferRuntime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace nvinfer1;

namespace {

int checks = 0;
#define CHECK(cond, what)                          \
  do {                                             \
    ++checks;                                      \
    if (!(cond)) {                                 \
      std::printf("FAIL: %s\n", what);             \
      return 1;                                    \
    }                                              \
  } while (0)

using LastError = const char* (*)();
LastError last_error = nullptr;

// TwinopsResize fields exactly as the ONNX parser builds them (INT -> kINT32, FLOAT -> kFLOAT32).
struct ResizeFields {
  const char* mode = "linear";
  const char* ctm = "half_pixel";
  const char* nearest = "round_prefer_floor";
  float cubic = -0.75f, extrap = 0.f, scales[2] = {2.f, 0.5f}, roi[4] = {0, 0, 1, 1};
  int32_t exclude = 0, antialias = 0, pytorch = 1;
  std::vector<PluginField> f;
  PluginFieldCollection fc{};
  PluginFieldCollection* make(const char* drop = nullptr) {
    f = {{"mode", mode, PluginFieldType::kCHAR, static_cast<int32_t>(std::strlen(mode))},
         {"coordinate_transformation_mode", ctm, PluginFieldType::kCHAR, static_cast<int32_t>(std::strlen(ctm))},
         {"nearest_mode", nearest, PluginFieldType::kCHAR, static_cast<int32_t>(std::strlen(nearest))},
         {"cubic_coeff_a", &cubic, PluginFieldType::kFLOAT32, 1},
         {"exclude_outside", &exclude, PluginFieldType::kINT32, 1},
         {"antialias", &antialias, PluginFieldType::kINT32, 1},
         {"scales", scales, PluginFieldType::kFLOAT32, 2},
         {"roi", roi, PluginFieldType::kFLOAT32, 4},
         {"extrapolation_value", &extrap, PluginFieldType::kFLOAT32, 1},
         {"pytorch", &pytorch, PluginFieldType::kINT32, 1}};
    std::vector<PluginField> kept;
    for (const PluginField& x : f)
      if (!drop || std::strcmp(x.name, drop) != 0) kept.push_back(x);
    f = kept;
    fc.nbFields = static_cast<int32_t>(f.size());
    fc.fields = f.data();
    return &fc;
  }
};

bool logged() { return last_error && std::strlen(last_error()) > 0; }

int check_v2(IPluginCreator* const* creators, int32_t n) {
  IPluginCreator* c = nullptr;
  for (int32_t i = 0; i < n; ++i)
    if (!std::strcmp(creators[i]->getPluginName(), "TwinopsResize") && !std::strcmp(creators[i]->getPluginVersion(), "legacy"))
      c = creators[i];
  CHECK(c != nullptr, "V2 creator TwinopsResize/legacy not found");
  CHECK(c->getFieldNames() && c->getFieldNames()->nbFields == 10, "TwinopsResize declares 10 fields");
  ResizeFields rf;
  IPluginV2* p = c->createPlugin("r", rf.make());
  CHECK(p != nullptr, "V2 createPlugin with valid fields");
  std::vector<char> blob(p->getSerializationSize());
  p->serialize(blob.data());
  IPluginV2* q = c->deserializePlugin("r", blob.data(), blob.size());
  CHECK(q != nullptr, "V2 deserializePlugin of its own buffer");
  std::vector<char> blob2(q->getSerializationSize());
  q->serialize(blob2.data());
  CHECK(blob == blob2, "V2 serialization round trip is stable");
  q->destroy();
  for (size_t len = 0; len < blob.size(); ++len)
    CHECK(c->deserializePlugin("r", blob.data(), len) == nullptr && logged(), "truncated buffer -> nullptr + message");
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000; ++i) {
    std::vector<char> junk = blob;
    if (i % 2) junk.resize(rng() % 256);
    for (char& b : junk)
      if (i % 2 || rng() % 16 == 0) b = static_cast<char>(rng());
    if (junk == blob) continue;
    CHECK(c->deserializePlugin("r", junk.data(), junk.size()) == nullptr, "garbage buffer -> nullptr");
  }
  CHECK(c->createPlugin("r", rf.make("mode")) == nullptr && logged(), "missing field -> nullptr + message");
  CHECK(std::strstr(last_error(), "mode") != nullptr, "missing-field message names the field");
  rf.antialias = 7;
  CHECK(c->createPlugin("r", rf.make()) == nullptr && std::strstr(last_error(), "antialias"), "antialias=7 rejected");
  rf.antialias = 0;
  rf.mode = "bogus";
  CHECK(c->createPlugin("r", rf.make()) == nullptr && std::strstr(last_error(), "mode"), "mode=bogus rejected");
  rf.mode = "linear";
  rf.make();
  rf.f[3].type = PluginFieldType::kINT32;  // cubic_coeff_a as an int
  CHECK(c->createPlugin("r", &rf.fc) == nullptr && std::strstr(last_error(), "cubic_coeff_a"), "wrong type rejected");
  rf.make();
  rf.f[6].length = 3;  // scales with 3 entries
  CHECK(c->createPlugin("r", &rf.fc) == nullptr && std::strstr(last_error(), "scales"), "wrong count rejected");
  CHECK(c->createPlugin("r", nullptr) == nullptr && logged(), "null collection rejected");
  p->destroy();
  return 0;
}

#if NV_TENSORRT_MAJOR >= 10
int check_v3(IPluginCreatorInterface* const* creators, int32_t n, int expected) {
  int found = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (std::strcmp(creators[i]->getInterfaceInfo().kind, "PLUGIN CREATOR_V3ONE") != 0) continue;
    auto* c = static_cast<IPluginCreatorV3One*>(creators[i]);
    CHECK(!std::strcmp(c->getPluginVersion(), "1"), "V3 creators have version 1");
    ++found;
    if (std::strcmp(c->getPluginName(), "TwinopsResize") != 0) continue;
    ResizeFields rf;
    IPluginV3* p = c->createPlugin("r", rf.make(), TensorRTPhase::kBUILD);
    CHECK(p != nullptr, "V3 createPlugin (build phase)");
    auto* rt = static_cast<IPluginV3OneRuntime*>(p->getCapabilityInterface(PluginCapabilityType::kRUNTIME));
    CHECK(rt != nullptr, "V3 runtime capability");
    const PluginFieldCollection* ser = rt->getFieldsToSerialize();
    CHECK(ser != nullptr && ser->nbFields == 10, "getFieldsToSerialize returns the 10 fields");
    IPluginV3* q = c->createPlugin("r", ser, TensorRTPhase::kRUNTIME);
    CHECK(q != nullptr, "V3 createPlugin (runtime phase) from getFieldsToSerialize");
    CHECK(c->createPlugin("r", rf.make("pytorch"), TensorRTPhase::kBUILD) == nullptr && logged(), "V3 missing field");
    delete q;
    delete p;
  }
  // Every op creator has a V3 one; a v3_only creator (a data-dependent output) has no legacy V2.
  CHECK(found >= expected && found + expected == n, "one V3 creator per op creator, one V2 per non-v3_only one");
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::printf("FAIL: usage: trt_build_smoke <libtwinops_trt.so>\n");
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK(h != nullptr, dlerror());
  last_error = reinterpret_cast<LastError>(dlsym(h, "twinops_trt_last_error"));
  CHECK(last_error != nullptr, "twinops_trt_last_error exported");
  using GetV2 = IPluginCreator* const* (*)(int32_t&);
  auto get_v2 = reinterpret_cast<GetV2>(dlsym(h, "getPluginCreators"));
  CHECK(get_v2 != nullptr, "getPluginCreators exported");
  int32_t n = 0;
  IPluginCreator* const* v2 = get_v2(n);
  CHECK(v2 != nullptr, "getPluginCreators lists creators");
  // Every op creator but the v3_only ones once as V2 "legacy" (and, on 8.6, once more as V2 "1");
  // at least resize's three.
  int legacy = 0, one = 0;
  for (int32_t i = 0; i < n; ++i) {
    legacy += !std::strcmp(v2[i]->getPluginVersion(), "legacy");
    one += !std::strcmp(v2[i]->getPluginVersion(), "1");
  }
  CHECK(legacy >= 3 && legacy + one == n && one == (NV_TENSORRT_MAJOR >= 10 ? 0 : legacy),
        "V2 creator count (one legacy per op creator [+ one version 1 on 8.6])");
  if (check_v2(v2, n)) return 1;
#if NV_TENSORRT_MAJOR >= 10
  using GetAll = IPluginCreatorInterface* const* (*)(int32_t&);
  auto get_all = reinterpret_cast<GetAll>(dlsym(h, "getCreators"));
  CHECK(get_all != nullptr, "getCreators exported");
  IPluginCreatorInterface* const* all = get_all(n);
  CHECK(all != nullptr && n >= 2 * legacy, "getCreators lists the V3 creators and the legacy V2 ones");
  if (check_v3(all, n, legacy)) return 1;
#endif
  std::printf("OK %d checks\n", checks);
  return 0;
}
