#include "architecture_reuse.hpp"

#include <spdlog/spdlog.h>

#include <fstream>

#include "model/files.hpp"

namespace ceiling::probes {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// The numerics entries `probe` wrote into d, stripped of timings; the latest date among them.
std::vector<TensorInstruction> numerics_of(const HardwareDescriptor& d, const std::string& probe, std::string& latest) {
  std::vector<TensorInstruction> out;
  for (const auto& ti : d.tensor_instructions) {
    if (!ti.numerics || ti.numerics->probe != probe) continue;
    TensorInstruction n;
    n.api = ti.api;
    n.shape = ti.shape;
    n.input = ti.input;
    n.input_detail = ti.input_detail;
    n.accumulate = ti.accumulate;
    n.sparse = ti.sparse;
    n.operand_a = ti.operand_a;
    n.sass = ti.sass;
    n.numerics = ti.numerics;
    if (ti.numerics->date > latest) latest = ti.numerics->date;
    out.push_back(std::move(n));
  }
  return out;
}
}  // namespace

std::optional<ArchitectureReuse> architecture_reuse(const std::string& probe, const std::string& compute_capability,
                                                    const HardwareDescriptor& start, const std::string& start_cc,
                                                    const std::string& start_origin,
                                                    const std::vector<fs::path>& candidates) {
  ArchitectureReuse r;
  if (!compute_capability.empty() && start_cc == compute_capability) {
    r.instructions = numerics_of(start, probe, r.measured);
    if (!r.instructions.empty()) {
      r.source = "the starting descriptor (" + start_origin + ")";
      return r;
    }
  }
  for (const auto& c : candidates) {
    HardwareDescriptor d;
    try {
      d = load_descriptor(c);
    } catch (const std::exception& e) {
      spdlog::debug("{}: not a source for {}: {}", c.string(), probe, e.what());
      continue;
    }
    if (d.identity.compute_capability != compute_capability) continue;
    r.measured.clear();
    r.instructions = numerics_of(d, probe, r.measured);
    if (r.instructions.empty()) continue;
    r.source = c.string();
    std::error_code ec;
    const fs::path pj = probes_path_for(c);
    if (fs::is_regular_file(pj, ec)) {
      try {
        const json j = json::parse(std::ifstream(pj));
        if (j.contains("probes") && j["probes"].contains(probe) && j["probes"][probe].is_object())
          r.details = j["probes"][probe].value("details", json(nullptr));
      } catch (const std::exception& e) {
        spdlog::debug("{}: probe details not read: {}", pj.string(), e.what());
      }
    }
    return r;
  }
  return std::nullopt;
}

}  // namespace ceiling::probes
