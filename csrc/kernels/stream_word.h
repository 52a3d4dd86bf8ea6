// One zeroed 32-bit device word per (device, stream), for kernels that signal work to a fix-up
// pass launched from the device (a non-finite fix-up): kernels on one stream run in order, so a
// word that every user leaves zero needs no reset between calls. Host code; the words live for
// the whole process (a few bytes per stream ever used). Keyed by the handle: callers pass the
// stream they run on (torch's current stream, TensorRT's enqueue stream); cudaStreamPerThread,
// one handle for every thread's own stream, would share one word between threads.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace twinops {

// The word of `stream` on the current device, or nullptr and *err set. Safe while any stream
// is being captured into a CUDA graph: allocation and zeroing switch this thread to relaxed
// capture mode and use a private stream, so nothing is added to a graph being captured.
inline unsigned* stream_word(cudaStream_t stream, cudaError_t* err) {
  static std::mutex mu;
  static auto* words = new std::map<std::pair<int, cudaStream_t>, unsigned*>();  // never freed: used until exit
  static auto* spare = new std::map<int, std::pair<unsigned*, int>>();            // per device: chunk, used
  constexpr int kChunk = 256;
  *err = cudaSuccess;
  int device = 0;
  if ((*err = cudaGetDevice(&device)) != cudaSuccess) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(device, stream);
  if (auto it = words->find(key); it != words->end()) return it->second;
  auto& chunk = (*spare)[device];
  if (chunk.first == nullptr || chunk.second == kChunk) {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if ((*err = cudaThreadExchangeStreamCaptureMode(&mode)) != cudaSuccess) return nullptr;
    unsigned* fresh = nullptr;
    cudaStream_t own = nullptr;
    *err = cudaMalloc(&fresh, kChunk * sizeof(unsigned));
    if (*err == cudaSuccess) *err = cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    if (*err == cudaSuccess) *err = cudaMemsetAsync(fresh, 0, kChunk * sizeof(unsigned), own);
    if (*err == cudaSuccess) *err = cudaStreamSynchronize(own);
    if (own != nullptr) cudaStreamDestroy(own);
    if (*err != cudaSuccess && fresh != nullptr) cudaFree(fresh);
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (*err != cudaSuccess) return nullptr;
    chunk = {fresh, 0};
  }
  unsigned* w = chunk.first + chunk.second++;
  (*words)[key] = w;
  return w;
}

}  // namespace twinops
