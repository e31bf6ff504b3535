// The per-frame parts of the video mark around the transform (gpu/modulate.ts, gpu/resample.ts): the box
// reduction of the luma, the gains, the RMS hold of the change, the cut test between frames of a run, and
// the enlarged change written into variants A and B. A batch mixes jobs: per-frame tables say which
// gains, which change and which sums belong to a frame.
#include "common.cuh"

typedef unsigned char u8;

// factor x factor box average of 8-bit luma (the first width * height bytes of each frame's slot).
extern "C" __global__ void reduce_box(const u8* luma, int width, int height, int luma_stride, int factor, float* out,
                                      int reduced_width, int reduced_height, int out_stride) {
  int e = DRM_ELEMENT;
  if (e >= reduced_width * reduced_height) return;
  int i = e / reduced_width;
  int j = e % reduced_width;
  const u8* y = luma + (size_t)DRM_FRAME * luma_stride;
  int columns = width < reduced_width * factor ? width : reduced_width * factor;
  int last_row = height < (i + 1) * factor ? height : (i + 1) * factor;
  int last_col = columns < (j + 1) * factor ? columns : (j + 1) * factor;
  float s = 0.0f;
  for (int r = i * factor; r < last_row; r++)
    for (int c = j * factor; c < last_col; c++) s += y[(size_t)r * width + c];
  out[(size_t)DRM_FRAME * out_stride + e] = s * (1.0f / (float)(factor * factor));
}
DRM_KERNEL(reduce_box)

// c *= gain for every coefficient of one level; frame f takes gain table gain_index[f].
extern "C" __global__ void apply_gains(float* re, float* im, int count, int hp_stride, const float* gains,
                                       const int* gain_index, int gain_stride, int gain_offset) {
  int e = DRM_ELEMENT;
  if (e >= count) return;
  float g = gains[(size_t)gain_index[DRM_FRAME] * gain_stride + gain_offset + e];
  size_t at = (size_t)DRM_FRAME * hp_stride + e;
  re[at] *= g;
  im[at] *= g;
}
DRM_KERNEL(apply_gains)

// sums[f] += the squares of frame f's plane (sums zeroed before). Each thread folds a strided share
// first, so one atomic add stands for many elements.
extern "C" __global__ void sum_squares(const float* x, int count, int stride, double* sums) {
  const float* p = x + (size_t)DRM_FRAME * stride;
  double s = 0.0;
  for (int e = DRM_ELEMENT; e < count; e += gridDim.x * blockDim.x) s += (double)p[e] * (double)p[e];
  if (s != 0.0) atomicAdd(sums + DRM_FRAME, s);
}
DRM_KERNEL(sum_squares)

// diffs[p] += sum |x[second] - x[first]| over the planes of pair p (pairs[2p], pairs[2p + 1]).
extern "C" __global__ void sum_abs_diff(const float* x, int count, int stride, const int* pairs, double* diffs) {
  const float* a = x + (size_t)pairs[2 * DRM_FRAME] * stride;
  const float* b = x + (size_t)pairs[2 * DRM_FRAME + 1] * stride;
  double s = 0.0;
  for (int e = DRM_ELEMENT; e < count; e += gridDim.x * blockDim.x) s += fabs((double)b[e] - (double)a[e]);
  if (s != 0.0) atomicAdd(diffs + DRM_FRAME, s);
}
DRM_KERNEL(sum_abs_diff)

// One thread per job: which frame's change each of its frames takes. A frame takes its source's change
// unless it differs from the source by more than the cut threshold, and then becomes the source
// (gpu/modulate.ts). jobs[0] is the number of jobs, then (first frame, frames, first pair) per job; a
// job's pairs (j < k) are listed from its first pair as k(k - 1)/2 + j.
extern "C" __global__ void choose_sources(const int* jobs, const double* diffs, int plane_size, float threshold,
                                          int* source) {
  int job = DRM_ELEMENT;
  if (job >= jobs[0]) return;
  int first = jobs[1 + 3 * job];
  int count = jobs[2 + 3 * job];
  int pair_base = jobs[3 + 3 * job];
  int src = 0;
  source[first] = first;
  for (int k = 1; k < count; k++) {
    double mean = diffs[pair_base + k * (k - 1) / 2 + src] / (double)(plane_size > 0 ? plane_size : 1);
    if (mean > threshold) src = k;
    source[first + k] = first + src;
  }
}
DRM_KERNEL(choose_sources)

// The factor that holds a change's RMS within [rms_min, rms_max] (clampRms in gpu/modulate.ts).
__device__ __forceinline__ float rms_factor(double sum, int count, float rms_min, float rms_max, float max_boost) {
  double rms = sqrt(sum / (double)(count > 0 ? count : 1));
  if (!(rms > 0.0)) return 1.0f;
  if (rms > rms_max) return (float)(rms_max / rms);
  if (rms < rms_min) return fminf(max_boost, (float)(rms_min / rms));
  return 1.0f;
}

// A full-size position's two reduced neighbours and the weight of the second (axisMap in resample.ts).
struct Neighbours {
  int lo;
  int hi;
  float t;
};

__device__ __forceinline__ Neighbours neighbours(int x, int reduced, int factor) {
  double u = (x + 0.5) / factor - 0.5;
  int i = (int)floor(u);
  Neighbours n;
  n.lo = clamp_index(i, reduced);
  n.hi = clamp_index(i + 1, reduced);
  n.t = (float)(u - i);
  return n;
}

__device__ __forceinline__ u8 to_byte(float v) {
  float r = rintf(v);
  return (u8)(r < 0.0f ? 0.0f : (r > 255.0f ? 255.0f : r));
}

// A = luma + δ and B = luma − δ, δ enlarged bilinearly from its source's reduced change and scaled by
// that change's RMS factor (use_rms 0: as it is); rounded to nearest, ties to even, and clipped.
extern "C" __global__ void write_variants(const u8* luma, int width, int height, int luma_stride, const float* delta,
                                          int reduced_width, int reduced_height, int delta_stride, const int* source,
                                          const double* sums, int use_rms, float rms_min, float rms_max,
                                          float max_boost, int factor, u8* out_a, u8* out_b) {
  int e = DRM_ELEMENT;
  if (e >= width * height) return;
  int y = e / width;
  int x = e % width;
  int src = source[DRM_FRAME];
  int reduced_count = reduced_width * reduced_height;
  float f = use_rms ? rms_factor(sums[src], reduced_count, rms_min, rms_max, max_boost) : 1.0f;
  const float* d = delta + (size_t)src * delta_stride;
  Neighbours c = neighbours(x, reduced_width, factor);
  Neighbours r = neighbours(y, reduced_height, factor);
  const float* top = d + (size_t)r.lo * reduced_width;
  const float* bottom = d + (size_t)r.hi * reduced_width;
  float t = (top[c.lo] * f) * (1.0f - c.t) + (top[c.hi] * f) * c.t;
  float b = (bottom[c.lo] * f) * (1.0f - c.t) + (bottom[c.hi] * f) * c.t;
  float change = t * (1.0f - r.t) + b * r.t;
  size_t at = (size_t)DRM_FRAME * luma_stride + e;
  float l = (float)luma[at];
  out_a[at] = to_byte(l + change);
  out_b[at] = to_byte(l - change);
}
DRM_KERNEL(write_variants)
