// The kernel-kind table: the built-in kinds of GPGPU'25 §3 and any registered later.
#include "kernel_kind.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sparse_matrix.hpp"
#include "stencil_shape.hpp"
#include "units.hpp"

namespace ceiling {
namespace {

// 4096 stays 4096; 1e9 reads "1e9".
std::string num(double v) {
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    os << static_cast<long long>(v);
    return os.str();
  }
  os << v;
  return os.str();
}

double get(const KernelParams& p, const char* name, double fallback = 0) {
  const auto it = p.find(name);
  return it == p.end() ? fallback : it->second;
}

ParamSpec count(std::string name, std::string help) {
  return {std::move(name), ParamType::count, true, std::nullopt, std::move(help), 1, 0, {}};
}
ParamSpec integer(std::string name, std::string help, double min, double max, std::optional<double> dflt = {},
                  std::vector<double> allowed = {}) {
  return {std::move(name), ParamType::integer, !dflt.has_value(), dflt, std::move(help), min, max, std::move(allowed)};
}

// Each model function names the parameter it rejects.
template <class F>
KernelModel checked(F&& f) {
  try {
    return f();
  } catch (const KernelParamError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    // "gemv: m must be ..." -> parameter "m"
    const std::string what = e.what();
    const auto colon = what.find(": ");
    std::string param;
    if (colon != std::string::npos) {
      const auto end = what.find(' ', colon + 2);
      param = what.substr(colon + 2, end == std::string::npos ? std::string::npos : end - colon - 2);
    }
    throw KernelParamError(param, what);
  }
}

std::vector<KernelKind> builtin_kinds() {
  std::vector<KernelKind> t;
  {
    KernelKind k;
    k.name = "scale";
    k.summary = "SCALE a = q b (STREAM scale): W = n, Q = 2nD";
    k.params = {count("n", "elements")};
    k.model = [](const KernelParams& p, Precision pr) { return checked([&] { return scale_model(get(p, "n"), pr); }); };
    k.params_for_bytes = [](double bytes, Precision pr) {
      return KernelParams{{"n", std::floor(bytes / (2.0 * bytes_per_value(pr)))}};
    };
    k.params_for_count = [](double c) { return KernelParams{{"n", c}}; };
    k.size_text = [](const KernelParams& p) { return "n=" + num(get(p, "n")); };
    k.order = 10;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "gemv";
    k.summary = "GEMV y = A x, A m x n: W = 2mn, Q = (mn+m+n)D (Eq. 7)";
    // launch_config: a launch shape pinned by the GPU tests (each kernel's own encoding); not a model input.
    k.params = {count("m", "rows"), count("n", "columns"),
                {"launch_config", ParamType::integer, false, std::nullopt, "pinned launch shape (tests)", 1, 4095, {}, true}};
    k.model = [](const KernelParams& p, Precision pr) {
      return checked([&] { return gemv_model(get(p, "m"), get(p, "n"), pr); });
    };
    k.params_for_bytes = [](double bytes, Precision pr) {
      const double n = std::llround(std::sqrt(bytes / bytes_per_value(pr)));
      return KernelParams{{"m", n}, {"n", n}};
    };
    k.params_for_count = [](double c) { return KernelParams{{"m", c}, {"n", c}}; };
    k.size_text = [](const KernelParams& p) { return num(get(p, "m")) + "x" + num(get(p, "n")); };
    k.order = 20;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "intensity";
    k.summary = "k FMAs per streamed value (rows of w values times r = k/w matrices): W = 2kn, Q = 2nD, I = k/D";
    // launch_config: the CUDA-core kernel pinned by the GPU tests (1: staged, 2: immediates); not a model input.
    k.params = {count("n", "values streamed (a multiple of the row width w: 8, fp16 16)"),
                integer("k", "FMAs per value: 1, 2, 4 (fp16 also 8) or a multiple of w (default 8)", 1, 65536, 8),
                {"launch_config", ParamType::integer, false, std::nullopt, "pinned kernel (tests)", 1, 2, {}, true}};
    k.model = [](const KernelParams& p, Precision pr) {
      return checked([&] { return intensity_model(get(p, "n"), get(p, "k", 8), pr); });
    };
    // Whole rows; k at its default (--sizes sweeps the working set at k = 8).
    k.params_for_bytes = [](double bytes, Precision pr) {
      const double w = intensity_row_width(pr);
      return KernelParams{{"n", std::max(w, std::floor(bytes / (2.0 * bytes_per_value(pr) * w)) * w)}, {"k", 8}};
    };
    k.params_for_count = [](double c) { return KernelParams{{"n", c}, {"k", 8}}; };
    // k over powers of two from 1 to 1024, fp16 to 4096 (I = k/D: fp64 1/8 .. 128), so that every unit
    // crosses its DRAM ridge by at least 4x on an H100 (3.35 TB/s) or H200 (4.8 TB/s): CUDA cores
    // (fp64 ~10, fp32 ~20, fp16 ~39 flop/byte on the H100) and tensor cores (fp64 ~20, fp16 mma ~290:
    // 4x at k ~ 2300), at one working set inside the L2 (L2/4, under the split at L2/2) and one outside
    // (4 x L2). --quick keeps k = 1, 4, 16, 32 .. 256: the overlap fit needs >= 3 points per level with
    // I in [B/4, 4B] (k = 16 .. 128 on an H200).
    k.sweep_points = [](double l2_bytes, Precision pr, bool quick) {
      std::vector<KernelParams> out;
      const double w = intensity_row_width(pr);
      const int e_max = quick ? 8 : intensity_row_width(pr) == 16 ? 12 : 10;
      for (double bytes : {l2_bytes / 4, 4 * l2_bytes}) {
        const double n = std::max(w, std::floor(bytes / (2.0 * bytes_per_value(pr) * w)) * w);
        for (int e = 0; e <= e_max; ++e) {
          if (quick && (e == 1 || e == 3)) continue;
          out.push_back({{"n", n}, {"k", std::exp2(e)}});
        }
      }
      return out;
    };
    k.size_text = [](const KernelParams& p) { return "n=" + num(get(p, "n")) + " k=" + num(get(p, "k", 8)); };
    k.order = 25;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "spmv-csr";
    k.summary = "SpMV in CSR: W = 2 nnz, Q = (nnz+m+n)D + (nnz+m+1)Iidx (Eq. 10)";
    k.params = {count("m", "rows"), count("n", "columns"), count("nnz", "non-zeros"),
                integer("index_bytes", "bytes per index (default 4)", 1, 8, 4),
                // Which registered matrix (model/sparse_matrix.hpp) validate runs: set by the sweep.
                {"matrix_id", ParamType::integer, false, std::nullopt, "registered matrix id", 0, 1e9, {}, true}};
    k.model = [](const KernelParams& p, Precision pr) {
      if (get(p, "nnz") > get(p, "m") * get(p, "n"))
        throw KernelParamError("nnz", "spmv-csr: nnz " + num(get(p, "nnz")) + " exceeds m*n = " +
                                          num(get(p, "m") * get(p, "n")));
      return checked([&] {
        return spmv_csr_model(get(p, "m"), get(p, "n"), get(p, "nnz"), static_cast<int>(get(p, "index_bytes", 4)), pr);
      });
    };
    // validate: one point per registered matrix (validate --matrix / --suite register them).
    k.sweep_points = [](double, Precision, bool) {
      std::vector<KernelParams> out;
      for (int id = 0; id < registered_matrix_count(); ++id) {
        const auto a = registered_matrix(id);
        out.push_back({{"m", a->rows}, {"n", a->cols}, {"nnz", static_cast<double>(a->nnz())}, {"index_bytes", 4},
                       {"matrix_id", id}});
      }
      return out;
    };
    k.output_rate = "GFLOP/s (2 nnz / time)";
    k.figure = "GPGPU'25 Figure 7 style";
    k.plot_bound = "bound (CSR, Eq. 10)";
    k.plot_caption =
        "Effective GFLOP/s (2 nnz / median time) of each SpMV implementation per matrix, matrices ordered by nnz; "
        "circles: the model's CSR bound (W / bound time, x read once). The dashed line splits the matrices whose "
        "CSR working set fits half the L2 from the rest, as Figure 7's geomeans do.";
    k.matrix_inputs = true;
    k.input_label = [](const KernelParams& p) -> std::string {
      const auto it = p.find("matrix_id");
      if (it == p.end() || it->second < 0 || it->second >= registered_matrix_count()) return {};
      return registered_matrix(static_cast<int>(it->second))->name;
    };
    k.size_text = [](const KernelParams& p) {
      const auto it = p.find("matrix_id");
      if (it != p.end() && it->second >= 0 && it->second < registered_matrix_count())
        return registered_matrix(static_cast<int>(it->second))->name;
      return num(get(p, "m")) + "x" + num(get(p, "n")) + " nnz=" + num(get(p, "nnz"));
    };
    k.order = 30;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "spmv";
    k.summary = "SpMV, any format: Q = (nnz+m+n)D + index_count Iidx + packed_count Z (Eq. 9)";
    k.params = {count("m", "rows"), count("n", "columns"), count("nnz", "non-zeros"),
                {"index_count", ParamType::amount, false, 0.0, "indices read (default 0)", 0, 0, {}},
                integer("index_bytes", "bytes per index (default 4)", 1, 8, 4),
                {"packed_count", ParamType::amount, false, 0.0, "packed blocks read (default 0)", 0, 0, {}},
                integer("packed_bytes", "bytes per packed block (default 0)", 0, 64, 0)};
    k.model = [](const KernelParams& p, Precision pr) {
      return checked([&] {
        return spmv_generic_model(get(p, "m"), get(p, "n"), get(p, "nnz"), get(p, "index_count"),
                                  static_cast<int>(get(p, "index_bytes", 4)), get(p, "packed_count"),
                                  static_cast<int>(get(p, "packed_bytes")), pr);
      });
    };
    k.order = 40;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "stencil";
    k.summary = "stencil of |S| points, t fused steps: W = 2|S|t, Q = 2D per point (Eq. 12-13)";
    k.params = {integer("points", "points |S| (5 for 2d5pt)", 1, 1e6),
                integer("dims", "2 or 3", 2, 3, std::nullopt, {2, 3}),
                count("nx", "grid size in x"),
                count("ny", "grid size in y"),
                {"nz", ParamType::count, false, std::nullopt, "grid size in z (3-D only)", 1, 0, {}},
                integer("steps", "temporal blocking depth t (default 1)", 1, 1e6, 1),
                // Which registered shape (model/stencil_shape.hpp) validate runs: set by the sweep and predict --shape.
                {"shape_id", ParamType::integer, false, std::nullopt, "registered stencil shape id", 0, 1e9, {}, true},
                // launch_config: the plain variant's kernel pinned by the GPU tests (1: a point per thread, 2: columns).
                {"launch_config", ParamType::integer, false, std::nullopt, "pinned plain kernel (tests)", 1, 2, {}, true}};
    k.model = [](const KernelParams& p, Precision pr) {
      const int dims = static_cast<int>(get(p, "dims"));
      if (dims == 2 && p.count("nz")) throw KernelParamError("nz", "a 2-D stencil takes no nz");
      if (dims == 3 && !p.count("nz")) throw KernelParamError("dims", "a 3-D stencil needs nz");
      const StencilShape* shape = nullptr;
      if (p.count("shape_id")) {
        const double id = get(p, "shape_id");
        if (id < 0 || id >= registered_stencil_shape_count() || id != std::floor(id))
          throw KernelParamError("shape_id", "stencil: no registered stencil shape " + num(id) + " (" +
                                                 std::to_string(registered_stencil_shape_count()) + " registered)");
        shape = &registered_stencil_shape(static_cast<int>(id));
        if (get(p, "points") != shape->size())
          throw KernelParamError("points", "stencil: points " + num(get(p, "points")) + " differs from shape " +
                                               shape->name + "'s |S| = " + std::to_string(shape->size()));
        if (dims != shape->dims)
          throw KernelParamError("dims", "stencil: dims " + std::to_string(dims) + " differs from shape " + shape->name +
                                             "'s " + std::to_string(shape->dims));
        const StencilDomain d{dims, static_cast<std::int64_t>(get(p, "nx")), static_cast<std::int64_t>(get(p, "ny")),
                              dims == 3 ? static_cast<std::int64_t>(get(p, "nz")) : 1};
        try {
          check_stencil_domain(*shape, d);
        } catch (const std::invalid_argument& e) {
          const char* axis = "nx";
          if (d.nx > 2 * shape->radius(0)) axis = d.ny > 2 * shape->radius(1) ? "nz" : "ny";
          throw KernelParamError(axis, std::string("stencil: ") + e.what());
        }
      }
      KernelModel m = checked([&] {
        return stencil_model(static_cast<int>(get(p, "points")), dims, get(p, "nx"), get(p, "ny"), get(p, "nz"),
                             static_cast<int>(get(p, "steps", 1)), pr);
      });
      if (shape) {
        const std::string generic = "stencil " + std::to_string(dims) + "d" + num(get(p, "points")) + "pt";
        if (m.description.rfind(generic, 0) == 0) m.description = "stencil " + shape->name + m.description.substr(generic.size());
      }
      return m;
    };
    // validate: every registered shape (none: the six built-ins) on the selected domains of its dims
    // (none selected: Table 3's and one in L2), at the selected depth (none: Table 3's for the shape).
    k.sweep_points = [](double l2_bytes, Precision, bool) {
      if (registered_stencil_shape_count() == 0)
        for (const auto& s : builtin_stencil_shapes()) register_stencil_shape(s);
      const StencilSweepSelection sel = stencil_sweep_selection();
      std::vector<KernelParams> out;
      for (int id = 0; id < registered_stencil_shape_count(); ++id) {
        const StencilShape& s = registered_stencil_shape(id);
        std::vector<StencilDomain> domains;
        if (sel.domains.empty()) {
          domains = table3_domains(s.dims);
          if (sel.in_l2_domain && l2_bytes > 0) {
            const StencilDomain d = stencil_domain_for_bytes(s.dims, l2_bytes / 4);
            bool fits = true;
            try {
              check_stencil_domain(s, d);
            } catch (const std::invalid_argument&) {
              fits = false;  // a user's wide shape on a tiny L2: no in-L2 point
            }
            if (fits) domains.push_back(d);
          }
        } else {
          for (const auto& d : sel.domains)
            if (d.dims == s.dims) domains.push_back(d);
        }
        const int steps = sel.steps > 0 ? sel.steps : table3_steps(s.name);
        for (const auto& d : domains) {
          KernelParams q{{"points", s.size()}, {"dims", s.dims},  {"nx", static_cast<double>(d.nx)},
                         {"ny", static_cast<double>(d.ny)}, {"steps", steps}, {"shape_id", id}};
          if (s.dims == 3) q["nz"] = static_cast<double>(d.nz);
          out.push_back(std::move(q));
        }
      }
      return out;
    };
    k.input_label = [](const KernelParams& p) -> std::string {
      const auto it = p.find("shape_id");
      if (it == p.end() || it->second < 0 || it->second >= registered_stencil_shape_count()) return {};
      return registered_stencil_shape(static_cast<int>(it->second)).name;
    };
    // "10240x10240 t=3" (the shape is the label); without a shape "5pt 10240x10240 t=3".
    k.size_text = [](const KernelParams& p) {
      const auto id = p.find("shape_id");
      const bool shaped = id != p.end() && id->second >= 0 && id->second < registered_stencil_shape_count();
      return (shaped ? std::string{} : num(get(p, "points")) + "pt ") + num(get(p, "nx")) + "x" + num(get(p, "ny")) +
             (get(p, "dims") == 3 ? "x" + num(get(p, "nz")) : std::string{}) + " t=" + num(get(p, "steps", 1));
    };
    k.stencil_inputs = true;
    k.input_group = [](const KernelParams& p) {
      return num(get(p, "nx")) + "x" + num(get(p, "ny")) + (get(p, "dims") == 3 ? "x" + num(get(p, "nz")) : std::string{}) +
             " t=" + num(get(p, "steps", 1));
    };
    k.flop_per_output = [](const KernelParams& p) { return 2 * get(p, "points"); };  // GStencil/s: points x steps / s
    k.output_rate = "GStencil/s (points x steps / time)";
    k.figure = "GPGPU'25 Figure 8 style";
    k.plot_bound = "bound (t fused steps, Eq. 12-13)";
    k.plot_caption =
        "GStencil/s (grid points x time steps / median time) of each stencil implementation per shape and domain "
        "(GPGPU'25 Figure 8 on this GPU): plain makes one pass per step, blocked fuses t steps in shared memory, the "
        "tensor-core variant computes the fused steps as Toeplitz products on FP64 mma. Circles: the model's bound for "
        "t fused steps (Q = 2 D per point). The dashed line splits the domains that fit half the L2.";
    k.order = 50;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "gemm";
    k.summary = "GEMM C += A B, m x n x k: W = 2mnk, Q = (mk+kn+2mn)D";
    // launch_config: the DFMA GEMM's shared-memory pipeline pinned by the GPU tests (1: 32 x 3, 2: 16 x 4).
    k.params = {count("m", "rows of A and C"), count("n", "columns of B and C"), count("k", "inner dimension"),
                {"launch_config", ParamType::integer, false, std::nullopt, "pinned pipeline (tests)", 1, 2, {}, true}};
    k.model = [](const KernelParams& p, Precision pr) {
      return checked([&] { return gemm_model(get(p, "m"), get(p, "n"), get(p, "k"), pr); });
    };
    // Square problems: A, B and C (3 n^2 D) fill the working set.
    k.params_for_bytes = [](double bytes, Precision pr) {
      const double n = std::max(1.0, std::round(std::sqrt(bytes / (3.0 * bytes_per_value(pr)))));
      return KernelParams{{"m", n}, {"n", n}, {"k", n}};
    };
    k.params_for_count = [](double c) { return KernelParams{{"m", c}, {"n", c}, {"k", c}}; };
    // The compute-bound side of the model (Hopper paper's "tensor cores remain advantageous"):
    // square sizes 1024 .. 16384, not a working-set sweep.
    k.sweep_points = [](double, Precision, bool quick) {
      std::vector<KernelParams> out;
      for (double n : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
        if (quick && (n == 2048.0 || n == 16384.0)) continue;
        out.push_back({{"m", n}, {"n", n}, {"k", n}});
      }
      return out;
    };
    k.size_text = [](const KernelParams& p) { return num(get(p, "m")) + "x" + num(get(p, "n")) + "x" + num(get(p, "k")); };
    k.opt_in = true;
    k.order = 60;
    t.push_back(std::move(k));
  }
  {
    KernelKind k;
    k.name = "custom";
    k.summary = "your own kernel: its work W and traffic Q";
    k.params = {{"work", ParamType::flop, true, std::nullopt, "work W, e.g. '2 GFLOP' or 2e9", 0, 0, {}},
                {"traffic", ParamType::bytes, true, std::nullopt, "traffic Q, e.g. '8 GB'", 0, 0, {}}};
    k.model = [](const KernelParams& p, Precision pr) {
      return checked([&] { return custom_model(get(p, "work"), get(p, "traffic"), pr); });
    };
    k.order = 1000;
    t.push_back(std::move(k));
  }
  return t;
}

std::vector<KernelKind>& table() {
  static std::vector<KernelKind> t = builtin_kinds();
  return t;
}

}  // namespace

const std::vector<KernelKind>& kernel_kind_table() { return table(); }

const KernelKind* find_kernel_kind(std::string_view name) {
  for (const auto& k : table())
    if (k.name == name) return &k;
  return nullptr;
}

std::string kernel_kind_names(const char* sep) {
  std::string s;
  for (const auto& k : table()) s += (s.empty() ? "" : sep) + k.name;
  return s;
}

const KernelKind& kernel_kind(std::string_view name) {
  if (const KernelKind* k = find_kernel_kind(name)) return *k;
  throw std::invalid_argument("unknown kind '" + std::string(name) + "' (one of " + kernel_kind_names() + ")");
}

void register_kernel_kind(KernelKind kind) {
  if (kind.name.empty() || !kind.model) throw std::logic_error("a kernel kind needs a name and a model");
  if (find_kernel_kind(kind.name)) throw std::logic_error("kernel kind registered twice: " + kind.name);
  for (const auto& p : kind.params)
    if (p.required == p.default_value.has_value() && p.default_value)
      throw std::logic_error("kernel kind " + kind.name + ": required parameter " + p.name + " has a default");
  table().push_back(std::move(kind));
}

std::string param_option(const std::string& name) {
  std::string o = "--" + name;
  std::replace(o.begin(), o.end(), '_', '-');
  return o;
}

double parse_param(const ParamSpec& spec, std::string_view text, std::string_view field) {
  const std::string f(field);
  switch (spec.type) {
    case ParamType::count:
      return parse_size(text, field);
    case ParamType::flop:
      return parse_work_flop(text, field);
    case ParamType::bytes:
      return parse_traffic_bytes(text, field);
    case ParamType::integer:
    case ParamType::amount: {
      double v = 0;
      try {
        v = parse_as(text, Dimension::dimensionless, field);
      } catch (const UnitError& e) {
        throw std::invalid_argument(e.what());
      }
      const std::string got = ", got '" + std::string(text) + "'";
      if (!std::isfinite(v)) throw std::invalid_argument(f + ": must be a finite number" + got);
      if (std::fabs(v) > kMaxKernelAmount) throw std::invalid_argument(f + ": must be at most 1e30" + got);
      if (spec.type == ParamType::integer && v != std::floor(v))
        throw std::invalid_argument(f + ": must be a whole number" + got);
      if (!spec.allowed.empty()) {
        if (std::find(spec.allowed.begin(), spec.allowed.end(), v) == spec.allowed.end()) {
          std::string list;
          for (size_t i = 0; i < spec.allowed.size(); ++i)
            list += (i == 0 ? "" : i + 1 == spec.allowed.size() ? " or " : ", ") + num(spec.allowed[i]);
          throw std::invalid_argument(f + ": must be " + list + got);
        }
      } else if (v < spec.min || (spec.max > 0 && v > spec.max)) {
        throw std::invalid_argument(f + ": must be " +
                                    (spec.max > 0 ? num(spec.min) + ".." + num(spec.max) : ">= " + num(spec.min)) + got);
      }
      return v;
    }
  }
  return 0;
}

KernelModel make_kernel_model(const KernelKind& kind, KernelParams given, Precision p) {
  for (const auto& given_param : given) {
    const std::string& name = given_param.first;  // not a structured binding: clang 14 (fuzz build) cannot capture one
    const bool known = std::any_of(kind.params.begin(), kind.params.end(), [&](const ParamSpec& s) { return s.name == name; });
    if (!known) {
      std::string takes;
      for (const auto& s : kind.params)
        if (!s.hidden) takes += (takes.empty() ? "" : ", ") + s.name;
      throw KernelParamError(name, name + " does not apply to kind " + kind.name + " (it takes " + takes + ")");
    }
  }
  for (const auto& s : kind.params) {
    if (given.count(s.name)) continue;
    if (s.required) throw KernelParamError(s.name, "kind " + kind.name + " needs " + s.name);
    if (s.default_value) given[s.name] = *s.default_value;
  }
  KernelModel k = kind.model(given, p);
  k.kind = kind.name;
  return k;
}

std::string kernel_size_text(std::string_view kind, const KernelParams& params) {
  const KernelKind* k = find_kernel_kind(kind);
  if (k && k->size_text) return k->size_text(params);
  std::string s;
  const auto add = [&](const std::string& name, double v) { s += (s.empty() ? "" : " ") + name + "=" + num(v); };
  if (k) {
    for (const auto& spec : k->params)
      if (params.count(spec.name)) add(spec.name, params.at(spec.name));
  } else {
    for (const auto& [name, v] : params) add(name, v);
  }
  return s;
}

std::string dram_pattern_for_streams(double read_bytes, double write_bytes) {
  const double total = read_bytes + write_bytes;
  if (!(total > 0)) return "";
  const double share = read_bytes / total;
  const std::pair<const char*, double> patterns[] = {{"read", 1.0}, {"triad", 2.0 / 3}, {"scale", 0.5}, {"write", 0.0}};
  const char* best = "read";
  double gap = 2;
  for (const auto& [name, s] : patterns)
    if (std::fabs(share - s) < gap) gap = std::fabs(share - s), best = name;
  return best;
}

}  // namespace ceiling
