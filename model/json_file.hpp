// The one JSON file reader (results, probe details, report manifests): limits on size, nesting
// and string length, errors as "file: cause" and, for typed access, "file: key: cause".
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "input_error.hpp"

namespace ceiling {

struct JsonLimits {
  std::uintmax_t max_bytes = std::uintmax_t{256} << 20;  // a 1,000,000-row results file is ~200 MiB
  int max_depth = 64;                                    // nested arrays/objects; ceiling's files use < 8
  std::size_t max_string_bytes = std::size_t{1} << 20;   // one string or key
};

// "file: cause" or "file: key: cause".
class JsonFileError : public std::runtime_error {
 public:
  JsonFileError(const std::filesystem::path& file, const std::string& key, const std::string& cause)
      : std::runtime_error(one_line(file.string() + ": " + (key.empty() ? std::string{} : key + ": ") + cause)),
        file_(file.string()),
        key_(key),
        cause_(cause) {}
  const std::string& file() const { return file_; }
  const std::string& key() const { return key_; }
  const std::string& cause() const { return cause_; }

 private:
  std::string file_, key_, cause_;
};

// Reads and parses `file` (what: "validation results", "probe details", ...) within `limits`.
// Throws JsonFileError: cannot open, not a regular file, too large, not valid JSON (with the
// byte position), nested deeper than max_depth, a string longer than max_string_bytes.
nlohmann::json read_json_file(const std::filesystem::path& file, const char* what, const JsonLimits& limits = {});

// Typed access for readers: the member `key` of `object` with the JSON type asked for, else
// JsonFileError "file: key: expected an object/array/string/number, got <type>" (or "is missing").
const nlohmann::json& json_member(const nlohmann::json& object, const char* key, nlohmann::json::value_t type,
                                  const std::filesystem::path& file, const std::string& key_path = {});

// The probe details calibrate merges its new results into (`<stem>.probes.json`, schema
// ceiling/probes/1, docs/FORMATS.md). No file: an empty object. A file calibrate can merge into
// (read_json_file's limits, an object of this schema whose `probes`, when present, is an object of
// objects): its content. Any other file is never overwritten: it is renamed to
// "<file>.unreadable-<UTC date>" (then -2, -3, ...), `set_aside` names the new place, `problem`
// says why ("file: key: cause"), and the content is empty. Throws JsonFileError only when the file
// can be neither read nor moved aside.
struct ProbeDetailsForUpdate {
  nlohmann::json content = nlohmann::json::object();
  std::filesystem::path set_aside;  // empty: nothing was moved
  std::string problem;
};
ProbeDetailsForUpdate read_probe_details_for_update(const std::filesystem::path& file);

}  // namespace ceiling
