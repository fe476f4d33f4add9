// Registration of the memory probes: latency (P-chase) with footprint/TLB sweeps and their
// knees, DRAM/L2/L1/shared bandwidth, and the SM clock under load.
#include "memory_probes.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <string>
#include <vector>

#include "../model/knee_fit.hpp"
#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes {
namespace {

using nlohmann::json;
constexpr double KiB = 1024.0, MiB = 1024.0 * KiB, GiB = 1024.0 * MiB;

void report(const ProbeContext& ctx, double f, const std::string& what) {
  if (ctx.progress) ctx.progress(f, what);
}

std::size_t round_down(double bytes, std::size_t multiple) {
  return std::max<std::size_t>(multiple, static_cast<std::size_t>(bytes) / multiple * multiple);
}

// Log-spaced footprints from lo to hi (inclusive), `ppo` points per octave, multiples of `stride`.
std::vector<std::size_t> footprints(double lo, double hi, int ppo, std::size_t stride) {
  std::vector<std::size_t> out;
  for (int i = 0;; ++i) {
    const double f = lo * std::pow(2.0, static_cast<double>(i) / ppo);
    if (f > hi * 1.0001) break;
    const std::size_t r = round_down(f, stride);
    if (out.empty() || r > out.back()) out.push_back(r);
  }
  return out;
}

std::size_t pow2_at_least(double v) {
  std::size_t p = 1;
  while (static_cast<double>(p) < v) p <<= 1;
  return p;
}

// Repeated chases of one spec: cycles per load as samples, clocks alongside.
MeasuredValue repeated_latency(mem::PointerChase& chase, mem::ChaseSpec spec, int repeats, const std::string& note) {
  std::vector<double> cyc, hz;
  for (int r = 0; r < repeats; ++r) {
    spec.seed = 1 + static_cast<std::uint32_t>(r);
    const auto s = chase.run(spec);
    cyc.push_back(s.cycles_per_load);
    hz.push_back(s.sm_clock_hz);
  }
  const double clock = median(hz);
  const double ns = median(cyc) / clock * 1e9;
  char buf[96];
  std::snprintf(buf, sizeof buf, "; %.1f ns at the measured clock", ns);
  // Repeats with other seeds agree to < 0.2% on H100/H200: a spread of 5% or a sagging clock is flagged.
  const std::string flag = sample_flag(cyc, hz, 0.05);
  return measured_from_samples(cyc, "pchase-latency", clock, !flag.empty(), note + buf + (flag.empty() ? "" : "; " + flag));
}

struct SweepPoint {
  std::size_t footprint;
  double cycles;
  double hz;
};

std::vector<SweepPoint> sweep(const ProbeContext& ctx, mem::PointerChase& chase, mem::ChaseMode mode,
                              const std::vector<std::size_t>& fps, std::size_t stride, long long min_steps,
                              bool full_laps, double progress_from, double progress_to) {
  std::vector<SweepPoint> pts;
  for (std::size_t i = 0; i < fps.size(); ++i) {
    mem::ChaseSpec spec;
    spec.mode = mode;
    spec.footprint_bytes = fps[i];
    spec.stride_bytes = stride;
    const long long n = static_cast<long long>(fps[i] / stride);
    // Full laps: every element once per lap (ca, tlb); cg: a warm L2 and min_steps new elements.
    spec.steps = full_laps ? std::max<long long>(n, (min_steps + n - 1) / n * n) : min_steps;
    const auto s = chase.run(spec);
    pts.push_back({fps[i], s.cycles_per_load, s.sm_clock_hz});
    report(ctx, progress_from + (progress_to - progress_from) * (i + 1) / fps.size(),
           mem::to_string(mode) + " sweep " + std::to_string(fps[i] >> 10) + " KiB");
  }
  return pts;
}

// A sweep as (footprint, cycles) for the knee fits.
std::pair<std::vector<double>, std::vector<double>> footprints_and_cycles(const std::vector<SweepPoint>& pts) {
  std::pair<std::vector<double>, std::vector<double>> xy;
  for (const auto& p : pts) {
    xy.first.push_back(static_cast<double>(p.footprint));
    xy.second.push_back(p.cycles);
  }
  return xy;
}

std::vector<Knee> knees_of(const std::vector<SweepPoint>& pts, double min_rise = 0.15, double flat_rise = 0.08) {
  const auto [f, y] = footprints_and_cycles(pts);
  return find_knees(f, y, 10, min_rise, flat_rise);
}

// The fit places a knee on the coarse grid; 7 evenly spaced chases between the knee and the next
// point find the last footprint still on the plateau (within `tol` of its level).
std::size_t refine_knee(mem::PointerChase& chase, mem::ChaseSpec spec, const Knee& k, std::size_t next_footprint,
                        bool full_laps, long long min_steps, std::vector<SweepPoint>& extra, double tol) {
  std::size_t best = static_cast<std::size_t>(k.footprint);
  const double lo = k.footprint, hi = static_cast<double>(next_footprint);
  for (int j = 1; j < 8; ++j) {
    spec.footprint_bytes = round_down(lo + (hi - lo) * j / 8.0, spec.stride_bytes);
    const long long n = static_cast<long long>(spec.footprint_bytes / spec.stride_bytes);
    spec.steps = full_laps ? std::max<long long>(n, (min_steps + n - 1) / n * n) : min_steps;
    const auto s = chase.run(spec);
    extra.push_back({spec.footprint_bytes, s.cycles_per_load, s.sm_clock_hz});
    if (s.cycles_per_load > k.level_before * (1 + tol)) break;
    best = spec.footprint_bytes;
  }
  return best;
}

MeasuredValue capacity_bytes(double bytes, const Knee& k, const std::string& what, double clock) {
  const double v[1] = {bytes};
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s: last footprint on the %.0f-cycle plateau (segmented least squares, refined between sweep points); "
                "next level %.0f cycles",
                what.c_str(), k.level_before, k.level_after);
  return measured_from_samples(v, "pchase-latency", clock, false, buf);
}

ProbeOutput run_pchase(const ProbeContext& ctx) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  ProbeOutput out;
  const bool quick = ctx.quick;
  const int repeats = quick ? 3 : 7;
  const int ppo = quick ? 2 : 4;
  const double l2 = static_cast<double>(ctx.l2_bytes > 0 ? ctx.l2_bytes : 50 << 20);
  const std::size_t top = pow2_at_least(4 * l2);  // cg sweep and DRAM chase reach >= 4x L2
  json sweep_json = json::array(), knees_json = json::array();
  mem::PointerChase chase(top + 4096);

  // Latencies: one configuration per level, repeated.
  report(ctx, 0.0, "latencies");
  mem::ChaseSpec l1{mem::ChaseMode::ca, 16 << 10, 32, quick ? 16384 : 65536};
  mem::ChaseSpec sh{mem::ChaseMode::shared, 16 << 10, 4, quick ? 16384 : 65536};
  mem::ChaseSpec l2s{mem::ChaseMode::cg, std::min<std::size_t>(round_down(l2 / 8, 32), 4 << 20), 32, quick ? 8192 : 32768};
  mem::ChaseSpec dram{mem::ChaseMode::cg, top, 128, quick ? 4096 : 16384};
  dram.cold = true;
  const auto l1v = repeated_latency(chase, l1, repeats, "ld.ca chase, 16 KiB ring, 32 B apart");
  const double clock = l1v.sm_clock_hz;
  out.fields.push_back({"memory.l1.latency", Dimension::cycles, l1v});
  out.fields.push_back(
      {"memory.shared.latency", Dimension::cycles, repeated_latency(chase, sh, repeats, "ld.shared chase, 4096 words")});
  out.fields.push_back({"memory.l2.latency", Dimension::cycles,
                        repeated_latency(chase, l2s, repeats,
                                         "ld.cg chase, " + std::to_string(l2s.footprint_bytes >> 10) + " KiB ring, warm L2")});
  out.fields.push_back({"memory.dram.latency", Dimension::cycles,
                        repeated_latency(chase, dram, repeats,
                                         "ld.cg chase after an L2 flush, " + std::to_string(top >> 20) +
                                             " MiB ring, 128 B apart, first touch of every element")});
  report(ctx, 0.15, "latencies done");

  // Coarse and refined points of one mode, in footprint order.
  auto add_sweep = [&](std::vector<SweepPoint> pts, const std::vector<SweepPoint>& fine, const std::string& mode,
                       std::size_t stride) {
    pts.insert(pts.end(), fine.begin(), fine.end());
    std::stable_sort(pts.begin(), pts.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.footprint < b.footprint; });
    for (const auto& p : pts)
      sweep_json.push_back({{"mode", mode},
                            {"footprint_bytes", p.footprint},
                            {"stride_bytes", stride},
                            {"latency_cycles", p.cycles},
                            {"latency_ns", p.cycles / p.hz * 1e9}});
  };

  // L1: ld.ca sweep, 4 KiB .. 2 MiB, full laps.
  const auto ca_fps = footprints(4 * KiB, 2 * MiB, ppo, 32);
  const auto ca = sweep(ctx, chase, mem::ChaseMode::ca, ca_fps, 32, 4096, true, 0.15, 0.3);
  std::vector<SweepPoint> ca_fine;
  const auto ca_knees = knees_of(ca);
  if (!ca_knees.empty() && ca_knees.front().index + 1 < ca.size()) {
    const Knee& k = ca_knees.front();
    mem::ChaseSpec spec{mem::ChaseMode::ca, 0, 32, 0};
    const std::size_t cap = refine_knee(chase, spec, k, ca[k.index + 1].footprint, true, 4096, ca_fine, 0.075);
    out.fields.push_back({"memory.l1.capacity", Dimension::bytes, capacity_bytes(static_cast<double>(cap), k, "ld.ca sweep", clock)});
    knees_json.push_back({{"name", "l1"}, {"bytes", cap}});
  } else {
    spdlog::warn("pchase-latency: no L1 knee in the ld.ca sweep");
  }
  add_sweep(ca, ca_fine, "ca", 32);

  // L2 and its far half: ld.cg sweep, 4 KiB .. >= 4x L2; the chasing SM warms the ring, then
  // follows it to new elements (hits while the ring fits the L2 as this SM sees it).
  const auto cg_fps = footprints(4 * KiB, static_cast<double>(top), ppo, 32);
  const long long cg_steps = quick ? 4096 : 16384;
  const auto cg = sweep(ctx, chase, mem::ChaseMode::cg, cg_fps, 32, cg_steps, false, 0.3, 0.55);
  // The same with the ring read by every SM first (data shared by the whole GPU).
  std::vector<SweepPoint> cg_all;
  if (!quick) {
    for (std::size_t i = 0; i < cg_fps.size(); i += 2) {
      mem::ChaseSpec spec{mem::ChaseMode::cg, cg_fps[i], 32, cg_steps};
      spec.warm = mem::WarmScope::all_sms;
      const auto s = chase.run(spec);
      cg_all.push_back({cg_fps[i], s.cycles_per_load, s.sm_clock_hz});
    }
    report(ctx, 0.65, "cg sweep (all SMs warm)");
  }
  // Near L2, far L2 and DRAM in one sweep (issue 15): one element per 128-byte line, L2/8 .. 2x L2,
  // the ring warmed in its own order by the chasing SM, so the chase meets the least recently
  // used line first, as a cyclic chase does in steady state: a plateau while the ring fits the
  // L2 partition near the SM (lines homed in the far one are copied into it), a second one while
  // it fits the whole L2 (far hits), then DRAM. The same shape as gpu-latency's laps, in 0.1 s.
  std::vector<SweepPoint> line, line_fine;
  {
    const auto fps = footprints(l2 / 8, 2 * l2, ppo * 2, 128);
    for (std::size_t i = 0; i < fps.size(); ++i) {
      mem::ChaseSpec spec{mem::ChaseMode::cg, fps[i], 128, cg_steps};
      spec.warm = mem::WarmScope::ring_order;
      const auto s = chase.run(spec);
      line.push_back({fps[i], s.cycles_per_load, s.sm_clock_hz});
    }
    report(ctx, 0.6, "L2 near/far sweep");
  }
  const auto line_knees = knees_of(line, 0.15, 0.08);
  bool near_far = false;
  if (line_knees.size() >= 2 && line_knees[0].index + 1 < line.size() && line_knees[1].index + 1 < line.size()) {
    mem::ChaseSpec spec{mem::ChaseMode::cg, 0, 128, cg_steps};
    spec.warm = mem::WarmScope::ring_order;
    const Knee& near = line_knees[0];
    const Knee& far = line_knees[1];
    const std::size_t near_cap = refine_knee(chase, spec, near, line[near.index + 1].footprint, false, cg_steps, line_fine, 0.075);
    const std::size_t far_cap = refine_knee(chase, spec, far, line[far.index + 1].footprint, false, cg_steps, line_fine, 0.075);
    out.fields.push_back({"memory.l2.extra.near_half_capacity", Dimension::bytes,
                          capacity_bytes(static_cast<double>(near_cap), near,
                                         "L2 near the chasing SM, 128-byte-line chase warmed in ring order", clock)});
    // The far plateau's level: the median of the sweep points between the two knees.
    std::vector<double> far_cycles, far_hz;
    for (std::size_t i = near.index + 1; i <= far.index; ++i) {
      if (std::abs(line[i].cycles - far.level_before) > 0.1 * far.level_before) continue;  // on the rise
      far_cycles.push_back(line[i].cycles);
      far_hz.push_back(line[i].hz);
    }
    if (!far_cycles.empty()) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "128-byte-line chase between the near (%.1f MiB) and the far (%.1f MiB) knee, %zu points",
                    static_cast<double>(near_cap) / MiB, static_cast<double>(far_cap) / MiB, far_cycles.size());
      out.fields.push_back({"memory.l2.extra.far_latency", Dimension::cycles,
                            measured_from_samples(far_cycles, "pchase-latency", clock, false, buf)});
    }
    knees_json.push_back({{"name", "l2_near"}, {"bytes", near_cap}, {"cycles_before", near.level_before},
                          {"cycles_after", near.level_after}});
    knees_json.push_back({{"name", "l2_far"}, {"bytes", far_cap}, {"cycles_before", far.level_before},
                          {"cycles_after", far.level_after}});
    near_far = true;
  } else {
    spdlog::warn("pchase-latency: the 128-byte-line sweep shows {} knee(s), not near and far L2 ({}); the ld.cg sweep's "
                 "knee gives the near capacity",
                 line_knees.size(), line.empty() ? "no points" : "see the details");
  }
  add_sweep(line, line_fine, "cg_line_ring", 128);

  // Without near and far knees in the line sweep, the ld.cg sweep's largest step gives the near capacity.
  std::vector<SweepPoint> cg_fine;
  const auto cg_knees = near_far ? std::vector<Knee>{} : knees_of(cg);
  // One SM's loads are cached in its own L2 partition: the first big step of this sweep is the
  // part of the L2 one SM can hit (about half on a partitioned L2; the whole L2 is measured by
  // l2-bandwidth with every SM reading its own slice).
  int l2_idx = -1;
  for (std::size_t i = 0; i < cg_knees.size(); ++i)
    if (l2_idx < 0 || cg_knees[i].level_after - cg_knees[i].level_before >
                          cg_knees[l2_idx].level_after - cg_knees[l2_idx].level_before)
      l2_idx = static_cast<int>(i);
  if (l2_idx >= 0 && cg_knees[l2_idx].index + 1 < cg.size()) {
    const Knee& k = cg_knees[l2_idx];
    mem::ChaseSpec spec{mem::ChaseMode::cg, 0, 32, cg_steps};
    const std::size_t cap = refine_knee(chase, spec, k, cg[k.index + 1].footprint, false, cg_steps, cg_fine, 0.075);
    out.fields.push_back({"memory.l2.extra.near_half_capacity", Dimension::bytes,
                          capacity_bytes(static_cast<double>(cap), k, "L2 one SM can hit, ld.cg sweep warmed by that SM", clock)});
    knees_json.push_back({{"name", "l2_near_half"}, {"bytes", cap}});
  } else if (!near_far) {
    spdlog::warn("pchase-latency: no L2 knee in the ld.cg sweep");
  }
  add_sweep(cg, cg_fine, "cg", 32);
  add_sweep(cg_all, {}, "cg_all_sms", 32);
  report(ctx, 0.7, "TLB sweep");

  // TLB: 2 MiB pages visited in one fixed order per lap, a new line of each page per lap (pchase.cu),
  // footprints up to a quarter of free memory (<= 64 GiB).
  {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double tlb_top = std::min(quick ? 16 * GiB : 64 * GiB, static_cast<double>(free_b) / 4);
    const std::size_t page = 2 << 20;
    if (tlb_top >= 64 * MiB) {
      const auto fps = footprints(8 * MiB, tlb_top, quick ? 1 : 2, page);
      mem::PointerChase big(fps.back() + page);
      const auto tlb = sweep(ctx, big, mem::ChaseMode::tlb, fps, page, 4096, true, 0.7, 1.0);
      // TLB misses that hit the next TLB level cost a few cycles on an L2 hit: steps of 1-4%.
      const auto [tf, ty] = footprints_and_cycles(tlb);
      const auto tk = find_tlb_knees(tf, ty);
      std::vector<SweepPoint> tlb_fine;
      if (!tk.empty()) {
        // The reach is the last sweep point on the plateau. 7 chases between it and the next point
        // are recorded for the curve: past the reach the latency rises gradually (H100 80GB HBM3:
        // +0.3% at 268 MiB, +0.6% at 282-308, +1.2% at 362 MiB), not in one LRU step, so a
        // refined "last footprint within x%" moved by 40 MiB between runs; the sweep point did not.
        const Knee& k = tk.front();
        mem::ChaseSpec spec{mem::ChaseMode::tlb, 0, page, 4096};
        refine_knee(big, spec, k, tlb[k.index + 1].footprint, true, 4096, tlb_fine, 1.0);
        const double reach = k.footprint;
        const double v[1] = {reach};
        char note[320];
        std::snprintf(note, sizeof note,
                      "2 MiB pages in one fixed order per lap, >= 4096 lines in all, ld.cg: last sweep point (half "
                      "octaves) on the %.1f-cycle plateau; the next point, %.0f MiB, is %.1f%% above it; %.1f cycles "
                      "at the sweep's end",
                      k.level_before, static_cast<double>(tlb[k.index + 1].footprint) / MiB,
                      100.0 * (tlb[k.index + 1].cycles / k.level_before - 1), ty.back());
        MeasuredValue m = measured_from_samples(v, "pchase-latency", clock, false, note);
        out.fields.push_back({"memory.dram.extra.tlb_reach", Dimension::bytes, m});
        knees_json.push_back({{"name", "tlb"}, {"bytes", reach}});
        for (std::size_t i = 1; i < tk.size(); ++i)
          knees_json.push_back({{"name", "tlb_" + std::to_string(i + 1)}, {"bytes", tk[i].footprint}});
      } else {
        spdlog::info("pchase-latency: no TLB knee up to {:.0f} GiB", tlb_top / GiB);
      }
      add_sweep(tlb, tlb_fine, "tlb", page);
    }
  }
  out.details = {{"sweep", sweep_json}, {"knees", knees_json}, {"sm_clock_hz", clock}};
  report(ctx, 1.0, "done");
  return out;
}

// calibrate --power: a memory level's watts under a stream as memory.<level>.extra.<path> (pJ per
// byte follow from the bandwidth), the reading in the details; a failed reading says why there.
void power_field(ProbeOutput& out, const std::string& path, const std::string& probe, const gpu::PowerReading& pw,
                 double bytes_per_run, json& details) {
  if (!pw.ok) {
    details = {{"error", pw.why}};
    return;
  }
  MeasuredValue m;
  m.median = pw.watts;
  m.min = pw.watts_min;
  m.max = pw.watts_max;
  m.repeats = pw.counter_steps;
  m.probe = probe;
  m.date = gpu::utc_now_iso8601();
  m.sm_clock_hz = pw.sm_clock_hz;
  const double rate = pw.run_seconds > 0 ? bytes_per_run * static_cast<double>(pw.launches) / pw.run_seconds : 0;
  char buf[96];
  std::snprintf(buf, sizeof buf, "; %.4g TB/s during it: %.4g pJ/B", rate / 1e12, rate > 0 ? 1e12 * pw.watts / rate : 0.0);
  m.note = pw.note() + buf;
  out.fields.push_back({path, Dimension::watts, m});
  details = {{"watts", pw.watts}, {"bytes_per_s_during", rate}, {"pj_per_byte", rate > 0 ? 1e12 * pw.watts / rate : 0.0},
             {"sm_clock_hz", pw.sm_clock_hz}, {"note", m.note}};
}

ProbeOutput run_dram(const ProbeContext& ctx) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  ProbeOutput out;
  const double l2 = static_cast<double>(ctx.l2_bytes > 0 ? ctx.l2_bytes : 50 << 20);
  const std::size_t bytes = pow2_at_least(std::max(8 * l2, (ctx.quick ? 512 : 1024) * MiB));
  const std::size_t elements = bytes / 16;
  gpu::TimingOptions opt;
  opt.warmup = 2;
  opt.repeats = ctx.quick ? 10 : 20;
  const auto cands = mem::default_stream_candidates(ctx.quick);
  json pats = json::array(), power_json = json::object();
  MeasuredValue best;
  const mem::StreamPattern all[] = {mem::StreamPattern::read, mem::StreamPattern::write, mem::StreamPattern::copy,
                                    mem::StreamPattern::scale, mem::StreamPattern::triad};
  int k = 0;
  for (auto p : all) {
    report(ctx, k++ / 5.0, "dram " + mem::to_string(p));
    // calibrate --power: the read stream (pJ per byte read from DRAM) runs again under NVML.
    gpu::PowerReading pw;
    const bool with_power = ctx.power && p == mem::StreamPattern::read;
    // Search: 5 repeats per candidate, then the three fastest timed in full (with 3 repeats the
    // H100's read figure still moved 1.1% over three calibrations with the configuration chosen).
    const auto r = mem::stream_bandwidth(p, elements, cands, opt, ctx.quick ? 3 : 5, with_power ? ctx.power : nullptr,
                                         with_power ? &pw : nullptr);
    const std::string note = mem::to_string(p) + ", " + std::to_string(bytes >> 20) + " MiB per array, 16-byte accesses, " +
                             r.config.str() + " (best of " + std::to_string(r.tried.size()) + ")";
    const MeasuredValue m = measured_rate(r.timing, r.bytes_per_run, "dram-bandwidth", note);
    if (with_power) power_field(out, "memory.dram.extra.power_read", "dram-bandwidth", pw, r.bytes_per_run, power_json);
    out.fields.push_back({"memory.dram.patterns." + mem::to_string(p), Dimension::bytes_per_second, m});
    if (m.median > best.median) best = m;
    json tried = json::array();
    for (const auto& c : r.tried) tried.push_back(c.str());
    pats.push_back({{"pattern", mem::to_string(p)},
                    {"bytes_per_s", m.median},
                    {"bytes_per_run", r.bytes_per_run},
                    {"config", r.config.str()},
                    {"cv", m.cv},
                    {"sm_clock_hz", m.sm_clock_hz},
                    {"tried", tried}});
  }
  out.fields.push_back({"memory.dram.bandwidth", Dimension::bytes_per_second, best});
  out.details = {{"array_bytes", bytes}, {"patterns", pats}};
  if (ctx.power) out.details["power"] = power_json;
  report(ctx, 1.0, "done");
  return out;
}

ProbeOutput run_l2(const ProbeContext& ctx) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  ProbeOutput out;
  const double l2 = static_cast<double>(ctx.l2_bytes > 0 ? ctx.l2_bytes : 50 << 20);
  gpu::TimingOptions opt;
  opt.warmup = 2;
  opt.repeats = ctx.quick ? 10 : 20;
  std::vector<mem::LaunchConfig> cands, slice_cands;
  for (int layout : {0, 1, 2})
    for (int f : {0, 1})
      for (int u : ctx.quick ? std::vector<int>{4} : std::vector<int>{2, 4, 8})
        for (int t : ctx.quick ? std::vector<int>{512} : std::vector<int>{256, 512, 1024})
          for (int bps : {1024 / t, 2048 / t}) {
            if (layout == 2 && bps != 1024 / t) continue;  // layout 2 sizes its grid from the buffer
            cands.push_back({std::max(1, bps), t, u, f, layout});
            if (layout == 2 && f == 0 && !ctx.quick)  // 8-byte ld.cg, deeper unroll (won on H200)
              for (int k : {2, 4}) cands.push_back({std::max(1, bps), t, k * u, 2, layout});
            // ld.nc's lines leave the L2 sooner under pressure (seen on H200): ld.cg for capacity.
            if (layout == 0 && f == 0) slice_cands.push_back(cands.back());
          }
  // Columns of the buffer as 16 or 32 rows (8-byte ld.cg): past the near L2 partition's capacity
  // (H200 30 MiB) the short blocks' contiguous chunks fell 2% behind gpu-benches' L2 test.
  if (!ctx.quick)
    for (int t : {512, 1024})
      for (int rows : {16, 32}) cands.push_back({1, t, rows, 2, 3});
  json runs = json::array(), power_json = json::object();
  MeasuredValue best;
  mem::LaunchConfig best_cfg;
  // Bandwidth: footprints of at most half the L2, every SM re-reading its slice.
  const std::vector<double> fractions = ctx.quick ? std::vector<double>{0.25} : std::vector<double>{0.125, 0.25, 0.5};
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    const std::size_t buf = round_down(l2 * fractions[i], 1 << 16);
    const int passes = std::max(2, static_cast<int>(2 * GiB / static_cast<double>(buf)));
    report(ctx, 0.5 * i / fractions.size(), "l2 " + std::to_string(buf >> 20) + " MiB");
    // calibrate --power: the largest footprint (L2/2) runs again under NVML (pJ per byte from L2).
    gpu::PowerReading pw;
    const bool with_power = ctx.power && i + 1 == fractions.size();
    // The best configuration is timed with 2 GiB and with 8 GiB launches (~0.9 ms on an H200),
    // the faster counts: at 30 MiB the 2 GiB launches lost ~1.5% to their ramp and tail (against
    // gpu-benches' 2.7 ms launches), at 7.5 MiB the longer stream ran 11% slower (its clock).
    const auto r = mem::l2_bandwidth(buf, passes, cands, opt, ctx.quick ? 3 : 5, with_power ? ctx.power : nullptr,
                                     with_power ? &pw : nullptr, ctx.quick ? 0 : 4 * passes);
    const std::string note = "re-reads of " + std::to_string(buf >> 10) + " KiB by all SMs, " + r.config.l2_str();
    const MeasuredValue m = measured_rate(r.timing, r.bytes_per_run, "l2-bandwidth", note);
    if (with_power) power_field(out, "memory.l2.extra.power_read", "l2-bandwidth", pw, r.bytes_per_run, power_json);
    runs.push_back({{"buffer_bytes", buf}, {"passes", static_cast<long long>(std::llround(r.bytes_per_run / (16.0 * static_cast<double>(buf / 16))))}, {"bytes_per_s", m.median}, {"config", r.config.l2_str()}, {"cv", m.cv}});
    if (m.median > best.median) best = m;
    // The capacity sweep needs lines that stay next to the SM reading them: a slice per block,
    // configured as the best slice layout on the largest buffer.
    if (i + 1 == fractions.size()) {
      best_cfg = r.config;
      if (r.config.layout != 0 || r.config.flavor != 0) {
        gpu::TimingOptions o2 = opt;
        o2.repeats = 3;
        best_cfg = mem::l2_bandwidth(buf, passes, slice_cands, o2, ctx.quick ? 2 : 3).config;
      }
    }
  }
  out.fields.push_back({"memory.l2.bandwidth", Dimension::bytes_per_second, best});

  // Comparison only (not a descriptor value): gpu-benches' L2 test uses L1-allocating 8-byte
  // loads; the same shape here, at L2/2, says how much of a gap to it is the load path.
  json l1_alloc = nullptr;
  if (!ctx.quick) {
    const std::size_t buf = round_down(l2 * 0.5, 1 << 16);
    const int passes = std::max(2, static_cast<int>(2 * GiB / static_cast<double>(buf)));
    std::vector<mem::LaunchConfig> c3;
    for (int t : {512, 1024})
      for (int u : {8, 16, 32}) c3.push_back({1, t, u, 3, 2});
    gpu::TimingOptions o3 = opt;
    o3.repeats = 10;
    const auto r = mem::l2_bandwidth(buf, passes, c3, o3, 3);
    l1_alloc = {{"buffer_bytes", buf}, {"bytes_per_s", r.bytes_per_run / r.timing.summary.median},
                {"config", r.config.l2_str()},
                {"note", "L1-allocating loads, as gpu-benches' gpu-l2-cache; not used for memory.l2.bandwidth"}};
  }

  // Capacity: the same re-reads over growing buffers; time per byte steps up once the buffer
  // no longer fits both L2 partitions.
  json cap_sweep = json::array();
  std::vector<SweepPoint> pts;
  gpu::TimingOptions sopt;
  sopt.warmup = 1;
  sopt.repeats = ctx.quick ? 3 : 5;
  sopt.max_retries = 0;
  sopt.clock_samples = 0;  // times per byte only
  auto measure = [&](std::size_t buf) {
    const int passes = std::max(2, static_cast<int>(GiB / static_cast<double>(buf)));
    const auto r = mem::l2_bandwidth(buf, passes, {best_cfg}, sopt, 1);
    const double bw = r.bytes_per_run / r.timing.summary.median;
    cap_sweep.push_back({{"buffer_bytes", buf}, {"bytes_per_s", bw}, {"ps_per_byte", 1e12 / bw}});
    return 1e12 / bw;
  };
  // From L2/2: smaller slices run below the L2 plateau and would blur it.
  const auto fps = footprints(l2 / 2, 4 * l2, ctx.quick ? 3 : 4, 1 << 16);
  for (std::size_t i = 0; i < fps.size(); ++i) {
    pts.push_back({fps[i], measure(fps[i]), 0});
    report(ctx, 0.5 + 0.4 * (i + 1) / fps.size(), "l2 capacity sweep " + std::to_string(fps[i] >> 20) + " MiB");
  }
  const auto knees = knees_of(pts, 0.15, 0.1);
  json knee_json = nullptr;
  if (!knees.empty() && knees.front().index + 1 < pts.size()) {
    const Knee& k = knees.front();
    // Capacity: where the time per byte crosses half-way from the L2 plateau to the next level
    // (a replacement policy that is not exact LRU blurs the step; its middle is the size).
    std::vector<double> fx, fy;
    for (const auto& p : pts) {
      fx.push_back(static_cast<double>(p.footprint));
      fy.push_back(p.cycles);
    }
    const StepCrossing cross = half_way_crossing(fx, fy, k, [&](double f) { return measure(static_cast<std::size_t>(f)); });
    const double cap = cross.capacity, plateau_end = cross.plateau_end;
    const double v[1] = {std::round(cap / 65536) * 65536};
    char note[300];
    std::snprintf(note, sizeof note,
                  "buffer where the time per byte is half-way from L2 (%.3f ps/B) to the next level (%.3f ps/B), every SM "
                  "re-reading its own slice; last buffer on the L2 plateau %.1f MiB",
                  k.level_before, k.level_after, plateau_end / MiB);
    out.fields.push_back({"memory.l2.capacity", Dimension::bytes, measured_from_samples(v, "l2-bandwidth", best.sm_clock_hz, false, note)});
    knee_json = {{"name", "l2"}, {"bytes", v[0]}, {"plateau_end_bytes", plateau_end}};
  } else {
    spdlog::warn("l2-bandwidth: no capacity knee between {:.0f} and {:.0f} MiB", l2 / 2 / MiB, 4 * l2 / MiB);
  }
  out.details = {{"runs", runs}, {"capacity_sweep", cap_sweep}, {"knee", knee_json}, {"l1_allocating_comparison", l1_alloc}};
  if (ctx.power) out.details["power"] = power_json;
  report(ctx, 1.0, "done");
  return out;
}

ProbeOutput run_per_sm(const ProbeContext& ctx, bool shared) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  ProbeOutput out;
  const std::string probe = shared ? "shared-bandwidth" : "l1-bandwidth";
  const std::string level = shared ? "shared" : "l1";
  const auto r = shared ? mem::shared_bandwidth_per_sm(ctx.quick ? 512 : 2048, ctx.quick ? 3 : 7)
                        : mem::l1_bandwidth_per_sm(ctx.quick ? 512 : 2048, ctx.quick ? 3 : 7);
  const double clock = median(r.sm_clock_hz);
  const std::string how = shared ? "ld.shared.v4 (LDS.128)" : "ld.global.ca.v4 (LDG.128) of a 32 KiB window";
  // Samples are repeats (each the median over SMs) with their clocks: flagged as time_kernel flags.
  const std::string flag = sample_flag(r.bytes_per_clock, r.sm_clock_hz, 0.05);
  const std::string flag_note = flag.empty() ? "" : "; " + flag;
  MeasuredValue per_sm = measured_from_samples(r.bytes_per_clock, probe, clock, !flag.empty(),
                                               how + ", 1024 threads per SM, median over SMs" + flag_note);
  out.fields.push_back({"memory." + level + ".bandwidth_per_sm", Dimension::bytes_per_cycle, per_sm});
  // Whole device: per SM x SMs x the clock measured in the same kernels.
  std::vector<double> dev;
  for (std::size_t i = 0; i < r.bytes_per_clock.size(); ++i)
    dev.push_back(r.bytes_per_clock[i] * ctx.sm_count * r.sm_clock_hz[i]);
  out.fields.push_back({"memory." + level + ".bandwidth", Dimension::bytes_per_second,
                        measured_from_samples(dev, probe, clock, !flag.empty(),
                                              "bytes/clock/SM x SMs x measured SM clock" + flag_note)});
  out.details = {{"bytes_per_clock_per_sm", r.bytes_per_clock}, {"sm_clock_hz", r.sm_clock_hz}};
  return out;
}

ProbeOutput run_clock(const ProbeContext& ctx) {
  ProbeOutput out;
  std::vector<double> hz;
  for (int i = 0; i < (ctx.quick ? 3 : 7); ++i) hz.push_back(gpu::measure_sm_clock_hz(ctx.device, ctx.quick ? 0.02 : 0.05));
  // A sample below 0.9 x the fastest: the clock sagged (power or thermal) while it was measured.
  const std::string flag = sample_flag(hz, hz, 0);
  out.fields.push_back({"sm_clock", Dimension::hertz,
                        measured_from_samples(hz, "sm-clock", median(hz), !flag.empty(),
                                              std::string("clock64 over %globaltimer, every SM busy with FMAs") +
                                                  (flag.empty() ? "" : "; " + flag))});
  out.details = {{"samples_hz", hz}};
  return out;
}

const Registrar reg_clock{ProbeInfo{"sm-clock", "memory", "SM clock under load: clock64 against %globaltimer on every SM",
                                    {{"seconds", {"0.05"}}}, {"sm_clock"}, 80, true, run_clock}};

const Registrar reg_pchase{ProbeInfo{
    "pchase-latency", "memory",
    "Pointer-chase latency of L1 (ld.ca), shared, L2 (ld.cg), DRAM; footprint and page-stride sweeps with capacity knees",
    {{"mode", {"ca", "cg", "cg_line_ring", "shared", "tlb"}}, {"footprint", {"4 KiB .. >= 4x L2 (log-spaced)", "L2/8 .. 2x L2 (near/far)"}},
     {"stride", {"32 B", "128 B (near/far)", "2 MiB (tlb)"}}},
    {"memory.l1.latency", "memory.shared.latency", "memory.l2.latency", "memory.dram.latency", "memory.l1.capacity",
     "memory.l2.extra.near_half_capacity", "memory.l2.extra.far_latency", "memory.dram.extra.tlb_reach"},
    80, true, run_pchase}};

const Registrar reg_dram{ProbeInfo{
    "dram-bandwidth", "memory", "DRAM read/write/copy/scale/triad bandwidth, 16-byte accesses, launch configuration searched",
    {{"pattern", {"read", "write", "copy", "scale", "triad"}}, {"threads", {"256", "512", "1024"}}, {"unroll", {"1", "2", "4", "8"}}},
    {"memory.dram.bandwidth", "memory.dram.patterns.read", "memory.dram.patterns.write", "memory.dram.patterns.copy",
     "memory.dram.patterns.scale", "memory.dram.patterns.triad"},
    80, true, run_dram}};

const Registrar reg_l2{ProbeInfo{"l2-bandwidth", "memory",
                                 "L2 bandwidth (every SM re-reading its slice of <= half the L2, ld.cg) and L2 capacity "
                                 "(the same over buffers of L2/4 .. 4x L2)",
                                 {{"buffer", {"L2/8", "L2/4", "L2/2", "sweep L2/4 .. 4x L2"}}, {"threads", {"256", "512", "1024"}}, {"unroll", {"2", "4", "8"}}},
                                 {"memory.l2.bandwidth", "memory.l2.capacity"}, 80, true, run_l2}};

const Registrar reg_l1{ProbeInfo{"l1-bandwidth", "memory", "L1 bytes per clock per SM (16-byte ld.ca hits, 1024 threads per SM)",
                                 {{"window", {"32 KiB"}}}, {"memory.l1.bandwidth_per_sm", "memory.l1.bandwidth"}, 80, true,
                                 [](const ProbeContext& c) { return run_per_sm(c, false); }}};

const Registrar reg_shared{ProbeInfo{"shared-bandwidth", "memory", "Shared-memory bytes per clock per SM (LDS.128, 1024 threads per SM)",
                                     {{"window", {"32 KiB"}}}, {"memory.shared.bandwidth_per_sm", "memory.shared.bandwidth"}, 80, true,
                                     [](const ProbeContext& c) { return run_per_sm(c, true); }}};

}  // namespace
}  // namespace ceiling::probes
