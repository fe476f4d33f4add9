// File rules shared by every layer: the one atomic write, and where a descriptor's probe
// details live (docs/FORMATS.md "Probe details").
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace ceiling {

// Writes `text` to a temporary file in the same directory (a name unique per process and call),
// fsyncs it, gives it the permission bits of the file it replaces, renames it over `file` and
// fsyncs the directory: a reader sees the old file or the new one, never half of one, even after a
// crash. A symbolic link is followed: its target is replaced and the link stays. Creates the
// parent directory. Throws std::runtime_error naming the file; the temporary is removed on failure.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

// Input files a person writes (descriptors, kernel files): at most this many bytes (docs/RELIABILITY.md).
inline constexpr std::uintmax_t kMaxYamlInputBytes = std::uintmax_t{4} << 20;
inline constexpr int kMaxYamlDepth = 64;

// The text of `file` (what: "descriptor", "kernel file"), refused past `max_bytes`. Throws
// InputFileError "file:0:0: cause": cannot open, not a regular file, larger than the limit.
std::string read_input_file(const std::filesystem::path& file, std::uintmax_t max_bytes, const char* what);

// Rules every YAML input follows before it is loaded: UTF-8 text, no aliases (*name: a small file
// could expand to gigabytes), nesting of at most `max_depth`. Throws InputFileError
// "file:line:col: cause" at the offending byte; YAML syntax errors are left to the loader.
void check_yaml_input(const std::string& text, const std::string& file, int max_depth = kMaxYamlDepth);

inline constexpr const char* kProbesSchema = "ceiling/probes/1";
// "<dir>/<stem>.probes.json" beside "<dir>/<stem>.yaml".
std::filesystem::path probes_path_for(const std::filesystem::path& descriptor);

}  // namespace ceiling
