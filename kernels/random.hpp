// Counter-based random numbers, identical on host and device, so a CPU reference regenerates the
// inputs instead of copying them back. Uniform in [-1, 1) excluding tiny magnitudes.
#pragma once
#include <cstdint>

#include "host_device.hpp"

namespace ceiling::kernels {

CEILING_HOST_DEVICE inline double random_value(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  const double v = 0.25 + 0.75 * u;                            // [0.25, 1): never near zero
  return (z & 1) ? -v : v;
}

}  // namespace ceiling::kernels
