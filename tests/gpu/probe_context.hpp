// The ProbeContext of device 0 that the probes' GPU tests run with.
#pragma once
#include "gpu/gpu.hpp"
#include "probes/registry.hpp"

namespace ceiling::test {

inline probes::ProbeContext probe_context(bool quick) {
  const gpu::DeviceInfo d = gpu::query_device(0);
  probes::ProbeContext ctx;
  ctx.device = 0;
  ctx.quick = quick;
  ctx.sm_count = d.sm_count;
  ctx.cc_major = d.cc_major;
  ctx.cc_minor = d.cc_minor;
  ctx.l2_bytes = d.l2_bytes;
  return ctx;
}

}  // namespace ceiling::test
