// Compiles the kernel sources (../kernels/*.cu) as C++ for the CPU, so that CI, which has no GPU, runs
// the same kernel code: each kernel becomes a function called once per thread of its grid, with
// blockIdx and threadIdx set before each call (cuda-shim.cpp, cuLaunchKernel). The kernels use no shared
// memory and no barriers, so running their threads one after another is a faithful schedule.
#pragma once
#include <cmath>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline

struct ShimDim3 {
  unsigned x, y, z;
};
extern thread_local ShimDim3 blockIdx, threadIdx, blockDim, gridDim;

using std::fabs;
using std::floor;
using std::fminf;
using std::rintf;
using std::sqrt;

inline double atomicAdd(double* at, double v) {
  double old = *at;
  *at = old + v;
  return old;
}

// A kernel's launcher takes cuLaunchKernel's kernelParams: one pointer per argument, to its value. It
// knows each argument's size, so that a launch can copy the values when it is made, as the driver does.
struct ShimLauncher {
  std::function<void(void**)> call;
  std::vector<std::size_t> sizes;
};
void shimRegister(const char* name, ShimLauncher launcher);

template <typename T>
using ShimValue = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename... A, std::size_t... I>
void shimCall(void (*kernel)(A...), void** params, std::index_sequence<I...>) {
  kernel(*static_cast<ShimValue<A>*>(params[I])...);
}

template <typename... A>
ShimLauncher shimLauncher(void (*kernel)(A...)) {
  return {[kernel](void** params) { shimCall(kernel, params, std::index_sequence_for<A...>{}); },
          {sizeof(ShimValue<A>)...}};
}

struct ShimRegistrar {
  ShimRegistrar(const char* name, ShimLauncher launcher) { shimRegister(name, std::move(launcher)); }
};

#define DRM_KERNEL(name) static ShimRegistrar shim_registrar_##name(#name, shimLauncher(&name));
