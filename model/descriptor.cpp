// Hardware descriptor: enums, field access, dotted paths, equality. YAML I/O is in descriptor_yaml.cpp.
#include "descriptor.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ceiling {

namespace {

constexpr std::array<std::pair<Precision, std::string_view>, 9> kPrecisions{{
    {Precision::fp64, "fp64"}, {Precision::fp32, "fp32"}, {Precision::tf32, "tf32"},
    {Precision::fp16, "fp16"}, {Precision::bf16, "bf16"}, {Precision::fp8, "fp8"},
    {Precision::int8, "int8"}, {Precision::int4, "int4"}, {Precision::int32, "int32"}}};
constexpr std::array<std::pair<ComputeUnit, std::string_view>, 2> kUnits{{
    {ComputeUnit::cuda_core, "cuda_core"}, {ComputeUnit::tensor_core, "tensor_core"}}};
constexpr std::array<std::pair<MemoryLevelKind, std::string_view>, 4> kLevels{{
    {MemoryLevelKind::dram, "dram"}, {MemoryLevelKind::l2, "l2"}, {MemoryLevelKind::l1, "l1"},
    {MemoryLevelKind::shared, "shared"}}};

template <class E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, n] : table)
    if (v == e) return n;
  return "unknown";
}

template <class E, size_t N>
E parse_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s, const char* what) {
  for (const auto& [v, n] : table)
    if (n == s) return v;
  std::string known;
  for (const auto& [v, n] : table) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(s) + "' (known: " + known + ")");
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool valid_entry_name(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

[[noreturn]] void bad_path(std::string_view path, const std::string& why) {
  throw std::invalid_argument("descriptor path '" + std::string(path) + "' names no field: " + why +
                              " (e.g. sm_clock, memory.dram.bandwidth, memory.dram.patterns.copy, "
                              "memory.l2.extra.far_half, compute.tensor_core.fp64)");
}

// A parsed dotted path; `level_field` / `compute` say which member it names.
struct ParsedPath {
  enum class Kind { sm_clock, memory_clock, level_member, pattern, extra, first_byte, ramp_bandwidth, compute, outer_product, gemm_loop, cuda_core_power, mma_sync, fixed_cost } kind;
  MemoryLevelKind level = MemoryLevelKind::dram;
  std::string member;  // capacity | bandwidth | bandwidth_per_sm | latency, or the pattern/extra name
  ComputeUnit unit = ComputeUnit::cuda_core;
  Precision precision = Precision::fp64;
};

ParsedPath parse_path(std::string_view path) {
  const auto p = split_path(path);
  ParsedPath out{};
  if (p.size() == 1 && (p[0] == "sm_clock" || p[0] == "memory_clock")) {
    out.kind = p[0] == "sm_clock" ? ParsedPath::Kind::sm_clock : ParsedPath::Kind::memory_clock;
    return out;
  }
  if (p[0] == "fixed_costs") {
    if (p.size() != 2 || (p[1] != "launch_single" && p[1] != "launch_back_to_back"))
      bad_path(path, "expected fixed_costs.launch_single or fixed_costs.launch_back_to_back");
    out.kind = ParsedPath::Kind::fixed_cost;
    out.member = p[1];
    return out;
  }
  if (p[0] == "memory") {
    if (p.size() < 3) bad_path(path, "expected memory.<level>.<member>");
    try {
      out.level = parse_memory_level(p[1]);
    } catch (const std::invalid_argument& e) {
      bad_path(path, e.what());
    }
    if (p.size() == 3) {
      static const std::array<std::string_view, 4> members{"capacity", "bandwidth", "bandwidth_per_sm", "latency"};
      if (std::find(members.begin(), members.end(), p[2]) == members.end())
        bad_path(path, "unknown member '" + p[2] + "'");
      out.kind = ParsedPath::Kind::level_member;
      out.member = p[2];
      return out;
    }
    if (p.size() == 4 && (p[2] == "patterns" || p[2] == "extra" || p[2] == "first_byte" || p[2] == "ramp_bandwidth")) {
      if (!valid_entry_name(p[3])) bad_path(path, "names are lower case letters, digits and '_'");
      out.kind = p[2] == "patterns"     ? ParsedPath::Kind::pattern
                 : p[2] == "extra"      ? ParsedPath::Kind::extra
                 : p[2] == "first_byte" ? ParsedPath::Kind::first_byte
                                        : ParsedPath::Kind::ramp_bandwidth;
      out.member = p[3];
      return out;
    }
    bad_path(path, "expected memory.<level>.<member>, .patterns.<name>, .extra.<name>, .first_byte.<pattern> or .ramp_bandwidth.<pattern>");
  }
  if (p[0] == "compute") {
    if (p.size() != 3) bad_path(path, "expected compute.<unit>.<precision>");
    if (p[1] == "cuda_core_outer_product" || p[1] == "cuda_core_gemm_loop" || p[1] == "cuda_core_power" ||
        p[1] == "tensor_core_mma_sync") {
      try {
        out.precision = parse_precision(p[2]);
      } catch (const std::invalid_argument& e) {
        bad_path(path, e.what());
      }
      out.kind = p[1] == "cuda_core_power"        ? ParsedPath::Kind::cuda_core_power
                 : p[1] == "tensor_core_mma_sync" ? ParsedPath::Kind::mma_sync
                 : p[1] == "cuda_core_gemm_loop"  ? ParsedPath::Kind::gemm_loop
                                                  : ParsedPath::Kind::outer_product;
      return out;
    }
    try {
      out.unit = parse_compute_unit(p[1]);
      out.precision = parse_precision(p[2]);
    } catch (const std::invalid_argument& e) {
      bad_path(path, e.what());
    }
    out.kind = ParsedPath::Kind::compute;
    return out;
  }
  bad_path(path, "unknown section '" + p[0] + "'");
}

Field& level_member(MemoryLevel& l, const std::string& m) {
  if (m == "capacity") return l.capacity;
  if (m == "bandwidth") return l.bandwidth;
  if (m == "bandwidth_per_sm") return l.bandwidth_per_sm;
  return l.latency;
}

// Maps compared on their present fields only: an entry created by field() and never set is
// not part of the descriptor (it is not written either).
template <class V>
bool same_present(const std::map<std::string, V>& a, const std::map<std::string, V>& b) {
  auto count = [](const auto& m) {
    return std::count_if(m.begin(), m.end(), [](const auto& kv) { return kv.second.present(); });
  };
  if (count(a) != count(b)) return false;
  for (const auto& [k, f] : a) {
    if (!f.present()) continue;
    auto it = b.find(k);
    if (it == b.end() || !(it->second == f)) return false;
  }
  return true;
}

bool same_by_precision(const std::map<Precision, Field>& a, const std::map<Precision, Field>& b) {
  std::map<std::string, Field> fa, fb;
  for (const auto& [p, f] : a) fa.emplace(std::string(to_string(p)), f);
  for (const auto& [p, f] : b) fb.emplace(std::string(to_string(p)), f);
  return same_present(fa, fb);
}

bool same_compute(const std::map<ComputeUnit, std::map<Precision, Field>>& a,
                  const std::map<ComputeUnit, std::map<Precision, Field>>& b) {
  for (const auto& [unit, _] : kUnits) {
    std::map<std::string, Field> fa, fb;
    if (auto it = a.find(unit); it != a.end())
      for (const auto& [p, f] : it->second) fa.emplace(std::string(to_string(p)), f);
    if (auto it = b.find(unit); it != b.end())
      for (const auto& [p, f] : it->second) fb.emplace(std::string(to_string(p)), f);
    if (!same_present(fa, fb)) return false;
  }
  return true;
}

}  // namespace

std::string_view to_string(Precision p) { return name_of(kPrecisions, p); }
std::string_view to_string(ComputeUnit u) { return name_of(kUnits, u); }
std::string_view to_string(MemoryLevelKind k) { return name_of(kLevels, k); }
Precision parse_precision(std::string_view s) { return parse_name(kPrecisions, s, "precision"); }
ComputeUnit parse_compute_unit(std::string_view s) { return parse_name(kUnits, s, "compute unit"); }
MemoryLevelKind parse_memory_level(std::string_view s) { return parse_name(kLevels, s, "memory level"); }

int bytes_per_value(Precision p) {
  switch (p) {
    case Precision::fp64: return 8;
    case Precision::fp32:
    case Precision::tf32:
    case Precision::int32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8:
    case Precision::int8:
    case Precision::int4: return 1;
  }
  return 0;
}

std::string_view to_string(SourcePreference p) {
  switch (p) {
    case SourcePreference::measured_else_spec: return "auto";
    case SourcePreference::spec: return "spec";
    case SourcePreference::measured: return "measured";
  }
  return "auto";
}

SourcePreference parse_source_preference(std::string_view s) {
  if (s == "auto" || s == "measured_else_spec") return SourcePreference::measured_else_spec;
  if (s == "spec") return SourcePreference::spec;
  if (s == "measured") return SourcePreference::measured;
  throw std::invalid_argument("unknown source '" + std::string(s) + "' (known: auto, spec, measured)");
}

std::optional<double> Field::value(SourcePreference pref) const {
  switch (pref) {
    case SourcePreference::measured_else_spec:
      if (measured) return measured->median;
      if (spec) return spec->value;
      return std::nullopt;
    case SourcePreference::spec:
      return spec ? std::optional<double>(spec->value) : std::nullopt;
    case SourcePreference::measured:
      return measured ? std::optional<double>(measured->median) : std::nullopt;
  }
  return std::nullopt;
}

std::string_view Field::source(SourcePreference pref) const {
  switch (pref) {
    case SourcePreference::measured_else_spec:
      return measured ? "measured" : spec ? "spec" : "missing";
    case SourcePreference::spec:
      return spec ? "spec" : "missing";
    case SourcePreference::measured:
      return measured ? "measured" : "missing";
  }
  return "missing";
}

std::string TensorInstruction::key() const {
  std::string k = api;
  k.append(".").append(shape).append(".").append(to_string(input));
  if (!input_detail.empty()) k.append("_").append(input_detail);
  k.append(".").append(to_string(accumulate));
  if (!operand_a.empty()) k.append(".").append(operand_a);
  if (sparse) k.append(".sp");
  return k;
}

std::optional<double> HardwareDescriptor::peak(ComputeUnit unit, Precision p, SourcePreference pref) const {
  auto u = compute.find(unit);
  if (u == compute.end()) return std::nullopt;
  auto f = u->second.find(p);
  if (f == u->second.end()) return std::nullopt;
  return f->second.value(pref);
}

std::optional<double> HardwareDescriptor::bandwidth(MemoryLevelKind level, SourcePreference pref) const {
  auto l = memory.find(level);
  if (l == memory.end()) return std::nullopt;
  return l->second.bandwidth.value(pref);
}

Field& HardwareDescriptor::field(std::string_view path) {
  const ParsedPath p = parse_path(path);
  switch (p.kind) {
    case ParsedPath::Kind::sm_clock: return sm_clock;
    case ParsedPath::Kind::memory_clock: return memory_clock;
    case ParsedPath::Kind::fixed_cost:
      return p.member == "launch_single" ? fixed_costs.launch_single : fixed_costs.launch_back_to_back;
    case ParsedPath::Kind::level_member: return level_member(memory[p.level], p.member);
    case ParsedPath::Kind::pattern: {
      auto [it, _] = memory[p.level].patterns.try_emplace(p.member, Field{Dimension::bytes_per_second});
      return it->second;
    }
    case ParsedPath::Kind::first_byte: {
      auto [it, _] = memory[p.level].first_byte.try_emplace(p.member, Field{Dimension::seconds});
      return it->second;
    }
    case ParsedPath::Kind::ramp_bandwidth: {
      auto [it, _] = memory[p.level].ramp_bandwidth.try_emplace(p.member, Field{Dimension::bytes_per_second});
      return it->second;
    }
    case ParsedPath::Kind::extra: {
      // Extras are capacity-like knees unless the caller sets another dimension.
      auto [it, _] = memory[p.level].extra.try_emplace(p.member, Field{Dimension::bytes});
      return it->second;
    }
    case ParsedPath::Kind::compute: {
      auto [it, _] = compute[p.unit].try_emplace(p.precision, Field{Dimension::flop_per_second});
      return it->second;
    }
    case ParsedPath::Kind::outer_product: {
      auto [it, _] = outer_product.try_emplace(p.precision, Field{Dimension::flop_per_second});
      return it->second;
    }
    case ParsedPath::Kind::gemm_loop: {
      auto [it, _] = gemm_loop.try_emplace(p.precision, Field{Dimension::flop_per_second});
      return it->second;
    }
    case ParsedPath::Kind::cuda_core_power: {
      auto [it, _] = cuda_core_power.try_emplace(p.precision, Field{Dimension::watts});
      return it->second;
    }
    case ParsedPath::Kind::mma_sync: {
      auto [it, _] = tensor_core_mma_sync.try_emplace(p.precision, Field{Dimension::flop_per_second});
      return it->second;
    }
  }
  bad_path(path, "unreachable");
}

const Field* HardwareDescriptor::find_field(std::string_view path) const {
  const ParsedPath p = parse_path(path);
  switch (p.kind) {
    case ParsedPath::Kind::sm_clock: return &sm_clock;
    case ParsedPath::Kind::memory_clock: return &memory_clock;
    case ParsedPath::Kind::fixed_cost:
      return p.member == "launch_single" ? &fixed_costs.launch_single : &fixed_costs.launch_back_to_back;
    default: break;
  }
  if (p.kind == ParsedPath::Kind::outer_product || p.kind == ParsedPath::Kind::gemm_loop ||
      p.kind == ParsedPath::Kind::cuda_core_power || p.kind == ParsedPath::Kind::mma_sync) {
    const auto& m = p.kind == ParsedPath::Kind::outer_product ? outer_product
                    : p.kind == ParsedPath::Kind::gemm_loop   ? gemm_loop
                    : p.kind == ParsedPath::Kind::mma_sync    ? tensor_core_mma_sync
                                                              : cuda_core_power;
    auto f = m.find(p.precision);
    return f == m.end() ? nullptr : &f->second;
  }
  if (p.kind == ParsedPath::Kind::compute) {
    auto u = compute.find(p.unit);
    if (u == compute.end()) return nullptr;
    auto f = u->second.find(p.precision);
    return f == u->second.end() ? nullptr : &f->second;
  }
  auto l = memory.find(p.level);
  if (l == memory.end()) return nullptr;
  if (p.kind == ParsedPath::Kind::level_member) return &level_member(const_cast<MemoryLevel&>(l->second), p.member);
  const auto& m = p.kind == ParsedPath::Kind::pattern      ? l->second.patterns
                  : p.kind == ParsedPath::Kind::first_byte ? l->second.first_byte
                  : p.kind == ParsedPath::Kind::ramp_bandwidth ? l->second.ramp_bandwidth
                                                           : l->second.extra;
  auto f = m.find(p.member);
  return f == m.end() ? nullptr : &f->second;
}

void HardwareDescriptor::set_measured(std::string_view path, const MeasuredValue& m) {
  field(path).measured = m;
}

void HardwareDescriptor::upsert_instruction(const TensorInstruction& ti) {
  const std::string k = ti.key();
  for (auto& existing : tensor_instructions)
    if (existing.key() == k) {
      auto kept = std::move(existing.numerics);
      auto kept_power = std::move(existing.power);
      auto kept_sustained = std::move(existing.sustained);
      existing = ti;
      if (!existing.numerics) existing.numerics = std::move(kept);
      if (!existing.power.present()) {  // a run without --power keeps the last reading
        existing.power = std::move(kept_power);
        existing.sustained = std::move(kept_sustained);
      }
      return;
    }
  tensor_instructions.push_back(ti);
}

void HardwareDescriptor::upsert_numerics(const TensorInstruction& ti) {
  const std::string k = ti.key();
  for (auto& existing : tensor_instructions)
    if (existing.key() == k) {
      existing.numerics = ti.numerics;
      return;
    }
  tensor_instructions.push_back(ti);
}

void HardwareDescriptor::upsert_dpx(const DpxFunction& f) {
  for (auto& existing : dpx)
    if (existing.function == f.function) {
      if (!f.sass.empty()) existing.sass = f.sass;
      if (f.latency.measured) existing.latency.measured = f.latency.measured;
      if (f.throughput_per_sm.measured) existing.throughput_per_sm.measured = f.throughput_per_sm.measured;
      if (f.latency.spec) existing.latency.spec = f.latency.spec;
      if (f.throughput_per_sm.spec) existing.throughput_per_sm.spec = f.throughput_per_sm.spec;
      if (!f.by_blocks.empty()) existing.by_blocks = f.by_blocks;
      return;
    }
  dpx.push_back(f);
}

const std::vector<std::string> kAsyncCopyMethods{"sync", "cp_async", "bulk", "tensor_2d"};

const AsyncCopyMethod* AsyncCopy::method(const std::string& m) const {
  for (const auto& x : methods)
    if (x.method == m) return &x;
  return nullptr;
}

const AsyncMatmulRow* AsyncCopy::row(const std::string& variant, int block) const {
  for (const auto& r : matmul)
    if (r.variant == variant && r.block == block) return &r;
  return nullptr;
}

std::optional<double> async_pipe_gain_percent(const AsyncCopy& a, int block, bool measured) {
  const AsyncMatmulRow* as = a.row("async_pipe", block);
  const AsyncMatmulRow* sy = a.row("sync_share", block);
  if (!as || !sy) return std::nullopt;
  const auto& ca = measured ? as->measured : as->spec;
  const auto& cs = measured ? sy->measured : sy->spec;
  if (!ca || !cs) return std::nullopt;
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < as->blocks_per_sm.size() && i < ca->values.size(); ++i)
    for (std::size_t j = 0; j < sy->blocks_per_sm.size() && j < cs->values.size(); ++j)
      if (as->blocks_per_sm[i] == sy->blocks_per_sm[j] && cs->values[j] > 0) {
        sum += ca->values[i] / cs->values[j] - 1;
        ++n;
      }
  if (!n) return std::nullopt;
  return 100 * sum / n;
}

void HardwareDescriptor::upsert_async_copy(const AsyncCopy& a) {
  for (const auto& m : a.methods) {
    auto it = std::find_if(async_copy.methods.begin(), async_copy.methods.end(),
                           [&](const AsyncCopyMethod& x) { return x.method == m.method; });
    if (it == async_copy.methods.end()) {
      async_copy.methods.push_back(m);
      continue;
    }
    if (!m.sass.empty()) it->sass = m.sass;
    if (m.bandwidth.measured) it->bandwidth.measured = m.bandwidth.measured;
    if (m.bandwidth.spec) it->bandwidth.spec = m.bandwidth.spec;
    if (!m.config.empty()) it->config = m.config;
    if (!m.sweep.empty()) it->sweep = m.sweep;
  }
  for (const auto& r : a.matmul) {
    auto it = std::find_if(async_copy.matmul.begin(), async_copy.matmul.end(),
                           [&](const AsyncMatmulRow& x) { return x.variant == r.variant && x.block == r.block; });
    if (it == async_copy.matmul.end()) {
      async_copy.matmul.push_back(r);
    } else if (it->blocks_per_sm != r.blocks_per_sm) {
      *it = r;  // other columns: the old spec values would no longer line up
    } else {
      if (r.measured) it->measured = r.measured;
      if (r.spec) it->spec = r.spec;
    }
  }
}

void HardwareDescriptor::upsert_dsm(const DistributedSharedMemory& m) {
  const auto merge = [](Field& old, const Field& f) {
    if (f.measured) old.measured = f.measured;
    if (f.spec) old.spec = f.spec;
  };
  merge(dsm.latency, m.latency);
  merge(dsm.local_latency, m.local_latency);
  merge(dsm.ring_bandwidth, m.ring_bandwidth);
  merge(dsm.ring_bandwidth_per_sm, m.ring_bandwidth_per_sm);
  if (m.ring_bandwidth.measured) {
    dsm.ring_cluster_size = m.ring_cluster_size;
    dsm.ring_block_threads = m.ring_block_threads;
    dsm.ring_ilp = m.ring_ilp;
  }
  for (const auto& e : m.ring_by_cluster_size) {
    auto it = std::find_if(dsm.ring_by_cluster_size.begin(), dsm.ring_by_cluster_size.end(),
                           [&](const DsmRingByClusterSize& x) { return x.cluster_size == e.cluster_size; });
    if (it == dsm.ring_by_cluster_size.end()) {
      dsm.ring_by_cluster_size.push_back(e);
      continue;
    }
    merge(it->bandwidth, e.bandwidth);
    if (e.bandwidth.measured) it->block_threads = e.block_threads, it->ilp = e.ilp;
  }
  std::sort(dsm.ring_by_cluster_size.begin(), dsm.ring_by_cluster_size.end(),
            [](const DsmRingByClusterSize& a, const DsmRingByClusterSize& b) { return a.cluster_size < b.cluster_size; });
  if (m.ring.present()) dsm.ring = m.ring;
  if (m.histogram.present()) dsm.histogram = m.histogram;
}

const std::vector<std::string> kDpxFunctionNames{
    "__vimax3_s32",       "__vimax3_u32",       "__vimin3_s32",        "__vimin3_u32",        "__vimax3_s16x2",
    "__vimax3_u16x2",     "__vimin3_s16x2",     "__vimin3_u16x2",      "__vimax3_s32_relu",   "__vimin3_s32_relu",
    "__vimax3_s16x2_relu", "__vimin3_s16x2_relu", "__vimax_s32_relu",   "__vimin_s32_relu",    "__vimax_s16x2_relu",
    "__vimin_s16x2_relu", "__viaddmax_s32",     "__viaddmax_u32",      "__viaddmin_s32",      "__viaddmin_u32",
    "__viaddmax_s16x2",   "__viaddmax_u16x2",   "__viaddmin_s16x2",    "__viaddmin_u16x2",    "__viaddmax_s32_relu",
    "__viaddmin_s32_relu", "__viaddmax_s16x2_relu", "__viaddmin_s16x2_relu", "__vibmax_s32", "__vibmin_s32",
    "__vibmax_u32",       "__vibmin_u32",       "__vibmax_s16x2",      "__vibmin_s16x2",      "__vibmax_u16x2",
    "__vibmin_u16x2"};

const std::vector<std::string> kNumericVerdictKeys{"products",     "block",        "k_order",     "extra_bits",
                                                   "alignment",    "rounding",     "intermediate", "c_added",
                                                   "subnormal_ab", "subnormal_c",  "subnormal_d", "integer"};

bool operator==(const SpecValue& a, const SpecValue& b) {
  return a.value == b.value && a.reference == b.reference;
}

bool operator==(const MeasuredValue& a, const MeasuredValue& b) {
  return std::tie(a.median, a.min, a.max, a.repeats, a.cv, a.probe, a.date, a.sm_clock_hz, a.flagged, a.note) ==
         std::tie(b.median, b.min, b.max, b.repeats, b.cv, b.probe, b.date, b.sm_clock_hz, b.flagged, b.note);
}

bool operator==(const Field& a, const Field& b) {
  return a.dimension == b.dimension && a.spec == b.spec && a.measured == b.measured;
}

bool operator==(const RampTable& a, const RampTable& b) {
  return std::tie(a.points, a.probe, a.date, a.sm_clock_hz, a.note, a.timing) ==
         std::tie(b.points, b.probe, b.date, b.sm_clock_hz, b.note, b.timing);
}

bool operator==(const MemoryLevel& a, const MemoryLevel& b) {
  return a.capacity == b.capacity && a.bandwidth == b.bandwidth && a.bandwidth_per_sm == b.bandwidth_per_sm &&
         a.latency == b.latency && same_present(a.patterns, b.patterns) && same_present(a.extra, b.extra) &&
         same_present(a.first_byte, b.first_byte) && same_present(a.ramp_bandwidth, b.ramp_bandwidth) &&
         same_present(a.ramp, b.ramp);
}

bool operator==(const TensorInstruction& a, const TensorInstruction& b) {
  return std::tie(a.api, a.shape, a.input, a.input_detail, a.accumulate, a.sparse, a.operand_a, a.sass) ==
             std::tie(b.api, b.shape, b.input, b.input_detail, b.accumulate, b.sparse, b.operand_a, b.sass) &&
         a.latency == b.latency && a.throughput == b.throughput && a.fma_per_clock_per_sm == b.fma_per_clock_per_sm && a.power == b.power &&
         a.sustained == b.sustained &&
         a.best_warps == b.best_warps && a.best_ilp == b.best_ilp && a.numerics == b.numerics;
}

bool operator==(const DpxFunction& a, const DpxFunction& b) {
  return a.function == b.function && a.sass == b.sass && a.latency == b.latency &&
         a.throughput_per_sm == b.throughput_per_sm && a.by_blocks == b.by_blocks;
}

bool operator==(const AsyncCopyMethod& a, const AsyncCopyMethod& b) {
  return a.method == b.method && a.sass == b.sass && a.bandwidth == b.bandwidth && a.config == b.config &&
         a.sweep == b.sweep;
}

bool operator==(const AsyncCopy& a, const AsyncCopy& b) { return a.methods == b.methods && a.matmul == b.matmul; }

bool operator==(const DsmRingByClusterSize& a, const DsmRingByClusterSize& b) {
  return a.cluster_size == b.cluster_size && a.block_threads == b.block_threads && a.ilp == b.ilp &&
         a.bandwidth == b.bandwidth;
}

bool operator==(const DistributedSharedMemory& a, const DistributedSharedMemory& b) {
  return a.latency == b.latency && a.local_latency == b.local_latency && a.ring_bandwidth == b.ring_bandwidth &&
         a.ring_bandwidth_per_sm == b.ring_bandwidth_per_sm && a.ring_cluster_size == b.ring_cluster_size &&
         a.ring_block_threads == b.ring_block_threads && a.ring_ilp == b.ring_ilp &&
         a.ring_by_cluster_size == b.ring_by_cluster_size && a.ring == b.ring && a.histogram == b.histogram;
}

bool operator==(const Identity& a, const Identity& b) {
  return std::tie(a.name, a.uuid, a.sm_count, a.compute_capability, a.driver, a.cuda_version, a.memory_type) ==
         std::tie(b.name, b.uuid, b.sm_count, b.compute_capability, b.driver, b.cuda_version, b.memory_type);
}

bool operator==(const HardwareDescriptor& a, const HardwareDescriptor& b) {
  return a.schema == b.schema && a.tool_version == b.tool_version && a.id == b.id && a.identity == b.identity &&
         a.sm_clock == b.sm_clock && a.memory_clock == b.memory_clock && a.memory == b.memory &&
         a.fixed_costs.launch_single == b.fixed_costs.launch_single &&
         a.fixed_costs.launch_back_to_back == b.fixed_costs.launch_back_to_back &&
         same_compute(a.compute, b.compute) && same_by_precision(a.outer_product, b.outer_product) &&
         same_by_precision(a.gemm_loop, b.gemm_loop) &&
         same_by_precision(a.cuda_core_power, b.cuda_core_power) &&
         same_by_precision(a.tensor_core_mma_sync, b.tensor_core_mma_sync) && a.tensor_instructions == b.tensor_instructions && a.dpx == b.dpx &&
         a.async_copy == b.async_copy && a.dsm == b.dsm &&
         a.references == b.references && a.notes == b.notes;
}

}  // namespace ceiling
