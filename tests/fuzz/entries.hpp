// One entry function per reader, shared by the libFuzzer targets (tests/fuzz/fuzz_*.cpp) and the
// regression corpus replayed by the CPU tests (tests/test_fuzz_regressions.cpp): the bytes are
// given to the reader as the file it reads, and the outcome is judged the same way in both.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling::fuzz {

// The fuzz targets, by the name of their folder under tests/fuzz/regressions/.
const std::vector<std::string>& target_names();

// Feeds `data` to the reader `target` names, writing the file(s) it reads under `scratch` (an
// existing directory the caller owns). Returns "" when the reader accepted the input or refused it
// cleanly (one line naming the file, or the field for the unit parser; no library-internal
// message); otherwise what went wrong. A crash, a sanitizer report or a hang is the other way to
// fail. Throws std::invalid_argument for an unknown target.
std::string run_target(std::string_view target, const std::uint8_t* data, std::size_t size,
                       const std::filesystem::path& scratch);

}  // namespace ceiling::fuzz
