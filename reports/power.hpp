// Tensor-core power (issue 14; Luo et al. "Benchmarking and Dissecting the Nvidia Hopper GPU
// Architecture", Table XI): the paper's figures and our readings (calibrate --power). The report's
// tables and plot of both: power.cpp, declared in detail.hpp.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"

namespace ceiling::reports {

// One row of Table XI: (A/B, C/D, dense or 2:4 sparse) at the largest mma.sync shape of its type.
struct PaperPowerRow {
  Precision input = Precision::fp16;
  Precision accumulate = Precision::fp16;
  bool sparse = false;
  std::string shape;  // the instruction's shape (sparse: mma.sp's k, twice Table VII's compressed k)
  // As printed, per GPU in paper_power_gpus() order: P in W, E in TFLOP/s per W (TOP/s per W for INT8).
  std::array<double, 3> watts{};
  std::array<double, 3> per_watt{};
  std::string key() const;  // TensorInstruction::key(): "mma.m16n8k16.fp16.fp16", "mma.m16n8k32.fp16.fp16.sp"
};

struct PaperPowerGpu {
  std::string name;  // "H800 PCIe"
  std::string id;    // the shipped descriptor holding its P as power spec ("" for none: RTX 4090)
};

inline constexpr const char* kTableXiCitation =
    "W. Luo et al., \"Benchmarking and Dissecting the Nvidia Hopper GPU Architecture\", Table XI";

// The paper's GPUs, in the order of PaperPowerRow's arrays: A100 PCIe, H800 PCIe, RTX 4090.
const std::array<PaperPowerGpu, 3>& paper_power_gpus();
// Table XI's eight rows in the paper's order: FP16/FP16, FP16/FP32, TF32/FP32, INT8/INT32, each D then S.
const std::vector<PaperPowerRow>& luo_table_xi();

// How our E (work per joule) was found.
enum class EfficiencySource {
  none,                   // no rate known: E missing
  probe_details,          // probes.json: the probe's rate during the power reading / its watts
  sustained_over_power,   // the descriptor's sustained (the rate during the reading) / power.measured.median
  throughput_over_power,  // throughput.measured.median / power.measured.median (no probe details)
};

// Our board power under one tensor-core instruction, and the work per joule at it.
struct PowerReading {
  std::string key;          // TensorInstruction::key()
  Precision input = Precision::fp16;
  double watts = 0;
  double sm_clock_hz = 0;   // NVML's SM clock during the reading; 0 when not known
  double rate = 0;          // FLOP/s (OP/s) behind per_watt; 0 when none
  std::optional<double> per_watt;  // FLOP (OP) per joule = (FLOP/s) per W
  EfficiencySource source = EfficiencySource::none;
  std::string probe;        // the probe that read the power
  const MeasuredValue* measured = nullptr;  // the descriptor's power.measured; nullptr: probe details only
};

// Every power reading of g, in descriptor order then probe-details order: each
// tensor_instructions[].power.measured with E from its probe's details in probes.json (probes.<probe>
// .details.power[] by "instruction", or .details.sparse_vs_dense[].power.{dense,sparse}) when their
// watts agree within 1% (the same run), else throughput.measured / power; then the readings only
// probes.json holds (the dense partners of wgmma-sp), E from their details. Parts of probes.json of
// the wrong shape are skipped.
std::vector<PowerReading> power_readings(const GpuInput& g);

}  // namespace ceiling::reports
