// Reads an Nsight Compute raw-page CSV export (`ncu --csv --page raw`, issue 19): one row per
// profiled launch, a header of metric names and a row of units. Strict where it matters (every
// record must have the header's field count; a metric cell must be a number in a known unit) and
// lenient where ncu and applications are noisy ("==PROF==" lines and the application's own output
// between records are skipped and counted). Pure C++: runs on machines without a GPU.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "input_error.hpp"

namespace ceiling {

// Any problem in an export: "file:line:column: column-name: cause".
class NcuCsvError : public InputFileError {
 public:
  using InputFileError::InputFileError;
};

// One profiled launch. Metric values are in base units (bytes, seconds, hertz, counts); a metric
// the export lacks, or whose cell is empty or "n/a", is absent from `metrics`.
struct NcuLaunch {
  int line = 0;                 // line of its record in the file (1-based)
  std::string id;               // ncu's "ID"
  std::string process;          // "Process Name"
  std::string kernel;           // "Kernel Name" (demangled, as ncu prints it)
  std::string device;           // "Device" (ordinal)
  std::string block, grid;      // "(256, 1, 1)"
  std::map<std::string, double> metrics;
  std::optional<double> get(std::string_view name) const;
  double get_or(std::string_view name, double fallback) const;
};

struct NcuExport {
  std::string file;
  std::vector<std::string> columns;           // the header, in file order
  std::vector<NcuLaunch> launches;
  std::vector<std::string> device_names;      // device__attribute_display_name values, distinct, in order
  std::optional<int> sm_count;                // device__attribute_multiprocessor_count of the first launch
  int skipped_lines = 0;                      // "==PROF==" and application output lines
  std::vector<std::string> ncu_messages;      // "==ERROR==" / "==WARNING==" lines, as printed
  bool has_column(std::string_view name) const;
};

// Limits (docs/RELIABILITY.md): a file of at most 8 GiB, a line of at most 16 MiB, 4M launches,
// metric values in [0, 1e30] (base units).
inline constexpr std::uint64_t kNcuMaxFileBytes = 8ull << 30;
inline constexpr std::size_t kNcuMaxLineBytes = 16u << 20;
inline constexpr std::size_t kNcuMaxLaunches = 4u << 20;
inline constexpr double kNcuMaxValue = 1e30;  // a metric value, in base units

// Reads the export. `keep` names the metric columns to convert (others are kept out of `metrics`;
// empty keeps every numeric column). Throws NcuCsvError with file:line for: no header ("no ncu
// raw-page header: export with `ncu --csv --page raw`"), a record with the wrong field count, an
// unclosed quote, a metric cell that is not a number, a unit it cannot convert, limits exceeded.
NcuExport read_ncu_csv(const std::filesystem::path& file, const std::vector<std::string>& keep = {});
NcuExport parse_ncu_csv(std::string_view text, const std::string& name_for_errors,
                        const std::vector<std::string>& keep = {});

// A number as ncu prints it: "1,980,000", "12,851,283.20", "3.5e+05"; nullopt for anything else.
std::optional<double> parse_ncu_number(std::string_view cell);
// The factor from `unit` to its base unit (byte, second, hertz, count): "Kbyte" 1e3, "usecond"
// 1e-6, "ns" 1e-9, "Ghz" 1e9, "inst" 1, "" 1; nullopt for a unit it does not know.
std::optional<double> ncu_unit_factor(std::string_view unit);

}  // namespace ceiling
