// Reading `ceiling profile` output (docs/FORMATS.md "Profile", schema ceiling/profile/1) for the
// report: the one bounded JSON reader, then every member the report uses checked for its type.
// Messages: "file: kernels[3].speedup.upper: expected a number, got string".
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "model/json_file.hpp"
#include "model/profile.hpp"
#include "detail.hpp"
#include "json_members.hpp"
#include "report.hpp"

namespace ceiling::reports {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using detail::Members;

ProfiledSpeedup read_speedup(const json& j, const fs::path& file, const std::string& where) {
  const Members m{j, file, where};
  ProfiledSpeedup s;
  s.direction = m.text("direction");
  if (s.direction != "tensor cores could give" && s.direction != "CUDA cores would lose")
    m.bad("direction", "is '" + s.direction + "', expected 'tensor cores could give' or 'CUDA cores would lose'");
  s.level = m.optional_text("level");
  s.regime = m.optional_text("regime");
  s.note = m.optional_text("note");
  s.alpha = m.number("alpha");
  s.balance = m.number("balance");
  s.intensity = m.number("intensity");
  s.i_over_b = m.number("i_over_b");
  s.lower = m.number("lower");
  s.upper = m.number("upper");
  return s;
}

ProfiledKernel read_kernel(const json& j, const fs::path& file, const std::string& where) {
  const Members m{j, file, where};
  if (!j.is_object()) throw JsonFileError(file, where, std::string("expected an object, got ") + j.type_name());
  ProfiledKernel k;
  k.name = m.text("name");
  k.short_name = m.text("short_name");
  if (k.short_name.empty()) k.short_name = k.name;
  k.launches = m.count("launches");
  k.time_s = m.number("time_s");
  k.time_share = m.number("time_share");
  k.unit = m.text("unit");
  if (k.unit != "cuda_core" && k.unit != "tensor_core" && k.unit != "none")
    m.bad("unit", "is '" + k.unit + "', expected 'cuda_core', 'tensor_core' or 'none'");
  if (const json* p = m.optional("precision")) {
    if (!p->is_string()) m.bad("precision", std::string("expected a string or null, got ") + p->type_name());
    k.precision = p->get<std::string>();
  } else if (!m.has("precision")) {
    m.bad("precision", "is missing");
  }
  const std::string in_where = m.path("intensity");
  for (const auto& [level, v] : m.obj("intensity").items()) {
    if (!v.is_number())
      throw JsonFileError(file, in_where + "." + level, std::string("expected a number, got ") + v.type_name());
    k.intensity[level] = v.get<double>();
  }
  const Members counts{m.obj("counts"), file, m.path("counts")};
  k.work_flop = counts.number("work_flop");
  if (const json* traffic = counts.optional("traffic")) {
    if (!traffic->is_object()) counts.bad("traffic", std::string("expected an object, got ") + traffic->type_name());
    const Members t{*traffic, file, counts.path("traffic")};
    if (const json* dram = t.optional("dram")) {
      if (!dram->is_object()) t.bad("dram", std::string("expected an object, got ") + dram->type_name());
      k.dram_bytes = Members{*dram, file, t.path("dram")}.number("bytes");
    }
  }
  k.achieved_flop_per_s = m.number_or_null("achieved_flop_per_s");
  k.bound_s = m.number("bound_s");
  k.bounded_by = m.text("bounded_by");
  k.efficiency = m.number("efficiency");
  k.verdict = m.text("verdict");
  if (!m.has("speedup")) m.bad("speedup", "is missing (an object, or null with speedup_missing)");
  if (const json* s = m.optional("speedup")) {
    if (!s->is_object()) m.bad("speedup", std::string("expected an object or null, got ") + s->type_name());
    k.speedup = read_speedup(*s, file, m.path("speedup"));
  } else {
    k.speedup_missing = m.optional_text("speedup_missing");
  }
  return k;
}

}  // namespace

ProfileInput load_profile(const fs::path& file) {
  const json j = read_json_file(file, "profile");
  if (!j.is_object()) throw JsonFileError(file, "", std::string("expected an object, got ") + j.type_name());
  const Members top{j, file, ""};
  const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (schema != kProfileSchema)
    throw JsonFileError(file, "schema",
                        "is '" + schema + "', expected '" + kProfileSchema +
                            "' (a file written by ceiling profile --out; docs/FORMATS.md \"Profile\")" +
                            (schema == "ceiling/validation/1" ? "; validation results go to --results" : ""));
  ProfileInput p;
  p.path = file;
  const Members hw{top.obj("hardware"), file, "hardware"};
  p.hardware_id = hw.text("id");
  if (p.hardware_id.empty()) hw.bad("id", "is empty");
  p.hardware_name = hw.optional_text("name");
  p.tool_version = top.optional_text("tool_version");
  if (const json* src = top.optional("source"); src && src->is_object())
    p.export_file = Members{*src, file, "source"}.optional_text("export");
  p.time_s = top.number("time_s");
  const json& kernels = top.arr("kernels");
  p.kernels.reserve(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i)
    p.kernels.push_back(read_kernel(kernels[i], file, "kernels[" + std::to_string(i) + "]"));
  if (const json* notes = top.optional("notes")) {
    if (!notes->is_array()) top.bad("notes", std::string("expected an array, got ") + notes->type_name());
    for (std::size_t i = 0; i < notes->size(); ++i) {
      if (!(*notes)[i].is_string())
        throw JsonFileError(file, "notes[" + std::to_string(i) + "]",
                            std::string("expected a string, got ") + (*notes)[i].type_name());
      p.notes.push_back((*notes)[i].get<std::string>());
    }
  }
  // The table and the plots' labels go by time share, largest first (the file's order already).
  std::stable_sort(p.kernels.begin(), p.kernels.end(),
                   [](const ProfiledKernel& a, const ProfiledKernel& b) { return a.time_share > b.time_share; });
  return p;
}

}  // namespace ceiling::reports

namespace ceiling::reports::detail {

std::string profile_mark(const ReportInput& in, std::size_t profile, std::size_t rank) {
  if (rank >= kProfileMarks) return {};
  const std::string letter(1, static_cast<char>('A' + rank));
  return in.profiles.size() > 1 ? std::to_string(profile + 1) + letter : letter;
}

std::vector<std::string> profile_kernel_labels(const ProfileInput& p) {
  std::map<std::string, int> uses;
  for (const auto& k : p.kernels) ++uses[k.short_name];
  std::vector<std::string> out;
  out.reserve(p.kernels.size());
  for (const auto& k : p.kernels) {
    if (uses[k.short_name] < 2) {
      out.push_back(k.short_name);
      continue;
    }
    // The template arguments right after the short name, without the parameter list.
    std::string rest = kernel_template_arguments(k.name, k.short_name, false);
    // PyTorch's lambdas make template arguments of a thousand characters: the first few tell apart.
    constexpr std::size_t kMaxLabel = 60;
    if (k.short_name.size() + rest.size() > kMaxLabel && k.short_name.size() + 8 < kMaxLabel)
      rest = rest.substr(0, kMaxLabel - k.short_name.size() - 4) + "...>";
    out.push_back(k.short_name + rest);
  }
  // Labels still equal (the same template arguments, or cut to the same text): numbered in order.
  std::map<std::string, int> seen, total;
  for (const auto& l : out) ++total[l];
  for (auto& l : out)
    if (total[l] > 1) l += " (" + std::to_string(++seen[l]) + ")";
  return out;
}

std::string profile_table_id(const ReportInput& in, std::size_t profile) {
  const std::string& gpu = in.profiles[profile].gpu_id;
  std::size_t same = 0;
  for (const auto& p : in.profiles) same += p.gpu_id == gpu;
  std::string id = "table-profile-" + gpu;
  if (same > 1) id += '-' + std::to_string(profile + 1);
  return id;
}

}  // namespace ceiling::reports::detail
