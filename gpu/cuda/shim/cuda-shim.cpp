// The part of the CUDA driver API that gpu/cuda/driver.ts calls, run on the CPU over the kernels
// compiled as C++ (cuda-shim.h). Tests load this library in place of libcuda.so.1, so the host side
// (memory plan, batching, launch geometry, kernel arguments, streams, failures) runs the same code
// as on a GPU. "Device" memory is host memory; streams run their work at once, in order.
//
// Test controls (not part of the driver API): drmShimFailLaunch(n) makes the n-th launch from now
// fail as a lost launch does on a GPU; drmShimMemoryLimit(bytes) makes allocations past it fail as out
// of memory; drmShimLive() counts the allocations not yet freed. DRM_CUDA_SHIM_FAIL_LAUNCH=n in the
// environment does what drmShimFailLaunch(n) does, for a test that starts drm as a process;
// DRM_CUDA_SHIM_SKIP_KERNELS=1 accepts launches without running them, so that the host side's own
// cost per frame (staging, launches, waits, copies) can be timed apart from the kernels.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "cuda-shim.h"

thread_local ShimDim3 blockIdx, threadIdx, blockDim, gridDim;

typedef int CUresult;
enum : CUresult {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_FOUND = 500,
  LAUNCH_FAILED = 719,
};

static std::map<std::string, ShimLauncher>& kernels() {
  static std::map<std::string, ShimLauncher> table;
  return table;
}

void shimRegister(const char* name, ShimLauncher launcher) { kernels()[name] = std::move(launcher); }

static std::map<void*, size_t> live;
static size_t used = 0;
static size_t limit = SIZE_MAX;
static long failLaunchIn = 0;
static bool skipKernels = false;

static void* take(size_t bytes) {
  if (bytes > limit - used) return nullptr;
  void* p = std::calloc(1, bytes ? bytes : 1);
  if (p) {
    live[p] = bytes;
    used += bytes;
  }
  return p;
}

static CUresult give(void* p) {
  auto it = live.find(p);
  if (it == live.end()) return INVALID_VALUE;
  used -= it->second;
  live.erase(it);
  std::free(p);
  return SUCCESS;
}

extern "C" {
void drmShimFailLaunch(long n) { failLaunchIn = n; }
void drmShimMemoryLimit(unsigned long long bytes) { limit = bytes; }
int drmShimLive() { return (int)live.size(); }

// A process started by a test (drm ingest) takes the same control from its environment.
CUresult cuInit(unsigned) {
  static bool read = false;
  const char* fail = std::getenv("DRM_CUDA_SHIM_FAIL_LAUNCH");
  if (!read && fail) failLaunchIn = std::atol(fail);
  if (!read) skipKernels = std::getenv("DRM_CUDA_SHIM_SKIP_KERNELS") != nullptr;
  read = true;
  return SUCCESS;
}
CUresult cuDriverGetVersion(int* v) { return *v = 13000, SUCCESS; }
CUresult cuDeviceGetCount(int* n) { return *n = 1, SUCCESS; }
CUresult cuDeviceGet(int* d, int ordinal) { return ordinal == 0 ? (*d = 0, SUCCESS) : INVALID_VALUE; }
CUresult cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "drm CPU shim", (size_t)len);
  return SUCCESS;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int) {
  *value = attribute == 75 ? 8 : attribute == 76 ? 0 : 1;  // compute capability 8.0
  return SUCCESS;
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, int) { return *bytes = (size_t)1 << 30, SUCCESS; }
CUresult cuDevicePrimaryCtxSetFlags_v2(int, unsigned) { return SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) { return *ctx = (void*)&live, SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return SUCCESS; }
CUresult cuCtxSetCurrent(void*) { return SUCCESS; }
CUresult cuCtxSynchronize() { return SUCCESS; }
CUresult cuModuleLoadData(void** module, const void* image) {
  return image ? (*module = (void*)&kernels(), SUCCESS) : INVALID_VALUE;
}
CUresult cuModuleUnload(void*) { return SUCCESS; }
CUresult cuModuleGetFunction(void** function, void*, const char* name) {
  auto it = kernels().find(name);
  if (it == kernels().end()) return NOT_FOUND;
  *function = (void*)&it->second;
  return SUCCESS;
}
CUresult cuMemAlloc_v2(uint64_t* ptr, size_t bytes) {
  void* p = take(bytes);
  return p ? (*ptr = (uint64_t)(uintptr_t)p, SUCCESS) : OUT_OF_MEMORY;
}
CUresult cuMemFree_v2(uint64_t ptr) { return give((void*)(uintptr_t)ptr); }
CUresult cuMemAllocHost_v2(void** ptr, size_t bytes) {
  *ptr = take(bytes);
  return *ptr ? SUCCESS : OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* ptr) { return give(ptr); }
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void* src, size_t bytes, void*) {
  std::memcpy((void*)(uintptr_t)dst, src, bytes);
  return SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, uint64_t src, size_t bytes, void*) {
  std::memcpy(dst, (const void*)(uintptr_t)src, bytes);
  return SUCCESS;
}
CUresult cuMemsetD8Async(uint64_t dst, unsigned char value, size_t bytes, void*) {
  std::memset((void*)(uintptr_t)dst, value, bytes);
  return SUCCESS;
}
CUresult cuStreamCreate(void** stream, unsigned) { return *stream = take(1), SUCCESS; }
CUresult cuStreamDestroy_v2(void* stream) { return give(stream); }
CUresult cuStreamSynchronize(void*) { return SUCCESS; }
CUresult cuStreamQuery(void*) { return SUCCESS; }
CUresult cuGetErrorName(CUresult code, const char** text) {
  *text = code == OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
          : code == LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
          : code == NOT_FOUND    ? "CUDA_ERROR_NOT_FOUND"
                                 : "CUDA_ERROR_INVALID_VALUE";
  return SUCCESS;
}

CUresult cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned, void*, void** params, void**) {
  if (failLaunchIn > 0 && --failLaunchIn == 0) return LAUNCH_FAILED;
  if (!function || !params || bx * by * bz == 0 || bx * by * bz > 1024) return INVALID_VALUE;
  if (skipKernels) return SUCCESS;
  auto& launch = *static_cast<ShimLauncher*>(function);
  gridDim = {gx, gy, gz};
  blockDim = {bx, by, bz};
  for (unsigned z = 0; z < gz; z++)
    for (unsigned y = 0; y < gy; y++)
      for (unsigned x = 0; x < gx; x++)
        for (unsigned tz = 0; tz < bz; tz++)
          for (unsigned ty = 0; ty < by; ty++)
            for (unsigned tx = 0; tx < bx; tx++) {
              blockIdx = {x, y, z};
              threadIdx = {tx, ty, tz};
              launch(params);
            }
  return SUCCESS;
}
}
