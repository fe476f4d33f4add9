#include "sweep.hpp"

#include <map>
#include <stdexcept>
#include <tuple>

#include "model/roofline.hpp"
#include "model/units.hpp"

namespace ceiling::kernels {

SizeRequest parse_size_request(const std::string& text) {
  SizeRequest s;
  s.text = text;
  try {
    s.value = parse_as(text, Dimension::bytes, "--sizes");
    return s;
  } catch (const std::exception&) {
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 1))
    throw std::invalid_argument("--sizes: '" + text + "' is neither a working-set size (\"64MiB\") nor a count (\"1048576\")");
  s.is_bytes = false;
  s.value = v;
  return s;
}

double sweep_l2_bytes(const HardwareDescriptor& hw) {
  const auto l2 = l2_capacity_bytes(hw);
  if (!l2 || !(*l2 > 0))
    throw std::runtime_error("descriptor '" + hw.id + "' has no memory.l2.capacity: validate splits its sizes at half "
                             "the L2 (calibrate the GPU, or add a spec value)");
  return *l2;
}

namespace {

// The sizes of one (kind, precision): the kind's parameters for each request (or, when the user
// named no sizes and the kind has its own sweep, the kind's sweep points), rounded by every variant
// of the group (tile shapes), de-duplicated.
std::vector<KernelParams> group_sizes(const KernelKind& kind, Precision p, const std::vector<const KernelVariant*>& group,
                                      const std::vector<SizeRequest>& sizes, const Sweep& sweep) {
  std::vector<KernelParams> points;
  // Kinds sized by their inputs (SpMV: the registered matrices) take their own points always.
  const bool own_points = kind.sweep_points && !kind.params_for_bytes && !kind.params_for_count;
  if ((sweep.sizes.empty() || own_points) && kind.sweep_points) {
    points = kind.sweep_points(sweep.l2_bytes, p, sweep.quick);
  } else {
    for (const auto& s : sizes) {
      const auto& pick = s.is_bytes ? static_cast<bool>(kind.params_for_bytes) : static_cast<bool>(kind.params_for_count);
      if (!pick)
        throw std::invalid_argument("kind " + kind.name + " cannot be sized by " +
                                    (s.is_bytes ? "a working set" : "a count") + " ('" + s.text + "')");
      points.push_back(s.is_bytes ? kind.params_for_bytes(s.value, p) : kind.params_for_count(s.value));
    }
  }
  std::vector<KernelParams> out;
  for (KernelParams params : points) {
    for (const auto* v : group)
      if (v->round) params = v->round(params);
    bool seen = false;
    for (const auto& q : out) seen |= q == params;
    if (!seen) out.push_back(std::move(params));
  }
  return out;
}

}  // namespace

validation::ValidationReport run_validation(const HardwareDescriptor& hw,
                                           const std::vector<const KernelVariant*>& variants, const Sweep& sweep,
                                           const Measurer& measure) {
  using namespace ceiling::validation;
  if (!(sweep.l2_bytes > 0)) throw std::invalid_argument("run_validation: the sweep needs the L2 size");
  if (!measure) throw std::invalid_argument("run_validation: no measurement function");
  std::vector<SizeRequest> sizes = sweep.sizes;
  if (sizes.empty())
    for (double b : default_sweep_bytes(sweep.l2_bytes, sweep.quick)) sizes.push_back({true, b, ""});

  // Sizes per (kind, precision), shared by its variants (so CUDA and tensor cores pair up).
  std::map<std::pair<std::string, Precision>, std::vector<const KernelVariant*>> groups;
  for (const auto* v : variants) groups[{v->kind, v->precision}].push_back(v);
  std::map<std::pair<std::string, Precision>, std::vector<KernelParams>> group_params;
  size_t total = 0;
  for (const auto& [key, group] : groups) {
    group_params[key] = group_sizes(kernel_kind(key.first), key.second, group, sizes, sweep);
    total += group_params[key].size() * group.size();
  }

  ValidationReport rep;
  rep.l2_split_bytes = sweep.l2_bytes;
  std::uint64_t seed = sweep.seed;
  size_t done = 0;
  for (const auto* v : variants) {
    for (const auto& params : group_params[{v->kind, v->precision}]) {
      ++done;
      const KernelModel k = v->model(params);
      if (sweep.memory_limit_bytes > 0 && k.working_set_bytes > sweep.memory_limit_bytes) {
        if (sweep.on_skip)
          sweep.on_skip(done, total, v->name() + " skipped: working set " + format_quantity(k.working_set_bytes, Dimension::bytes) +
                                         " does not fit the free device memory");
        continue;
      }
      MeasureRequest req;
      req.variant = v;
      req.params = params;
      req.model = k;
      req.context.l2_bytes = sweep.l2_bytes;
      req.context.in_l2 = fits_in_l2(k.working_set_bytes, sweep.l2_bytes);
      req.seed = seed++;
      const MeasureResult m = measure(req);
      KernelResult r = evaluate(hw, k, v->unit, params, m.time, sweep.l2_bytes, !req.context.in_l2);
      r.sm_clock_hz = m.sm_clock_hz;
      note_run_clock(r, hw);
      r.flagged = m.flagged;
      r.flag_reason = m.flag_reason;
      r.verify_error = m.verify_error;
      r.description = v->description + (m.how.empty() ? "" : "; " + m.how);
      r.implementation = v->implementation;
      if (const KernelKind& kind = kernel_kind(v->kind); kind.input_label) r.label = kind.input_label(params);
      if (sweep.on_result) sweep.on_result(done, total, r);
      rep.results.push_back(std::move(r));
    }
  }
  summarize(rep);
  return rep;
}

}  // namespace ceiling::kernels
