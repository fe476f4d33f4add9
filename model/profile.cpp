// `ceiling profile` analysis (issue 19). See profile.hpp for the equations.
#include "profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "memory_roof.hpp"
#include "roofline.hpp"
#include "units.hpp"

namespace ceiling {
namespace {

constexpr const char* kTime = "gpu__time_duration.sum";
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kL2Read = "lts__t_sectors_srcunit_tex_op_read.sum";
constexpr const char* kL2Write = "lts__t_sectors_srcunit_tex_op_write.sum";
constexpr const char* kL1 = "l1tex__t_bytes.sum";
constexpr const char* kShared = "smsp__sass_data_bytes_mem_shared.sum";
constexpr const char* kClock = "sm__cycles_elapsed.avg.per_second";
constexpr double kSectorBytes = 32;

std::string thread_op(const char* op) { return std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum"; }

// CUDA-core flops per precision: add and mul count 1, FMA 2 (per thread instruction).
struct CudaCoreOps {
  Precision p;
  const char *add, *mul, *fma, *category;
};
constexpr CudaCoreOps kCudaCoreOps[] = {{Precision::fp64, "dadd", "dmul", "dfma", "fp64"},
                                         {Precision::fp32, "fadd", "fmul", "ffma", "fp32"},
                                         {Precision::fp16, "hadd", "hmul", "hfma", "fp16"}};

struct TensorPath {
  Precision p;
  const char* metric;
};
const TensorPath kTensorPaths[] = {{Precision::fp64, "sm__ops_path_tensor_src_fp64.sum"},
                                   {Precision::fp16, "sm__ops_path_tensor_src_fp16.sum"},
                                   {Precision::bf16, "sm__ops_path_tensor_src_bf16_dst_fp32.sum"},
                                   {Precision::tf32, "sm__ops_path_tensor_src_tf32_dst_fp32.sum"},
                                   {Precision::fp8, "sm__ops_path_tensor_src_fp8.sum"},
                                   {Precision::int8, "sm__ops_path_tensor_src_int8.sum"}};
constexpr const char* kTensorInstructionOps[] = {"dmma", "hmma", "imma", "gmma"};
std::string tensor_inst(const char* op) { return std::string("smsp__inst_executed_pipe_tensor_op_") + op + ".sum"; }

std::string num(double v, int digits = 4) {
  std::ostringstream os;
  os.precision(digits);
  os << v;
  return os.str();
}

std::string pct(double f) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << f * 100 << "%";
  return os.str();
}

// A measured minimum where there is one (a bound needs the least seen), else the spec value.
std::optional<double> least(const Field& f) {
  if (f.measured) return f.measured->min > 0 ? f.measured->min : f.measured->median;
  if (f.spec) return f.spec->value;
  return std::nullopt;
}
// The largest rate measured (a roof must not lie below any run), else the spec value.
std::optional<double> most(const Field& f) {
  if (f.measured) return std::max(f.measured->median, f.measured->max);
  if (f.spec) return f.spec->value;
  return std::nullopt;
}

// The CUDA-core precision that stands in for a tensor-core type (and back), with a note.
std::optional<std::pair<Precision, std::string>> cuda_core_counterpart(const HardwareDescriptor& hw, Precision tc,
                                                                       SourcePreference pref) {
  std::vector<Precision> order{tc};
  if (tc == Precision::bf16 || tc == Precision::tf32 || tc == Precision::fp16) order.push_back(Precision::fp32);
  if (tc == Precision::fp8) order = {Precision::fp16, Precision::fp32};
  if (tc == Precision::int8) order = {Precision::int32};
  for (const Precision p : order)
    if (hw.peak(ComputeUnit::cuda_core, p, pref))
      return std::pair{p, p == tc ? std::string{}
                                  : "CUDA cores at " + std::string(to_string(p)) + " for " + std::string(to_string(tc))};
  return std::nullopt;
}
std::optional<std::pair<Precision, std::string>> tensor_core_counterpart(const HardwareDescriptor& hw, Precision cc,
                                                                         SourcePreference pref) {
  std::vector<Precision> order{cc};
  if (cc == Precision::fp32) order = {Precision::tf32};
  if (cc == Precision::int32) order = {Precision::int8};
  for (const Precision p : order)
    if (hw.peak(ComputeUnit::tensor_core, p, pref))
      return std::pair{p, p == cc ? std::string{}
                                  : "tensor cores at " + std::string(to_string(p)) + " for " + std::string(to_string(cc)) +
                                        " (fewer mantissa bits)"};
  return std::nullopt;
}

struct Context {
  const HardwareDescriptor& hw;
  SourcePreference pref;
  double desc_clock = 0;
  int sms = 0;
  std::set<std::string> missing;  // descriptor fields a term needed (the term is left out)
};

// The bound of one launch.
void bound_launch(Context& cx, ProfileLaunch& pl) {
  const ProfileCounts& c = pl.counts;
  const double clock = pl.clock_hz > 0 ? pl.clock_hz : cx.desc_clock;
  const double latency_clock = std::max(clock, cx.desc_clock);
  for (const auto& [level, t] : c.traffic) {
    if (!(t.bytes() > 0)) continue;
    const std::string name(to_string(level));
    BoundTerm term;
    term.name = name;
    double bw = 0;
    if (level == MemoryLevelKind::dram || level == MemoryLevelKind::l2) {
      try {
        const MemoryRoof roof = memory_roof(cx.hw, level, t.read_bytes, t.write_bytes, cx.pref);
        bw = roof.bandwidth_max;
        term.how = roof.how + ", measured maximum";
      } catch (const std::exception&) {
        cx.missing.insert("memory." + name + " patterns or bandwidth");
        continue;
      }
    } else {
      const auto lvl = cx.hw.memory.find(level);
      const std::optional<double> per_sm = lvl == cx.hw.memory.end() ? std::nullopt : most(lvl->second.bandwidth_per_sm);
      if (!per_sm || cx.sms <= 0 || !(clock > 0)) {
        cx.missing.insert("memory." + name + ".bandwidth_per_sm");
        continue;
      }
      bw = *per_sm * cx.sms * clock;
      term.how = num(*per_sm) + " B/clk/SM x " + std::to_string(cx.sms) + " SMs x " +
                 format_quantity(clock, Dimension::hertz);
    }
    if (!(bw > 0)) continue;
    term.bandwidth_or_peak = bw;
    term.time_s = t.bytes() / bw;
    const auto lvl = cx.hw.memory.find(level);
    if (t.split_known && t.read_bytes > 0 && lvl != cx.hw.memory.end() && latency_clock > 0) {
      if (const auto cyc = least(lvl->second.latency)) {
        term.latency_s = *cyc / latency_clock;
        term.time_s = std::max(term.time_s, term.latency_s + t.read_bytes / bw);
      }
    }
    pl.terms.push_back(term);
  }
  const auto compute_term = [&](ComputeUnit unit, Precision p, double flop) {
    if (!(flop > 0)) return;
    const auto peak = cx.hw.peak(unit, p, cx.pref);
    const std::string name = std::string(to_string(unit)) + "." + std::string(to_string(p));
    if (!peak || !(*peak > 0)) {
      cx.missing.insert("compute." + name);
      return;
    }
    BoundTerm term;
    term.name = name;
    term.bandwidth_or_peak = *peak;
    term.time_s = flop / *peak;
    term.how = "compute." + name + " = " + format_quantity(*peak, Dimension::flop_per_second);
    pl.terms.push_back(term);
  };
  for (const auto& [p, f] : c.cuda_core_flop) compute_term(ComputeUnit::cuda_core, p, f);
  for (const auto& [p, f] : c.tensor_core_flop) compute_term(ComputeUnit::tensor_core, p, f);
  pl.bound_s = 0;
  pl.bounded_by = "none";
  for (const auto& t : pl.terms)
    if (t.time_s > pl.bound_s) {
      pl.bound_s = t.time_s;
      pl.bounded_by = t.name;
    }
  pl.efficiency = c.time_s > 0 ? pl.bound_s / c.time_s : 0;
  pl.verdict = c.time_s < pl.bound_s ? "beats-bound" : "within-bound";
}

void add_counts(ProfileCounts& into, const ProfileCounts& c) {
  into.time_s += c.time_s;
  for (const auto& [p, f] : c.cuda_core_flop) into.cuda_core_flop[p] += f;
  for (const auto& [p, f] : c.tensor_core_flop) into.tensor_core_flop[p] += f;
  for (const auto& [k, v] : c.tensor_instructions) into.tensor_instructions[k] += v;
  for (const auto& [p, v] : c.other_fp_instructions) into.other_fp_instructions[p] += v;
  for (const auto& [l, t] : c.traffic) {
    auto& d = into.traffic[l];
    d.read_bytes += t.read_bytes;
    d.write_bytes += t.write_bytes;
    d.split_known = t.split_known;
  }
}

template <class M>
std::optional<typename M::key_type> largest_key(const M& m) {
  std::optional<typename M::key_type> k;
  double best = 0;
  for (const auto& [key, v] : m)
    if (v > best) {
      best = v;
      k = key;
    }
  return k;
}

void speedup_of(Context& cx, ProfileKernel& k) {
  const bool tensor = k.unit == "tensor_core";
  if (k.unit == "none" || !k.precision) {
    k.speedup_missing = "no floating-point work counted";
    return;
  }
  ProfileSpeedup s;
  Precision cc_p, tc_p;
  if (tensor) {
    tc_p = *k.precision;
    const auto cc = cuda_core_counterpart(cx.hw, tc_p, cx.pref);
    if (!cc) {
      k.speedup_missing = "descriptor has no CUDA-core peak for " + std::string(to_string(tc_p));
      return;
    }
    cc_p = cc->first;
    s.note = cc->second;
    s.direction = "CUDA cores would lose";
  } else {
    cc_p = *k.precision;
    const auto tc = tensor_core_counterpart(cx.hw, cc_p, cx.pref);
    if (!tc) {
      k.speedup_missing = "descriptor has no tensor-core peak for " + std::string(to_string(cc_p));
      return;
    }
    tc_p = tc->first;
    s.note = tc->second;
    s.direction = "tensor cores could give";
  }
  const double p_cc = *cx.hw.peak(ComputeUnit::cuda_core, cc_p, cx.pref);
  const double p_tc = *cx.hw.peak(ComputeUnit::tensor_core, tc_p, cx.pref);
  // B from the memory level whose term bounds the kernel most (DRAM when no memory term).
  std::string level = "dram";
  double worst = -1;
  for (const auto& [name, t] : k.term_s)
    if (name.find('.') == std::string::npos && t > worst) {
      worst = t;
      level = name;
    }
  const MemoryLevelKind lvl = parse_memory_level(level);
  const auto tr = k.counts.traffic.find(lvl);
  if (tr == k.counts.traffic.end() || !(tr->second.bytes() > 0)) {
    k.speedup_missing = "no memory traffic counted";
    return;
  }
  // The kernel's summed Q over its summed memory time at that level: the roof its launches met.
  double q = tr->second.bytes(), t_mem = 0;
  for (const auto& l : k.per_launch)
    for (const auto& term : l.terms)
      if (term.name == level) t_mem += term.bandwidth_or_peak > 0 ? l.counts.traffic.at(lvl).bytes() / term.bandwidth_or_peak : 0;
  if (!(t_mem > 0)) {
    k.speedup_missing = "no roof for memory level " + level;
    return;
  }
  const double roof = q / t_mem;
  s.precision = cc_p;
  s.level = level;
  s.alpha = p_tc / p_cc;
  s.balance = machine_balance(p_cc, roof);
  s.intensity = k.counts.work_flop() / q;
  s.upper = speedup_upper_bound(s.alpha, s.balance, s.intensity);
  s.lower = speedup_lower_bound(s.alpha, s.balance, s.intensity);
  s.regime = s.alpha <= 1 ? "alpha<=1" : (is_memory_bound(s.intensity, s.balance) ? "memory-bound" : "compute-bound");
  k.speedup = s;
}

}  // namespace

const std::vector<ProfileMetric>& profile_metrics() {
  static const std::vector<ProfileMetric> m = [] {
    std::vector<ProfileMetric> v;
    v.push_back({kTime, true, "time per launch (GPU start to end; no launch overhead)"});
    v.push_back({kDramRead, true, "Q at DRAM, read"});
    v.push_back({kDramWrite, true, "Q at DRAM, written (lines still dirty in the L2 at the end are not counted)"});
    for (const auto& o : kCudaCoreOps)
      for (const char* op : {o.add, o.mul, o.fma})
        v.push_back({thread_op(op), true,
                     std::string("W on CUDA cores, ") + std::string(to_string(o.p)) + " " + op +
                         (std::string(op).find("fma") != std::string::npos ? " (2 flop each)" : " (1 flop each)")});
    for (const auto& o : kCudaCoreOps)
      v.push_back({thread_op(o.category), false,
                   "all " + std::string(to_string(o.p)) +
                       " thread instructions: those that are not add/mul/fma (BF16 math, conversions, compares) are "
                       "reported as not counted in W"});
    v.push_back({kL2Read, false, "Q at L2, read by L1 (sectors x 32 B)"});
    v.push_back({kL2Write, false, "Q at L2, written by L1 (sectors x 32 B)"});
    v.push_back({kL1, false, "Q at L1 (global and local bytes requested)"});
    v.push_back({kShared, false, "Q at shared memory (LDS/STS/atomics bytes)"});
    for (const auto& t : kTensorPaths)
      v.push_back({t.metric, false, "W on tensor cores, source " + std::string(to_string(t.p)) + " (ops as executed)"});
    for (const char* op : kTensorInstructionOps)
      v.push_back({tensor_inst(op), false, std::string("tensor-pipe ") + op + " instructions (flops per instruction: the shape)"});
    v.push_back({kClock, false, "SM clock during the launch (L1/shared roofs, latency)"});
    return v;
  }();
  return m;
}

std::string profile_metric_list() {
  std::string s;
  for (const auto& m : profile_metrics()) {
    if (!s.empty()) s += ',';
    s += m.name;
  }
  return s;
}

double ProfileCounts::tensor_flop() const {
  return std::accumulate(tensor_core_flop.begin(), tensor_core_flop.end(), 0.0,
                         [](double a, const auto& kv) { return a + kv.second; });
}
double ProfileCounts::cuda_core_flop_total() const {
  return std::accumulate(cuda_core_flop.begin(), cuda_core_flop.end(), 0.0,
                         [](double a, const auto& kv) { return a + kv.second; });
}
double ProfileCounts::work_flop() const { return tensor_flop() + cuda_core_flop_total(); }

ProfileCounts launch_counts(const NcuLaunch& l) {
  ProfileCounts c;
  c.time_s = l.get_or(kTime, 0);
  for (const auto& o : kCudaCoreOps) {
    const double add = l.get_or(thread_op(o.add), 0), mul = l.get_or(thread_op(o.mul), 0), fma = l.get_or(thread_op(o.fma), 0);
    if (const double f = add + mul + 2 * fma; f > 0) c.cuda_core_flop[o.p] = f;
    // ncu counts a warp's tensor instruction as 32 thread instructions of its category (DMMA in
    // fp64, HMMA/HGMMA in fp16): those are W already, through the tensor path.
    const double tensor_threads =
        32 * (o.p == Precision::fp64   ? l.get_or(tensor_inst("dmma"), 0)
              : o.p == Precision::fp16 ? l.get_or(tensor_inst("hmma"), 0)
                                       : 0.0);
    if (const auto all = l.get(thread_op(o.category)); all && *all > add + mul + fma + tensor_threads)
      c.other_fp_instructions[o.p] = *all - (add + mul + fma + tensor_threads);
  }
  for (const auto& t : kTensorPaths)
    if (const double f = l.get_or(t.metric, 0); f > 0) c.tensor_core_flop[t.p] = f;
  for (const char* op : kTensorInstructionOps)
    if (const double n = l.get_or(tensor_inst(op), 0); n > 0) c.tensor_instructions[op] = n;
  if (l.get(kDramRead) || l.get(kDramWrite))
    c.traffic[MemoryLevelKind::dram] = {l.get_or(kDramRead, 0), l.get_or(kDramWrite, 0), true};
  if (l.get(kL2Read) || l.get(kL2Write))
    c.traffic[MemoryLevelKind::l2] = {l.get_or(kL2Read, 0) * kSectorBytes, l.get_or(kL2Write, 0) * kSectorBytes, true};
  if (const auto v = l.get(kL1)) c.traffic[MemoryLevelKind::l1] = {*v, 0, false};
  if (const auto v = l.get(kShared)) c.traffic[MemoryLevelKind::shared] = {*v, 0, false};
  return c;
}

std::string kernel_short_name(const std::string& demangled) {
  std::string s = demangled;
  for (const char* junk : {"(anonymous namespace)::", "<unnamed>::", "unnamed>::"})
    for (std::size_t p; (p = s.find(junk)) != std::string::npos;) s.erase(p, std::char_traits<char>::length(junk));
  // Cut the parameter list: the first '(' outside template arguments.
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && depth > 0) --depth;
    if (s[i] == '(' && depth == 0 && i > 0) {
      s.resize(i);
      break;
    }
  }
  // Drop trailing template arguments.
  while (!s.empty() && s.back() == '>') {
    int d = 0;
    std::size_t i = s.size();
    while (i-- > 0) {
      if (s[i] == '>') ++d;
      if (s[i] == '<' && --d == 0) break;
    }
    if (i == std::string::npos || i == 0) break;
    s.resize(i);
  }
  // The last word (return type before it), then the last scope.
  if (const auto sp = s.rfind(' '); sp != std::string::npos) s = s.substr(sp + 1);
  if (const auto sc = s.rfind("::"); sc != std::string::npos) s = s.substr(sc + 2);
  return s.empty() ? demangled : s;
}

std::string kernel_template_arguments(const std::string& demangled, const std::string& short_name, bool drop_namespaces) {
  const auto p = demangled.find(short_name);
  std::string rest = p == std::string::npos ? std::string{} : demangled.substr(p + short_name.size());
  int depth = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '<') ++depth;
    if (rest[i] == '>' && depth > 0) --depth;
    if (rest[i] == '(' && depth == 0) {
      rest.resize(i);
      break;
    }
  }
  if (!drop_namespaces) return rest;
  std::string shown;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (std::isalnum(static_cast<unsigned char>(rest[i])) || rest[i] == '_') {
      std::size_t j = i;
      while (j < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[j])) || rest[j] == '_')) ++j;
      if (rest.compare(j, 2, "::") != 0) shown += rest.substr(i, j - i);
      i = j - 1 + (rest.compare(j, 2, "::") == 0 ? 2 : 0);
      continue;
    }
    shown += rest[i];
  }
  return shown;
}

ProfileResult analyse_profile(const NcuExport& ex, const HardwareDescriptor& hw, const ProfileOptions& opt) {
  std::vector<std::string> missing_required, missing_optional;
  for (const auto& m : profile_metrics())
    if (!ex.has_column(m.name)) (m.required ? missing_required : missing_optional).push_back(m.name);
  if (!missing_required.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing_required.size(); ++i) list += (i ? ", " : "") + missing_required[i];
    throw std::runtime_error(ex.file + ": the export lacks " + std::to_string(missing_required.size()) +
                             " metric(s) ceiling needs (" + list +
                             "): export with `ncu --csv --page raw --metrics $(ceiling profile --print-metrics)` "
                             "(Nsight Compute 2025.3 names; another version may name them differently), or run "
                             "`ceiling profile -- APP`");
  }
  if (ex.launches.empty())
    throw std::runtime_error(ex.file + ": no profiled launch in the export" +
                             (ex.ncu_messages.empty() ? std::string{} : " (ncu said: " + ex.ncu_messages.front() + ")"));

  ProfileResult r;
  r.hardware_id = hw.id;
  r.hardware_name = hw.identity.name;
  r.export_file = ex.file;
  r.devices = ex.device_names;
  Context cx{hw, opt.source, 0, 0, {}};
  cx.desc_clock = hw.sm_clock.value(opt.source).value_or(0);
  cx.sms = hw.identity.sm_count;
  if (!missing_optional.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing_optional.size(); ++i) list += (i ? ", " : "") + missing_optional[i];
    r.notes.push_back("the export lacks " + list + ": those counts are taken as 0 (their terms left out)");
  }
  if (!ex.device_names.empty() &&
      std::find(ex.device_names.begin(), ex.device_names.end(), hw.identity.name) == ex.device_names.end())
    r.notes.push_back("the export is from '" + ex.device_names.front() + "', the descriptor '" + hw.id + "' describes '" +
                      hw.identity.name + "': bounds come from the descriptor");
  if (ex.device_names.size() > 1) r.notes.push_back("the export holds launches on several GPU models; one descriptor bounds them all");
  if (ex.sm_count && *ex.sm_count != hw.identity.sm_count)
    r.notes.push_back("the export's GPU has " + std::to_string(*ex.sm_count) + " SMs, the descriptor " +
                      std::to_string(hw.identity.sm_count));
  if (ex.skipped_lines > 0)
    r.notes.push_back(std::to_string(ex.skipped_lines) + " line(s) that are not CSV records (ncu or application output) were skipped");

  std::map<std::string, std::size_t> index;
  for (const auto& l : ex.launches) {
    ProfileLaunch pl;
    pl.id = l.id;
    pl.line = l.line;
    pl.grid = l.grid;
    pl.block = l.block;
    pl.clock_hz = l.get_or(kClock, 0);
    pl.counts = launch_counts(l);
    if (!(pl.counts.time_s > 0))
      throw std::runtime_error(ex.file + ":" + std::to_string(l.line) + ": launch " + l.id + " of '" +
                               kernel_short_name(l.kernel) + "' has no positive gpu__time_duration");
    bound_launch(cx, pl);
    auto [it, fresh] = index.emplace(l.kernel, r.kernels.size());
    if (fresh) {
      ProfileKernel k;
      k.name = l.kernel;
      k.short_name = kernel_short_name(l.kernel);
      r.kernels.push_back(std::move(k));
    }
    ProfileKernel& k = r.kernels[it->second];
    ++k.launches;
    if (pl.verdict == "beats-bound") ++k.launches_beating;
    add_counts(k.counts, pl.counts);
    k.bound_s += pl.bound_s;
    for (const auto& t : pl.terms) k.term_s[t.name] += t.time_s;
    k.clock_hz += pl.clock_hz * pl.counts.time_s;
    r.time_s += pl.counts.time_s;
    ++r.launches;
    k.per_launch.push_back(std::move(pl));
  }
  for (auto& k : r.kernels) {
    k.time_share = r.time_s > 0 ? k.counts.time_s / r.time_s : 0;
    k.clock_hz = k.counts.time_s > 0 ? k.clock_hz / k.counts.time_s : 0;
    const double tc = k.counts.tensor_flop(), cc = k.counts.cuda_core_flop_total();
    k.unit = tc > 0 && tc >= cc ? "tensor_core" : (cc > 0 ? "cuda_core" : "none");
    k.precision = k.unit == "tensor_core" ? largest_key(k.counts.tensor_core_flop)
                                          : (k.unit == "cuda_core" ? largest_key(k.counts.cuda_core_flop) : std::nullopt);
    double inst = 0;
    for (const auto& [op, n] : k.counts.tensor_instructions) inst += n;
    k.flop_per_tensor_instruction = inst > 0 && tc > 0 ? tc / inst : 0;
    for (const auto& [lvl, t] : k.counts.traffic)
      if (t.bytes() > 0) k.intensity[lvl] = k.counts.work_flop() / t.bytes();
    double worst = -1;
    for (const auto& [name, t] : k.term_s)
      if (t > worst) {
        worst = t;
        k.bounded_by = name;
      }
    if (k.bounded_by.empty()) k.bounded_by = "none";
    k.efficiency = k.counts.time_s > 0 ? k.bound_s / k.counts.time_s : 0;
    k.verdict = k.counts.time_s < k.bound_s ? "beats-bound" : "within-bound";
    for (const auto& [p, n] : k.counts.other_fp_instructions) {
      // Worth a line where they are more than 1% of W in a kernel of at least 1% of the time.
      const double counted = k.counts.work_flop();
      if (n > 0.01 * counted && k.time_share >= 0.01)
        r.notes.push_back("'" + k.short_name + "': " + num(n, 3) + " " + std::string(to_string(p)) +
                          " thread instructions that are not add/mul/fma (conversions, compares, min/max, special "
                          "functions) are not counted in W (W: " + num(counted, 3) + " flop)");
    }
    if (k.counts.cuda_core_flop.count(Precision::fp16) && k.time_share >= 0.01)
      r.notes.push_back("'" + k.short_name + "': FP16 CUDA-core W counts each HFMA2/HADD2/HMUL2 thread instruction as "
                        "one FMA/add/mul (ncu counts instructions, not the two halves): packed half2 math is counted "
                        "at half its flops, so its compute term is low (the bound stays a bound)");
    speedup_of(cx, k);
    if (!opt.per_launch) k.per_launch.clear();
  }
  std::stable_sort(r.kernels.begin(), r.kernels.end(),
                   [](const ProfileKernel& a, const ProfileKernel& b) { return a.counts.time_s > b.counts.time_s; });
  for (const auto& m : cx.missing) r.notes.push_back("descriptor '" + hw.id + "' lacks " + m + ": that term is left out");
  r.provenance.push_back("roofs: memory.<level> patterns by read share, the largest measured (memory_roof bandwidth_max); "
                         "L1/shared: bandwidth_per_sm x " + std::to_string(cx.sms) + " SMs x the launch's clock");
  r.provenance.push_back("latency: memory.<level>.latency (least measured) at the higher of the launch's clock and sm_clock " +
                         format_quantity(cx.desc_clock, Dimension::hertz));
  r.provenance.push_back("peaks: compute.<unit>.<precision> of the descriptor (measured median, else spec)");
  return r;
}

nlohmann::json profile_to_json(const ProfileResult& r) {
  using nlohmann::json;
  const auto counts_json = [](const ProfileCounts& c) {
    json j;
    j["time_s"] = c.time_s;
    j["work_flop"] = c.work_flop();
    json cc = json::object(), tc = json::object(), ti = json::object(), tr = json::object();
    for (const auto& [p, f] : c.cuda_core_flop) cc[std::string(to_string(p))] = f;
    for (const auto& [p, f] : c.tensor_core_flop) tc[std::string(to_string(p))] = f;
    for (const auto& [k, n] : c.tensor_instructions) ti[k] = n;
    for (const auto& [l, t] : c.traffic) {
      json x;
      x["bytes"] = t.bytes();
      if (t.split_known) {
        x["read_bytes"] = t.read_bytes;
        x["write_bytes"] = t.write_bytes;
      }
      tr[std::string(to_string(l))] = x;
    }
    j["work"] = {{"cuda_core", cc}, {"tensor_core", tc}};
    j["tensor_instructions"] = ti;
    json of = json::object();
    for (const auto& [p, n] : c.other_fp_instructions) of[std::string(to_string(p))] = n;
    j["other_fp_thread_instructions"] = of;
    j["traffic"] = tr;
    return j;
  };
  const auto terms_json = [](const std::vector<BoundTerm>& terms) {
    json a = json::array();
    for (const auto& t : terms) {
      json x{{"name", t.name}, {"time_s", t.time_s}, {"rate", t.bandwidth_or_peak}, {"how", t.how}};
      if (t.latency_s > 0) x["latency_s"] = t.latency_s;
      a.push_back(x);
    }
    return a;
  };
  json j;
  j["schema"] = kProfileSchema;
  j["tool_version"] = CEILING_VERSION;
  j["hardware"] = {{"id", r.hardware_id}, {"name", r.hardware_name}};
  j["source"] = {{"export", r.export_file}, {"devices", r.devices}, {"launches", r.launches}};
  if (!r.ncu_command.empty()) j["source"]["ncu_command"] = r.ncu_command;
  j["time_s"] = r.time_s;
  j["bound"] = "max over memory levels of max(Q/BW, latency + Q_read/BW) and over units of W/P; BW the measured "
               "maximum for the launch's read:write mix; launch overhead not included (ncu's gpu__time_duration "
               "excludes it)";
  j["kernels"] = json::array();
  for (const auto& k : r.kernels) {
    json x;
    x["name"] = k.name;
    x["short_name"] = k.short_name;
    x["launches"] = k.launches;
    x["launches_beating"] = k.launches_beating;
    x["time_s"] = k.counts.time_s;
    x["time_share"] = k.time_share;
    x["unit"] = k.unit;
    x["precision"] = k.precision ? json(std::string(to_string(*k.precision))) : json(nullptr);
    x["clock_hz"] = k.clock_hz;
    x["counts"] = counts_json(k.counts);
    if (k.flop_per_tensor_instruction > 0) x["flop_per_tensor_instruction"] = k.flop_per_tensor_instruction;
    json in = json::object();
    for (const auto& [l, v] : k.intensity) in[std::string(to_string(l))] = v;
    x["intensity"] = in;
    x["achieved_flop_per_s"] = k.counts.work_flop() / k.counts.time_s;
    x["bound_s"] = k.bound_s;
    json ts = json::object();
    for (const auto& [n, t] : k.term_s) ts[n] = t;
    x["terms_s"] = ts;
    x["bounded_by"] = k.bounded_by;
    x["efficiency"] = k.efficiency;
    x["verdict"] = k.verdict;
    if (k.speedup) {
      const auto& s = *k.speedup;
      x["speedup"] = {{"direction", s.direction}, {"cuda_core_precision", std::string(to_string(s.precision))},
                      {"level", s.level},         {"alpha", s.alpha},
                      {"balance", s.balance},     {"intensity", s.intensity},
                      {"i_over_b", s.intensity / s.balance},
                      {"lower", s.lower},         {"upper", s.upper},
                      {"regime", s.regime},       {"note", s.note}};
    } else {
      x["speedup"] = nullptr;
      x["speedup_missing"] = k.speedup_missing;
    }
    if (!k.per_launch.empty()) {
      json a = json::array();
      for (const auto& l : k.per_launch) {
        json y{{"id", l.id}, {"line", l.line}, {"grid", l.grid}, {"block", l.block}, {"clock_hz", l.clock_hz}};
        y["counts"] = counts_json(l.counts);
        y["terms"] = terms_json(l.terms);
        y["bound_s"] = l.bound_s;
        y["bounded_by"] = l.bounded_by;
        y["efficiency"] = l.efficiency;
        y["verdict"] = l.verdict;
        a.push_back(y);
      }
      x["per_launch"] = a;
    }
    j["kernels"].push_back(x);
  }
  j["notes"] = r.notes;
  j["provenance"] = r.provenance;
  return j;
}

namespace {
std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() > w) {
    s.resize(w > 1 ? w - 1 : w);
    s += "~";
  }
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}
std::string short_quantity(double v, Dimension d) { return format_quantity(v, d, 3); }
std::string flop_text(double f) {
  if (!(f > 0)) return "0";
  const char* prefix[] = {"", "K", "M", "G", "T", "P", "E"};
  int e = 0;
  while (f >= 1000 && e < 6) {
    f /= 1000;
    ++e;
  }
  return num(f, 3) + " " + prefix[e] + "F";
}
}  // namespace

std::string profile_table(const ProfileResult& r, std::size_t max_rows) {
  std::ostringstream os;
  os << "ceiling profile: " << r.launches << " launch" << (r.launches == 1 ? "" : "es") << " of " << r.kernels.size()
     << " kernel" << (r.kernels.size() == 1 ? "" : "s") << ", " << format_quantity(r.time_s, Dimension::seconds, 4)
     << " of GPU time" << (r.devices.empty() ? std::string{} : " on " + r.devices.front()) << "; bounds from '"
     << r.hardware_id << "' (" << r.hardware_name << ")\n";
  // Kernels sharing a short name get their first template arguments to tell them apart.
  std::map<std::string, int> uses;
  for (const auto& k : r.kernels) ++uses[k.short_name];
  const auto label = [&](const ProfileKernel& k) {
    if (uses[k.short_name] < 2) return k.short_name;
    return kernel_template_arguments(k.name, k.short_name);
  };
  os << pad("share", 6, true) << " " << pad("time", 10, true) << " " << pad("n", 4, true) << "  " << pad("kernel", 34)
     << " " << pad("unit", 9) << " " << pad("W", 9, true) << " " << pad("Q dram", 9, true) << " " << pad("I dram", 7, true)
     << "  " << pad("bound by", 16) << " " << pad("bound", 10, true) << " " << pad("eff", 6, true) << "  "
     << "tensor cores (Eq. 22)\n";
  std::size_t shown = 0;
  for (const auto& k : r.kernels) {
    if (shown++ == max_rows) {
      os << "... " << (r.kernels.size() - max_rows) << " more kernel(s), " << pct(std::accumulate(
                                                                                   r.kernels.begin() + static_cast<long>(max_rows), r.kernels.end(), 0.0,
                                                                                   [](double a, const ProfileKernel& x) { return a + x.time_share; }))
         << " of the time (--json lists all)\n";
      break;
    }
    const std::string unit = k.unit == "none" ? "-"
                                              : std::string(k.unit == "tensor_core" ? "TC " : "CC ") +
                                                    (k.precision ? std::string(to_string(*k.precision)) : "");
    const auto dram = k.counts.traffic.find(MemoryLevelKind::dram);
    const double qd = dram == k.counts.traffic.end() ? 0 : dram->second.bytes();
    const auto idram = k.intensity.find(MemoryLevelKind::dram);
    std::string sp = "-";
    if (k.speedup) {
      const auto& s = *k.speedup;
      if (s.direction == "tensor cores could give")
        sp = "TC could give <= " + num(s.upper, 3) + "x (" + s.regime + ")";
      else
        sp = "CC would lose " + num(s.lower, 3) + "-" + num(s.upper, 3) + "x";
    } else if (!k.speedup_missing.empty()) {
      sp = "- (" + k.speedup_missing + ")";
    }
    os << pad(pct(k.time_share), 6, true) << " " << pad(short_quantity(k.counts.time_s, Dimension::seconds), 10, true)
       << " " << pad(std::to_string(k.launches), 4, true) << "  " << pad(k.short_name, 34) << " " << pad(unit, 9) << " "
       << pad(flop_text(k.counts.work_flop()), 9, true) << " " << pad(short_quantity(qd, Dimension::bytes), 9, true) << " "
       << pad(idram == k.intensity.end() ? "-" : num(idram->second, 3), 7, true) << "  " << pad(k.bounded_by, 16) << " "
       << pad(short_quantity(k.bound_s, Dimension::seconds), 10, true) << " " << pad(pct(k.efficiency), 6, true)
       << (k.verdict == "beats-bound" ? "! " : "  ") << sp << "\n";
    // Kernels that share a name: their template arguments on a line of their own.
    if (uses[k.short_name] > 1) {
      std::string args = label(k);
      if (args.size() > 150) args = args.substr(0, 149) + "~";
      os << pad("", 25) << "`- " << (args.empty() ? "(no template arguments)" : args) << "\n";
    }
    // --per-launch: each launch under its kernel (grid, clock, what bounds it).
    for (const auto& l : k.per_launch) {
      const auto ld = l.counts.traffic.find(MemoryLevelKind::dram);
      const double lq = ld == l.counts.traffic.end() ? 0 : ld->second.bytes();
      os << pad("", 6) << " " << pad(short_quantity(l.counts.time_s, Dimension::seconds), 10, true) << " " << pad("", 4)
         << "    launch " << pad(l.id + " grid " + l.grid, 28) << " " << pad(l.clock_hz > 0 ? short_quantity(l.clock_hz, Dimension::hertz) : "", 9)
         << " " << pad(flop_text(l.counts.work_flop()), 9, true) << " " << pad(short_quantity(lq, Dimension::bytes), 9, true)
         << " " << pad("", 7) << "  " << pad(l.bounded_by, 16) << " " << pad(short_quantity(l.bound_s, Dimension::seconds), 10, true)
         << " " << pad(pct(l.efficiency), 6, true) << (l.verdict == "beats-bound" ? "!" : "") << "\n";
    }
  }
  std::size_t beats = 0;
  for (const auto& k : r.kernels) beats += k.verdict == "beats-bound";
  if (beats)
    os << "! " << beats << " kernel(s) ran faster than the bound: a defect in a counter, a probe or the model (--json "
       << "--per-launch shows each launch's terms)\n";
  for (const auto& n : r.notes) os << "note: " << n << "\n";
  return os.str();
}

}  // namespace ceiling
