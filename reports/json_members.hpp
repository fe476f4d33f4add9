// Typed members of one object of a JSON file the report reads (profiles, peers comparisons), named by
// their key path in error messages: "file: kernels[3].speedup.upper: expected a number, got string".
// Internal to reports/.
#pragma once
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include "model/json_file.hpp"

namespace ceiling::reports::detail {

struct Members {
  const nlohmann::json& object;
  const std::filesystem::path& file;
  std::string where;  // key path of `object`, "" at the top

  using json = nlohmann::json;
  std::string path(const char* key) const { return where.empty() ? std::string(key) : where + "." + key; }
  [[noreturn]] void bad(const char* key, const std::string& cause) const {
    throw JsonFileError(file, path(key), cause);
  }

  const json& get(const char* key, json::value_t type) const { return json_member(object, key, type, file, where); }
  std::string text(const char* key) const { return get(key, json::value_t::string).get<std::string>(); }
  double number(const char* key) const { return get(key, json::value_t::number_float).get<double>(); }
  const json& obj(const char* key) const { return get(key, json::value_t::object); }
  const json& arr(const char* key) const { return get(key, json::value_t::array); }
  bool has(const char* key) const { return object.contains(key); }
  // A member that may be absent or null: nullptr then.
  const json* optional(const char* key) const {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  std::string optional_text(const char* key) const {
    const json* v = optional(key);
    if (!v) return {};
    if (!v->is_string()) bad(key, std::string("expected a string, got ") + v->type_name());
    return v->get<std::string>();
  }
  int count(const char* key) const {
    const double v = number(key);
    if (!(v >= 0 && v <= 2e9 && v == std::floor(v)))
      bad(key, "expected a whole number >= 0, got " + get(key, json::value_t::number_float).dump());
    return static_cast<int>(v);
  }
  // A member that must be present and is a number or null (the writer's NaN).
  std::optional<double> number_or_null(const char* key) const {
    if (!has(key)) bad(key, "is missing");
    const json& v = object.at(key);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number()) bad(key, std::string("expected a number or null, got ") + v.type_name());
    return v.get<double>();
  }
};

}  // namespace ceiling::reports::detail
