#include "registry.hpp"

#include <algorithm>
#include <stdexcept>

namespace ceiling::kernels {

static std::vector<KernelVariant>& mutable_registry() {
  static std::vector<KernelVariant> variants;
  return variants;
}

std::string KernelVariant::name() const {
  return kernel + "." + std::string(to_string(precision)) + "." + std::string(to_string(unit));
}

Registrar::Registrar(KernelVariant v) {
  auto& r = mutable_registry();
  for (const auto& e : r)
    if (e.name() == v.name()) throw std::logic_error("kernel variant registered twice: " + v.name());
  r.push_back(std::move(v));
  // Stable order regardless of static-initialization order across translation units.
  std::sort(r.begin(), r.end(), [](const KernelVariant& a, const KernelVariant& b) {
    if (a.kernel != b.kernel) return a.kernel > b.kernel;  // scale before gemv, as in the paper
    if (a.precision != b.precision) return a.precision < b.precision;
    return a.unit < b.unit;
  });
}

const std::vector<KernelVariant>& registry() { return mutable_registry(); }

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& v : registry())
    if (std::find(names.begin(), names.end(), v.kernel) == names.end()) names.push_back(v.kernel);
  return names;
}

std::vector<const KernelVariant*> select_variants(const std::vector<std::string>& kernels) {
  const auto known = kernel_names();
  for (const auto& k : kernels) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw std::invalid_argument("unknown kernel '" + k + "' (known: " + list + ")");
    }
  }
  std::vector<const KernelVariant*> out;
  for (const auto& v : registry())
    if (kernels.empty() || std::find(kernels.begin(), kernels.end(), v.kernel) != kernels.end())
      out.push_back(&v);
  return out;
}

std::vector<std::pair<std::string, double>> size_fields(const KernelVariant& v, const ProblemSize& s) {
  if (v.kernel == "gemv") return {{"m", static_cast<double>(s.m)}, {"n", static_cast<double>(s.n)}};
  return {{"n", static_cast<double>(s.n)}};
}

}  // namespace ceiling::kernels
