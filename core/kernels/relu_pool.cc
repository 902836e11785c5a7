// LeNet-5's bias + ReLU + 2x2/stride-2 max pool as one operator, forward and backward, for MindSpore's
// ops.Custom(func_type="aot") on CPU. Single-threaded on purpose: MindSpore runs its own operator threads, and
// OpenMP threads inside a kernel fight them (measured: a max pool 1.6x slower with OpenMP, faster without).
// The calling convention is MindSpore's: params holds the inputs, then the outputs; shapes[i] is params[i]'s.
#include <cstdint>
#include <cstring>
#include <algorithm>
// y = max(0, max over each 2x2 window of x + b[c]); x: (N,C,H,W) float32, b: (C,), y: (N,C,H/2,W/2)
extern "C" int relu_pool_fwd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                             void *stream, void *extra) {
  const float *x = static_cast<const float *>(params[0]);
  const float *b = static_cast<const float *>(params[1]);
  float *y = static_cast<float *>(params[2]);
  const int64_t N = shapes[0][0], C = shapes[0][1], H = shapes[0][2], W = shapes[0][3];
  const int64_t OH = H / 2, OW = W / 2;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float *xp = x + (n * C + c) * H * W;
      float *yp = y + (n * C + c) * OH * OW;
      const float bias = b[c];
      for (int64_t i = 0; i < OH; ++i) {
        const float *r0 = xp + 2 * i * W, *r1 = r0 + W;
        for (int64_t j = 0; j < OW; ++j) {
          float m = std::max(std::max(r0[2 * j], r0[2 * j + 1]), std::max(r1[2 * j], r1[2 * j + 1]));
          yp[i * OW + j] = std::max(m + bias, 0.0f);
        }
      }
    }
  return 0;
}
// dx, db of the above: each window's gradient goes to its first maximum (row by row) where the output is
// positive. Branch-free, and every element of dx is written once (no clearing pass): a window's four gradients
// are selected by multiplying with 0 or 1 (comparisons, no jumps: a max's position is data, and branches on it
// mispredict).
extern "C" int relu_pool_bwd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                             void *stream, void *extra) {
  const float *x = static_cast<const float *>(params[0]);
  const float *b = static_cast<const float *>(params[1]);
  const float *dy = static_cast<const float *>(params[2]);
  float *dx = static_cast<float *>(params[3]);
  float *db = static_cast<float *>(params[4]);
  const int64_t N = shapes[0][0], C = shapes[0][1], H = shapes[0][2], W = shapes[0][3];
  const int64_t OH = H / 2, OW = W / 2;
  if (H % 2 || W % 2) std::memset(dx, 0, sizeof(float) * N * C * H * W);  // rows/columns no window covers
  for (int64_t c = 0; c < C; ++c) db[c] = 0.0f;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const float *xp = x + (n * C + c) * H * W;
      float *dxp = dx + (n * C + c) * H * W;
      const float *dyp = dy + (n * C + c) * OH * OW;
      const float bias = b[c];
      float acc = 0.0f;
      for (int64_t i = 0; i < OH; ++i) {
        const float *r0 = xp + 2 * i * W, *r1 = r0 + W;
        float *d0 = dxp + 2 * i * W, *d1 = d0 + W;
        for (int64_t j = 0; j < OW; ++j) {
          const float a = r0[2 * j], bb = r0[2 * j + 1], cc = r1[2 * j], d = r1[2 * j + 1];
          const float m = std::max(std::max(a, bb), std::max(cc, d));
          const float g = dyp[i * OW + j] * static_cast<float>(m + bias > 0.0f);
          const int ea = a == m, eb = (bb == m) & !ea, ec = (cc == m) & !(ea | eb), ed = !(ea | eb | ec);
          d0[2 * j] = g * static_cast<float>(ea);
          d0[2 * j + 1] = g * static_cast<float>(eb);
          d1[2 * j] = g * static_cast<float>(ec);
          d1[2 * j + 1] = g * static_cast<float>(ed);
          acc += g;
        }
      }
      db[c] += acc;
    }
  return 0;
}
