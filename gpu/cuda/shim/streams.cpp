// The streams of streams.h.
#include "streams.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace {

struct Work {
  std::function<void()> run;
  // the memory it reads or writes: a host range and a device range (both host memory in the shim)
  uintptr_t a;
  size_t aBytes;
  uintptr_t b;
  size_t bBytes;
};

std::mutex queueMutex;  // the queues, and how often each stream was asked about
std::mutex runMutex;    // one stream's work at a time, so that it runs in the order it was queued
std::map<void*, std::deque<Work>> queues;
std::map<void*, int> asked;
std::atomic<long> raceCount{0};

void race(const char* what) {
  raceCount++;
  std::fprintf(stderr, "drm CUDA shim: %s\n", what);
}

bool overlaps(uintptr_t at, size_t bytes, uintptr_t start, size_t length) {
  return length > 0 && start < at + bytes && at < start + length;
}

bool pendingOn(uintptr_t at, size_t bytes) {
  std::lock_guard<std::mutex> lock(queueMutex);
  for (auto& [stream, queue] : queues)
    for (auto& work : queue)
      if (overlaps(at, bytes, work.a, work.aBytes) || overlaps(at, bytes, work.b, work.bBytes)) return true;
  return false;
}

void onStream(void* stream, std::function<void()> work, const void* a, size_t aBytes, uint64_t b, size_t bBytes) {
  if (!shim::deferred) return work();
  std::lock_guard<std::mutex> lock(queueMutex);
  queues[stream].push_back(Work{std::move(work), (uintptr_t)a, aBytes, (uintptr_t)b, bBytes});
}

uint64_t checksum(const void* data, size_t bytes) {
  uint64_t hash = 1469598103934665603ull;
  auto p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; i++) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

void runGrid(const ShimLauncher& launcher, ShimDim3 grid, ShimDim3 block, void** params) {
  gridDim = grid;
  blockDim = block;
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++)
        for (unsigned tz = 0; tz < block.z; tz++)
          for (unsigned ty = 0; ty < block.y; ty++)
            for (unsigned tx = 0; tx < block.x; tx++) {
              blockIdx = {x, y, z};
              threadIdx = {tx, ty, tz};
              launcher.call(params);
            }
}

}  // namespace

namespace shim {

void copyToDevice(void* stream, uint64_t dst, const void* src, size_t bytes) {
  // A GPU reads the source when the copy runs: a source changed before then is a race.
  uint64_t made = deferred ? checksum(src, bytes) : 0;
  auto copy = [=] {
    if (deferred && checksum(src, bytes) != made) race("a copy's host source changed before the copy ran");
    std::memcpy((void*)(uintptr_t)dst, src, bytes);
  };
  onStream(stream, copy, src, bytes, dst, bytes);
}

void copyToHost(void* stream, void* dst, uint64_t src, size_t bytes) {
  if (deferred) std::memset(dst, 0xCD, bytes);  // not there yet: a read before the wait sees garbage
  onStream(stream, [=] { std::memcpy(dst, (const void*)(uintptr_t)src, bytes); }, dst, bytes, src, bytes);
}

void setDevice(void* stream, uint64_t dst, unsigned char value, size_t bytes) {
  onStream(stream, [=] { std::memset((void*)(uintptr_t)dst, value, bytes); }, nullptr, 0, dst, bytes);
}

void launch(void* stream, const ShimLauncher& launcher, ShimDim3 grid, ShimDim3 block, void** params) {
  if (!deferred) return runGrid(launcher, grid, block, params);
  // The driver copies the arguments' values when the launch is made.
  auto values = std::make_shared<std::vector<std::vector<char>>>();
  for (size_t i = 0; i < launcher.sizes.size(); i++)
    values->emplace_back((char*)params[i], (char*)params[i] + launcher.sizes[i]);
  auto run = [&launcher, grid, block, values] {
    std::vector<void*> copied;
    for (auto& value : *values) copied.push_back(value.data());
    runGrid(launcher, grid, block, copied.data());
  };
  onStream(stream, run, nullptr, 0, 0, 0);
}

void drain(void* stream) {
  std::lock_guard<std::mutex> running(runMutex);
  for (;;) {
    std::function<void()> run;
    {
      std::lock_guard<std::mutex> lock(queueMutex);
      auto& queue = queues[stream];
      asked[stream] = 0;
      if (queue.empty()) return;
      run = queue.front().run;
    }
    run();  // still queued while it runs: memory freed meanwhile counts as touched by queued work
    std::lock_guard<std::mutex> lock(queueMutex);
    queues[stream].pop_front();
  }
}

void drainAll() {
  std::vector<void*> streams;
  {
    std::lock_guard<std::mutex> lock(queueMutex);
    for (auto& [stream, queue] : queues)
      if (!queue.empty()) streams.push_back(stream);
  }
  for (void* stream : streams) drain(stream);
}

bool stillBusy(void* stream) {
  {
    std::lock_guard<std::mutex> lock(queueMutex);
    if (queues[stream].empty()) return false;
    if (asked[stream]++ < 2) return true;
  }
  drain(stream);
  return false;
}

void releasing(uintptr_t at, size_t bytes, const char* what) {
  if (!deferred || !pendingOn(at, bytes)) return;
  race(what);
  drainAll();
}

void dropAll() {
  std::lock_guard<std::mutex> running(runMutex);
  std::lock_guard<std::mutex> lock(queueMutex);
  queues.clear();
  asked.clear();
}

long races() { return raceCount; }

}  // namespace shim
