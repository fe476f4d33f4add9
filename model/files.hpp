// File rules shared by every layer: the one atomic write, and where a descriptor's probe
// details live (docs/FORMATS.md "Probe details").
#pragma once
#include <filesystem>
#include <string>

namespace ceiling {

// Writes `text` to a temporary file in the same directory, then renames it over `file`: a reader
// sees the old file or the new one, never half of one. Creates the parent directory. Throws
// std::runtime_error naming the file; the temporary is removed on failure.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

inline constexpr const char* kProbesSchema = "ceiling/probes/1";
// "<dir>/<stem>.probes.json" beside "<dir>/<stem>.yaml".
std::filesystem::path probes_path_for(const std::filesystem::path& descriptor);

}  // namespace ceiling
