// LeNet-5's first convolution (one input channel, a KxK kernel, stride 1, "same" zero padding of (K-1)/2, no
// bias: the bias is added by relu_pool) and its two gradients, for MindSpore's ops.Custom(func_type="aot") on
// CPU. Single-threaded on purpose, like relu_pool.cc.
//
// Speed comes from one layout: an image and its outputs are kept with the padded image's row stride Wp, so a
// whole plane is one contiguous run and each (kh, kw) tap is one long loop, y[i] += w * x[i + kh * Wp + kw],
// that the compiler vectorizes (a 28-wide row alone leaves the vector units idle). The columns past W in that
// layout are scratch, never read back. Sums across a plane keep 16 partial sums (one per vector lane), added up
// at the end: the order differs from MindSpore's, the results agree within float tolerance.
// The calling convention is MindSpore's: params holds the inputs, then the outputs; shapes[i] is params[i]'s.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
constexpr int64_t kLanes = 16;

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


// out[i] = sum over taps of c[kh][kw] * src[i + kh * Wp + kw], for i < span: a block of kBlock outputs stays
// in registers across the K*K taps (K a compile-time constant, so the loops unroll), written once.
constexpr int64_t kBlock = 64;

template <int K>
void correlate(const float *src, const float *c, int64_t Wp, int64_t span, float *out) {
  int64_t i0 = 0;
  for (; i0 + kBlock <= span; i0 += kBlock) {
    float acc[kBlock] = {0.0f};
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) {
        const float w = c[kh * K + kw];
        const float *s = src + i0 + kh * Wp + kw;
        for (int64_t l = 0; l < kBlock; ++l) acc[l] += w * s[l];
      }
    for (int64_t l = 0; l < kBlock; ++l) out[i0 + l] += acc[l];
  }
  for (int64_t i = i0; i < span; ++i) {
    float a = 0.0f;
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) a += c[kh * K + kw] * src[i + kh * Wp + kw];
    out[i] += a;
  }
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
int forward(int64_t N, int64_t O, const Plane &s, const float *x, const float *wt, float *y) {
  std::vector<float> padded(s.rows * s.Wp), out(s.span());
  for (int64_t n = 0; n < N; ++n) {
    pad_image(s, x + n * s.H * s.W, padded.data());
    for (int64_t o = 0; o < O; ++o) {
      std::fill(out.begin(), out.end(), 0.0f);
      correlate<K>(padded.data(), wt + o * K * K, s.Wp, s.span(), out.data());
      narrow(s, out.data(), y + (n * O + o) * s.H * s.W);
    }
  }
  return 0;
}

template <int K>
int grad_filter(int64_t N, int64_t O, const Plane &s, const float *x, const float *dy, float *dw) {
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
  std::vector<float> padded(s.rows * s.Wp), out(s.span()), flipped(O * K * K);
  for (int64_t o = 0; o < O; ++o)
    for (int t = 0; t < K * K; ++t) flipped[o * K * K + t] = wt[o * K * K + K * K - 1 - t];
  for (int64_t n = 0; n < N; ++n) {
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t o = 0; o < O; ++o) {
      pad_image(s, dy + (n * O + o) * s.H * s.W, padded.data());
      correlate<K>(padded.data(), flipped.data() + o * K * K, s.Wp, s.span(), out.data());
    }
    narrow(s, out.data(), dx + n * s.H * s.W);
  }
  return 0;
}

template <template <int> class Op, typename... A>
int by_kernel(int64_t K, A... a) {
  switch (K) {
    case 3: return Op<3>::run(a...);
    case 5: return Op<5>::run(a...);
    case 7: return Op<7>::run(a...);
    default: return 1;  // MindSpore reports the operator as failed
  }
}
template <int K> struct Forward { template <typename... A> static int run(A... a) { return forward<K>(a...); } };
template <int K> struct GradFilter { template <typename... A> static int run(A... a) { return grad_filter<K>(a...); } };
template <int K> struct GradInput { template <typename... A> static int run(A... a) { return grad_input<K>(a...); } };
}  // namespace

// y[n,o,h,w] = sum over kh, kw of w[o,0,kh,kw] * x_padded[n, h + kh, w + kw]; x: (N,1,H,W), w: (O,1,K,K) with
// K = 3, 5 or 7
extern "C" int conv_1ch_fwd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                            void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[1][2]);
  return by_kernel<Forward>(s.K, shapes[0][0], shapes[1][0], s, static_cast<const float *>(params[0]),
                            static_cast<const float *>(params[1]), static_cast<float *>(params[2]));
}

// dw[o,0,kh,kw] = sum over n, h, w of dy[n,o,h,w] * x_padded[n, h + kh, w + kw];
// x: (N,1,H,W), dy: (N,O,H,W), w (for its shape only): (O,1,K,K), dw: (O,1,K,K)
extern "C" int conv_1ch_grad_filter(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                    void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[2][2]);
  return by_kernel<GradFilter>(s.K, shapes[0][0], shapes[2][0], s, static_cast<const float *>(params[0]),
                               static_cast<const float *>(params[1]), static_cast<float *>(params[3]));
}

// dx[n,0,h,w] = sum over o, kh, kw of dy[n,o,h - kh + p, w - kw + p] * w[o,0,kh,kw] (inside the image);
// x (for its shape only): (N,1,H,W), w: (O,1,K,K), dy: (N,O,H,W), dx: (N,1,H,W)
extern "C" int conv_1ch_grad_input(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                   void *stream, void *extra) {
  const Plane s(shapes[0][2], shapes[0][3], shapes[1][2]);
  return by_kernel<GradInput>(s.K, shapes[0][0], shapes[1][0], s, static_cast<const float *>(params[1]),
                              static_cast<const float *>(params[2]), static_cast<float *>(params[3]));
}
