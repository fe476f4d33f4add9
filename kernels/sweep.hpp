// The validate sweep as a library call: sizes per kind (from the kind table and the variants'
// tile rounding), one L2 size and one "fits in L2" rule, a measurement per (variant, size), the
// model's verdicts and the summary (model/validation.hpp). Plain C++: the measurement is passed
// in, so the sweep runs in CPU tests with a fake one and on a GPU with kernels::gpu_measurer().
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/validation.hpp"
#include "registry.hpp"

namespace ceiling::kernels {

// One entry of --sizes: a working set ("64MiB") or a count ("1048576": SCALE n, GEMV square n).
struct SizeRequest {
  bool is_bytes = true;
  double value = 0;
  std::string text;
};
// Throws std::invalid_argument naming the text when it is neither.
SizeRequest parse_size_request(const std::string& text);

// What the sweep asks of a measurement, and what it gets back.
struct MeasureRequest {
  const KernelVariant* variant = nullptr;
  KernelParams params;
  KernelModel model;
  RunContext context;   // cold runs (L2 evicted before each repeat) when !context.in_l2
  std::uint64_t seed = 0;
};
struct MeasureResult {
  validation::TimeStats time;
  double sm_clock_hz = 0;
  bool flagged = false;
  std::string flag_reason;
  double verify_error = 0;
  std::string how;  // "cold: ..." or "warm: N back-to-back launches per timed region"
};
// Verifies (fresh inputs, poisoned output, CPU reference) and times; throws on wrong output.
using Measurer = std::function<MeasureResult(const MeasureRequest&)>;

struct Sweep {
  // Empty: each kind's own sweep points (KernelKind::sweep_points, e.g. intensity's k sweep) or else
  // validation::default_sweep_bytes(l2_bytes, quick).
  std::vector<SizeRequest> sizes;
  bool quick = false;
  double l2_bytes = 0;             // the one L2 size: l2_capacity_bytes(descriptor)
  double memory_limit_bytes = 0;   // working sets above this are skipped (0: no limit)
  std::uint64_t seed = 0x243F6A8885A308D3ull;
  // Progress: called after each measurement (done, total, result) and for each skipped size.
  std::function<void(size_t done, size_t total, const validation::KernelResult&)> on_result;
  std::function<void(size_t done, size_t total, const std::string& why)> on_skip;
};

// The L2 size of the sweep: the descriptor's L2 capacity; throws std::runtime_error naming the
// descriptor when it has none (calibrate fills it; a spec value serves).
double sweep_l2_bytes(const HardwareDescriptor& hw);

// Runs every variant over the sizes: for each kind the sizes are computed once (the kind's
// params_for_bytes/params_for_count, then every selected variant's rounding), de-duplicated by
// their parameters, and shared by its variants. Fills results and the summary (speedups,
// geomeans, overlap fits); the caller fills the device record, dates and command line.
validation::ValidationReport run_validation(const HardwareDescriptor& hw,
                                           const std::vector<const KernelVariant*>& variants, const Sweep& sweep,
                                           const Measurer& measure);

}  // namespace ceiling::kernels
