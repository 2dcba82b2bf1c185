// Internal: exp by one polynomial (Cephes' expf: a degree-5 polynomial on the reduced argument,
// scaled by 2ⁿ; within 2 ulp of exp), which the softmax and the activations compute the same way
// in every kernel set (exp_vector.hpp: 8 and 16 lanes), so every set gives the same bits.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace mcpclass::kernels::detail {

/// The polynomial's constants, shared by every set's code.
inline constexpr float kExpLowest = -87.33654f;  // exp below is under FLT_MIN: clamped here
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpP0 = 1.9875691500e-4f, kExpP1 = 1.3981999507e-3f,
                       kExpP2 = 8.3334519073e-3f, kExpP3 = 4.1665795894e-2f,
                       kExpP4 = 1.6666665459e-1f, kExpP5 = 5.0000001201e-1f;

/// exp(x) for x ≤ 0, one lane of the polynomial: the portable set and the vector sets' tails.
/// Each operation is rounded once (std::fma as vfmadd), in the order the vector code uses.
inline float exp_lane(float x) {
  x = std::max(x, kExpLowest);
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(n, -kLn2Hi, x);
  r = std::fma(n, -kLn2Lo, r);
  float p = kExpP0;
  p = std::fma(p, r, kExpP1);
  p = std::fma(p, r, kExpP2);
  p = std::fma(p, r, kExpP3);
  p = std::fma(p, r, kExpP4);
  p = std::fma(p, r, kExpP5);
  const float y = std::fma(p, r * r, r) + 1.0f;
  const auto bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23;
  return y * std::bit_cast<float>(bits);
}

}  // namespace mcpclass::kernels::detail
