// The numeric behaviour of a tensor-core instruction (issue 13; Sun et al. §8, Fasi et al. 2021),
// found on the CPU from what the GPU returns for chosen inputs. The unit of work is one dot
// product d = sum_k a_k b_k + c of the instruction's K (one element of D); the GPU side packs
// eight of them into one mma (rows 0-7 of A against columns 0-7 of B, the diagonal of D).
//
// - Element-wise errors (the paper's Figure 16 and Tables 12-15): multiplication (one product,
//   c = 0), inner-product addition (all K products, c = 0), accumulation (one product plus c),
//   each with inputs drawn in the low precision and in FP32 (converted on the host), against the
//   CPU FP32 result (correctly rounded) and, for an FP16 D, that result converted to FP16.
// - What the hardware does, from constructed cases (exact inputs): a family of block-FMA models
//   (products exact, K split into blocks of b consecutive k, each block summed with the running
//   value after aligning every term to the largest exponent and truncating below e extra bits,
//   the block's sum rounded to the intermediate format in one direction; C added inside the first
//   block or after all products by a separate IEEE add; subnormal A/B, C and results kept or
//   flushed). Every model of the family is run on the same cases; the ones that reproduce every
//   returned bit are the verdict, stated per parameter (a value, a range, or "undetermined").
// - Chained products (§8.2): D = A x B repeated, D converted to the input type as the next A,
//   against an FP64 chain on the same inputs, l2-relative error (the paper's Eq. 1) per length.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "lowp.hpp"

namespace ceiling::numerics {

// One instruction as the numeric probes see it.
struct NumericShape {
  std::string key;  // instruction key, "mma.m16n8k16.fp16.fp32"
  int M = 16, N = 8, K = 16;
  const Format* in = nullptr;   // A and B
  const Format* out = nullptr;  // C and D
};

struct DotCase {
  std::vector<double> a, b;  // K values each, representable in the input format
  double c = 0;              // representable in the output format
  std::string tag;           // what the case probes ("rnd", "round:+0.75ulp", ...)
};

// The device (or a model of it): one result per case, in order.
using DotDevice = std::function<std::vector<double>(const std::vector<DotCase>&)>;

// One model of the arithmetic (see the header comment).
struct Hypothesis {
  int block = 0;               // products per block (K: one block)
  static constexpr int kExact = 1000;
  // Bits kept below the intermediate format's last bit at the largest term's exponent (negative:
  // fewer bits than the format holds); kExact: sums are exact before the rounding.
  int extra_bits = kExact;
  Round round = Round::nearest_even;  // rounding of each block's sum
  const Format* inter = nullptr;      // running-sum format (the output format, or fp32 for fp16 D)
  bool c_after = false;        // C added after every product, by an IEEE round-to-nearest add
  bool flush_ab = false, flush_c = false, flush_out = false;
  // Alignment reference (only with truncation): false, each term's exact exponent; true, every
  // term as a significand with 2 integer bits: a product at ea + eb + 1 whatever its value, C (or
  // the running sum) at its exponent + 1 (hardware that aligns before it normalizes). The H100's
  // FP16/BF16/TF32 results with FP32 D fit this with 3 extra bits, not the exact-exponent model.
  bool align_nominal = false;
  // Which products form a block: 0, K in order (block b holds k in [b*block, (b+1)*block)); s > 0,
  // runs of s consecutive k dealt round-robin to the blocks. The H100's FP8 mma.sync (two FP16
  // HMMA.16816 per m16n8k32, SASS) takes k in pairs: {0,1,4,5,...} then {2,3,6,7,...}.
  int stride = 0;
  std::string describe() const;
};

// The model's d for one case (shape.out is the output format).
double emulate(const Hypothesis& h, const NumericShape& s, const DotCase& c);
DotDevice emulator(const Hypothesis& h, const NumericShape& s);

std::vector<int> extra_bits_axis();  // -12..30, then kExact
// Every model of the family for a shape (blocks dividing K, e = -12..30 and exact, 4 directions,
// intermediate = output or fp32, C inside or after, 8 flush combinations).
std::vector<Hypothesis> hypothesis_grid(const NumericShape& s);

// Constructed cases: rounding of a sum at and around half an ulp in both signs, the alignment
// depth (a term 2^-j ulp below the largest), block boundaries (one large term at each position
// and small ones elsewhere), cancellation, subnormal inputs/results where the types reach them,
// then random cases of several dynamic ranges. Deterministic from the seed.
std::vector<DotCase> constructed_cases(const NumericShape& s, uint64_t seed);

struct ParameterVerdict {
  std::string name;   // "block", "extra_bits", "rounding", ...
  std::string value;  // "8", "3", "RZ", ">= 24 (exact within the cases)", "undetermined (a|b)"
};

struct Classification {
  int cases = 0;
  int consistent = 0;               // models that reproduce every case
  std::vector<Hypothesis> models;   // up to 64 of them
  std::vector<ParameterVerdict> parameters;
  bool products_exact = false;      // every single-product case (c = 0) returned its exact product (rounded once to D's type)
  std::string summary;              // one line for people
  // When no model fits: `parameters` describe the closest models (fewest misses, ties kept in
  // `models`), `closest` is set, and first_miss is the case the first of them gets wrong.
  bool closest = false;
  int closest_misses = 0;
  std::string closest_model, first_miss;
};

Classification classify(const NumericShape& s, const std::vector<DotCase>& cases,
                        const std::vector<double>& results);

// ---- the paper's tables ------------------------------------------------------------------

enum class Experiment { multiplication, inner_product, accumulation };
const char* experiment_name(Experiment e);

struct ErrorRow {
  Experiment experiment;
  bool init_low = true;    // inputs drawn in the low precision (else FP32, converted on the host)
  double mean_abs_fp32 = 0;     // mean |d - FP32 reference| (the paper's "average error")
  double mean_abs_out = 0;      // against the FP32 reference rounded to D's type (Table 14's second half)
  double max_rel_fp32 = 0;
  int samples = 0;
};

// The cases behind the tables: for each experiment and init, `samples` draws from N(0,1) (the
// paper's generator), the same seed for every type so the types see the same values.
struct ErrorPlan {
  std::vector<DotCase> cases;  // what the device runs (converted inputs)
  struct Meta { Experiment e; bool init_low; double ref_fp32; double ref_out; };
  std::vector<Meta> meta;
};
ErrorPlan error_plan(const NumericShape& s, int samples, uint64_t seed);
std::vector<ErrorRow> error_table(const NumericShape& s, const ErrorPlan& plan, const std::vector<double>& results);

// ---- chained products (§8.2) -------------------------------------------------------------

struct ChainPoint {
  int length = 0;
  bool init_low = true;
  double mean_rel_err = 0;  // Eq. 1 against the FP64 chain, averaged over the chains
  int chains = 0;           // chains that stayed finite to this length
  int overflowed = 0;       // chains with inf/NaN by this length
};

// One step of every chain: D = A x B for M x K A and K x N B (row-major), c = 0; the device
// runs each product's M*N dot products. Converts D to the input type (round to nearest) for
// the next step, as a kernel converting its result would.
std::vector<ChainPoint> chain_errors(const NumericShape& s, const DotDevice& dev, int max_length,
                                     int chains, uint64_t seed);

}  // namespace ceiling::numerics
