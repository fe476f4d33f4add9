#include "registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace ceiling::kernels {

static std::vector<KernelVariant>& mutable_registry() {
  static std::vector<KernelVariant> variants;
  return variants;
}

std::string KernelVariant::name() const {
  return kind + "." + std::string(to_string(precision)) + "." + std::string(to_string(unit)) +
         (implementation.empty() ? "" : "." + implementation);
}

KernelModel KernelVariant::model(const KernelParams& params) const {
  KernelModel k = make_kernel_model(kernel_kind(kind), params, precision);
  // 0: the kind's own fraction, which depends on the parameters (intensity: k/w below the row width).
  if (adjust_model) {
    const std::string kind_name = k.kind;
    k = adjust_model(params, std::move(k));
    k.kind = kind_name;
  }
  if (unit == ComputeUnit::tensor_core && tensor_core_fraction > 0) k.tensor_core_fraction = tensor_core_fraction;
  return k;
}

static int kind_order(const std::string& kind) {
  const KernelKind* k = find_kernel_kind(kind);
  return k ? k->order : 1 << 20;
}

Registrar::Registrar(KernelVariant v) {
  if (!find_kernel_kind(v.kind))
    throw std::logic_error("kernel variant " + v.name() + ": no kind '" + v.kind + "' in the kind table");
  if (!v.create) throw std::logic_error("kernel variant " + v.name() + " has no create function");
  auto& r = mutable_registry();
  for (const auto& e : r)
    if (e.name() == v.name()) throw std::logic_error("kernel variant registered twice: " + v.name());
  r.push_back(std::move(v));
  // Stable order regardless of static-initialization order across translation units.
  std::stable_sort(r.begin(), r.end(), [](const KernelVariant& a, const KernelVariant& b) {
    if (a.kind != b.kind) return kind_order(a.kind) != kind_order(b.kind) ? kind_order(a.kind) < kind_order(b.kind)
                                                                          : a.kind < b.kind;
    if (a.precision != b.precision) return a.precision < b.precision;
    if (a.unit != b.unit) return a.unit < b.unit;
    return a.implementation < b.implementation;
  });
}

const std::vector<KernelVariant>& registry() { return mutable_registry(); }

std::vector<std::string> kind_names_with_variants() {
  std::vector<std::string> names;
  for (const auto& v : registry())
    if (std::find(names.begin(), names.end(), v.kind) == names.end()) names.push_back(v.kind);
  return names;
}

// "spmv" selects "spmv-csr": a name is a kind or the part of kinds before a '-'.
static bool selects_kind(const std::string& name, const std::string& kind) {
  return kind == name || (kind.size() > name.size() && kind.compare(0, name.size(), name) == 0 && kind[name.size()] == '-');
}
// "KIND:IMPL" narrows to one implementation ("spmv:ours", "spmv:cusparse") or one unit
// ("scale:cuda_core", "spmv:tensor_core").
static bool selects(const std::string& name, const KernelVariant& v) {
  const auto colon = name.find(':');
  if (colon == std::string::npos) return selects_kind(name, v.kind);
  const std::string which = name.substr(colon + 1);
  return selects_kind(name.substr(0, colon), v.kind) &&
         (which == v.implementation || which == std::string(to_string(v.unit)));
}

std::vector<const KernelVariant*> select_variants(const std::vector<std::string>& kinds) {
  for (const auto& k : kinds) {
    if (std::none_of(registry().begin(), registry().end(), [&](const KernelVariant& v) { return selects(k, v); })) {
      std::string list;
      for (const auto& n : kind_names_with_variants()) list += (list.empty() ? "" : ", ") + n;
      std::string impls;
      for (const auto& v : registry())
        if (!v.implementation.empty()) impls += (impls.empty() ? "" : ", ") + v.kind + ":" + v.implementation;
      throw std::invalid_argument("unknown kernel '" + k + "' (kernels with variants: " + list +
                                  "; narrow with KIND:cuda_core, KIND:tensor_core" +
                                  (impls.empty() ? std::string() : " or " + impls) + ")");
    }
  }
  std::vector<const KernelVariant*> out;
  for (const auto& v : registry())
    if (kinds.empty() ? !kernel_kind(v.kind).opt_in
                      : std::any_of(kinds.begin(), kinds.end(), [&](const std::string& k) { return selects(k, v); }))
      out.push_back(&v);
  return out;
}

}  // namespace ceiling::kernels
