// What the project's convolution operators share: a vector of 16 floats (GCC's vector extension: one AVX-512
// register, or two AVX2 ones), an unaligned load, and the dispatch from a kernel size known at run time to the
// operator's template compiled for it.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace studio_kernels {
constexpr int64_t kLanes = 16;
#if defined(__AVX512F__)
typedef float v16 __attribute__((vector_size(64)));

inline v16 load(const float *p) {  // 16 floats from any address
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
#else
// Without AVX-512 a vector of 16 floats is two of 8, each one AVX2 register: GCC lowers its own vector_size(64)
// there through the stack, operation by operation, several times slower (bench/kernel_ops.py). Every operation
// is the same per lane, so both kinds of build give the same bits.
typedef float v8 __attribute__((vector_size(32)));
typedef float v8_unaligned __attribute__((vector_size(32), aligned(4), may_alias));
struct v16 {
  v8 lo, hi;
  float &operator[](int64_t l) { return reinterpret_cast<float *>(this)[l]; }
  float operator[](int64_t l) const { return reinterpret_cast<const float *>(this)[l]; }
  v16 &operator+=(const v16 &o) {
    lo += o.lo;
    hi += o.hi;
    return *this;
  }
};
inline v16 operator+(const v16 &a, const v16 &b) { return {a.lo + b.lo, a.hi + b.hi}; }
inline v16 operator*(const v16 &a, const v16 &b) { return {a.lo * b.lo, a.hi * b.hi}; }
inline v16 operator*(float w, const v16 &a) { return {w * a.lo, w * a.hi}; }
inline v16 operator*(const v16 &a, float w) { return {a.lo * w, a.hi * w}; }

inline v16 load(const float *p) {  // 16 floats from any address, as two loads of 8 (a copy would go by the stack)
  return {*reinterpret_cast<const v8_unaligned *>(p), *reinterpret_cast<const v8_unaligned *>(p + 8)};
}
#endif
static_assert(sizeof(v16) == kLanes * sizeof(float), "a v16 is 16 floats side by side");

// op(std::integral_constant<int, K>{}) for the K of Ks that equals k; 1 (MindSpore reports the operator as
// failed) for a kernel size without an instance. Each instance is compiled (seconds each): Ks lists only the
// sizes a network uses or a test checks.
template <int... Ks, typename Op>
int by_kernel(int64_t k, Op op) {
  int result = 1;
  (void)((k == Ks && (result = op(std::integral_constant<int, Ks>{}), true)) || ...);
  return result;
}
}  // namespace studio_kernels
