// Every input that ever broke a reader (tests/fuzz/regressions/<target>/: issue 17's reproducers
// and what the fuzzers found), replayed through the fuzz targets' own entry function: each must be
// accepted or refused cleanly (one line naming the file), without a crash or a sanitizer report.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/entries.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;

namespace {
const fs::path kRegressions = fs::path(CEILING_SOURCE_DIR) / "tests" / "fuzz" / "regressions";

std::vector<fs::path> inputs_of(const std::string& target) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kRegressions / target, ec))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("fuzz regressions: every input that broke a reader is accepted or refused cleanly") {
  int replayed = 0;
  for (const std::string& target : ceiling::fuzz::target_names()) {
    for (const fs::path& file : inputs_of(target)) {
      const std::string bytes = ceiling::test::slurp(file);
      const fs::path scratch = ceiling::test::scratch_dir("fuzz-regressions", target);
      INFO(target << ": " << file.filename().string());
      const std::string problem = ceiling::fuzz::run_target(
          target, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), scratch);
      CHECK(problem == "");
      fs::remove_all(scratch);
      ++replayed;
    }
  }
  // The corpus holds issue 17's reproducers for every target; an empty directory means a lost corpus.
  for (const std::string& target : ceiling::fuzz::target_names()) {
    INFO(target);
    CHECK(!inputs_of(target).empty());
  }
  CHECK(replayed >= 32);  // issue 17's reproducers and the fuzzers' finds
}
