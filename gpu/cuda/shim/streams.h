// The work of a stream (copies, memsets, kernel launches) and when it runs. By default a stream runs
// its work at once, in order. Built with DRM_SHIM_DEFERRED, streams run as a GPU's do: work is queued
// on its stream when the host makes it, and runs, in order, only when the stream is waited for, asked
// about (after answering "not ready" twice) or destroyed. Host code that reads a result before its
// wait, changes a copy's source before the copy ran, or frees memory that queued work still touches
// then fails on the CPU as it would on a GPU, where the default schedule would let it pass.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda-shim.h"

namespace shim {

#ifdef DRM_SHIM_DEFERRED
constexpr bool deferred = true;
#else
constexpr bool deferred = false;
#endif

void copyToDevice(void* stream, uint64_t dst, const void* src, size_t bytes);
void copyToHost(void* stream, void* dst, uint64_t src, size_t bytes);
void setDevice(void* stream, uint64_t dst, unsigned char value, size_t bytes);
/** Every thread of the grid in turn, with the arguments' values as they were when the launch was made. */
void launch(void* stream, const ShimLauncher& launcher, ShimDim3 grid, ShimDim3 block, void** params);

/** Runs the stream's queued work in order, one stream at a time across threads. */
void drain(void* stream);
void drainAll();

/** Whether the stream still has work queued: true the first two times it is asked, then it runs it. */
bool stillBusy(void* stream);

/** Memory about to be freed or unregistered: queued work that touches it is a race, and runs first. */
void releasing(uintptr_t at, size_t bytes, const char* what);

/** Forgets all queued work, as a released context does. */
void dropAll();

/** The races seen so far (each also said on stderr): a copy's source changed before the copy ran,
 *  memory freed or unregistered while queued work touched it. */
long races();

}  // namespace shim
