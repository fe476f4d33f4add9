#include "registry.hpp"

#include <stdexcept>

namespace ceiling::probes {

void Registry::add(ProbeInfo info) {
  if (find(info.name)) throw std::logic_error("probe registered twice: " + info.name);
  probes_.push_back(std::move(info));
}

const ProbeInfo* Registry::find(const std::string& name) const {
  for (const auto& p : probes_)
    if (p.name == name) return &p;
  return nullptr;
}

Registry& registry() {
  static Registry r;  // function-local: safe from static-initialization order
  return r;
}

}  // namespace ceiling::probes
