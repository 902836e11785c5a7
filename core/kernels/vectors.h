// What the project's convolution operators share: GCC's vector extension of 16 floats (one AVX-512 register;
// two AVX2 ones elsewhere), an unaligned load, and the dispatch from a kernel size known at run time to the
// operator's template compiled for it.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace studio_kernels {
constexpr int64_t kLanes = 16;
typedef float v16 __attribute__((vector_size(64)));

inline v16 load(const float *p) {  // 16 floats from any address
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

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
