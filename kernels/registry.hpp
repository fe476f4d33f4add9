// Registry of validation kernel variants (STYLE habit 1): one registration per variant, each
// declaring its W and Q through model/kernel_model.hpp (habit 7) and checking itself against a
// CPU reference (habit 9) before its time counts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/descriptor.hpp"
#include "model/kernel_model.hpp"

namespace ceiling::kernels {

// Problem size: SCALE uses n; GEMV uses m x n (rows x columns).
struct ProblemSize {
  long long m = 0;
  long long n = 0;
};

struct Verification {
  bool ok = false;
  double error = 0;        // ||out - ref|| / ||ref|| (GEMV) or max relative element error (SCALE)
  double tolerance = 0;
  long long unwritten = 0; // output elements still holding the poison (NaN) after the run
  long long bad = 0;       // elements over the tolerance (or NaN)
  std::string message;
};

// One allocated problem on the device: fresh inputs, poisoned output, launch, check.
class KernelInstance {
 public:
  virtual ~KernelInstance() = default;
  // Fresh pseudo-random inputs on the device, drawn from `seed` (never zeros).
  virtual void randomize(std::uint64_t seed) = 0;
  // NaN in every output element, so an unwritten element cannot pass the check.
  virtual void poison_output() = 0;
  // Enqueue the kernel on `stream` (no synchronization).
  virtual void launch(cudaStream_t stream) = 0;
  // Copy the output back and compare with the CPU reference of the current inputs.
  virtual Verification verify() = 0;
};

struct KernelVariant {
  std::string kernel;            // "scale" | "gemv"
  ComputeUnit unit = ComputeUnit::cuda_core;
  Precision precision = Precision::fp64;
  std::string description;       // one line: how it is computed
  // Share of the unit's peak the formulation can use (SCALE and GEMV on m8n8k4: 1/8).
  double tensor_core_fraction = 1.0;
  // W, Q and working set of a size (the model's kernel model, one definition).
  std::function<KernelModel(const ProblemSize&)> model;
  // Nearest valid size whose working set is close to `bytes` (rounded to the tile shape).
  std::function<ProblemSize(double bytes)> size_for_bytes;
  // Nearest valid size for a count given on the command line (SCALE: n; GEMV: square n x n).
  std::function<ProblemSize(long long count)> size_for_count;
  std::function<std::unique_ptr<KernelInstance>(const ProblemSize&)> create;

  std::string name() const;  // "scale.fp64.tensor_core"
};

// Every registered variant, in registration order sorted by (kernel, precision, unit).
const std::vector<KernelVariant>& registry();
// Variants of the named kernels ("scale", "gemv"; empty = all). Throws std::invalid_argument
// naming the known kernels for an unknown one.
std::vector<const KernelVariant*> select_variants(const std::vector<std::string>& kernels);
std::vector<std::string> kernel_names();

struct Registrar {
  explicit Registrar(KernelVariant v);
};

// Size of a ProblemSize as JSON-ish pairs for results: {"n": ...} or {"m": ..., "n": ...}.
std::vector<std::pair<std::string, double>> size_fields(const KernelVariant& v, const ProblemSize& s);

// Counter-based random numbers, identical on host and device, so the CPU reference regenerates
// the inputs instead of copying them back. Uniform in [-1, 1) excluding tiny magnitudes.
__host__ __device__ inline double random_value(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  const double v = 0.25 + 0.75 * u;                            // [0.25, 1): never near zero
  return (z & 1) ? -v : v;
}

}  // namespace ceiling::kernels
