// Fixed cost of a kernel launch, timed the two ways validate times kernels (issue 12, the tight
// bound's launch term): CUDA events around one launch of an empty one-block kernel (a cold run),
// and back-to-back empty launches on one stream divided by their number (warm runs). CUDA-graph
// replay of the same launches is recorded in the details for comparison. The bound uses the
// measured minimum: no kernel launched the same way can take less.
#include <cuda_runtime.h>

#include <vector>

#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes::fixed {
namespace {

__global__ void empty_kernel() {}

constexpr int kBackToBack = 64;  // launches per timed region, as validate's warm regions (<= 64)

ProbeOutput run_launch_overhead(const ProbeContext& ctx) {
  ProbeOutput out;
  gpu::TimingOptions opt;
  opt.warmup = 10;
  opt.repeats = ctx.quick ? 30 : 200;
  opt.max_retries = 0;
  opt.max_cv = 1.0;  // launch times are a distribution with a tail; the minimum is what counts

  const gpu::Timing single = gpu::time_kernel([](cudaStream_t s) { empty_kernel<<<1, 32, 0, s>>>(); }, opt);
  gpu::Timing b2b = gpu::time_kernel(
      [](cudaStream_t s) {
        for (int i = 0; i < kBackToBack; ++i) empty_kernel<<<1, 32, 0, s>>>();
      },
      opt);
  for (double& x : b2b.seconds) x /= kBackToBack;
  b2b.summary = summarize(b2b.seconds);

  // The same launches replayed from a CUDA graph (one graph launch per timed region).
  cudaStream_t cs;
  CUDA_CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kBackToBack; ++i) empty_kernel<<<1, 32, 0, cs>>>();
  CUDA_CHECK(cudaStreamEndCapture(cs, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  gpu::Timing graph_t = gpu::time_kernel([exec](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(exec, s)); }, opt, cs);
  for (double& x : graph_t.seconds) x /= kBackToBack;
  graph_t.summary = summarize(graph_t.seconds);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(cs));

  out.fields.push_back({"fixed_costs.launch_single", Dimension::seconds,
                        measured_seconds(single, "launch-overhead",
                                         "CUDA events around one launch of an empty 1-block kernel")});
  out.fields.push_back({"fixed_costs.launch_back_to_back", Dimension::seconds,
                        measured_seconds(b2b, "launch-overhead",
                                         "per launch, " + std::to_string(kBackToBack) +
                                             " back-to-back empty 1-block kernels on one stream")});
  const auto summary = [](const gpu::Timing& t) {
    return nlohmann::json{{"min_s", t.summary.min},       {"median_s", t.summary.median}, {"max_s", t.summary.max},
                          {"cv", t.summary.cv},           {"repeats", t.summary.count},  {"sm_clock_hz", t.sm_clock_hz}};
  };
  out.details["single"] = summary(single);
  out.details["back_to_back"] = summary(b2b);
  out.details["graph_replay_per_node"] = summary(graph_t);
  out.details["launches_per_region"] = kBackToBack;
  return out;
}

const Registrar reg{ProbeInfo{"launch-overhead", "fixed-costs",
                              "Kernel launch cost: one launch timed by events, back-to-back launches, CUDA-graph replay",
                              {{"mode", {"single", "back_to_back", "graph"}}},
                              {"fixed_costs.launch_single", "fixed_costs.launch_back_to_back"},
                              80,
                              true,
                              run_launch_overhead}};

}  // namespace
}  // namespace ceiling::probes::fixed
