// The 2-D DTCWT's building blocks on float32 planes, in the natural (row-major) orientation: the CPU
// reference (gpu/dtcwt) filters columns and transposes; here each filter reads along either axis, so no
// transpose is ever written. Index arithmetic is the reference's (gpu/dtcwt/lowlevel.ts), which is
// python dtcwt's. Each kernel handles a batch: frame f's planes start at f times the plane's stride.
#include "common.cuh"

// out[i][j] = in[clamp(i - top)][clamp(j - left)]: the edge extension before a level (top, left >= 0)
// and the crop after one (negative offsets).
extern "C" __global__ void copy_clamped(const float* in, int in_rows, int in_cols, int in_stride, float* out,
                                        int out_rows, int out_cols, int out_stride, int top, int left) {
  int e = DRM_ELEMENT;
  if (e >= out_rows * out_cols) return;
  int i = e / out_cols;
  int j = e % out_cols;
  const float* x = in + (size_t)DRM_FRAME * in_stride;
  out[(size_t)DRM_FRAME * out_stride + e] = x[clamp_index(i - top, in_rows) * in_cols + clamp_index(j - left, in_cols)];
}
DRM_KERNEL(copy_clamped)

// Writes one output element: overwrite, or add to what is there (the synthesis sums two filters).
__device__ __forceinline__ void store(float* y, float v, int accumulate) { *y = accumulate ? *y + v : v; }

// colfilter: odd-length h, no decimation (the output keeps the size along the axis).
extern "C" __global__ void filter_odd(const float* in, int rows, int cols, int in_stride, int axis, const float* h,
                                      int m, float* out, int out_stride, int accumulate) {
  int e = DRM_ELEMENT;
  if (e >= rows * cols) return;
  AxisView v = axis_view(rows, cols, axis);
  int a = axis == 0 ? e / cols : e % cols;
  int b = axis == 0 ? e % cols : e / cols;
  const float* x = in + (size_t)DRM_FRAME * in_stride + b * v.step_across;
  int m2 = m / 2;
  float s = 0.0f;
  for (int k = 0; k < m; k++) s += h[k] * x[reflect_index(a + m - 1 - k - m2, v.along) * v.step_along];
  store(out + (size_t)DRM_FRAME * out_stride + e, s, accumulate);
}
DRM_KERNEL(filter_odd)

// coldfilt: the q-shift pair ha (on one phase of outputs) and hb, decimating by two along the axis.
// `a_first`: whether ha lands on the even outputs (the sign of sum(ha * hb), as python decides it).
extern "C" __global__ void filter_down(const float* in, int rows, int cols, int in_stride, int axis,
                                       const float* ha, const float* hb, int m, int a_first, float* out,
                                       int out_stride) {
  int out_rows = axis == 0 ? rows / 2 : rows;
  int out_cols = axis == 0 ? cols : cols / 2;
  int e = DRM_ELEMENT;
  if (e >= out_rows * out_cols) return;
  AxisView v = axis_view(rows, cols, axis);
  int p = axis == 0 ? e / out_cols : e % out_cols;
  int b = axis == 0 ? e % out_cols : e / out_cols;
  const float* x = in + (size_t)DRM_FRAME * in_stride + b * v.step_across;
  int i = p >> 1;
  bool even = (p & 1) == 0;
  bool use_a = a_first ? even : !even;
  int taps = m / 2;
  float s = 0.0f;
  for (int k = 0; k < taps; k++) {
    int t = 5 + 4 * (i + taps - 1 - k) - m;
    if (use_a) {
      s += ha[2 * k] * x[reflect_index(t - 1, v.along) * v.step_along];
      s += ha[2 * k + 1] * x[reflect_index(t - 3, v.along) * v.step_along];
    } else {
      s += hb[2 * k] * x[reflect_index(t, v.along) * v.step_along];
      s += hb[2 * k + 1] * x[reflect_index(t - 2, v.along) * v.step_along];
    }
  }
  out[(size_t)DRM_FRAME * out_stride + e] = s;
}
DRM_KERNEL(filter_down)

// colifilt: the inverse of filter_down, doubling the size along the axis.
extern "C" __global__ void filter_up(const float* in, int rows, int cols, int in_stride, int axis, const float* ha,
                                     const float* hb, int m, int a_first, float* out, int out_stride,
                                     int accumulate) {
  int out_rows = axis == 0 ? rows * 2 : rows;
  int out_cols = axis == 0 ? cols : cols * 2;
  int e = DRM_ELEMENT;
  if (e >= out_rows * out_cols) return;
  AxisView v = axis_view(rows, cols, axis);
  int p = axis == 0 ? e / out_cols : e % out_cols;
  int b = axis == 0 ? e % out_cols : e / out_cols;
  const float* x = in + (size_t)DRM_FRAME * in_stride + b * v.step_across;
  int i = p >> 2;
  int q = p & 3;
  int m2 = m / 2;
  bool even_half = m2 % 2 == 0;
  int t0 = even_half ? 3 : 2;
  int first = even_half ? 1 : 0;
  int second = even_half ? 0 : 1;
  int shift = even_half ? 2 : 0;
  // Output phase q reads tree b or a, shifted or not, with the taps of one parity (lowlevel.ts).
  const float* h = (q == 0 || q == 2) ? ha : hb;
  int parity = q < 2 ? first : second;
  float s = 0.0f;
  for (int k = 0; k < m2; k++) {
    int t = t0 + 2 * (i + m2 - 1 - k) - m2;
    int ta = a_first ? t : t - 1;
    int tb = a_first ? t - 1 : t;
    int row = q == 0 ? tb - shift : q == 1 ? ta - shift : q == 2 ? tb : ta;
    s += h[2 * k + parity] * x[reflect_index(row, v.along) * v.step_along];
  }
  store(out + (size_t)DRM_FRAME * out_stride + e, s, accumulate);
}
DRM_KERNEL(filter_up)

// q2c: the quads of a 2R x 2C image into orientations o1 (p - q) and o2 (p + q) of an R x C x 6 level.
extern "C" __global__ void q2c(const float* quad, int rows, int cols, int quad_stride, float* re, float* im,
                               int hp_stride, int o1, int o2) {
  int e = DRM_ELEMENT;
  if (e >= rows * cols) return;
  int i = e / cols;
  int j = e % cols;
  const float* d = quad + (size_t)DRM_FRAME * quad_stride;
  int w = 2 * cols;
  const float s = 0.70710678118654752f;
  float pa = d[2 * i * w + 2 * j] * s;
  float pb = d[2 * i * w + 2 * j + 1] * s;
  float qc = d[(2 * i + 1) * w + 2 * j] * s;
  float qd = d[(2 * i + 1) * w + 2 * j + 1] * s;
  size_t at = (size_t)DRM_FRAME * hp_stride + (size_t)e * 6;
  re[at + o1] = pa - qd;
  im[at + o1] = pb + qc;
  re[at + o2] = pa + qd;
  im[at + o2] = pb - qc;
}
DRM_KERNEL(q2c)

// c2q: the inverse of q2c, rebuilding the 2R x 2C quad image of orientations o1 and o2.
extern "C" __global__ void c2q(const float* re, const float* im, int rows, int cols, int hp_stride, int o1, int o2,
                               float* quad, int quad_stride) {
  int e = DRM_ELEMENT;
  if (e >= rows * cols) return;
  int i = e / cols;
  int j = e % cols;
  size_t at = (size_t)DRM_FRAME * hp_stride + (size_t)e * 6;
  const float s = 0.70710678118654752f;
  float r1 = re[at + o1] * s;
  float i1 = im[at + o1] * s;
  float r2 = re[at + o2] * s;
  float i2 = im[at + o2] * s;
  float* d = quad + (size_t)DRM_FRAME * quad_stride;
  int w = 2 * cols;
  d[2 * i * w + 2 * j] = r1 + r2;
  d[2 * i * w + 2 * j + 1] = i1 + i2;
  d[(2 * i + 1) * w + 2 * j] = i1 - i2;
  d[(2 * i + 1) * w + 2 * j + 1] = -(r1 - r2);
}
DRM_KERNEL(c2q)
