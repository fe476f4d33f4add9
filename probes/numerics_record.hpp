// One instruction's numeric-behaviour record, shared by mma-numerics and wgmma-numerics: the
// classification of the constructed cases, the paper's error tables, the descriptor's
// NumericBehaviour and the probe-details JSON (with the cases the closest model misses, so a
// reader can see them and a later model can be tried on them).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../model/descriptor.hpp"
#include "host/numerics.hpp"

namespace ceiling::probes {

struct NumericsRecord {
  NumericBehaviour behaviour;
  nlohmann::json details;  // one entry of details.instructions
};

// cases/r1/r2: the constructed cases and the device's results of two runs; rows: the error
// tables from the device; `note` is appended to the determinism note.
NumericsRecord numerics_record(const std::string& key, const numerics::NumericShape& s,
                               const std::vector<numerics::DotCase>& cases, const std::vector<double>& r1,
                               const std::vector<double>& r2, const std::vector<numerics::ErrorRow>& rows,
                               int samples, const std::string& probe, const std::string& date,
                               const std::string& note = "");

}  // namespace ceiling::probes
