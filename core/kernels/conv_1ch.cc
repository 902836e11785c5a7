// LeNet-5's first convolution (one input channel, a KxK kernel, stride 1, "same" zero padding of (K-1)/2, no
// bias: the bias is added by relu_pool) and its two gradients, for MindSpore's ops.Custom(func_type="aot") on
// CPU. Single-threaded on purpose, like relu_pool.cc.
//
// Speed comes from one layout: an image and its outputs are kept with the padded image's row stride Wp, so a
// whole plane is one contiguous run and each (kh, kw) tap is one long stretch, y[i] += w * x[i + kh * Wp + kw]
// (a 28-wide row alone leaves the vector units idle). The columns past W in that layout are scratch, never
// read back. Vectors are GCC's vector extension of 16 floats: the forward takes 32 outputs of up to 6 output
// channels at once (12 sums in registers, each tap's image vectors loaded once for all channels); the filter
// gradient keeps a kernel row's sums in registers over the image's rows, per lane over the batch, added up at
// the end in double. The order differs from MindSpore's; the results agree within float tolerance.
// The calling convention is MindSpore's: params holds the inputs, then the outputs; shapes[i] is params[i]'s.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "vectors.h"

namespace {
using studio_kernels::by_kernel;
using studio_kernels::kLanes;
using studio_kernels::load;
using studio_kernels::v16;

struct Plane {
  int64_t H, W, K, p, Wp, rows;  // rows: padded rows, plus one so the last tap may read past the image
  Plane(int64_t h, int64_t w, int64_t k) : H(h), W(w), K(k), p((k - 1) / 2), Wp(w + k - 1), rows(h + k) {}
  int64_t span() const { return H * Wp; }  // the outputs of one plane in the padded stride
};

void pad_image(const Plane &s, const float *x, float *out) {
  std::memset(out, 0, sizeof(float) * s.rows * s.Wp);
  for (int64_t h = 0; h < s.H; ++h) std::memcpy(out + (h + s.p) * s.Wp + s.p, x + h * s.W, sizeof(float) * s.W);
}

// an (H, W) plane into the padded stride, zeros in the scratch columns
void widen(const Plane &s, const float *g, float *out) {
  for (int64_t h = 0; h < s.H; ++h) {
    std::memcpy(out + h * s.Wp, g + h * s.W, sizeof(float) * s.W);
    std::fill(out + h * s.Wp + s.W, out + (h + 1) * s.Wp, 0.0f);
  }
}

void narrow(const Plane &s, const float *wide, float *out) {
  for (int64_t h = 0; h < s.H; ++h) std::memcpy(out + h * s.W, wide + h * s.Wp, sizeof(float) * s.W);
}


// sum over i < n of a[i] * b[i], in kLanes partial sums (one per vector lane) added up at the end
float dot(const float *a, const float *b, int64_t n) {
  float lane[kLanes] = {0.0f};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += a[i + l] * b[i + l];
  float s = 0.0f;
  for (; i < n; ++i) s += a[i] * b[i];
  for (int64_t l = 0; l < kLanes; ++l) s += lane[l];
  return s;
}

// dw[t] += sum over i < span of g[i] * src[i + kh * Wp + kw], for the K*K taps t = (kh, kw)
template <int K>
void filter_sums(const float *g, const float *src, int64_t Wp, int64_t span, double *total) {
  for (int kh = 0; kh < K; ++kh)
    for (int kw = 0; kw < K; ++kw) total[kh * K + kw] += dot(g, src + kh * Wp + kw, span);
}

template <int K>
void correlate_tail(const float *src, const float *c, int64_t Wp, int64_t i0, int64_t span, float *out) {
  for (int64_t i = i0; i < span; ++i) {
    float a = 0.0f;
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) a += c[kh * K + kw] * src[i + kh * Wp + kw];
    out[i] += a;
  }
}

// out[cb][i] = sum over taps of c[cb][kh][kw] * src[i + kh * Wp + kw], for i < span and CB output channels at
// once: each tap's two vectors of the image (32 outputs) are loaded once for all CB channels, whose 2*CB sums
// stay in registers across the K*K taps
template <int K, int CB>
void correlate_channels(const float *src, const float *c, int64_t Wp, int64_t span, float *out, int64_t out_stride) {
  int64_t i0 = 0;
  for (; i0 + 2 * kLanes <= span; i0 += 2 * kLanes) {
    v16 acc[CB][2];
    for (int cb = 0; cb < CB; ++cb) acc[cb][0] = acc[cb][1] = v16{};
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) {
        const float *p = src + i0 + kh * Wp + kw;
        const v16 a = load(p), b = load(p + kLanes);
        for (int cb = 0; cb < CB; ++cb) {
          const float w = c[cb * K * K + kh * K + kw];
          acc[cb][0] += w * a;
          acc[cb][1] += w * b;
        }
      }
    for (int cb = 0; cb < CB; ++cb) {
      std::memcpy(out + cb * out_stride + i0, &acc[cb][0], sizeof(v16));
      std::memcpy(out + cb * out_stride + i0 + kLanes, &acc[cb][1], sizeof(v16));
    }
  }
  for (int cb = 0; cb < CB; ++cb) {
    std::fill(out + cb * out_stride + i0, out + cb * out_stride + span, 0.0f);
    correlate_tail<K>(src, c + cb * K * K, Wp, i0, span, out + cb * out_stride);
  }
}

constexpr int kChannelBlock = 6;  // output channels at once (LeNet-5's first convolution has 6)

template <int K>
int forward(int64_t N, int64_t O, const Plane &s, const float *x, const float *wt, float *y) {
  std::vector<float> padded(s.rows * s.Wp), out(kChannelBlock * s.span());
  for (int64_t n = 0; n < N; ++n) {
    pad_image(s, x + n * s.H * s.W, padded.data());
    for (int64_t o = 0, cbs = 0; o < O; o += cbs) {
      // blocks of 6 channels, then of 4, 2, 1: a few instances of the template (each takes seconds to compile)
      const int64_t left = O - o;
      cbs = left >= kChannelBlock ? kChannelBlock : left >= 4 ? 4 : left >= 2 ? 2 : 1;
      const float *c = wt + o * K * K;
      switch (cbs) {
        case kChannelBlock:
          correlate_channels<K, kChannelBlock>(padded.data(), c, s.Wp, s.span(), out.data(), s.span());
          break;
        case 4: correlate_channels<K, 4>(padded.data(), c, s.Wp, s.span(), out.data(), s.span()); break;
        case 2: correlate_channels<K, 2>(padded.data(), c, s.Wp, s.span(), out.data(), s.span()); break;
        default: correlate_channels<K, 1>(padded.data(), c, s.Wp, s.span(), out.data(), s.span());
      }
      for (int64_t cb = 0; cb < cbs; ++cb) narrow(s, out.data() + cb * s.span(), y + (n * O + o + cb) * s.H * s.W);
    }
  }
  return 0;
}

// sums[kh][kw][v] += g[h][w] * src[(h + kh) * Wp + w + kw] over one image, lane by lane, for rows of V vectors
// (W <= 16 V): g in rows of stride 16 V with zeros past W; per kernel row, the V*K sums in registers across
// the image
template <int K, int V>
void filter_rows(const Plane &s, const float *g, const float *src, v16 *sums) {
  for (int kh = 0; kh < K; ++kh) {
    v16 acc[V][K];
    for (int v = 0; v < V; ++v)
      for (int kw = 0; kw < K; ++kw) acc[v][kw] = sums[(kh * K + kw) * V + v];
    for (int64_t h = 0; h < s.H; ++h) {
      const float *xr = src + (h + kh) * s.Wp;
      for (int v = 0; v < V; ++v) {
        const v16 gv = load(g + (h * V + v) * kLanes);
        for (int kw = 0; kw < K; ++kw) acc[v][kw] += gv * load(xr + v * kLanes + kw);
      }
    }
    for (int v = 0; v < V; ++v)
      for (int kw = 0; kw < K; ++kw) sums[(kh * K + kw) * V + v] = acc[v][kw];
  }
}

// an (H, W) plane in rows of stride 16 V, zeros past W
void widen_rows(const Plane &s, int64_t V, const float *g, float *out) {
  std::fill(out, out + s.H * V * kLanes, 0.0f);
  for (int64_t h = 0; h < s.H; ++h) std::memcpy(out + h * V * kLanes, g + h * s.W, sizeof(float) * s.W);
}

template <int K, int V>
void filter_by_rows(int64_t N, int64_t O, const Plane &s, const float *x, const float *dy, float *dw) {
  // the padded image has kLanes floats of slack: a row's last vector may read past the last row (its lanes
  // past W meet zeros in g)
  std::vector<float> padded(s.rows * s.Wp + kLanes), g(s.H * V * kLanes);
  std::vector<v16> sums(O * K * K * V, v16{});  // per lane, over the batch
  for (int64_t n = 0; n < N; ++n) {
    pad_image(s, x + n * s.H * s.W, padded.data());
    for (int64_t o = 0; o < O; ++o) {
      widen_rows(s, V, dy + (n * O + o) * s.H * s.W, g.data());
      filter_rows<K, V>(s, g.data(), padded.data(), sums.data() + o * K * K * V);
    }
  }
  for (int64_t i = 0; i < O * K * K; ++i) {
    double total = 0.0;  // the lanes' sums added up once, in double
    for (int v = 0; v < V; ++v)
      for (int64_t l = 0; l < kLanes; ++l) total += sums[i * V + v][l];
    dw[i] = static_cast<float>(total);
  }
}

template <int K>
int grad_filter(int64_t N, int64_t O, const Plane &s, const float *x, const float *dy, float *dw) {
  const int64_t V = (s.W + kLanes - 1) / kLanes;
  if (V == 1) {
    filter_by_rows<K, 1>(N, O, s, x, dy, dw);
    return 0;
  }
  if (V == 2) {
    filter_by_rows<K, 2>(N, O, s, x, dy, dw);
    return 0;
  }
  // rows wider than 32: one long dot product per tap
  std::vector<float> padded(s.rows * s.Wp), g(s.span());
  std::vector<double> total(O * K * K, 0.0);  // over the batch in double: the images' sums, one rounding
  for (int64_t n = 0; n < N; ++n) {
    pad_image(s, x + n * s.H * s.W, padded.data());
    for (int64_t o = 0; o < O; ++o) {
      widen(s, dy + (n * O + o) * s.H * s.W, g.data());
      filter_sums<K>(g.data(), padded.data(), s.Wp, s.span(), total.data() + o * K * K);
    }
  }
  for (int64_t i = 0; i < O * K * K; ++i) dw[i] = static_cast<float>(total[i]);
  return 0;
}

// the input gradient is the forward correlation of the zero-padded output gradient with the flipped kernel,
// summed over the output channels
template <int K>
int grad_input(int64_t N, int64_t O, const Plane &s, const float *wt, const float *dy, float *dx) {
  std::vector<float> padded(s.rows * s.Wp), out(s.span()), one(s.span()), flipped(O * K * K);
  for (int64_t o = 0; o < O; ++o)
    for (int t = 0; t < K * K; ++t) flipped[o * K * K + t] = wt[o * K * K + K * K - 1 - t];
  for (int64_t n = 0; n < N; ++n) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t o = 0; o < O; ++o) {
      pad_image(s, dy + (n * O + o) * s.H * s.W, padded.data());
      correlate_channels<K, 1>(padded.data(), flipped.data() + o * K * K, s.Wp, s.span(), one.data(), s.span());
      for (int64_t i = 0; i < s.span(); ++i) out[i] += one[i];
    }
    narrow(s, out.data(), dx + n * s.H * s.W);
  }
  return 0;
}

}  // namespace

// y[n,o,h,w] = sum over kh, kw of w[o,0,kh,kw] * x_padded[n, h + kh, w + kw]; x: (N,1,H,W), w: (O,1,K,K) with
// K = 3, 5 or 7
extern "C" int conv_1ch_fwd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                            void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[1][2]);
  const int64_t N = shapes[0][0], O = shapes[1][0];
  const auto *x = static_cast<const float *>(params[0]), *w = static_cast<const float *>(params[1]);
  auto *y = static_cast<float *>(params[2]);
  return by_kernel<3, 5, 7>(s.K, [&](auto k) { return forward<decltype(k)::value>(N, O, s, x, w, y); });
}

// dw[o,0,kh,kw] = sum over n, h, w of dy[n,o,h,w] * x_padded[n, h + kh, w + kw];
// x: (N,1,H,W), dy: (N,O,H,W), w (for its shape only): (O,1,K,K), dw: (O,1,K,K)
extern "C" int conv_1ch_grad_filter(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                    void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[2][2]);
  const int64_t N = shapes[0][0], O = shapes[2][0];
  const auto *x = static_cast<const float *>(params[0]), *dy = static_cast<const float *>(params[1]);
  auto *dw = static_cast<float *>(params[3]);
  return by_kernel<3, 5, 7>(s.K, [&](auto k) { return grad_filter<decltype(k)::value>(N, O, s, x, dy, dw); });
}

// dx[n,0,h,w] = sum over o, kh, kw of dy[n,o,h - kh + p, w - kw + p] * w[o,0,kh,kw] (inside the image);
// x (for its shape only): (N,1,H,W), w: (O,1,K,K), dy: (N,O,H,W), dx: (N,1,H,W)
extern "C" int conv_1ch_grad_input(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                   void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[1][2]);
  const int64_t N = shapes[0][0], O = shapes[1][0];
  const auto *w = static_cast<const float *>(params[1]), *dy = static_cast<const float *>(params[2]);
  auto *dx = static_cast<float *>(params[3]);
  return by_kernel<3, 5, 7>(s.K, [&](auto k) { return grad_input<decltype(k)::value>(N, O, s, w, dy, dx); });
}
