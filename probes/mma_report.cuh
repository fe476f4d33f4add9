// Names and JSON of compute-probe results (host-only C++, also used by tests/gpu): the key of a
// TensorInstruction and a ProbeOutput dump (the dev format of results/calibration-*.json).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "../model/descriptor.hpp"
#include "registry.hpp"

namespace ceiling::probes::compute {

inline std::string precision_name(Precision p) { return std::string(to_string(p)); }

inline std::string instruction_key(const TensorInstruction& t) { return t.key(); }

inline nlohmann::json measured_json(const MeasuredValue& m) {
  return {{"median", m.median}, {"min", m.min}, {"max", m.max}, {"repeats", m.repeats}, {"cv", m.cv},
          {"probe", m.probe}, {"date", m.date}, {"sm_clock", m.sm_clock_hz}, {"flagged", m.flagged},
          {"note", m.note}};
}

inline nlohmann::json field_json(const Field& f) {
  return f.measured ? measured_json(*f.measured) : nlohmann::json(nullptr);
}

inline nlohmann::json instruction_json(const TensorInstruction& t) {
  nlohmann::json j{{"key", instruction_key(t)}, {"api", t.api}, {"shape", t.shape},
                   {"input", precision_name(t.input)}, {"input_detail", t.input_detail},
                   {"accumulate", precision_name(t.accumulate)}, {"sparse", t.sparse},
                   {"operand_a", t.operand_a}, {"sass", t.sass},
                   {"latency", field_json(t.latency)}, {"throughput", field_json(t.throughput)},
                   {"fma_per_clock_per_sm", field_json(t.fma_per_clock_per_sm)}};
  j["best_warps"] = t.best_warps ? nlohmann::json(*t.best_warps) : nlohmann::json(nullptr);
  j["best_ilp"] = t.best_ilp ? nlohmann::json(*t.best_ilp) : nlohmann::json(nullptr);
  return j;
}

// A ProbeOutput as JSON (fields, instructions, details, skipped): the dev dump format.
inline nlohmann::json output_json(const ProbeOutput& o) {
  nlohmann::json j;
  j["skipped"] = o.skipped ? nlohmann::json(*o.skipped) : nlohmann::json(nullptr);
  j["fields"] = nlohmann::json::object();
  for (const auto& f : o.fields) j["fields"][f.path] = measured_json(f.value);
  j["instructions"] = nlohmann::json::array();
  for (const auto& t : o.instructions) j["instructions"].push_back(instruction_json(t));
  j["details"] = o.details;
  return j;
}

}  // namespace ceiling::probes::compute
