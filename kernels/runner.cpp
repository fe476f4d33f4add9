#include "runner.hpp"

#include <stdexcept>
#include <string>

namespace ceiling::kernels {

static std::string size_text(const KernelVariant& v, const ProblemSize& s) {
  return v.kernel == "gemv" ? std::to_string(s.m) + "x" + std::to_string(s.n) : "n=" + std::to_string(s.n);
}

Verification verify_once(const KernelVariant&, KernelInstance& inst, std::uint64_t seed) {
  inst.randomize(seed);
  inst.poison_output();
  inst.launch(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return inst.verify();
}

Measurement measure(const KernelVariant& v, const ProblemSize& s, const MeasureOptions& o) {
  Measurement m;
  m.size = s;
  m.model = v.model(s);
  m.l2_flushed = o.flush_l2;
  auto inst = v.create(s);
  m.check = verify_once(v, *inst, o.seed);
  if (!m.check.ok)
    throw std::runtime_error(v.name() + " at " + size_text(v, s) + ": wrong output: " + m.check.message);
  gpu::TimingOptions t;
  t.warmup = o.warmup;
  t.repeats = o.repeats;
  t.flush_l2 = o.flush_l2;
  KernelInstance* p = inst.get();
  m.timing = gpu::time_kernel([p](cudaStream_t st) { p->launch(st); }, t, o.stream);
  CUDA_CHECK(cudaDeviceSynchronize());
  return m;
}

}  // namespace ceiling::kernels
