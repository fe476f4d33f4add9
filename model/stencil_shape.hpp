// Stencil shapes as data (GPGPU'25 §3.3, Table 3): offsets and FP64 weights, the six built-in
// shapes, a user's own shape from a small YAML file, domains, the CPU reference the GPU variants
// are checked against, and the shapes and domains the validate sweep runs (like register_matrix).
// Pure C++ (no CUDA).
//
// Grid layout everywhere: x fastest, index = (z * ny + y) * nx + x; a 2-D domain has nz = 1.
// Fixed boundary: a point closer than the shape's radius on an axis to a face of that axis keeps
// its value at every step (v = u); every other point gets v = sum_s w_s u(p + o_s).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "descriptor.hpp"
#include "input_error.hpp"

namespace ceiling {

struct StencilPoint {
  int dx = 0, dy = 0, dz = 0;  // offset (x fastest); dz = 0 in 2-D
  double weight = 0;
};

constexpr int kMaxStencilRadius = 8;     // |offset| on any axis of a user's shape
constexpr int kMaxStencilPoints = 343;   // |S| of a user's shape (a 7x7x7 box)

struct StencilShape {
  std::string name;    // "2d5pt", or a user shape's `name:` (default: the file's stem)
  int dims = 2;        // 2 or 3
  std::vector<StencilPoint> points;
  std::string source;  // "built-in" or the YAML file's path
  int size() const { return static_cast<int>(points.size()); }  // |S|
  int radius(int axis) const;  // max |offset| on axis 0 (x), 1 (y), 2 (z)
  int radius() const;          // max over the axes
};

// The six shapes of Table 3, in its order: 2d5pt (star r1), 2d9pt (3x3 box), 2d13pt (star r3),
// 2d49pt (7x7 box), 3d7pt (star r1), 3d27pt (3x3x3 box). Weights are positive and sum to 1 (so
// repeated steps stay bounded) and differ per offset (so a transposed or mirrored kernel fails).
const std::vector<StencilShape>& builtin_stencil_shapes();
const StencilShape* find_builtin_stencil_shape(std::string_view name);  // nullptr when unknown
std::string builtin_stencil_shape_names(const char* sep = ", ");       // "2d5pt, 2d9pt, ..."

// Any problem in a shape file: "file:line:column: key: cause" (line 0 when the file cannot be read).
class StencilShapeError : public InputFileError {
 public:
  using InputFileError::InputFileError;
};

// A shape file:
//   name: my5pt            # optional (default: the file's stem)
//   dims: 2                # 2 or 3
//   points:                # at least one, at most kMaxStencilPoints
//     - {offset: [0, 0], weight: 0.5}     # [dx, dy] in 2-D, [dx, dy, dz] in 3-D
//     - {offset: [1, 0], weight: 0.125}
// Refused with file:line:col: unknown keys, duplicate keys, an offset beyond kMaxStencilRadius, a
// duplicate offset, a non-finite weight, an offset of the wrong length, a non-integer offset.
StencilShape read_stencil_shape_yaml(const std::filesystem::path& file);
// A built-in name, or a file (a path that exists, or one ending in .yaml/.yml); std::invalid_argument
// "unknown stencil shape 'x' (built-in: 2d5pt, ...; or a YAML file)" otherwise.
StencilShape load_stencil_shape(std::string_view name_or_file);
// The rules above for a shape built in code; throws std::invalid_argument naming the cause.
void check_stencil_shape(const StencilShape& s);

struct StencilDomain {
  int dims = 2;
  std::int64_t nx = 0, ny = 0, nz = 1;
  double points() const { return static_cast<double>(nx) * static_cast<double>(ny) * static_cast<double>(nz); }
  std::string text() const;  // "10240x10240", "234x312x2560"
  bool operator==(const StencilDomain&) const = default;
};
// "10240x10240" (2-D) or "234x312x2560" (3-D; x first). Throws std::invalid_argument naming the
// text for a malformed, zero or negative extent, or a domain over 2^34 points (128 GiB per grid).
StencilDomain parse_stencil_domain(std::string_view text);
// Throws std::invalid_argument when the domain is smaller than the shape needs (an extent of at most
// 2 x radius on an axis leaves no interior point) or dims differ.
void check_stencil_domain(const StencilShape& s, const StencilDomain& d);

// Table 3: 2-D 10240^2 (ConvStencil) and 9000^2 (EBISU); 3-D 1024^3 (ConvStencil), 512^3 (Brick)
// and 234x312x2560 (EBISU).
std::vector<StencilDomain> table3_domains(int dims);
// A domain of this dims whose two grids (in and out) take about `bytes` (a cube or square of side
// floor((bytes / 16)^(1/dims)), at least 8 per axis) - the validate sweep's in-L2 point.
StencilDomain stencil_domain_for_bytes(int dims, double bytes);
// Table 3's temporal blocking depth of a built-in shape (2d5pt, 2d9pt, 3d7pt, 3d27pt: 3; 2d13pt,
// 2d49pt: 1); 1 for any other shape.
int table3_steps(std::string_view shape_name);

// --- CPU reference ---
// One step over the whole domain (in and out hold d.points() values; out != in).
void stencil_step_reference(const StencilShape& s, const StencilDomain& d, const double* in, double* out);
// `steps` steps from u0 (returns the last grid). For small domains (tests, the verify of small runs).
std::vector<double> stencil_reference(const StencilShape& s, const StencilDomain& d, const double* u0, int steps);
// The values after `steps` steps at the given grid indices only, each computed from its light cone
// (the box of half-width steps * radius around it): cheap for a sample of a domain of 10^8 points.
std::vector<double> stencil_reference_points(const StencilShape& s, const StencilDomain& d, const double* u0, int steps,
                                             const std::vector<std::int64_t>& indices);

// --- Model ---
// Eq. 14 per shape: I(t) = t |S| / D exceeds the balance B from t > B D / |S| on; the smallest such
// whole t (>= 1).
int temporal_blocking_min_steps_for_shape(const StencilShape& s, double balance, Precision p = Precision::fp64);

// --- The validate sweep's shapes and domains ---
// Shapes known to the process: validate --shapes and predict --shape register them; the stencil
// kind's parameter shape_id names one. Registering an equal shape (name, dims and points) again
// returns its first id.
int register_stencil_shape(StencilShape s);
const StencilShape& registered_stencil_shape(int id);  // throws std::out_of_range
int registered_stencil_shape_count();
void clear_registered_stencil_shapes();

// What the stencil kind's sweep points are, when validate names no --sizes: every registered shape
// (none registered: the six built-ins are registered first) on each domain of its dims (empty: Table
// 3's plus one in-L2 domain of L2/4 bytes), at `steps` (0: Table 3's depth of the shape).
struct StencilSweepSelection {
  std::vector<StencilDomain> domains;
  int steps = 0;
  bool in_l2_domain = true;  // add the in-L2 domain to Table 3's (only when `domains` is empty)
};
void set_stencil_sweep_selection(StencilSweepSelection sel);
const StencilSweepSelection& stencil_sweep_selection();

}  // namespace ceiling
