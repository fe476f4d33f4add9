#include "numerics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ceiling::numerics {

namespace {

bool same(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return x == y;  // +0 == -0: the sign of a zero is not judged
}

double flush_if(bool flush, double v, const Format& f) {
  return (flush && v != 0 && std::fabs(v) < f.min_normal()) ? std::copysign(0.0, v) : v;
}

std::string fmt_double(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace

std::string Hypothesis::describe() const {
  std::ostringstream os;
  os << "block " << block << ", ";
  if (extra_bits == kExact) os << "exact sums";
  else os << extra_bits << " extra bits (truncated)";
  os << ", " << round_name(round) << " to " << (inter ? inter->name : "?");
  if (stride) os << " (k dealt to the blocks in runs of " << stride << ")";
  if (extra_bits != kExact && align_nominal) os << ", aligned on 2 integer bits (products at ea+eb+1, C at ec+1)";
  os << (c_after ? ", C added after (RN)" : ", C inside");
  os << ", A/B subnormals " << (flush_ab ? "flushed" : "kept") << ", C subnormals "
     << (flush_c ? "flushed" : "kept") << ", results " << (flush_out ? "flushed" : "kept");
  return os.str();
}

double emulate(const Hypothesis& h, const NumericShape& s, const DotCase& c) {
  const Format& inter = *h.inter;
  const int K = s.K;
  if (K > 64) throw std::invalid_argument("emulate: K above 64");
  double p[64];
  int pe[64];  // alignment exponent of each product (align_nominal)
  for (int k = 0; k < K; ++k) {
    const double a = flush_if(h.flush_ab, c.a[k], *s.in), b = flush_if(h.flush_ab, c.b[k], *s.in);
    p[k] = a * b;  // exact in double
    pe[k] = (a != 0 && b != 0) ? exponent_of(a) + exponent_of(b) + 1 : 0;
  }
  const double c0 = flush_if(h.flush_c, c.c, *s.out);
  double acc = h.c_after ? 0.0 : c0;
  const int nblocks = (K + h.block - 1) / h.block;
  for (int b = 0; b < nblocks && std::isfinite(acc); ++b) {
    double terms[65];
    int te[65];  // alignment exponents
    int n = 0;
    te[n] = acc != 0 ? exponent_of(acc) + (h.align_nominal ? 1 : 0) : 0;
    terms[n++] = acc;
    for (int k = 0; k < K; ++k) {
      // Block b: k in [b*block, (b+1)*block), or with a stride s the runs of s consecutive k
      // dealt round-robin over the blocks ((k / s) % nblocks == b).
      const bool mine = h.stride ? (k / h.stride) % nblocks == b : k / h.block == b;
      if (!mine) continue;
      te[n] = h.align_nominal ? pe[k] : (p[k] != 0 ? exponent_of(p[k]) : 0);
      terms[n++] = p[k];
    }
    ExactSum sum;
    if (h.extra_bits == Hypothesis::kExact) {
      for (int i = 0; i < n; ++i) sum.add(terms[i]);
    } else {
      int emax = std::numeric_limits<int>::min();
      for (int i = 0; i < n; ++i)
        if (terms[i] != 0) emax = std::max(emax, te[i]);
      if (emax == std::numeric_limits<int>::min()) {
        acc = 0;
        continue;
      }
      const int q = emax - inter.man_bits - h.extra_bits;
      for (int i = 0; i < n; ++i) sum.add(truncate_to_quantum(terms[i], q));
    }
    acc = sum.round(inter, h.round, h.flush_out);
  }
  if (h.c_after && std::isfinite(acc)) {
    ExactSum sum(acc);
    sum.add(c0);
    acc = sum.round(inter, Round::nearest_even, h.flush_out);
  }
  if (&inter != s.out && std::isfinite(acc)) acc = flush_if(h.flush_out, round_to(acc, *s.out), *s.out);
  return acc;
}

DotDevice emulator(const Hypothesis& h, const NumericShape& s) {
  return [h, s](const std::vector<DotCase>& cases) {
    std::vector<double> r;
    r.reserve(cases.size());
    for (const auto& c : cases) r.push_back(emulate(h, s, c));
    return r;
  };
}

std::vector<int> extra_bits_axis() {
  std::vector<int> v;
  for (int e = -12; e <= 30; ++e) v.push_back(e);
  v.push_back(Hypothesis::kExact);
  return v;
}

std::vector<Hypothesis> hypothesis_grid(const NumericShape& s) {
  std::vector<Hypothesis> g;
  std::vector<const Format*> inters{s.out};
  if (s.out != &fp32()) inters.push_back(&fp32());
  // FP8 inputs into an FP32 D: the running sum may be narrower than FP32 (12-14 fraction bits).
  if (s.out == &fp32() && s.in->storage_bits == 8)
    for (int mb : {12, 13, 14}) inters.push_back(&fp32_narrow(mb));
  for (int b : {1, 2, 4, 8, 16, 32, 64})
    if (b <= s.K && s.K % b == 0)
      for (int e : extra_bits_axis())
        for (Round r : {Round::nearest_even, Round::toward_zero, Round::down, Round::up})
          for (const Format* f : inters)
            for (int ca = 0; ca < 2; ++ca)
              for (int fl = 0; fl < 8; ++fl)
                for (int al = 0; al < (e == Hypothesis::kExact ? 1 : 2); ++al)
                  for (int st : {0, 2}) {
                if (st && (b >= s.K || b < st)) continue;  // one block, or runs longer than a block: no news
                Hypothesis h;
                h.stride = st;
                h.align_nominal = al;
                h.block = b;
                h.extra_bits = e;
                h.round = r;
                h.inter = f;
                h.c_after = ca;
                h.flush_ab = fl & 1;
                h.flush_c = fl & 2;
                h.flush_out = fl & 4;
                g.push_back(h);
              }
  return g;
}

// ---- constructed cases ---------------------------------------------------------------------

namespace {

struct CaseBuilder {
  const NumericShape& s;
  std::vector<DotCase> out;

  DotCase zero(const std::string& tag) const {
    DotCase c;
    c.a.assign(s.K, 0.0);
    c.b.assign(s.K, 0.0);
    c.tag = tag;
    return c;
  }
  // a, b in the input format with a*b == v (b a power of two, a the significand), if any.
  std::optional<std::pair<double, double>> factor(double v) const {
    if (v == 0) return std::make_pair(0.0, 0.0);
    const Format& f = *s.in;
    const int lo = f.emin() - f.man_bits, hi = f.emax();
    std::vector<int> ys;
    for (int d = 0; d <= hi - lo; ++d) {
      if (d <= hi) ys.push_back(d);
      if (d > 0 && -d >= lo) ys.push_back(-d);
    }
    // Normal factors first (a case must survive a model that flushes subnormal inputs).
    for (bool allow_sub : {false, true})
      for (int y : ys) {
        const double b = std::ldexp(1.0, y), a = v / b;
        const bool normal = std::fabs(a) >= f.min_normal() && b >= f.min_normal();
        if ((normal || allow_sub) && f.representable(b) && f.representable(a) && a * b == v) return std::make_pair(a, b);
      }
    return std::nullopt;
  }
  bool put_product(DotCase& c, int k, double v) const {
    auto ab = factor(v);
    if (!ab) return false;
    c.a[k] = ab->first;
    c.b[k] = ab->second;
    return true;
  }
  // v spread over products at k0, k0+1, ... (each at most the input's significand wide), so sums
  // like 0.5 + 2^-j ulp exist for FP8 too. False when the positions or the range run out.
  bool put_value(DotCase& c, int k0, double v) const {
    const int width = s.in->man_bits + 1;
    double rest = v;
    for (int k = k0; k < s.K && rest != 0; ++k) {
      const int top = exponent_of(rest);
      const double chunk = truncate_to_quantum(rest, top - width + 1);
      if (!put_product(c, k, chunk)) return false;
      rest -= chunk;  // exact: chunk holds the leading bits of rest
    }
    return rest == 0;
  }
  // By reference: `ok` is often computed by filling `c` in the same call's arguments.
  void push_if(bool ok, const DotCase& c) {
    if (ok) out.push_back(c);
  }
};

}  // namespace

std::vector<DotCase> constructed_cases(const NumericShape& s, uint64_t seed) {
  if (!s.in || !s.out || s.K <= 0) throw std::invalid_argument("constructed_cases: incomplete shape");
  CaseBuilder cb{s, {}};
  const Format& in = *s.in;
  const Format& out = *s.out;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw_in = [&](double scale) { return round_to(normal(rng) * scale, in, Round::nearest_even, true); };
  auto draw_out = [&](double scale) { return round_to(normal(rng) * scale, out, Round::nearest_even, true); };

  // Random cases first: most models fail on them, so classification stops early.
  for (int i = 0; i < 48; ++i) {
    DotCase c = cb.zero("rnd:full");
    for (int k = 0; k < s.K; ++k) c.a[k] = draw_in(1), c.b[k] = draw_in(1);
    c.c = draw_out(1);
    cb.out.push_back(c);
  }
  // Products exact: one product, c = 0.
  auto draw_normal_in = [&] {  // a normal value of the input format (a subnormal one may be flushed)
    for (;;)
      if (const double v = draw_in(1); std::fabs(v) >= in.min_normal()) return v;
  };
  for (int i = 0; i < 32; ++i) {
    DotCase c = cb.zero("mult");
    c.a[0] = draw_normal_in(), c.b[0] = draw_normal_in();
    cb.out.push_back(c);
  }

  // The levels the rounding cases probe: the output's last bit and, for an FP16 D, FP32's.
  const int lo_prod = 2 * (in.emin() - in.man_bits), hi_prod = 2 * in.emax();
  std::vector<int> levels{out.man_bits};
  if (out.man_bits != fp32().man_bits) levels.push_back(fp32().man_bits);
  for (int p : levels) {
    // Big value 2^E (ulp 2^(E-p)); small products from 2^(E-p-1) down to 2^(E-p-30).
    const int lower = lo_prod + p + 30, upper = std::min(hi_prod + p + 1, out.emax());
    const int E = (lower <= upper) ? std::clamp(p, lower, upper) : upper;
    const double big = std::ldexp(1.0, E), ulp = std::ldexp(1.0, E - p);
    const std::string L = "p" + std::to_string(p) + ":";
    // Rounding direction: c = +-big, one product +-f ulp at k = 0 and at k = K-1.
    for (double f : {0.25, 0.5, 0.75, 1.25, 1.5, 1.75, 0.625, 0.375})
      for (int sc : {1, -1})
        for (int sp : {1, -1})
          for (int k : {0, s.K - 1}) {
            DotCase c = cb.zero(L + "round:" + fmt_double(sp * f) + "ulp");
            c.c = sc * big;
            cb.push_if(out.representable(c.c) && cb.put_value(c, k == 0 ? 0 : s.K - 2, sp * f * ulp), c);
          }
    // Alignment depth: a term 2^-j ulp below (and 0.5 + 2^-j ulp, for RN) in both signs.
    for (int j = 1; j <= 30; ++j)
      for (int sc : {1, -1})
        for (int sp : {1, -1}) {
          for (double f : {std::ldexp(1.0, -j), 0.5 + std::ldexp(1.0, -j), 1.0 + std::ldexp(1.0, -j)}) {
            DotCase c = cb.zero(L + "align:" + std::to_string(j));
            c.c = sc * big;
            cb.push_if(out.representable(c.c) && cb.put_value(c, 0, sp * f * ulp), c);
          }
          // The big term and the small one both products (C = 0: models that add C last see it).
          {
            DotCase c = cb.zero(L + "align-p:" + std::to_string(j));
            const bool ok = cb.put_product(c, 0, sc * big) && cb.put_value(c, 1, sp * (0.5 + std::ldexp(1.0, -j)) * ulp);
            cb.push_if(ok, c);
            DotCase d = cb.zero(L + "align-p:" + std::to_string(j));
            const bool ok2 = cb.put_product(d, 0, sc * big) && cb.put_value(d, 1, sp * std::ldexp(1.0, -j) * ulp);
            cb.push_if(ok2, d);
          }
          // The big term as a product, the small one as C (C holds more bits than any product).
          for (double f : {std::ldexp(1.0, -j), 0.5 + std::ldexp(1.0, -j), 1.0 + std::ldexp(1.0, -j)}) {
            DotCase c = cb.zero(L + "align-c:" + std::to_string(j));
            c.c = sp * f * ulp;
            const bool ok = out.representable(c.c) && cb.put_product(c, 0, sc * big);
            cb.push_if(ok, c);
          }
        }
    // Carries: the sum crosses into the next binade, so its last bit is rounded away even when
    // the terms were aligned to fewer bits than the format holds (ties and non-ties, both signs).
    // The odd part m at several depths t below the format's last bit covers accumulators
    // narrower than the format (a negative number of extra bits).
    for (int t : {0, 3, 6, 9, 12, 15})
      for (int m : {1, 3, 5})
        for (int sc : {1, -1}) {
          const double odd = m * std::ldexp(ulp, t);
          DotCase c = cb.zero(L + "carry-c:" + std::to_string(m) + "<<" + std::to_string(t));
          c.c = sc * (big + odd);
          const bool ok = odd < big && out.representable(c.c) && cb.put_product(c, 0, sc * big);
          cb.push_if(ok, c);
          DotCase d = cb.zero(L + "carry-p:" + std::to_string(m) + "<<" + std::to_string(t));
          const bool ok2 = odd < big && cb.put_product(d, 0, sc * big) && cb.put_product(d, 1, sc * big) &&
                           cb.put_value(d, 2, sc * odd);
          cb.push_if(ok2, d);
        }
    // Blocks: one big product at position i, 3/8 ulp at every other position (c = 0), and the
    // big term cancelled by its negative at position i2 (only the small ones remain exactly).
    for (int i = 0; i < s.K; ++i) {
      DotCase c = cb.zero(L + "block:" + std::to_string(i));
      bool ok = cb.put_product(c, i, big);
      for (int k = 0; k < s.K; ++k)
        if (k != i) ok = ok && cb.put_product(c, k, 0.375 * ulp);
      cb.push_if(ok, c);
      const int i2 = (i + s.K / 2 + 1) % s.K;
      DotCase d = cb.zero(L + "cancel:" + std::to_string(i) + "," + std::to_string(i2));
      ok = cb.put_product(d, i, big) && cb.put_product(d, i2, -big);
      for (int k = 0; k < s.K; ++k)
        if (k != i && k != i2) ok = ok && cb.put_product(d, k, (k % 2 ? 0.75 : -0.25) * ulp);
      cb.push_if(ok, d);
      // C big, the products small, the first block's sum crossing the next block's alignment.
      DotCase e = cb.zero(L + "carry:" + std::to_string(i));
      e.c = big;
      ok = out.representable(big);
      for (int k = 0; k <= i; ++k) ok = ok && cb.put_product(e, k, 0.625 * ulp);
      cb.push_if(ok, e);
    }
  }
  // Double rounding (D narrower than FP32): sums a hair above and below half of D's last bit, the
  // hair at FP32's last bit, so rounding first to FP32 in one direction and then to D shows.
  if (out.man_bits < fp32().man_bits) {
    const int E = std::min(out.man_bits, out.emax());
    const double big = std::ldexp(1.0, E), ulp = std::ldexp(1.0, E - out.man_bits);
    const double hair = std::ldexp(1.0, E - fp32().man_bits);
    for (double f : {0.25, 0.5, 0.75, 1.0, 1.5})
      for (int sh : {1, -1})
        for (int sc : {1, -1}) {
          DotCase c = cb.zero("dround:c");
          c.c = sc * big;
          const bool ok = cb.put_value(c, 0, sc * (0.5 * ulp + sh * f * hair));
          cb.push_if(ok, c);
          DotCase d = cb.zero("dround:p");
          const bool ok2 = cb.put_product(d, 0, sc * big) && cb.put_value(d, 1, sc * (0.5 * ulp + sh * f * hair));
          cb.push_if(ok2, d);
        }
    // The alignment depth below FP32's last bit, seen through D's tie: half an ulp of D minus a
    // term 2^-j of FP32's ulp; truncating the term away leaves an exact tie (rounded to even).
    for (int j = 1; j <= 30; ++j)
      for (int sc : {1, -1}) {
        DotCase c = cb.zero("dround:align:" + std::to_string(j));
        c.c = sc * (big + ulp);  // odd: the tie goes up to even, below it stays
        const bool ok = cb.put_product(c, 0, sc * 0.5 * ulp) && cb.put_value(c, 1, -sc * std::ldexp(hair, -j));
        cb.push_if(ok, c);
      }
  }
  // Subnormals: an A element below the input format's normal range (times a power of two that
  // makes the product normal in D); C below D's normal range; a product below D's normal range.
  {
    const double a = in.min_subnormal() * (in.man_bits >= 2 ? 3 : 1);
    for (int y = 0; y <= in.emax(); ++y) {
      const double b = std::ldexp(1.0, y);
      if (in.representable(a) && in.representable(b) && a * b >= out.min_normal()) {
        DotCase c = cb.zero("sub:ab");
        c.a[0] = a, c.b[0] = b;
        cb.out.push_back(c);
        DotCase d = c;
        d.tag = "sub:ab+c";
        d.c = a * b * 4;
        if (out.representable(d.c)) cb.out.push_back(d);
        break;
      }
    }
    for (double m : {1.0, 5.0, 1023.0}) {
      DotCase c = cb.zero("sub:c");
      c.c = out.min_subnormal() * m;
      if (c.c < out.min_normal() && out.representable(c.c)) cb.out.push_back(c);
      DotCase d = c;  // with a normal product that cancels to leave the subnormal
      d.tag = "sub:c+prod";
      if (cb.put_product(d, 0, out.min_normal())) {
        d.c = -out.min_normal() + c.c;
        if (out.representable(d.c)) cb.out.push_back(d);
      }
    }
    for (double m : {1.0, 3.0, 0.5}) {
      DotCase c = cb.zero("sub:out");
      if (cb.put_product(c, 0, out.min_normal() * m / 4)) cb.out.push_back(c);
    }
  }
  // More random cases: full rows over a wide dynamic range, and one product plus C.
  std::uniform_int_distribution<int> shift(-8, 8);
  for (int i = 0; i < 96; ++i) {
    DotCase c = cb.zero("rnd:wide");
    for (int k = 0; k < s.K; ++k)
      c.a[k] = draw_in(std::ldexp(1.0, shift(rng))), c.b[k] = draw_in(std::ldexp(1.0, shift(rng)));
    c.c = draw_out(std::ldexp(1.0, shift(rng)));
    cb.out.push_back(c);
  }
  for (int i = 0; i < 64; ++i) {
    DotCase c = cb.zero("rnd:acc");
    c.a[0] = draw_in(1), c.b[0] = draw_in(1), c.c = draw_out(1);
    cb.out.push_back(c);
  }
  // Subnormal cases early (after the first random ones): the flush flags split the grid in 8.
  std::stable_partition(cb.out.begin() + 80, cb.out.end(), [](const DotCase& c) { return c.tag.rfind("sub:", 0) == 0; });
  // Inputs must be what the device is given.
  for (const auto& c : cb.out) {
    for (int k = 0; k < s.K; ++k)
      if (!in.representable(c.a[k]) || !in.representable(c.b[k]))
        throw std::logic_error("constructed case " + c.tag + " holds an input its format cannot");
    if (!out.representable(c.c)) throw std::logic_error("constructed case " + c.tag + " holds a C its format cannot");
  }
  return std::move(cb.out);
}

// ---- classification ------------------------------------------------------------------------

namespace {

template <class F>
std::string values_of(const std::vector<Hypothesis>& hs, F get, size_t all_count, const char* what_if_all) {
  std::set<std::string> v;
  for (const auto& h : hs) v.insert(get(h));
  if (v.size() == all_count && all_count > 1) return what_if_all;
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "|") + x;
  return s;
}

std::string range_text(const std::set<int>& v, int top) {
  // extra bits: kExact = exact sums; a run up to `top` together with exact reads ">= m".
  if (v.empty()) return "";
  const bool exact = v.count(Hypothesis::kExact);
  std::vector<int> bits;
  for (int x : v)
    if (x != Hypothesis::kExact) bits.push_back(x);
  if (exact && (bits.empty() || (bits.back() == top && bits.back() - bits.front() + 1 == static_cast<int>(bits.size())))) {
    if (bits.empty()) return "exact (no bits lost)";
    return ">= " + std::to_string(bits.front()) + " (no loss seen in the cases: exact within them)";
  }
  if (!exact && !bits.empty() && bits.back() - bits.front() + 1 == static_cast<int>(bits.size())) {
    if (bits.size() == 1) return std::to_string(bits.front());
    return std::to_string(bits.front()) + ".." + std::to_string(bits.back()) + " (the cases cannot tell them apart)";
  }
  std::string s;
  for (int x : v) s += (s.empty() ? "" : "|") + (x == Hypothesis::kExact ? std::string("exact") : std::to_string(x));
  return s;
}

}  // namespace

Classification classify(const NumericShape& s, const std::vector<DotCase>& cases, const std::vector<double>& results) {
  if (cases.size() != results.size()) throw std::invalid_argument("classify: one result per case expected");
  Classification cl;
  cl.cases = static_cast<int>(cases.size());
  // Products exact: every single-product case gave its product, rounded once to D's type.
  cl.products_exact = true;
  int mult = 0;
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].tag == "mult" && std::fabs(cases[i].a[0]) >= s.in->min_normal() &&
        std::fabs(cases[i].b[0]) >= s.in->min_normal()) {
      ++mult;
      const double exact = round_to(cases[i].a[0] * cases[i].b[0], *s.out);
      if (!same(results[i], exact)) cl.products_exact = false;
    }
  if (!mult) cl.products_exact = false;

  const auto grid = hypothesis_grid(s);
  // The grid is 20k-60k models over ~1000-2000 cases: split it over the host's cores (each
  // model's verdict is independent; the result does not depend on the split).
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 64);
  const auto parallel = [&](auto&& body) {  // body(first, last) over grid indices
    std::vector<std::thread> ts;
    const size_t chunk = (grid.size() + workers - 1) / workers;
    for (size_t w = 0; w < workers; ++w) {
      const size_t lo = w * chunk, hi = std::min(grid.size(), lo + chunk);
      if (lo < hi) ts.emplace_back([&body, lo, hi] { body(lo, hi); });
    }
    for (auto& t : ts) t.join();
  };
  // Pass 1: the models that reproduce every case (each stops at its first miss).
  std::vector<size_t> survived(grid.size(), cases.size());
  parallel([&](size_t lo, size_t hi) {
    for (size_t g = lo; g < hi; ++g)
      for (size_t i = 0; i < cases.size(); ++i)
        if (!same(emulate(grid[g], s, cases[i]), results[i])) {
          survived[g] = i;
          break;
        }
  });
  std::vector<Hypothesis> fit;
  for (size_t g = 0; g < grid.size(); ++g)
    if (survived[g] == cases.size()) fit.push_back(grid[g]);
  if (fit.empty()) {
    // Pass 2, only when none fits: the closest models (fewest misses; ties kept). Each model
    // stops counting once it is past the best count known (a shared bound, only ever lowered).
    std::vector<int> misses(grid.size(), std::numeric_limits<int>::max());
    std::vector<size_t> first(grid.size(), 0);
    std::atomic<int> bound{std::numeric_limits<int>::max()};
    std::vector<size_t> order(grid.size());
    for (size_t g = 0; g < grid.size(); ++g) order[g] = g;
    // Longest survivors first in every chunk: the bound falls fast and prunes the rest.
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return survived[x] > survived[y]; });
    std::vector<size_t> interleaved;  // deal the sorted models round-robin so each worker gets good ones early
    interleaved.reserve(order.size());
    for (size_t w = 0; w < workers; ++w)
      for (size_t j = w; j < order.size(); j += workers) interleaved.push_back(order[j]);
    parallel([&](size_t lo, size_t hi) {
      for (size_t j = lo; j < hi; ++j) {
        const size_t g = interleaved[j];
        int m = 0;
        size_t f = 0;
        for (size_t i = 0; i < cases.size() && m <= bound.load(std::memory_order_relaxed); ++i)
          if (!same(emulate(grid[g], s, cases[i]), results[i])) {
            if (!m) f = i;
            ++m;
          }
        if (m > bound.load(std::memory_order_relaxed)) continue;
        misses[g] = m;
        first[g] = f;
        int cur = bound.load(std::memory_order_relaxed);
        while (m < cur && !bound.compare_exchange_weak(cur, m, std::memory_order_relaxed)) {
        }
      }
    });
    const int best = bound.load();
    size_t first_model = grid.size();
    for (size_t g = 0; g < grid.size(); ++g)
      if (misses[g] == best) {
        fit.push_back(grid[g]);
        if (first_model == grid.size()) first_model = g;
      }
    cl.closest = true;
    cl.closest_misses = best;
    if (first_model < grid.size()) {
      cl.closest_model = grid[first_model].describe();
      const auto& c = cases[first[first_model]];
      cl.first_miss = c.tag + ": device " + fmt_double(results[first[first_model]]) + ", model " +
                      fmt_double(emulate(grid[first_model], s, c));
    }
  } else {
    cl.consistent = static_cast<int>(fit.size());
  }
  for (size_t i = 0; i < fit.size() && i < 64; ++i) cl.models.push_back(fit[i]);
  auto add = [&](const std::string& n, const std::string& v) { cl.parameters.push_back({n, v}); };
  {
    std::set<int> b;
    for (const auto& h : fit) b.insert(h.block);
    std::string v;
    for (int x : b) v += (v.empty() ? "" : "|") + std::to_string(x);
    add("block", v);
  }
  {
    std::set<int> e;
    for (const auto& h : fit) e.insert(h.extra_bits);
    add("extra_bits", range_text(e, 30));
  }
  {
    std::set<std::string> v;
    for (const auto& h : fit)
      if (h.extra_bits != Hypothesis::kExact) v.insert(h.align_nominal ? "2 integer bits" : "exact exponent");
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : "|") + x;
    if (v.size() == 2) t = "undetermined (exact exponent|2 integer bits)";
    if (!t.empty()) add("alignment", t);
  }
  if (s.K > 1) {
    std::set<std::string> v;
    for (const auto& h : fit)
      if (h.block < s.K) v.insert(h.stride ? "runs of " + std::to_string(h.stride) + " k, round-robin" : "contiguous");
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : "|") + x;
    if (v.size() > 1) t = "undetermined (" + t + ")";
    if (!t.empty()) add("k_order", t);
  }
  add("rounding", values_of(fit, [](const Hypothesis& h) { return std::string(round_name(h.round)); }, 4,
                                 "undetermined (every direction fits)"));
  if (s.out != &fp32())
    add("intermediate", values_of(fit, [](const Hypothesis& h) { return h.inter->name; }, 2, "undetermined (fp16|fp32)"));
  else if (s.in->storage_bits == 8)
    add("intermediate", values_of(fit, [](const Hypothesis& h) { return h.inter->name; }, 4,
                                  "undetermined (fp32|fp32/m12|fp32/m13|fp32/m14)"));
  add("c_added", values_of(fit, [](const Hypothesis& h) { return std::string(h.c_after ? "after the products (RN)" : "inside the first block"); }, 2,
                                "undetermined"));
  auto flag = [&](const char* n, auto get) {
    add(n, values_of(fit, [&](const Hypothesis& h) { return std::string(get(h) ? "flushed" : "kept"); }, 2,
                          "undetermined (not reached by the cases)"));
  };
  flag("subnormal_ab", [](const Hypothesis& h) { return h.flush_ab; });
  flag("subnormal_c", [](const Hypothesis& h) { return h.flush_c; });
  flag("subnormal_d", [](const Hypothesis& h) { return h.flush_out; });
  std::ostringstream os;
  if (cl.closest) {
    // Stated as the closest description, never as a fit: the verdicts carry "(closest)".
    for (auto& p : cl.parameters) p.value += " (closest)";
    os << "no model of the family reproduces every case; the closest " << fit.size() << " (of " << grid.size()
       << ") miss " << cl.closest_misses << " of " << cl.cases << " cases: "
       << (cl.products_exact ? "products exact" : "products NOT exact");
    for (const auto& p : cl.parameters) os << "; " << p.name << " " << p.value;
    os << "; first miss " << cl.first_miss;
  } else {
    os << (cl.products_exact ? "products exact" : "products NOT exact");
    for (const auto& p : cl.parameters) os << "; " << p.name << " " << p.value;
    os << " (" << cl.consistent << " of " << grid.size() << " models fit all " << cl.cases << " cases)";
  }
  cl.summary = os.str();
  return cl;
}

// ---- the paper's tables ------------------------------------------------------------------

const char* experiment_name(Experiment e) {
  switch (e) {
    case Experiment::multiplication: return "multiplication";
    case Experiment::inner_product: return "inner_product";
    case Experiment::accumulation: return "accumulation";
  }
  return "?";
}

ErrorPlan error_plan(const NumericShape& s, int samples, uint64_t seed) {
  ErrorPlan plan;
  for (Experiment e : {Experiment::multiplication, Experiment::inner_product, Experiment::accumulation})
    for (bool low : {true, false}) {
      // The same seed for every type and experiment: the same draws (the paper's setting).
      std::mt19937_64 rng(seed);
      std::normal_distribution<double> normal(0.0, 1.0);
      for (int i = 0; i < samples; ++i) {
        std::vector<double> a(s.K), b(s.K);
        for (int k = 0; k < s.K; ++k) a[k] = static_cast<float>(normal(rng)), b[k] = static_cast<float>(normal(rng));
        double c = static_cast<float>(normal(rng));
        const int used = e == Experiment::inner_product ? s.K : 1;
        for (int k = used; k < s.K; ++k) a[k] = b[k] = 0;
        if (e != Experiment::accumulation) c = 0;
        DotCase dc;
        dc.tag = std::string(experiment_name(e)) + (low ? ":low" : ":fp32");
        dc.a.resize(s.K);
        dc.b.resize(s.K);
        for (int k = 0; k < s.K; ++k) {
          dc.a[k] = round_to(a[k], *s.in, Round::nearest_even, true);
          dc.b[k] = round_to(b[k], *s.in, Round::nearest_even, true);
        }
        dc.c = round_to(c, *s.out, Round::nearest_even, true);
        // The reference computes with what was drawn: the low-precision values (init low) or the
        // FP32 values before conversion (init FP32).
        const std::vector<double>& ra = low ? dc.a : a;
        const std::vector<double>& rb = low ? dc.b : b;
        const double rc = low ? dc.c : c;
        ExactSum sum(rc);
        for (int k = 0; k < s.K; ++k) sum.add(ra[k] * rb[k]);
        const double ref = sum.round(fp32(), Round::nearest_even);
        plan.cases.push_back(std::move(dc));
        plan.meta.push_back({e, low, ref, round_to(ref, *s.out)});
      }
    }
  return plan;
}

std::vector<ErrorRow> error_table(const NumericShape&, const ErrorPlan& plan, const std::vector<double>& results) {
  if (results.size() != plan.cases.size()) throw std::invalid_argument("error_table: one result per case expected");
  std::vector<ErrorRow> rows;
  for (Experiment e : {Experiment::multiplication, Experiment::inner_product, Experiment::accumulation})
    for (bool low : {true, false}) {
      ErrorRow r;
      r.experiment = e;
      r.init_low = low;
      for (size_t i = 0; i < results.size(); ++i) {
        const auto& m = plan.meta[i];
        if (m.e != e || m.init_low != low) continue;
        const double d = results[i];
        r.mean_abs_fp32 += std::fabs(d - m.ref_fp32);
        r.mean_abs_out += std::fabs(d - m.ref_out);
        if (m.ref_fp32 != 0) r.max_rel_fp32 = std::max(r.max_rel_fp32, std::fabs(d - m.ref_fp32) / std::fabs(m.ref_fp32));
        ++r.samples;
      }
      if (r.samples) r.mean_abs_fp32 /= r.samples, r.mean_abs_out /= r.samples;
      rows.push_back(r);
    }
  return rows;
}

// ---- chained products ----------------------------------------------------------------------

std::vector<ChainPoint> chain_errors(const NumericShape& s, const DotDevice& dev, int max_length, int chains,
                                     uint64_t seed) {
  if (s.N != s.K) throw std::invalid_argument("chain_errors: D (M x N) becomes the next A (M x K): N must equal K");
  const int M = s.M, N = s.N, K = s.K;
  std::vector<ChainPoint> pts;
  for (bool low : {true, false}) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    auto conv = [&](double x) { return round_to(x, *s.in, Round::nearest_even); };
    // Per chain: A on the device (input type) and in FP64.
    std::vector<std::vector<double>> A_dev(chains), A64(chains);
    std::vector<char> dead(chains, 0);
    for (int c = 0; c < chains; ++c) {
      A_dev[c].resize(M * K);
      A64[c].resize(M * K);
      for (int i = 0; i < M * K; ++i) {
        const double x = static_cast<float>(normal(rng));
        A_dev[c][i] = conv(x);
        A64[c][i] = low ? A_dev[c][i] : x;
      }
    }
    for (int len = 1; len <= max_length; ++len) {
      std::vector<std::vector<double>> B_dev(chains), B64(chains);
      std::vector<DotCase> cases;
      cases.reserve(static_cast<size_t>(chains) * M * N);
      for (int c = 0; c < chains; ++c) {
        B_dev[c].resize(K * N);
        B64[c].resize(K * N);
        for (int i = 0; i < K * N; ++i) {
          const double x = static_cast<float>(normal(rng));
          B_dev[c][i] = conv(x);
          B64[c][i] = low ? B_dev[c][i] : x;
        }
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            DotCase dc;
            dc.a.resize(K);
            dc.b.resize(K);
            for (int k = 0; k < K; ++k) {
              const double a = A_dev[c][i * K + k];
              dc.a[k] = std::isfinite(a) ? a : 0.0;  // a dead chain still runs (its result is ignored)
              dc.b[k] = B_dev[c][k * N + j];
            }
            cases.push_back(std::move(dc));
          }
      }
      const auto D = dev(cases);
      if (D.size() != cases.size()) throw std::runtime_error("chain_errors: the device returned a wrong count");
      ChainPoint pt;
      pt.length = len;
      pt.init_low = low;
      double err_sum = 0;
      for (int c = 0; c < chains; ++c) {
        std::vector<double> D64(M * N);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            double sum = 0;  // the FP64 chain: FP64 arithmetic
            for (int k = 0; k < K; ++k) sum = std::fma(A64[c][i * K + k], B64[c][k * N + j], sum);
            D64[i * N + j] = sum;
          }
        double num = 0, den = 0;
        bool finite = !dead[c];
        for (int i = 0; i < M * N; ++i) {
          const double d = D[static_cast<size_t>(c) * M * N + i];
          if (!std::isfinite(d)) finite = false;
          num += (d - D64[i]) * (d - D64[i]);
          den += d * d;
        }
        for (int i = 0; i < M * N; ++i) {
          A_dev[c][i] = conv(D[static_cast<size_t>(c) * M * N + i]);
          if (!std::isfinite(A_dev[c][i])) finite = false;
          A64[c][i] = D64[i];
        }
        if (!finite) {
          dead[c] = 1;
          ++pt.overflowed;
          continue;
        }
        err_sum += den > 0 ? std::sqrt(num) / std::sqrt(den) : 0.0;
        ++pt.chains;
      }
      pt.mean_rel_err = pt.chains ? err_sum / pt.chains : std::numeric_limits<double>::quiet_NaN();
      pts.push_back(pt);
    }
  }
  return pts;
}

}  // namespace ceiling::numerics
