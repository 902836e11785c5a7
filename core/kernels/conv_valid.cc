// LeNet-5's second convolution (C input channels, O output channels, a KxK kernel, stride 1, "valid": no
// padding, no bias: the bias is added by relu_pool) and its two gradients, for MindSpore's
// ops.Custom(func_type="aot") on CPU. Single-threaded on purpose, like relu_pool.cc.
//
// Vectors are GCC's vector extension of 16 floats (one AVX-512 register; two AVX2 ones elsewhere), over the
// dimension that keeps every lane busy:
// - forward and filter gradient run over 16 output channels at a time (LeNet-5's second convolution has 16):
//   the weights and the output gradient are first transposed so that one tap's 16 channels are one vector,
//   and each input pixel is broadcast into it;
// - the input gradient runs over 16 columns of a row: it is the "full" correlation of the output gradient,
//   zero-padded by K-1 on every side, with the flipped kernel, summed over the output channels.
// Sums run in another order than oneDNN's: the results agree within float tolerance
// (tests/process/test_custom_kernels.py). The calling convention is MindSpore's: params holds the inputs, then the
// outputs; shapes[i] is params[i]'s.
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

struct Shape {
  int64_t N, C, H, W, O, K, OH, OW, OB;  // OB: blocks of kLanes output channels
  Shape(const int64_t *x, const int64_t *w)
      : N(x[0]), C(x[1]), H(x[2]), W(x[3]), O(w[0]), K(w[2]), OH(x[2] - w[2] + 1), OW(x[3] - w[3] + 1),
        OB((w[0] + kLanes - 1) / kLanes) {}
  int64_t lanes(int64_t ob) const { return std::min(kLanes, O - ob * kLanes); }
};

// w (O,C,K,K) as wt[ob][c][kh][kw]: one vector over the block's output channels (zeros past O)
std::vector<v16> by_output_channel(const Shape &s, const float *w) {
  const int64_t taps = s.K * s.K;
  std::vector<v16> wt(s.OB * s.C * taps, v16{});
  for (int64_t o = 0; o < s.O; ++o)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t t = 0; t < taps; ++t) wt[((o / kLanes) * s.C + c) * taps + t][o % kLanes] = w[(o * s.C + c) * taps + t];
  return wt;
}

// one image's dy (O,OH,OW) as dyt[ob][oh][ow][lane]: 16 floats (a vector) over the block's output channels,
// written as floats (element by element into a vector type, GCC reads and writes the whole vector)
void output_gradient_by_channel(const Shape &s, const float *dy, float *dyt) {
  const int64_t plane = s.OH * s.OW;
  std::fill(dyt, dyt + s.OB * plane * kLanes, 0.0f);
  for (int64_t o = 0; o < s.O; ++o) {
    float *lane = dyt + (o / kLanes) * plane * kLanes + o % kLanes;
    for (int64_t i = 0; i < plane; ++i) lane[i * kLanes] = dy[o * plane + i];
  }
}

// B outputs of one row, (oh, ow0 .. ow0+B), for one block of output channels: B vectors in registers across
// the C*K*K taps, each tap one weight vector times B broadcast pixels
template <int K, int B>
void forward_block(const Shape &s, const float *xn, const v16 *wt, int64_t ob, int64_t oh, int64_t ow0, float *yn) {
  v16 acc[B];
  for (int b = 0; b < B; ++b) acc[b] = v16{};
  for (int64_t c = 0; c < s.C; ++c) {
    const float *xc = xn + (c * s.H + oh) * s.W + ow0;
    const v16 *wc = wt + (ob * s.C + c) * K * K;
    for (int kh = 0; kh < K; ++kh)
      for (int kw = 0; kw < K; ++kw) {
        const v16 wv = wc[kh * K + kw];
        const float *xr = xc + kh * s.W + kw;
        for (int b = 0; b < B; ++b) acc[b] += wv * xr[b];
      }
  }
  float out[B][kLanes];  // out of the registers once, then to each channel's row
  std::memcpy(out, acc, sizeof out);
  for (int64_t l = 0; l < s.lanes(ob); ++l) {
    float *yo = yn + ((ob * kLanes + l) * s.OH + oh) * s.OW + ow0;
    for (int b = 0; b < B; ++b) yo[b] = out[b][l];
  }
}

constexpr int kRowBlock = 10;  // outputs of a row held in registers at once (LeNet-5's rows have 10)

// a row in blocks of kRowBlock outputs, then of 8, 4, 2, 1: a few instances of the template, each slow to compile
template <int K>
void forward_row(const Shape &s, const float *xn, const v16 *wt, int64_t ob, int64_t oh, float *yn) {
  int64_t ow = 0;
  for (; ow + kRowBlock <= s.OW; ow += kRowBlock) forward_block<K, kRowBlock>(s, xn, wt, ob, oh, ow, yn);
  if (s.OW - ow >= 8) forward_block<K, 8>(s, xn, wt, ob, oh, ow, yn), ow += 8;
  if (s.OW - ow >= 4) forward_block<K, 4>(s, xn, wt, ob, oh, ow, yn), ow += 4;
  if (s.OW - ow >= 2) forward_block<K, 2>(s, xn, wt, ob, oh, ow, yn), ow += 2;
  if (s.OW - ow >= 1) forward_block<K, 1>(s, xn, wt, ob, oh, ow, yn);
}

template <int K>
int forward(const Shape &s, const float *x, const float *w, float *y) {
  const std::vector<v16> wt = by_output_channel(s, w);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t ob = 0; ob < s.OB; ++ob)
      for (int64_t oh = 0; oh < s.OH; ++oh)
        forward_row<K>(s, x + n * s.C * s.H * s.W, wt.data(), ob, oh, y + n * s.O * s.OH * s.OW);
  return 0;
}

// dw[o,c,kh,kw] = sum over n, oh, ow of dy[n,o,oh,ow] * x[n,c,oh+kh,ow+kw]: per image, channel and kernel row,
// K vectors (over 16 output channels) in registers across the image's outputs, kept over the batch in `sums`
template <int K>
int grad_filter(const Shape &s, const float *x, const float *dy, float *dw) {
  const int64_t plane = s.OH * s.OW;
  std::vector<float> dyt(s.OB * plane * kLanes);
  std::vector<v16> sums(s.OB * s.C * K * K, v16{});  // sums[ob][c][kh][kw]: a vector over output channels
  for (int64_t n = 0; n < s.N; ++n) {
    output_gradient_by_channel(s, dy + n * s.O * plane, dyt.data());
    for (int64_t ob = 0; ob < s.OB; ++ob)
      for (int64_t c = 0; c < s.C; ++c)
        for (int kh = 0; kh < K; ++kh) {
          v16 *acc = sums.data() + ((ob * s.C + c) * K + kh) * K;
          v16 a[K];
          for (int kw = 0; kw < K; ++kw) a[kw] = acc[kw];
          for (int64_t oh = 0; oh < s.OH; ++oh) {
            const float *xr = x + ((n * s.C + c) * s.H + oh + kh) * s.W;
            const float *d = dyt.data() + (ob * plane + oh * s.OW) * kLanes;
            for (int64_t ow = 0; ow < s.OW; ++ow) {
              const v16 g = load(d + ow * kLanes);
              for (int kw = 0; kw < K; ++kw) a[kw] += g * xr[ow + kw];
            }
          }
          for (int kw = 0; kw < K; ++kw) acc[kw] = a[kw];
        }
  }
  for (int64_t ob = 0; ob < s.OB; ++ob)
    for (int64_t c = 0; c < s.C; ++c)
      for (int t = 0; t < K * K; ++t)
        for (int64_t l = 0; l < s.lanes(ob); ++l)
          dw[((ob * kLanes + l) * s.C + c) * K * K + t] = sums[(ob * s.C + c) * K * K + t][l];
  return 0;
}

// The input gradient's layout: each output-gradient plane zero-padded by K-1 on every side, rows of stride
// P = OW + 2(K-1), and kLanes floats of slack at the end so that a vector load past a row's end stays inside
// (the lanes it reads there are never stored).
struct Padded {
  int64_t P, R, plane;
  explicit Padded(const Shape &s) : P(s.OW + 2 * (s.K - 1)), R(s.OH + 2 * (s.K - 1)), plane(P * R) {}
  void fill(const Shape &s, const float *dy, float *out) const {
    std::fill(out, out + s.O * plane + kLanes, 0.0f);
    for (int64_t o = 0; o < s.O; ++o)
      for (int64_t oh = 0; oh < s.OH; ++oh)
        std::memcpy(out + o * plane + (oh + s.K - 1) * P + s.K - 1, dy + (o * s.OH + oh) * s.OW, sizeof(float) * s.OW);
  }
};

// dx[n,c,h,w0 .. w0+16] for CB channels c0 .. c0+CB of one row: CB vectors over 16 columns in registers across
// the O*K*K taps, each tap one load of the padded output gradient times CB broadcast weights
template <int K, int CB>
void input_block(const Shape &s, const Padded &p, const float *dyp, const float *w, int64_t c0, int64_t h,
                 int64_t w0, float *dxn) {
  v16 acc[CB];
  for (int cb = 0; cb < CB; ++cb) acc[cb] = v16{};
  // only the kernel rows that meet a row of the output gradient (the others read its zero padding)
  const int64_t first = std::max<int64_t>(0, h - s.OH + 1), last = std::min<int64_t>(K - 1, h);
  for (int64_t o = 0; o < s.O; ++o)
    for (int64_t kh = first; kh <= last; ++kh)
      for (int kw = 0; kw < K; ++kw) {
        const v16 g = load(dyp + o * p.plane + (h + K - 1 - kh) * p.P + w0 + K - 1 - kw);
        const float *wk = w + ((o * s.C + c0) * K + kh) * K + kw;
        for (int cb = 0; cb < CB; ++cb) acc[cb] += g * wk[cb * K * K];
      }
  const int64_t cols = std::min(kLanes, s.W - w0);
  float out[CB][kLanes];
  std::memcpy(out, acc, sizeof out);
  for (int cb = 0; cb < CB; ++cb) std::memcpy(dxn + ((c0 + cb) * s.H + h) * s.W + w0, out[cb], sizeof(float) * cols);
}

constexpr int kChannelBlock = 6;  // input channels held in registers at once (LeNet-5's second convolution has 6)

template <int K>
void input_row(const Shape &s, const Padded &p, const float *dyp, const float *w, int64_t h, int64_t w0, float *dxn) {
  int64_t c = 0;
  for (; c + kChannelBlock <= s.C; c += kChannelBlock) input_block<K, kChannelBlock>(s, p, dyp, w, c, h, w0, dxn);
  if (s.C - c >= 4) input_block<K, 4>(s, p, dyp, w, c, h, w0, dxn), c += 4;  // the rest: 4, 2, 1 channels
  if (s.C - c >= 2) input_block<K, 2>(s, p, dyp, w, c, h, w0, dxn), c += 2;
  if (s.C - c >= 1) input_block<K, 1>(s, p, dyp, w, c, h, w0, dxn);
}

template <int K>
int grad_input(const Shape &s, const float *w, const float *dy, float *dx) {
  const Padded p(s);
  std::vector<float> dyp(s.O * p.plane + kLanes);
  for (int64_t n = 0; n < s.N; ++n) {
    p.fill(s, dy + n * s.O * s.OH * s.OW, dyp.data());
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t w0 = 0; w0 < s.W; w0 += kLanes) input_row<K>(s, p, dyp.data(), w, h, w0, dx + n * s.C * s.H * s.W);
  }
  return 0;
}

}  // namespace

// y[n,o,h,w] = sum over c, kh, kw of w[o,c,kh,kw] * x[n,c,h+kh,w+kw]; x: (N,C,H,W), w: (O,C,K,K) with K 3 or 5
extern "C" int conv_valid_fwd(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                              void *stream, void *extra) {
  const Shape s(shapes[0], shapes[1]);
  const auto *x = static_cast<const float *>(params[0]), *w = static_cast<const float *>(params[1]);
  auto *y = static_cast<float *>(params[2]);
  return by_kernel<3, 5>(s.K, [&](auto k) { return forward<decltype(k)::value>(s, x, w, y); });
}

// dw = sum over n, h, w of dy[n,o,h,w] * x[n,c,h+kh,w+kw]; x: (N,C,H,W), dy: (N,O,OH,OW), w (for its shape
// only): (O,C,K,K), dw: (O,C,K,K)
extern "C" int conv_valid_grad_filter(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                      void *stream, void *extra) {
  const Shape s(shapes[0], shapes[2]);
  const auto *x = static_cast<const float *>(params[0]), *dy = static_cast<const float *>(params[1]);
  auto *dw = static_cast<float *>(params[3]);
  return by_kernel<3, 5>(s.K, [&](auto k) { return grad_filter<decltype(k)::value>(s, x, dy, dw); });
}

// dx[n,c,h,w] = sum over o, kh, kw of dy[n,o,h-kh,w-kw] * w[o,c,kh,kw] (inside the output); x (for its shape
// only): (N,C,H,W), w: (O,C,K,K), dy: (N,O,OH,OW), dx: (N,C,H,W)
extern "C" int conv_valid_grad_input(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                     void *stream, void *extra) {
  const Shape s(shapes[0], shapes[1]);
  const auto *w = static_cast<const float *>(params[1]), *dy = static_cast<const float *>(params[2]);
  auto *dx = static_cast<float *>(params[3]);
  return by_kernel<3, 5>(s.K, [&](auto k) { return grad_input<decltype(k)::value>(s, w, dy, dx); });
}
