// The one JSON file reader: limits checked while parsing, errors naming the file.
#include "json_file.hpp"

#include "files.hpp"

#include <ctime>
#include <fstream>
#include <sstream>
#include <system_error>

namespace ceiling {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string type_name(json::value_t t) {
  switch (t) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "true or false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    case json::value_t::null: return "null";
    default: return "a value";
  }
}

// Thrown by the parser callback; carries the cause only (the file is added by the caller).
struct LimitExceeded {
  std::string cause;
};

}  // namespace

json read_json_file(const fs::path& file, const char* what, const JsonLimits& limits) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st)) throw JsonFileError(file, "", std::string("cannot open ") + what + " (" +
                                                                (ec ? ec.message() : "no such file") + ")");
  if (fs::is_directory(st)) throw JsonFileError(file, "", "not a regular file (a directory)");
  if (!fs::is_regular_file(st)) throw JsonFileError(file, "", "not a regular file");
  const auto size = fs::file_size(file, ec);
  if (ec) throw JsonFileError(file, "", std::string("cannot read ") + what + " (" + ec.message() + ")");
  if (size > limits.max_bytes)
    throw JsonFileError(file, "", "too large: " + std::to_string(size) + " bytes, the limit for " + what + " is " +
                                      std::to_string(limits.max_bytes));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw JsonFileError(file, "", std::string("cannot open ") + what);
  std::string text;
  text.resize(static_cast<size_t>(size));
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size || in.bad())
    throw JsonFileError(file, "", std::string("cannot read ") + what + " (short read)");
  if (in.peek() != std::char_traits<char>::eof())
    throw JsonFileError(file, "", "too large: it grew while being read, the limit for " + std::string(what) + " is " +
                                      std::to_string(limits.max_bytes) + " bytes");

  // The callback sees every container start with the number of containers around it, and every
  // string value and key: the limits hold while parsing, before anything deep is built.
  const auto check = [&limits](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= limits.max_depth)
      throw LimitExceeded{"nested deeper than " + std::to_string(limits.max_depth) + " levels"};
    if ((event == json::parse_event_t::key || event == json::parse_event_t::value) && parsed.is_string() &&
        parsed.get_ref<const std::string&>().size() > limits.max_string_bytes)
      throw LimitExceeded{"a string longer than " + std::to_string(limits.max_string_bytes) + " bytes"};
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const LimitExceeded& e) {
    throw JsonFileError(file, "", e.cause);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 12: syntax error ..." -> from "parse error".
    if (auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw JsonFileError(file, "", "not valid JSON (" + msg + ")");
  } catch (const json::exception& e) {
    // out_of_range.406: a number past a double ("1e438428"); found by the fuzzer (tests/fuzz/regressions).
    std::string msg = e.what();
    if (auto at = msg.find("] "); at != std::string::npos) msg = msg.substr(at + 2);
    throw JsonFileError(file, "", "not valid JSON (" + msg + ")");
  }
}

const json& json_member(const json& object, const char* key, json::value_t type, const fs::path& file,
                        const std::string& key_path) {
  const std::string path = key_path.empty() ? std::string(key) : key_path + "." + key;
  if (!object.is_object())
    throw JsonFileError(file, key_path, "expected an object, got " + std::string(object.type_name()));
  const auto it = object.find(key);
  if (it == object.end()) throw JsonFileError(file, path, "is missing");
  const bool numeric = type == json::value_t::number_float || type == json::value_t::number_integer ||
                       type == json::value_t::number_unsigned;
  if (numeric ? !it->is_number() : it->type() != type)
    throw JsonFileError(file, path, "expected " + type_name(type) + ", got " + it->type_name());
  return *it;
}

ProbeDetailsForUpdate read_probe_details_for_update(const fs::path& file) {
  ProbeDetailsForUpdate out;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return out;
  try {
    json j = read_json_file(file, "probe details");
    if (!j.is_object()) throw JsonFileError(file, "", std::string("expected an object, got ") + j.type_name());
    const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
    if (schema != kProbesSchema)
      throw JsonFileError(file, "schema", "is '" + schema + "', expected '" + kProbesSchema + "'");
    if (j.contains("probes")) {
      const json& probes = j["probes"];
      if (!probes.is_object()) throw JsonFileError(file, "probes", std::string("expected an object, got ") + probes.type_name());
      for (const auto& [name, entry] : probes.items())
        if (!entry.is_object())
          throw JsonFileError(file, "probes." + name, std::string("expected an object, got ") + entry.type_name());
    }
    out.content = std::move(j);
    return out;
  } catch (const JsonFileError& e) {
    out.problem = e.what();
  }
  // Not ours to overwrite: keep it beside, under a name no other file has.
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H%M%SZ", &tm);
  const std::string base = file.string() + ".unreadable-" + stamp;
  for (int n = 1;; ++n) {
    const fs::path aside = n == 1 ? fs::path(base) : fs::path(base + "-" + std::to_string(n));
    if (fs::exists(fs::symlink_status(aside, ec))) continue;
    // link() refuses an existing name, so two calibrations never pick the same one.
    fs::create_hard_link(file, aside, ec);
    if (ec == std::errc::file_exists) continue;
    if (ec) throw JsonFileError(file, "", out.problem + "; and it cannot be kept aside as " + aside.string() + " (" + ec.message() + ")");
    fs::remove(file, ec);
    if (ec) throw JsonFileError(file, "", out.problem + "; and it cannot be moved aside (" + ec.message() + ")");
    out.set_aside = aside;
    out.content = json::object();
    return out;
  }
}

}  // namespace ceiling
