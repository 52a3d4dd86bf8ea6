// The device properties the kernels' host rules are written in, read once per device, and the
// device they were fitted on. The rules themselves (each op's <op>_tuning.h) are pure functions
// of a DeviceProps, so they run, and are tested, without a GPU; they only choose among correct
// kernels (tile sizes, grids, slices), so no result depends on a property or on a query.
//
// The struct and the rules compile with a plain C++17 host compiler; the queries only where the
// CUDA runtime is (nvcc, or TWIN_WITH_CUDA_RUNTIME with its headers on the include path).
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#endif

namespace twinops {

struct DeviceProps {
  int major = 0, minor = 0;             // compute capability
  int64_t sm_count = 0;                 // multiprocessors
  int64_t max_threads_per_sm = 0;       // resident threads per SM
  int64_t registers_per_sm = 0;         // 32-bit registers per SM
  int64_t smem_per_sm = 0;              // shared memory per SM, bytes
  int64_t smem_optin_per_block = 0;     // the most one block may opt in to, bytes
  int64_t smem_reserved_per_block = 0;  // what the runtime keeps of it per resident block, bytes
};

// The NVIDIA H200, where the tuning constants were measured (and its attributes as the runtime
// reports them).
constexpr DeviceProps kFittedDevice{9, 0, 132, 2048, 65536, 228 * 1024, 227 * 1024, 1024};

// Whether `d` has the SM the tuning was fitted on: compute capability 9.x with the fitted
// device's shared memory (per SM, opt-in and reserved per block), registers and threads per
// SM. The H100 and the other GH100 parts pass; the SM count is not compared, since the rules
// take it (or the resident blocks it gives) from the device. A rule that holds a measured time
// applies it only on such a device; one that holds a measured size scales it to the device or
// takes a conservative value elsewhere.
constexpr bool fitted_device(const DeviceProps& d) {
  return d.major == kFittedDevice.major && d.smem_per_sm == kFittedDevice.smem_per_sm &&
         d.smem_optin_per_block == kFittedDevice.smem_optin_per_block &&
         d.smem_reserved_per_block == kFittedDevice.smem_reserved_per_block &&
         d.registers_per_sm == kFittedDevice.registers_per_sm &&
         d.max_threads_per_sm == kFittedDevice.max_threads_per_sm;
}

// 32-bit registers per SM, for the register caps __launch_bounds__ computes at compile time:
// 65536 on every architecture from sm_50 to sm_121, so one constant serves each __CUDA_ARCH__
// (host code reads DeviceProps::registers_per_sm).
constexpr int kRegistersPerSm = 65536;

// Resident threads per SM of the architecture being compiled, for __launch_bounds__' minimum
// blocks (device code; host code reads DeviceProps::max_threads_per_sm): 1536 on sm_86, 87,
// 89, 120 and 121, 2048 on sm_50 .. 72, 80, 90, 100 and 103, and 1024 on sm_75 and on any
// architecture not listed (the fewest of any since sm_50, so that a bound never asks for more
// blocks than fit). Host code (no __CUDA_ARCH__), where no register cap is compiled, sees 2048.
#if !defined(__CUDA_ARCH__)
constexpr int kArchThreadsPerSm = 2048;
#elif __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || __CUDA_ARCH__ == 1200 || \
    __CUDA_ARCH__ == 1210
constexpr int kArchThreadsPerSm = 1536;
#elif (__CUDA_ARCH__ >= 500 && __CUDA_ARCH__ <= 720) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
constexpr int kArchThreadsPerSm = 2048;
#else
constexpr int kArchThreadsPerSm = 1024;
#endif

// A __launch_bounds__ minimum of `blocks` blocks of `threads`: at most the blocks whose threads
// an SM of the compiled architecture holds (a larger minimum would only cap the registers).
constexpr int arch_min_blocks(int threads, int blocks) {
  const int fit = kArchThreadsPerSm / threads;
  return blocks <= fit ? blocks : (fit > 0 ? fit : 1);
}

// Blocks of `threads` resident per SM of `d` for a kernel whose registers __launch_bounds__
// sized for `min_blocks` such blocks: min_blocks where `d` has the registers and threads per
// SM that sizing assumed, fewer where it has fewer; at least one.
constexpr int64_t register_blocks(const DeviceProps& d, int threads, int min_blocks) {
  const int64_t per_thread = kRegistersPerSm / (int64_t{threads} * min_blocks);  // the cap ptxas kept to
  const int64_t by_registers = per_thread > 0 ? d.registers_per_sm / (threads * per_thread) : 0;
  const int64_t by_threads = d.max_threads_per_sm / threads;
  int64_t b = min_blocks;
  b = by_registers < b ? by_registers : b;
  b = by_threads < b ? by_threads : b;
  return b > 0 ? b : 1;
}

#if defined(__CUDACC__) || defined(TWIN_WITH_CUDA_RUNTIME)
// The attribute query, cudaDeviceGetAttribute's signature (a test passes its own).
using DeviceAttributeQuery = decltype(&cudaDeviceGetAttribute);

// The properties of `device` through `query`; on the first failing query its status, *out
// untouched.
inline cudaError_t read_device_props(int device, DeviceProps* out,
                                     DeviceAttributeQuery query = &cudaDeviceGetAttribute) {
  struct Field {
    cudaDeviceAttr attr;
    int64_t DeviceProps::*field;
  };
  static constexpr Field kFields[] = {
      {cudaDevAttrMultiProcessorCount, &DeviceProps::sm_count},
      {cudaDevAttrMaxThreadsPerMultiProcessor, &DeviceProps::max_threads_per_sm},
      {cudaDevAttrMaxRegistersPerMultiprocessor, &DeviceProps::registers_per_sm},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, &DeviceProps::smem_per_sm},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, &DeviceProps::smem_optin_per_block},
      {cudaDevAttrReservedSharedMemoryPerBlock, &DeviceProps::smem_reserved_per_block},
  };
  DeviceProps d;
  if (cudaError_t e = query(&d.major, cudaDevAttrComputeCapabilityMajor, device); e != cudaSuccess) return e;
  if (cudaError_t e = query(&d.minor, cudaDevAttrComputeCapabilityMinor, device); e != cudaSuccess) return e;
  for (const Field& f : kFields) {
    int v = 0;
    if (cudaError_t e = query(&v, f.attr, device); e != cudaSuccess) return e;
    d.*f.field = v;
  }
  *out = d;
  return cudaSuccess;
}

// Properties per device, each read once (a failed read is not kept: the next call asks again).
// Thread-safe.
class DevicePropsCache {
 public:
  explicit DevicePropsCache(DeviceAttributeQuery query = &cudaDeviceGetAttribute) : query_(query) {}
  cudaError_t get(int device, DeviceProps* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = props_.find(device); it != props_.end()) {
      *out = it->second;
      return cudaSuccess;
    }
    DeviceProps d;
    if (cudaError_t e = read_device_props(device, &d, query_); e != cudaSuccess) return e;
    *out = props_[device] = d;
    return cudaSuccess;
  }

 private:
  DeviceAttributeQuery query_;
  std::mutex mutex_;
  std::map<int, DeviceProps> props_;
};

// The properties of `device`, read once per process (per library that includes this header).
inline cudaError_t device_props(int device, DeviceProps* out) {
  static DevicePropsCache* cache = new DevicePropsCache();  // never freed: used until exit
  return cache->get(device, out);
}

// The properties of the current device.
inline cudaError_t current_device_props(DeviceProps* out) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  return device_props(device, out);
}
#endif

}  // namespace twinops
