// The streaming JSON reader (model/json_stream.hpp) against nlohmann's parser: the same documents
// accepted with the same values, the same documents refused, across its 1 MiB chunk boundaries;
// its errors name the file, line and column.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "model/json_stream.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ceiling;
using Tok = JsonPull::Tok;

namespace {

JsonLimits wide_limits() {
  JsonLimits l;
  l.max_bytes = std::uintmax_t{1} << 32;
  l.max_depth = 1000;
  l.max_string_bytes = std::size_t{1} << 26;
  return l;
}

// The value the tokens spell, rebuilt as a document (first: the token just read).
json build(JsonPull& in, Tok first) {
  switch (first) {
    case Tok::begin_object: {
      json o = json::object();
      for (Tok k; (k = in.next()) != Tok::end_object;) {
        REQUIRE(k == Tok::key);
        const std::string key = in.text();
        o[key] = build(in, in.next());
      }
      return o;
    }
    case Tok::begin_array: {
      json a = json::array();
      for (Tok t; (t = in.next()) != Tok::end_array;) a.push_back(build(in, t));
      return a;
    }
    case Tok::string: return in.text();
    case Tok::number: return in.number();
    case Tok::boolean: return in.flag();
    case Tok::null: return nullptr;
    default: FAIL("unexpected token"); return {};
  }
}

json pull_text(const std::string& text, const JsonLimits& limits = wide_limits()) {
  JsonPull in(JsonPull::FromText{}, text, "doc.json", limits);
  json v = build(in, in.next());
  if (in.next() != Tok::end) throw std::runtime_error("not at end");
  return v;
}

json pull_file(const fs::path& p) {
  JsonPull in(p, "test document", wide_limits());
  json v = build(in, in.next());
  if (in.next() != Tok::end) throw std::runtime_error("not at end");
  return v;
}

// Numbers compare as doubles (the pull reader has no integer type).
bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !same(it.value(), b.at(it.key()))) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

std::string random_string(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f",
                                                  "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\u00b5s", "x y"};
  std::string s;
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
  return s;
}

json random_value(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 4 ? 5 : 7));
  switch (kind) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: {
      const int form = static_cast<int>(rng() % 5);
      if (form == 0) return static_cast<long long>(rng()) - (1ll << 31);
      if (form == 1) return std::ldexp(static_cast<double>(rng()), static_cast<int>(rng() % 200) - 100);
      if (form == 2) return -std::ldexp(static_cast<double>(rng()), -1000 - static_cast<int>(rng() % 70));
      if (form == 3) return static_cast<unsigned long long>(rng()) << 31;
      return 0.1 * static_cast<double>(rng() % 1000);
    }
    case 3:
    case 4: return random_string(rng);
    case 5: {
      json a = json::array();
      const int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      const int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) o[random_string(rng)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

// nlohmann's verdict: the document, or nullopt when it refuses the text.
std::optional<json> reference(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("json stream: random documents read as nlohmann reads them, at every indentation") {
  std::mt19937 rng(20261125);
  for (int i = 0; i < 400; ++i) {
    const json doc = random_value(rng, 0);
    const int indent = static_cast<int>(rng() % 3) - 1;
    const std::string text = doc.dump(indent);
    INFO(text);
    CHECK(same(pull_text(text), json::parse(text)));
  }
}

TEST_CASE("json stream: mutated documents are refused exactly when nlohmann refuses them") {
  std::mt19937 rng(7);
  const std::string bytes = "{}[],:\"\\ 0123456789.eE+-tfnul\x80\xc3\xff\xed\xa0\n";
  int accepted = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = random_value(rng, 3).dump(static_cast<int>(rng() % 2) - 1);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(at, 1); break;
        case 1: text.insert(at, 1, bytes[rng() % bytes.size()]); break;
        default: text[at] = bytes[rng() % bytes.size()];
      }
    }
    INFO(json(text).dump(-1, ' ', true, json::error_handler_t::replace));
    const auto want = reference(text);
    std::optional<json> got;
    std::string why;
    try {
      got = pull_text(text);
    } catch (const JsonFileError& err) {
      why = err.what();
    }
    CHECK(got.has_value() == want.has_value());
    if (got && want) CHECK(same(*got, *want));
    if (!got) CHECK(why.rfind("doc.json: ", 0) == 0);
    (want ? accepted : refused)++;
  }
  CHECK(accepted > 100);  // both kinds of input were tried
  CHECK(refused > 1000);
}

TEST_CASE("json stream: strings and numbers across the 1 MiB chunk boundaries of a file") {
  std::mt19937 rng(3);
  json doc = json::array();
  size_t bytes = 0;
  while (bytes < 3 * (1u << 20) + 12345) {
    json v = rng() % 2 ? json(random_string(rng) + std::string(rng() % 300, 'q') + "\xe2\x82\xac")
                       : json(std::ldexp(static_cast<double>(rng()), -static_cast<int>(rng() % 60)));
    bytes += v.dump().size() + 1;
    doc.push_back(std::move(v));
  }
  const fs::path dir = test::scratch_dir("json-stream", "chunks");
  const fs::path p = dir / "big.json";
  // Shifted by 0..7 bytes of white space: every token lands on a boundary in one of them.
  for (int shift = 0; shift < 8; ++shift) {
    std::ofstream(p, std::ios::binary) << std::string(static_cast<size_t>(shift), ' ') << doc.dump();
    CHECK(same(pull_file(p), doc));
  }
  fs::remove_all(dir);
}

TEST_CASE("json stream: errors name the file, line and column, and the limits hold") {
  const auto error = [](const std::string& text, JsonLimits limits = wide_limits()) {
    try {
      pull_text(text, limits);
    } catch (const JsonFileError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error("{\n  \"a\": tru\n}") == "doc.json: not valid JSON (invalid literal (expected 'true') at line 2, column 11)");
  CHECK(error("[1, 2,]") == "doc.json: not valid JSON (unexpected ']' at line 1, column 7)");
  CHECK(error("[1 2]") == "doc.json: not valid JSON (expected ',' or ']', got '2' at line 1, column 4)");
  CHECK(error("{\"a\" 1}") == "doc.json: not valid JSON (expected ':' after a key at line 1, column 6)");
  CHECK(error("[01]").find("invalid number '01'") != std::string::npos);
  CHECK(error("[1e438428]").find("number overflow parsing '1e438428'") != std::string::npos);
  CHECK(pull_text("[1e-400]")[0].get<double>() == 0.0);  // below the smallest double: 0, as strtod
  CHECK(error("[\"a\xc0\xaf\"]").find("invalid UTF-8") != std::string::npos);      // overlong '/'
  CHECK(error("[\"\xed\xa0\x80\"]").find("invalid UTF-8") != std::string::npos);    // a surrogate
  CHECK(error("[\"\\ud800\"]").find("high surrogate") != std::string::npos);
  CHECK(pull_text("[\"\\ud83d\\ude00\"]")[0] == "\xf0\x9f\x98\x80");
  CHECK(error("[\"a\nb\"]").find("control character") != std::string::npos);
  CHECK(error("{} {}") == "doc.json: not valid JSON (unexpected '{' after the top-level value at line 1, column 4)");
  CHECK(error("") == "doc.json: not valid JSON (unexpected end of input at line 1, column 1)");
  CHECK(pull_text("\xef\xbb\xbf{\"a\":1}")["a"] == 1);  // a byte order mark is skipped
  JsonLimits tight = wide_limits();
  tight.max_depth = 4;
  CHECK(error("[[[[1]]]]", tight) == "accepted");
  CHECK(error("[[[[[1]]]]]", tight) == "doc.json: nested deeper than 4 levels");
  tight.max_string_bytes = 5;
  CHECK(error("[\"12345\"]", tight) == "accepted");
  CHECK(error("[\"123456\"]", tight) == "doc.json: a string longer than 5 bytes");
  // skip() passes over a whole value, limits still checked.
  JsonPull in(JsonPull::FromText{}, std::string_view("{\"x\":[1,{\"y\":[2]}],\"z\":3}"), "doc.json", wide_limits());
  REQUIRE(in.next() == Tok::begin_object);
  REQUIRE(in.next() == Tok::key);
  in.skip(in.next());
  REQUIRE(in.next() == Tok::key);
  CHECK(in.text() == "z");
  REQUIRE(in.next() == Tok::number);
  CHECK(in.number() == 3);
  CHECK(in.next() == Tok::end_object);
  CHECK(in.next() == Tok::end);
}
