// Registry of validation kernel variants (STYLE habit 1). A variant is one implementation of a
// kind of the kind table (model/kernel_kind.hpp) on one unit in one precision: its W, Q and
// streams come from the kind (habit 7), its instance checks itself against a CPU reference
// (habit 9) before its time counts. A new variant is one .cu file with one Registrar.
// This header and registry.cpp/sweep.cpp are plain C++ (no CUDA): the sweep and its tests build
// without a GPU; the CUDA-only measurement lives in runner.hpp.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/descriptor.hpp"
#include "model/kernel_kind.hpp"
#include "model/kernel_model.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*: the interface needs no CUDA header

namespace ceiling::kernels {

using Stream = ::CUstream_st*;

struct Verification {
  bool ok = false;
  double error = 0;        // ||out - ref|| / ||ref|| (norm-wise) or max relative element error
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
  virtual void launch(Stream stream) = 0;
  // Copy the output back and compare with the CPU reference of the current inputs.
  virtual Verification verify() = 0;
  // Output elements (the count an unwritten output leaves poisoned).
  virtual long long output_elements() const = 0;
  // The launch shape it runs, as tuned or chosen for this size (e.g. "4 rows per block, 2 warps per
  // row, next chunk prefetched"), for the results' description; empty where there is only one. Valid
  // after randomize (tuners run there).
  virtual std::string launch_text() const { return {}; }
};

// What an instance learns from the sweep: where its working set lives, by the one rule
// (fits_in_l2) on the one L2 size (the descriptor's), so cache hints and tuning agree with the bound.
struct RunContext {
  double l2_bytes = 0;
  bool in_l2 = false;  // fits_in_l2(working set, l2_bytes): warm runs, plain loads
};

// The SASS a variant must compile to (checked by scripts/sass_check.sh and the GPU tests):
// functions whose (demangled) name contains `function`, each with an opcode matching `require`
// and none matching `forbid` (extended regular expressions; empty: no check).
struct SassExpectation {
  std::string function;
  std::string require;
  std::string forbid;
};

struct KernelVariant {
  std::string kind;  // a kind of the kind table
  // Which implementation, where a kind has several on one unit and precision (SpMV CUDA cores:
  // "ours", "cusparse"); part of name() when set. Empty: the unit's only one.
  std::string implementation;
  ComputeUnit unit = ComputeUnit::cuda_core;
  Precision precision = Precision::fp64;
  std::string description;  // one line: how it is computed
  // Share of the unit's peak the formulation can use (SCALE and GEMV on m8n8k4: 1/8); 0: the kind's
  // model sets it per size (intensity: k/w for k below the row width w, else 1).
  double tensor_core_fraction = 1.0;
  // The nearest parameters this variant can run (tile shapes); the sweep applies every variant's
  // rounding of a kind, so CUDA-core and tensor-core variants share sizes. Empty: any size.
  std::function<KernelParams(KernelParams)> round;
  std::function<std::unique_ptr<KernelInstance>(const KernelParams&, const RunContext&)> create;
  std::vector<SassExpectation> sass;
  // The variant's own traffic where its format differs from the kind's (the tensor-core SpMV's
  // padding and metadata, Eq. 9): given the parameters and the kind's model, returns the model
  // this variant is bounded by (its kind name unchanged, so it pairs with the CUDA-core side).
  std::function<KernelModel(const KernelParams&, KernelModel)> adjust_model;
  // Why the variant cannot run on this host (a library it loads at run time is missing); empty
  // (or no function): it can. validate leaves such variants out with a warning.
  std::function<std::string()> unavailable;

  std::string name() const;  // "scale.fp64.tensor_core", "spmv-csr.fp64.cuda_core.cusparse"
  // The kind's model at these parameters, with this variant's tensor-core fraction.
  KernelModel model(const KernelParams& params) const;
};

// Every registered variant, ordered by (kind order, precision, unit).
const std::vector<KernelVariant>& registry();
// Variants of the named kinds (empty = all but the opt-in kinds, e.g. gemm); a name also selects the kinds it prefixes up to a
// '-' ("spmv" selects spmv-csr). Throws std::invalid_argument naming the kinds that
// have variants for an unknown one.
std::vector<const KernelVariant*> select_variants(const std::vector<std::string>& kinds);
std::vector<std::string> kind_names_with_variants();

struct Registrar {
  explicit Registrar(KernelVariant v);
};

}  // namespace ceiling::kernels
