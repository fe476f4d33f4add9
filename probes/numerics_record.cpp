#include "numerics_record.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ceiling::probes {

namespace {

double three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return std::strtod(buf, nullptr);
}

bool same(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

nlohmann::json num(double v) {  // JSON has no inf/nan: those as strings
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

}  // namespace

NumericsRecord numerics_record(const std::string& key, const numerics::NumericShape& s,
                               const std::vector<numerics::DotCase>& cases, const std::vector<double>& r1,
                               const std::vector<double>& r2, const std::vector<numerics::ErrorRow>& rows,
                               int samples, const std::string& probe, const std::string& date,
                               const std::string& note) {
  bool same_bits = r1.size() == r2.size();
  for (size_t i = 0; same_bits && i < r1.size(); ++i) same_bits = same(r1[i], r2[i]);
  const numerics::Classification cl = numerics::classify(s, cases, r1);
  NumericsRecord rec;
  NumericBehaviour& nb = rec.behaviour;
  nb.verdicts["products"] = cl.products_exact ? "exact" : "not exact";
  for (const auto& p : cl.parameters) nb.verdicts[p.name] = p.value;
  nb.summary = cl.summary;
  for (const auto& r : rows) {
    const std::string init = r.init_low ? "init_low" : "init_fp32";
    nb.errors[numerics::experiment_name(r.experiment)][init] = three_digits(r.mean_abs_fp32);
    if (s.out != &numerics::fp32()) nb.errors_out[numerics::experiment_name(r.experiment)][init] = three_digits(r.mean_abs_out);
  }
  nb.cases = cl.cases;
  nb.models = cl.consistent;
  nb.samples = samples;
  nb.probe = probe;
  nb.date = date;
  nb.note = std::string(same_bits ? "the same bits in two runs" : "NOT the same bits in two runs") + note;

  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : cl.models) models.push_back(m.describe());
  nlohmann::json tbl = nlohmann::json::array();
  for (const auto& r : rows)
    tbl.push_back({{"experiment", numerics::experiment_name(r.experiment)}, {"init", r.init_low ? "low" : "fp32"},
                   {"mean_abs_fp32", r.mean_abs_fp32}, {"mean_abs_out", r.mean_abs_out},
                   {"max_rel_fp32", r.max_rel_fp32}, {"samples", r.samples}});
  // The cases the first closest model gets wrong (at most 16), inputs in full: what a better
  // model of the hardware has to explain.
  nlohmann::json misses = nlohmann::json::array();
  if (cl.closest && !cl.models.empty()) {
    const auto& h = cl.models.front();
    for (size_t i = 0; i < cases.size() && misses.size() < 16; ++i) {
      const double m = numerics::emulate(h, s, cases[i]);
      if (same(m, r1[i])) continue;
      nlohmann::json a = nlohmann::json::array(), b = nlohmann::json::array();
      for (int k = 0; k < s.K; ++k) a.push_back(num(cases[i].a[k])), b.push_back(num(cases[i].b[k]));
      misses.push_back({{"tag", cases[i].tag}, {"a", a}, {"b", b}, {"c", num(cases[i].c)}, {"device", num(r1[i])},
                        {"model", num(m)}});
    }
  }
  rec.details = {{"instruction", key}, {"summary", cl.summary}, {"same_bits", same_bits}, {"cases", cl.cases},
                 {"models", models}, {"consistent", cl.consistent}, {"closest", cl.closest},
                 {"closest_misses", cl.closest_misses}, {"first_miss", cl.first_miss}, {"errors", tbl},
                 {"misses", misses}};
  return rec;
}

}  // namespace ceiling::probes
