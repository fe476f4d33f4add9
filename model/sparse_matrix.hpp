// Sparse matrices for SpMV (issue 10): CSR with FP64 values and int32 indices, the strict Matrix
// Market reader, the generators that mimic the 21 matrices of GPGPU'25 Table 2 (from DASP), the
// row-length statistics that show their shapes, and the CPU reference y = A x.
// Plain C++ (no CUDA): predict reads m, n, nnz from here; the GPU variants take the CSR arrays.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ceiling {

// Compressed sparse row, FP64 values, int32 column indices and row pointers (nnz < 2^31; larger
// matrices are refused with a message that says so). Column indices are sorted within a row,
// duplicates summed.
struct CsrMatrix {
  std::string name;    // "cant", or the file's stem
  std::string source;  // "generated: table2 cant, scale 1, seed 1" or the file path
  std::int32_t rows = 0, cols = 0;
  std::vector<std::int32_t> row_ptr;  // rows + 1 entries, row_ptr[0] = 0, row_ptr[rows] = nnz
  std::vector<std::int32_t> col;      // nnz entries, 0-based
  std::vector<double> val;            // nnz entries
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  // Bytes of the CSR arrays with these index bytes (values 8, col and row_ptr `index_bytes` each).
  double csr_bytes(int index_bytes = 4) const;
};

// Throws std::invalid_argument naming the first broken invariant (sizes, row_ptr monotone,
// column in range and sorted, no duplicates, finite values).
void check_csr(const CsrMatrix& a);

// Row-length statistics (nnz per row), to show that the generated shapes differ as the originals do.
struct RowStats {
  std::int64_t rows = 0, nnz = 0;
  double mean = 0;          // nnz / rows
  std::int64_t min = 0, max = 0;
  double cv = 0;            // standard deviation / mean (0 for an empty matrix)
  std::int64_t empty_rows = 0;
  double bandwidth_mean = 0;  // mean over non-empty rows of (last col - first col + 1) / cols
};
RowStats row_stats(const CsrMatrix& a);

// Matrix Market reader (coordinate real/integer/pattern, general/symmetric/skew-symmetric;
// `array` and `complex`/`hermitian` refused). Strict and streaming: every error is an
// InputFileError "file:line:column: cause" (model/input_error.hpp): a truncated file, a size line
// whose nnz disagrees with the entries, indices out of range or zero-based, a non-numeric value,
// a 0x0 or otherwise empty header, a directory, a claim larger than the file could hold or than
// int32 indices allow, extra tokens, a missing banner. Symmetric entries are mirrored (diagonal
// once), skew-symmetric mirrored negated (a diagonal entry is an error), pattern values are 1,
// duplicates are summed. Reads tens of millions of entries in seconds.
struct MatrixReadOptions {
  // Progress for large files: called every few million entries and at the end with
  // (entries read, entries declared). Empty: silent.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
  std::int64_t max_nnz = (std::int64_t{1} << 31) - 1;  // refused above (after symmetric expansion)
};
CsrMatrix read_matrix_market(const std::string& path, const MatrixReadOptions& options = {});

// Only the header: rows, cols and the entries the size line declares, plus symmetry
// ("general", "symmetric", "skew-symmetric") and field ("real", "integer", "pattern").
struct MatrixMarketHeader {
  std::int64_t rows = 0, cols = 0, entries = 0;
  std::string field, symmetry;
};
MatrixMarketHeader read_matrix_market_header(const std::string& path);

// Writes `a` as "coordinate real general" (values with 17 significant digits) atomically.
void write_matrix_market(const CsrMatrix& a, const std::string& path);

// The 21 matrices of GPGPU'25 Table 2 (from DASP, SC'23): code D1..D21, name, rows and nnz
// exactly as the table, columns (square: = rows), and the family whose structure the generator mimics.
struct SuiteMatrix {
  std::string code;    // "D10"
  std::string name;    // "cant"
  std::int64_t rows = 0, nnz = 0;
  std::string family;  // "fem-banded", "quantum-chemistry", "web-graph", "circuit", "qcd", "economics", ...
};
const std::vector<SuiteMatrix>& table2_suite();
// Throws std::invalid_argument "unknown matrix 'x' in table2 (one of dc2, scircuit, ...)".
const SuiteMatrix& table2_matrix(const std::string& name_or_code);

// A matrix shaped like the named one: rows and nnz as in Table 2 times `scale` (rounded; scale 1
// is the full size, exactly the table's rows and nnz), the family's structure, deterministic from
// `seed`, values uniform in [0.5, 1.5) or with random sign as the family's originals. Fast: the
// full circuit5M (59.5 M nnz) in a few seconds.
CsrMatrix generate_table2(const std::string& name_or_code, double scale = 1.0, std::uint64_t seed = 1);

// COO triplets (0-based indices) to CSR in O(nnz): rows counted, then filled, then each row sorted
// by column (skipped when already sorted) with duplicates summed. `symmetric` adds the mirror (j, i)
// of every off-diagonal (i, j), `skew_symmetric` adds it negated. Throws std::invalid_argument for
// an index out of range, arrays of different lengths or more entries than int32 indices allow.
enum class CooSymmetry { general, symmetric, skew_symmetric };
CsrMatrix csr_from_coo(std::int32_t rows, std::int32_t cols, const std::vector<std::int32_t>& row,
                       const std::vector<std::int32_t>& col, const std::vector<double>& val,
                       CooSymmetry symmetry = CooSymmetry::general);

// y = A x on the CPU, each row summed in long double (the reference the GPU variants are checked
// against). x has cols entries, y rows.
void spmv_reference(const CsrMatrix& a, const double* x, double* y);

// Matrices known to the process (the validate sweep's inputs): `ceiling validate --matrix` and
// `--suite` add them, the SpMV kind's sweep points and the variants look them up by id.
int register_matrix(std::shared_ptr<const CsrMatrix> a);   // returns its id (0, 1, ...)
std::shared_ptr<const CsrMatrix> registered_matrix(int id); // throws std::out_of_range for an unknown id
int registered_matrix_count();
void clear_registered_matrices();

}  // namespace ceiling
