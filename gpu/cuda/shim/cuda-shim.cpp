// The part of the CUDA driver API that gpu/cuda/driver.ts calls, run on the CPU over the kernels
// compiled as C++ (cuda-shim.h). Tests load this library in place of libcuda.so.1, so the host side
// (memory plan, batching, launch geometry, kernel arguments, streams, failures) runs the same code
// as on a GPU. "Device" memory is host memory. Streams run their work at once, in order; built with
// -DDRM_SHIM_DEFERRED they run it only when waited for, as a GPU's do (streams.h).
//
// Test controls (not part of the driver API):
// - drmShimFailLaunch(n): the n-th launch from now fails when made, as a lost launch does on a GPU;
// - drmShimFaultLaunch(n): the n-th launch from now faults on the "device", as an Xid does: it is
//   accepted, the work queued after it does not run, the next wait on a stream reports the fault,
//   and from then on every call fails (the error is sticky) until the context is released, which
//   frees all it held;
// - drmShimMemoryLimit(bytes): allocations past it fail as out of memory;
// - drmShimRefuseRegister(1): cuMemHostRegister fails, as on a driver that cannot page-lock;
// - drmShimLive(): the allocations and host registrations not yet freed;
// - drmShimCopies(kind): the copies between host and device so far, by their host side: 0 pageable
//   memory (on a GPU such a copy holds the calling thread), 1 cuMemAllocHost's, 2 registered memory;
// - drmShimLaunches(): the launches accepted so far;
// - drmShimWaitDelay(ms): each cuStreamSynchronize made off the thread that called cuInit (koffi's,
//   for a batch) takes this long, so that the batch stays "in flight";
// - drmShimUnregisteredMidWait(): host memory unregistered while some stream was being waited for
//   (while work that may copy to or from it could still be running on a GPU);
// - drmShimMostOffThreadWaits(): the most waits under way at once off the main thread, since the last call;
// - drmShimRefuseOffThreadWait(1): cuStreamSynchronize off the main thread fails with
//   CUDA_ERROR_INVALID_CONTEXT, as it would where the driver found no context on that thread;
// - drmShimRaces(): with deferred streams, a copy whose host source changed between the call and the
//   copy, and memory freed or unregistered while queued work still touched it (each also on stderr).
// DRM_CUDA_SHIM_FAIL_LAUNCH=n in the environment does what drmShimFailLaunch(n) does, for a test
// that starts drm as a process; DRM_CUDA_SHIM_SKIP_KERNELS=1 accepts launches without running them,
// so that the host side's own cost per frame (staging, launches, waits, copies) can be timed apart
// from the kernels.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <thread>

#include "cuda-shim.h"
#include "streams.h"

using shim::deferred;

thread_local ShimDim3 blockIdx, threadIdx, blockDim, gridDim;

typedef int CUresult;
enum : CUresult {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_FOUND = 500,
  HOST_MEMORY_ALREADY_REGISTERED = 712,
  HOST_MEMORY_NOT_REGISTERED = 713,
  INVALID_CONTEXT = 201,
  NOT_READY = 600,
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
static bool refuseRegister = false;
static long faultIn = 0;
// a fault not yet reported (queued work is dropped), and one reported (every call fails); a wait
// runs on one of koffi's threads while the main thread makes other calls
static std::atomic<bool> faultPending{false}, faulted{false};
static std::atomic<int> waiting{0}, waitingOffThread{0}, mostOffThread{0}, waitDelayMs{0};
static std::atomic<bool> refuseOffThreadWait{false};
static std::atomic<long> launches{0}, unregisteredMidWait{0};
static std::thread::id mainThread;
#define STICKY \
  if (faulted) return LAUNCH_FAILED;
#define DROPPED_AFTER_FAULT \
  if (faultPending) return SUCCESS;

static CUresult reportFault() {
  if (faultPending.exchange(false)) faulted = true;
  return faulted ? LAUNCH_FAILED : SUCCESS;
}

static CUresult waitForStream(void* stream) {
  const bool offThread = std::this_thread::get_id() != mainThread;
  if (refuseOffThreadWait && offThread) return INVALID_CONTEXT;
  waiting++;
  int now = offThread ? ++waitingOffThread : 0, most = mostOffThread;
  while (now > most && !mostOffThread.compare_exchange_weak(most, now)) continue;
  if (waitDelayMs > 0 && offThread) std::this_thread::sleep_for(std::chrono::milliseconds(waitDelayMs.load()));
  if (deferred) shim::drain(stream);
  CUresult result = reportFault();
  if (offThread) waitingOffThread--;
  waiting--;
  return result;
}
static long copies[3] = {0, 0, 0};
// host memory the device reaches directly: cuMemAllocHost's, and ranges the caller registered
static std::map<uintptr_t, size_t> hostAllocated, registered;

static bool within(const std::map<uintptr_t, size_t>& ranges, uintptr_t p, size_t bytes) {
  auto it = ranges.upper_bound(p);
  if (it == ranges.begin()) return false;
  --it;
  return p + bytes <= it->first + it->second;
}

static void countCopy(const void* host, size_t bytes) {
  uintptr_t p = (uintptr_t)host;
  copies[within(registered, p, bytes) ? 2 : within(hostAllocated, p, bytes) ? 1 : 0]++;
}

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
int drmShimLive() { return (int)(live.size() + registered.size()); }
void drmShimFaultLaunch(long n) { faultIn = n; }
long drmShimLaunches() { return launches; }
void drmShimWaitDelay(int ms) { waitDelayMs = ms; }
long drmShimUnregisteredMidWait() { return unregisteredMidWait; }
void drmShimRefuseRegister(int refuse) { refuseRegister = refuse != 0; }
long drmShimCopies(int kind) { return kind >= 0 && kind < 3 ? copies[kind] : -1; }
long drmShimRaces() { return shim::races(); }
int drmShimMostOffThreadWaits() { return mostOffThread.exchange(waitingOffThread); }
void drmShimRefuseOffThreadWait(int refuse) { refuseOffThreadWait = refuse != 0; }

// A process started by a test (drm ingest) takes the same control from its environment.
CUresult cuInit(unsigned) {
  static bool read = false;
  const char* fail = std::getenv("DRM_CUDA_SHIM_FAIL_LAUNCH");
  if (!read && fail) failLaunchIn = std::atol(fail);
  if (!read) skipKernels = std::getenv("DRM_CUDA_SHIM_SKIP_KERNELS") != nullptr;
  mainThread = std::this_thread::get_id();
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
CUresult cuDevicePrimaryCtxRelease_v2(int) {
  if (!faulted && !faultPending) return shim::drainAll(), SUCCESS;
  // The broken context goes, and with it everything allocated or registered in it.
  shim::dropAll();
  for (auto& [p, bytes] : live) std::free(p);
  live.clear();
  hostAllocated.clear();
  registered.clear();
  used = 0;
  faulted = false;
  faultPending = false;
  return SUCCESS;
}
CUresult cuCtxSetCurrent(void*) { return SUCCESS; }
CUresult cuCtxSynchronize() { return shim::drainAll(), SUCCESS; }
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
  STICKY
  void* p = take(bytes);
  return p ? (*ptr = (uint64_t)(uintptr_t)p, SUCCESS) : OUT_OF_MEMORY;
}
CUresult cuMemFree_v2(uint64_t ptr) {
  STICKY
  auto it = live.find((void*)(uintptr_t)ptr);
  if (it != live.end()) shim::releasing(ptr, it->second, "cuMemFree of memory that queued work still touches");
  return give((void*)(uintptr_t)ptr);
}
CUresult cuMemAllocHost_v2(void** ptr, size_t bytes) {
  STICKY
  *ptr = take(bytes);
  if (*ptr) hostAllocated[(uintptr_t)*ptr] = bytes;
  return *ptr ? SUCCESS : OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* ptr) {
  STICKY
  auto it = live.find(ptr);
  if (it != live.end()) shim::releasing((uintptr_t)ptr, it->second, "cuMemFreeHost of memory a queued copy touches");
  hostAllocated.erase((uintptr_t)ptr);
  return give(ptr);
}
CUresult cuMemHostRegister_v2(uint64_t ptr, size_t bytes, unsigned) {
  STICKY
  if (refuseRegister) return OUT_OF_MEMORY;
  if (!ptr || !bytes) return INVALID_VALUE;
  // The driver locks whole pages: a range that shares a page with a registered one is refused.
  const uint64_t page = 4096, first = ptr / page * page, end = (ptr + bytes + page - 1) / page * page;
  auto next = registered.lower_bound(first);
  bool overlaps = (next != registered.end() && next->first < end) ||
                  (next != registered.begin() && std::prev(next)->first + std::prev(next)->second > first);
  if (overlaps) return HOST_MEMORY_ALREADY_REGISTERED;
  registered[ptr] = bytes;
  return SUCCESS;
}
CUresult cuMemHostUnregister(uint64_t ptr) {
  STICKY
  auto it = registered.find(ptr);
  if (it != registered.end()) shim::releasing(ptr, it->second, "cuMemHostUnregister of memory a queued copy touches");
  if (waiting > 0) unregisteredMidWait++;
  return registered.erase(ptr) ? SUCCESS : HOST_MEMORY_NOT_REGISTERED;
}
CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void* src, size_t bytes, void* stream) {
  STICKY
  DROPPED_AFTER_FAULT
  countCopy(src, bytes);
  return shim::copyToDevice(stream, dst, src, bytes), SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, uint64_t src, size_t bytes, void* stream) {
  STICKY
  DROPPED_AFTER_FAULT
  countCopy(dst, bytes);
  return shim::copyToHost(stream, dst, src, bytes), SUCCESS;
}
CUresult cuMemsetD8Async(uint64_t dst, unsigned char value, size_t bytes, void* stream) {
  STICKY
  DROPPED_AFTER_FAULT
  return shim::setDevice(stream, dst, value, bytes), SUCCESS;
}
CUresult cuStreamCreate(void** stream, unsigned) {
  STICKY
  return *stream = take(1), SUCCESS;
}
CUresult cuStreamDestroy_v2(void* stream) {
  STICKY
  if (deferred) shim::drain(stream);  // the driver finishes a destroyed stream's work, then frees it
  return give(stream);
}
CUresult cuStreamSynchronize(void* stream) { return waitForStream(stream); }
CUresult cuStreamQuery(void* stream) { return deferred && shim::stillBusy(stream) ? NOT_READY : reportFault(); }
CUresult cuGetErrorName(CUresult code, const char** text) {
  *text = code == OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
          : code == LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
          : code == NOT_FOUND    ? "CUDA_ERROR_NOT_FOUND"
          : code == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT"
          : code == HOST_MEMORY_ALREADY_REGISTERED ? "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"
          : code == HOST_MEMORY_NOT_REGISTERED     ? "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"
                                 : "CUDA_ERROR_INVALID_VALUE";
  return SUCCESS;
}

CUresult cuLaunchKernel(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned, void* stream, void** params, void**) {
  STICKY
  if (failLaunchIn > 0 && --failLaunchIn == 0) return LAUNCH_FAILED;
  DROPPED_AFTER_FAULT
  launches++;
  if (faultIn > 0 && --faultIn == 0) return faultPending = true, SUCCESS;
  if (!function || !params || bx * by * bz == 0 || bx * by * bz > 1024) return INVALID_VALUE;
  if (gy > 65535 || gz > 65535) return INVALID_VALUE;
  if (skipKernels) return SUCCESS;
  const auto& launcher = *static_cast<ShimLauncher*>(function);
  return shim::launch(stream, launcher, {gx, gy, gz}, {bx, by, bz}, params), SUCCESS;
}
}
