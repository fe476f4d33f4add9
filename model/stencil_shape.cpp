// Stencil shapes (GPGPU'25 §3.3, Table 3): the built-ins, the strict YAML reader, domains, the CPU
// reference (full grid and light cone, bit-identical), Eq. 14 per shape, and the validate sweep's
// registered shapes and selection.
#include "stencil_shape.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "files.hpp"

namespace ceiling {

namespace {

// ---- the built-ins ----

// The points of a box or star of radius r, z outer, y, x inner; weights distinct per point (so a
// mirrored or transposed kernel fails verification), positive, summing to 1.
StencilShape make_builtin(std::string name, int dims, int r, bool star) {
  StencilShape s;
  s.name = std::move(name);
  s.dims = dims;
  s.source = "built-in";
  const int rz = dims == 3 ? r : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
        if (star && nonzero > 1) continue;
        s.points.push_back({dx, dy, dz, 0.0});
      }
  // Weight of the k-th point proportional to |S| + k: all distinct, within a factor of 2.
  const double n = static_cast<double>(s.points.size());
  const double total = n * n + n * (n - 1) / 2;
  for (size_t k = 0; k < s.points.size(); ++k) s.points[k].weight = (n + static_cast<double>(k)) / total;
  return s;
}

std::string join_int(std::int64_t v) { return std::to_string(v); }

std::string offset_text(const StencilPoint& p, int dims) {
  return "[" + std::to_string(p.dx) + ", " + std::to_string(p.dy) + (dims == 3 ? ", " + std::to_string(p.dz) : "") + "]";
}

// ---- the YAML reader ----

// One key of a mapping with its nodes, so errors can point at the key or at the value.
struct Entry {
  YAML::Node key;
  YAML::Node value;
};

class ShapeLoader {
 public:
  explicit ShapeLoader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& cause) const {
    const int line = m.is_null() ? 0 : m.line + 1;
    const int column = m.is_null() ? 0 : m.column + 1;
    throw StencilShapeError(file_, line, column, key, cause);
  }

  static YAML::Mark value_mark(const Entry& e) {
    return e.value.IsNull() || e.value.Mark().is_null() ? e.key.Mark() : e.value.Mark();
  }

  // Every key in `allowed`, each once.
  std::map<std::string, Entry> mapping(const YAML::Node& node, const YAML::Mark& where, const std::string& path,
                                       std::initializer_list<std::string_view> allowed) const {
    if (!node.IsMap()) fail(node.IsNull() || node.Mark().is_null() ? where : node.Mark(), path, "expected a mapping of keys");
    std::map<std::string, Entry> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first.Mark(), path, "keys must be plain names");
      const std::string k = it->first.Scalar();
      const std::string kpath = path.empty() ? k : path + "." + k;
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string known;
        for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
        fail(it->first.Mark(), kpath, "unknown key (allowed here: " + known + ")");
      }
      if (!out.emplace(k, Entry{it->first, it->second}).second) fail(it->first.Mark(), kpath, "duplicate key");
    }
    return out;
  }

  std::string scalar(const Entry& e, const std::string& path) const {
    if (!e.value.IsScalar()) fail(value_mark(e), path, "expected a single value");
    return e.value.Scalar();
  }

  // A whole number written as digits with an optional sign ("1.0", "1e0", "0x1" are not).
  long long integer(const YAML::Node& node, const YAML::Mark& where, const std::string& path, long long min,
                    long long max) const {
    const YAML::Mark at = node.Mark().is_null() ? where : node.Mark();
    if (!node.IsScalar()) fail(at, path, "expected a whole number");
    std::string s = node.Scalar();
    const std::string shown = "'" + s + "'";
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    long long v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || p != s.data() + s.size() || (ec != std::errc{} && ec != std::errc::result_out_of_range))
      fail(at, path, shown + " is not a whole number");
    if (ec == std::errc::result_out_of_range || v < min || v > max)
      fail(at, path, "must be " + std::to_string(min) + ".." + std::to_string(max) + ", got " + shown);
    return v;
  }

  // A finite number: YAML's .nan/.inf and anything that overflows a double are refused.
  double number(const YAML::Node& node, const YAML::Mark& where, const std::string& path) const {
    const YAML::Mark at = node.Mark().is_null() ? where : node.Mark();
    if (!node.IsScalar()) fail(at, path, "expected a number");
    const std::string text = node.Scalar();
    std::string s = text;
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    std::string lower;
    for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == ".nan" || lower == ".inf" || lower == "-.inf" || lower == "nan" || lower == "inf" ||
        lower == "-inf" || lower == "infinity" || lower == "-infinity")
      fail(at, path, "must be a finite number, got '" + text + "'");
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || p != s.data() + s.size() || (ec != std::errc{} && ec != std::errc::result_out_of_range))
      fail(at, path, "'" + text + "' is not a number");
    if (ec == std::errc::result_out_of_range || !std::isfinite(v))
      fail(at, path, "must be a finite number within the range of a double, got '" + text + "'");
    return v;
  }

 private:
  std::string file_;
};

bool valid_shape_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
  });
}

StencilShape read_shape(const YAML::Node& root, const ShapeLoader& L, const std::string& stem, const std::string& file) {
  const YAML::Mark top;  // line 1, column 1
  const auto m = L.mapping(root, top, "", {"name", "dims", "points"});
  StencilShape s;
  s.source = file;
  if (const auto it = m.find("name"); it != m.end()) {
    s.name = L.scalar(it->second, "name");
    if (!valid_shape_name(s.name))
      L.fail(ShapeLoader::value_mark(it->second), "name",
             "1 to 64 letters, digits, '_', '-', '.' or '+', got '" + s.name + "'");
    if (find_builtin_stencil_shape(s.name))
      L.fail(ShapeLoader::value_mark(it->second), "name",
             "'" + s.name + "' is a built-in shape (" + builtin_stencil_shape_names() + "); name yours otherwise");
  } else {
    s.name = stem;
    if (!valid_shape_name(s.name) || find_builtin_stencil_shape(s.name))
      L.fail(top, "name", "missing, and the file's stem '" + s.name +
                              "' is not a usable name (1 to 64 letters, digits, '_', '-', '.', '+', not a built-in)");
  }
  const auto dims_it = m.find("dims");
  if (dims_it == m.end()) L.fail(top, "dims", "required key is missing (2 or 3)");
  {
    const Entry& e = dims_it->second;
    const long long d = L.integer(e.value, e.key.Mark(), "dims", std::numeric_limits<long long>::min(),
                                  std::numeric_limits<long long>::max());
    if (d != 2 && d != 3) L.fail(ShapeLoader::value_mark(e), "dims", "must be 2 or 3, got " + std::to_string(d));
    s.dims = static_cast<int>(d);
  }
  const auto pts_it = m.find("points");
  if (pts_it == m.end()) L.fail(top, "points", "required key is missing (a list of {offset: [...], weight: w})");
  const Entry& pe = pts_it->second;
  if (!pe.value.IsSequence()) L.fail(ShapeLoader::value_mark(pe), "points", "expected a list of {offset: [...], weight: w}");
  if (pe.value.size() == 0) L.fail(ShapeLoader::value_mark(pe), "points", "must hold at least one point");
  if (pe.value.size() > static_cast<size_t>(kMaxStencilPoints))
    L.fail(ShapeLoader::value_mark(pe), "points",
           "at most " + std::to_string(kMaxStencilPoints) + " points, got " + std::to_string(pe.value.size()));
  std::map<std::tuple<int, int, int>, int> seen;  // offset -> line of its first point
  for (size_t i = 0; i < pe.value.size(); ++i) {
    const YAML::Node item = pe.value[i];
    const std::string path = "points[" + std::to_string(i) + "]";
    const YAML::Mark item_mark = item.Mark().is_null() ? pe.value.Mark() : item.Mark();
    const auto pm = L.mapping(item, item_mark, path, {"offset", "weight"});
    const auto off_it = pm.find("offset");
    if (off_it == pm.end()) L.fail(item_mark, path + ".offset", "required key is missing");
    const auto w_it = pm.find("weight");
    if (w_it == pm.end()) L.fail(item_mark, path + ".weight", "required key is missing");
    const Entry& oe = off_it->second;
    const std::string opath = path + ".offset";
    if (!oe.value.IsSequence())
      L.fail(ShapeLoader::value_mark(oe), opath, "expected [dx, dy" + std::string(s.dims == 3 ? ", dz]" : "]"));
    if (oe.value.size() != static_cast<size_t>(s.dims))
      L.fail(ShapeLoader::value_mark(oe), opath,
             "expected " + std::to_string(s.dims) + " values for dims " + std::to_string(s.dims) + ", got " +
                 std::to_string(oe.value.size()));
    int o[3] = {0, 0, 0};
    for (int a = 0; a < s.dims; ++a)
      o[a] = static_cast<int>(L.integer(oe.value[a], ShapeLoader::value_mark(oe), opath + "[" + std::to_string(a) + "]",
                                        -kMaxStencilRadius, kMaxStencilRadius));
    StencilPoint p{o[0], o[1], o[2], 0.0};
    p.weight = L.number(w_it->second.value, w_it->second.key.Mark(), path + ".weight");
    const YAML::Mark om = ShapeLoader::value_mark(oe);
    const auto [first, fresh] = seen.emplace(std::tuple{o[0], o[1], o[2]}, om.line + 1);
    if (!fresh)
      L.fail(om, opath, "duplicate offset " + offset_text(p, s.dims) + " (first on line " + std::to_string(first->second) + ")");
    s.points.push_back(p);
  }
  return s;
}

// ---- the reference ----

// One point's new value: acc = fma(w_s, u(p + o_s), acc) over the shape's points in order, from 0.
// Both references call this, so the full grid and the light cone agree bit for bit.
template <class Get>
inline double point_update(const StencilShape& s, Get&& get) {
  double acc = 0.0;
  for (const StencilPoint& q : s.points) acc = std::fma(q.weight, get(q), acc);
  return acc;
}

void check_grid_args(const StencilShape& s, const StencilDomain& d, const char* fn) {
  if (d.dims != s.dims)
    throw std::invalid_argument(std::string(fn) + ": shape " + s.name + " is " + std::to_string(s.dims) + "-D, domain " +
                                d.text() + " is " + std::to_string(d.dims) + "-D");
  if (d.nx < 1 || d.ny < 1 || d.nz < 1 || (d.dims == 2 && d.nz != 1))
    throw std::invalid_argument(std::string(fn) + ": bad domain " + d.text());
}

// ---- the registry ----

struct ShapeRegistry {
  std::mutex mutex;
  std::deque<StencilShape> shapes;  // a deque: references stay valid as shapes are added
  StencilSweepSelection selection;
};

ShapeRegistry& registry() {
  static ShapeRegistry r;
  return r;
}

bool same_shape(const StencilShape& a, const StencilShape& b) {
  if (a.name != b.name || a.dims != b.dims || a.points.size() != b.points.size()) return false;
  for (size_t i = 0; i < a.points.size(); ++i) {
    const auto &p = a.points[i], &q = b.points[i];
    if (p.dx != q.dx || p.dy != q.dy || p.dz != q.dz || p.weight != q.weight) return false;
  }
  return true;
}

}  // namespace

int StencilShape::radius(int axis) const {
  int r = 0;
  for (const auto& p : points) r = std::max(r, std::abs(axis == 0 ? p.dx : axis == 1 ? p.dy : p.dz));
  return r;
}

int StencilShape::radius() const { return std::max({radius(0), radius(1), radius(2)}); }

const std::vector<StencilShape>& builtin_stencil_shapes() {
  static const std::vector<StencilShape> shapes = {
      make_builtin("2d5pt", 2, 1, true),  make_builtin("2d9pt", 2, 1, false), make_builtin("2d13pt", 2, 3, true),
      make_builtin("2d49pt", 2, 3, false), make_builtin("3d7pt", 3, 1, true), make_builtin("3d27pt", 3, 1, false)};
  return shapes;
}

const StencilShape* find_builtin_stencil_shape(std::string_view name) {
  for (const auto& s : builtin_stencil_shapes())
    if (s.name == name) return &s;
  return nullptr;
}

std::string builtin_stencil_shape_names(const char* sep) {
  std::string out;
  for (const auto& s : builtin_stencil_shapes()) out += (out.empty() ? "" : sep) + s.name;
  return out;
}

StencilShape read_stencil_shape_yaml(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::string text;
  try {  // at most 4 MiB, UTF-8, no aliases (a small file could expand to gigabytes), bounded nesting
    text = read_input_file(file, kMaxYamlInputBytes, "stencil shape file");
    check_yaml_input(text, name);
  } catch (const StencilShapeError&) {
    throw;
  } catch (const InputFileError& e) {
    throw StencilShapeError(e.file(), e.line(), e.column(), e.key(), e.cause());
  }
  const ShapeLoader L(name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    L.fail(e.mark, "", "YAML syntax: " + e.msg);
  }
  StencilShape s = read_shape(root, L, file.stem().string(), name);
  try {
    check_stencil_shape(s);  // the reader's checks and these agree; a slip here is a bug, still reported
  } catch (const std::invalid_argument& e) {
    L.fail(YAML::Mark(), "", e.what());
  }
  return s;
}

StencilShape load_stencil_shape(std::string_view name_or_file) {
  if (const StencilShape* b = find_builtin_stencil_shape(name_or_file)) return *b;
  const std::filesystem::path p{std::string(name_or_file)};
  std::error_code ec;
  const std::string ext = p.extension().string();
  if (std::filesystem::is_regular_file(p, ec) || ext == ".yaml" || ext == ".yml") return read_stencil_shape_yaml(p);
  throw std::invalid_argument(one_line("unknown stencil shape '" + std::string(name_or_file) + "' (built-in: " +
                                       builtin_stencil_shape_names() + "; or a YAML file)"));
}

void check_stencil_shape(const StencilShape& s) {
  const std::string who = "stencil shape '" + s.name + "': ";
  if (s.name.empty()) throw std::invalid_argument("stencil shape: the name must not be empty");
  if (s.dims != 2 && s.dims != 3) throw std::invalid_argument(who + "dims must be 2 or 3, got " + std::to_string(s.dims));
  if (s.points.empty()) throw std::invalid_argument(who + "has no points");
  if (s.points.size() > static_cast<size_t>(kMaxStencilPoints))
    throw std::invalid_argument(who + "at most " + std::to_string(kMaxStencilPoints) + " points, got " +
                                std::to_string(s.points.size()));
  std::map<std::tuple<int, int, int>, size_t> seen;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const StencilPoint& p = s.points[i];
    const std::string at = "point " + std::to_string(i) + " " + offset_text(p, 3) + ": ";
    if (std::abs(p.dx) > kMaxStencilRadius || std::abs(p.dy) > kMaxStencilRadius || std::abs(p.dz) > kMaxStencilRadius)
      throw std::invalid_argument(who + at + "an offset beyond the radius limit " + std::to_string(kMaxStencilRadius));
    if (s.dims == 2 && p.dz != 0) throw std::invalid_argument(who + at + "a 2-D shape has dz = 0");
    if (!std::isfinite(p.weight)) throw std::invalid_argument(who + at + "the weight is not finite");
    if (const auto [it, fresh] = seen.emplace(std::tuple{p.dx, p.dy, p.dz}, i); !fresh)
      throw std::invalid_argument(who + at + "the same offset as point " + std::to_string(it->second));
  }
}

std::string StencilDomain::text() const {
  return join_int(nx) + "x" + join_int(ny) + (dims == 3 ? "x" + join_int(nz) : std::string{});
}

StencilDomain parse_stencil_domain(std::string_view text) {
  const std::string quoted = "stencil domain '" + one_line(text) + "': ";
  std::vector<std::int64_t> ext;
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string_view part = text.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
    if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw std::invalid_argument(quoted + "expected NXxNY or NXxNYxNZ of whole numbers, e.g. 10240x10240 or 234x312x2560");
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec == std::errc::result_out_of_range || v > (std::int64_t{1} << 34))
      throw std::invalid_argument(quoted + "an extent is larger than 2^34");
    if (ec != std::errc{} || p != part.data() + part.size())
      throw std::invalid_argument(quoted + "'" + std::string(part) + "' is not a whole number");
    if (v == 0) throw std::invalid_argument(quoted + "every extent must be at least 1");
    ext.push_back(v);
    if (ext.size() > 3) throw std::invalid_argument(quoted + "at most 3 extents (NXxNYxNZ)");
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  if (ext.size() < 2) throw std::invalid_argument(quoted + "expected NXxNY or NXxNYxNZ, e.g. 10240x10240");
  StencilDomain d;
  d.dims = static_cast<int>(ext.size());
  d.nx = ext[0];
  d.ny = ext[1];
  d.nz = d.dims == 3 ? ext[2] : 1;
  unsigned __int128 n = static_cast<unsigned __int128>(d.nx) * static_cast<unsigned __int128>(d.ny);
  n *= static_cast<unsigned __int128>(d.nz);  // each <= 2^34: no wrap in 128 bits
  if (n > (static_cast<unsigned __int128>(1) << 34))
    throw std::invalid_argument(quoted + "more than 2^34 points (128 GiB per FP64 grid)");
  return d;
}

void check_stencil_domain(const StencilShape& s, const StencilDomain& d) {
  if (d.dims != s.dims)
    throw std::invalid_argument("domain " + d.text() + " is " + std::to_string(d.dims) + "-D, shape " + s.name + " is " +
                                std::to_string(s.dims) + "-D");
  const std::int64_t ext[3] = {d.nx, d.ny, d.nz};
  const char* axis[3] = {"nx", "ny", "nz"};
  for (int a = 0; a < s.dims; ++a) {
    const int r = s.radius(a);
    if (ext[a] <= 2 * r)
      throw std::invalid_argument("domain " + d.text() + " is too small for " + s.name + ": " + axis[a] + " " +
                                  std::to_string(ext[a]) + " must exceed 2 x radius " + std::to_string(r) + " = " +
                                  std::to_string(2 * r) + " (no interior point)");
  }
}

std::vector<StencilDomain> table3_domains(int dims) {
  if (dims == 2) return {{2, 10240, 10240, 1}, {2, 9000, 9000, 1}};
  if (dims == 3) return {{3, 1024, 1024, 1024}, {3, 512, 512, 512}, {3, 234, 312, 2560}};
  throw std::invalid_argument("table3_domains: dims must be 2 or 3, got " + std::to_string(dims));
}

StencilDomain stencil_domain_for_bytes(int dims, double bytes) {
  if (dims != 2 && dims != 3)
    throw std::invalid_argument("stencil_domain_for_bytes: dims must be 2 or 3, got " + std::to_string(dims));
  if (!std::isfinite(bytes) || bytes < 0 || bytes > 0x1p60)
    throw std::invalid_argument("stencil_domain_for_bytes: bytes must be finite, 0 .. 2^60");
  const double values = bytes / 16;  // two FP64 grids
  auto side = static_cast<std::int64_t>(std::floor(std::pow(values, 1.0 / dims)));
  const auto fits = [&](std::int64_t s) { return std::pow(static_cast<double>(s), dims) <= values; };
  while (side > 0 && !fits(side)) --side;  // pow's rounding, either way
  while (fits(side + 1)) ++side;
  side = std::max<std::int64_t>(side, 8);
  return {dims, side, side, dims == 3 ? side : 1};
}

int table3_steps(std::string_view shape_name) {
  for (const char* n : {"2d5pt", "2d9pt", "3d7pt", "3d27pt"})
    if (shape_name == n) return 3;
  return 1;  // 2d13pt, 2d49pt, and any other shape
}

void stencil_step_reference(const StencilShape& s, const StencilDomain& d, const double* in, double* out) {
  check_grid_args(s, d, "stencil_step_reference");
  const std::int64_t nx = d.nx, ny = d.ny, nz = d.nz;
  const int rx = s.radius(0), ry = s.radius(1), rz = s.radius(2);
  std::vector<std::int64_t> lin(s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i)
    lin[i] = (static_cast<std::int64_t>(s.points[i].dz) * ny + s.points[i].dy) * nx + s.points[i].dx;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const std::int64_t idx = (z * ny + y) * nx + x;
        const bool boundary = x < rx || x >= nx - rx || y < ry || y >= ny - ry || z < rz || z >= nz - rz;
        if (boundary) {
          out[idx] = in[idx];
          continue;
        }
        const StencilPoint* base = s.points.data();
        out[idx] = point_update(s, [&](const StencilPoint& q) { return in[idx + lin[&q - base]]; });
      }
}

std::vector<double> stencil_reference(const StencilShape& s, const StencilDomain& d, const double* u0, int steps) {
  check_grid_args(s, d, "stencil_reference");
  if (steps < 0) throw std::invalid_argument("stencil_reference: steps must be >= 0, got " + std::to_string(steps));
  const auto n = static_cast<size_t>(d.nx * d.ny * d.nz);
  std::vector<double> a(u0, u0 + n), b(n);
  for (int t = 0; t < steps; ++t) {
    stencil_step_reference(s, d, a.data(), b.data());
    a.swap(b);
  }
  return a;
}

std::vector<double> stencil_reference_points(const StencilShape& s, const StencilDomain& d, const double* u0, int steps,
                                             const std::vector<std::int64_t>& indices) {
  check_grid_args(s, d, "stencil_reference_points");
  if (steps < 0) throw std::invalid_argument("stencil_reference_points: steps must be >= 0, got " + std::to_string(steps));
  const std::int64_t n[3] = {d.nx, d.ny, d.nz};
  const int r[3] = {s.radius(0), s.radius(1), s.radius(2)};
  const std::int64_t total = d.nx * d.ny * d.nz;
  std::vector<double> out;
  out.reserve(indices.size());
  std::vector<double> cur, next;
  for (const std::int64_t index : indices) {
    if (index < 0 || index >= total)
      throw std::out_of_range("stencil_reference_points: index " + std::to_string(index) + " outside the domain " +
                              d.text());
    const std::int64_t c[3] = {index % d.nx, (index / d.nx) % d.ny, index / (d.nx * d.ny)};
    // The box of half-width h * r around the point, clipped to the domain: [lo, hi] per axis.
    struct Box {
      std::int64_t lo[3], hi[3];
      std::int64_t size(int a) const { return hi[a] - lo[a] + 1; }
      std::int64_t at(std::int64_t x, std::int64_t y, std::int64_t z) const {
        return ((z - lo[2]) * size(1) + (y - lo[1])) * size(0) + (x - lo[0]);
      }
    };
    const auto box = [&](int h) {
      Box b{};
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = std::max<std::int64_t>(0, c[a] - static_cast<std::int64_t>(h) * r[a]);
        b.hi[a] = std::min<std::int64_t>(n[a] - 1, c[a] + static_cast<std::int64_t>(h) * r[a]);
      }
      return b;
    };
    Box from = box(steps);
    cur.assign(static_cast<size_t>(from.size(0) * from.size(1) * from.size(2)), 0.0);
    for (std::int64_t z = from.lo[2]; z <= from.hi[2]; ++z)
      for (std::int64_t y = from.lo[1]; y <= from.hi[1]; ++y)
        for (std::int64_t x = from.lo[0]; x <= from.hi[0]; ++x)
          cur[static_cast<size_t>(from.at(x, y, z))] = u0[(z * d.ny + y) * d.nx + x];
    for (int t = 1; t <= steps; ++t) {
      const Box to = box(steps - t);
      next.assign(static_cast<size_t>(to.size(0) * to.size(1) * to.size(2)), 0.0);
      for (std::int64_t z = to.lo[2]; z <= to.hi[2]; ++z)
        for (std::int64_t y = to.lo[1]; y <= to.hi[1]; ++y)
          for (std::int64_t x = to.lo[0]; x <= to.hi[0]; ++x) {
            const bool boundary = x < r[0] || x >= n[0] - r[0] || y < r[1] || y >= n[1] - r[1] || z < r[2] ||
                                  z >= n[2] - r[2];
            double v;
            if (boundary) {
              v = cur[static_cast<size_t>(from.at(x, y, z))];
            } else {
              // p + o lies within the previous box: |o| <= r per axis and p within (steps - t) r.
              v = point_update(s, [&](const StencilPoint& q) {
                return cur[static_cast<size_t>(from.at(x + q.dx, y + q.dy, z + q.dz))];
              });
            }
            next[static_cast<size_t>(to.at(x, y, z))] = v;
          }
      cur.swap(next);
      from = to;
    }
    out.push_back(cur[static_cast<size_t>(from.at(c[0], c[1], c[2]))]);
  }
  return out;
}

int temporal_blocking_min_steps_for_shape(const StencilShape& s, double balance, Precision p) {
  if (s.points.empty()) throw std::invalid_argument("temporal_blocking_min_steps_for_shape: shape " + s.name + " has no points");
  if (!std::isfinite(balance) || balance < 0)
    throw std::invalid_argument("temporal_blocking_min_steps_for_shape: balance must be finite and >= 0");
  const double one_step = static_cast<double>(s.size()) / bytes_per_value(p);  // Eq. 12: I = |S| / D
  const double threshold = balance / one_step;                                // Eq. 14: t > B D / |S|
  if (threshold >= static_cast<double>(std::numeric_limits<int>::max() - 2))
    throw std::invalid_argument("temporal_blocking_min_steps_for_shape: B D / |S| needs more steps than an int holds");
  int t = std::max(1, static_cast<int>(std::floor(threshold)) + 1);
  while (t > 1 && (t - 1) * one_step > balance) --t;  // rounding in B / I, either way
  while (!(t * one_step > balance)) ++t;
  return t;
}

int register_stencil_shape(StencilShape s) {
  check_stencil_shape(s);
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < r.shapes.size(); ++i)
    if (same_shape(r.shapes[i], s)) return static_cast<int>(i);
  r.shapes.push_back(std::move(s));
  return static_cast<int>(r.shapes.size()) - 1;
}

const StencilShape& registered_stencil_shape(int id) {
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  if (id < 0 || static_cast<size_t>(id) >= r.shapes.size())
    throw std::out_of_range("no registered stencil shape " + std::to_string(id) + " (" + std::to_string(r.shapes.size()) +
                            " registered)");
  return r.shapes[static_cast<size_t>(id)];
}

int registered_stencil_shape_count() {
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return static_cast<int>(r.shapes.size());
}

void clear_registered_stencil_shapes() {
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.shapes.clear();
}

void set_stencil_sweep_selection(StencilSweepSelection sel) {
  for (const auto& d : sel.domains)
    if ((d.dims != 2 && d.dims != 3) || d.nx < 1 || d.ny < 1 || d.nz < 1 || (d.dims == 2 && d.nz != 1))
      throw std::invalid_argument("stencil sweep: bad domain " + d.text());
  if (sel.steps < 0) throw std::invalid_argument("stencil sweep: steps must be >= 0 (0: Table 3's), got " + std::to_string(sel.steps));
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  r.selection = std::move(sel);
}

const StencilSweepSelection& stencil_sweep_selection() {
  ShapeRegistry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  return r.selection;
}

}  // namespace ceiling
