// Shared by every kernel file. Under nvcc this is plain CUDA; under DRM_SHIM (the CPU build the tests
// use, gpu/cuda/shim) the same sources compile as C++ and each kernel is called once per thread of
// its grid, so the tests run the very code the GPU runs.
#pragma once

#ifdef DRM_SHIM
#include "../shim/cuda-shim.h"
#else
#define DRM_KERNEL(name)
#endif

// Every frame of a batch is one y index of the grid; x covers the frame's elements.
#define DRM_ELEMENT (blockIdx.x * blockDim.x + threadIdx.x)
#define DRM_FRAME (blockIdx.y)

// dtcwt.utils.reflect(i, -0.5, n - 0.5): symmetric extension with the end samples repeated,
// periodic with period 2n so that a filter longer than the signal still reads inside it.
__device__ __forceinline__ int reflect_index(int i, int n) {
  int period = 2 * n;
  int m = i % period;
  if (m < 0) m += period;
  return m >= n ? period - 1 - m : m;
}

__device__ __forceinline__ int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// A plane of a frame, filtered along one axis: `along` samples on that axis, `across` on the other.
// Element (a, b), a on the filtered axis, sits at a * step_along + b * step_across.
struct AxisView {
  int along;
  int step_along;
  int step_across;
};

__device__ __forceinline__ AxisView axis_view(int rows, int cols, int axis) {
  AxisView v;
  v.along = axis == 0 ? rows : cols;
  v.step_along = axis == 0 ? cols : 1;
  v.step_across = axis == 0 ? 1 : cols;
  return v;
}
