// Atomic writes and bounded input reading, shared by every reader and writer.
#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "input_error.hpp"

namespace ceiling {
namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

// The file a write of `file` lands in: `file` itself, or the end of its chain of symbolic links
// (a relative link is relative to the link's directory), so a link stays a link.
fs::path write_target(const fs::path& file) {
  fs::path p = file;
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    if (hops == 40) throw std::runtime_error(file.string() + ": too many levels of symbolic links");
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw std::runtime_error("cannot read the link " + p.string() + ": " + ec.message());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
}

// ".<name>.tmp.<pid>.<n>.<random>": unique per process, per call and across hosts sharing a directory.
std::string temporary_name(const fs::path& file) {
  static std::atomic<unsigned long long> counter{0};
  static const unsigned long long salt = [] {
    std::random_device rd;
    return (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  }();
  const unsigned long long n = counter.fetch_add(1);
  char tail[80];
  std::snprintf(tail, sizeof tail, ".tmp.%ld.%llu.%08llx", static_cast<long>(::getpid()), n,
                (salt ^ (n * 0x9E3779B97F4A7C15ull)) & 0xffffffffull);
  std::string name(1, '.');  // appended piecewise: g++ 12 warns (-Wrestrict) on "." + string
  name += file.filename().string();
  name += tail;
  return name;
}

}  // namespace

void write_file_atomically(const fs::path& file, const std::string& text) {
  const fs::path target = write_target(file);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory " + dir.string() + ": " + ec.message());
  // The new file keeps the permission bits of the one it replaces (else the umask's default).
  struct stat old {};
  const bool keep_mode = ::stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  const fs::path tmp = dir / temporary_name(target);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp.string() + ": " + errno_text());
  const auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(what + " " + tmp.string() + " failed: " + why);
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("writing");
    done += static_cast<size_t>(n);
  }
  if (keep_mode && ::fchmod(fd, old.st_mode & 07777) != 0) fail("setting the mode of");
  if (::fsync(fd) != 0) fail("fsync of");  // the data is on disk before the name points at it
  if (::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw std::runtime_error("writing " + tmp.string() + " failed: " + why);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + target.string() + ": " + why);
  }
  // The rename itself survives a crash once the directory is synced.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string read_input_file(const fs::path& file, std::uintmax_t max_bytes, const char* what) {
  const std::string name = file.string();
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st))
    throw InputFileError(name, 0, 0, "", std::string("cannot open the ") + what + " (" + (ec ? ec.message() : "no such file") + ")");
  if (!fs::is_regular_file(st))
    throw InputFileError(name, 0, 0, "", std::string("not a regular file") + (fs::is_directory(st) ? " (a directory)" : ""));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputFileError(name, 0, 0, "", std::string("cannot open the ") + what);
  std::string text(static_cast<size_t>(std::min<std::uintmax_t>(max_bytes, 1u << 16)), '\0');
  std::string out;
  // Read at most max_bytes + 1: a file that grows while read is still refused.
  while (in && out.size() <= max_bytes) {
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    out.append(text.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw InputFileError(name, 0, 0, "", std::string("cannot read the ") + what);
  if (out.size() > max_bytes)
    throw InputFileError(name, 0, 0, "", "larger than " + std::to_string(max_bytes >> 20) + " MiB, the limit for a " + what);
  return out;
}

namespace {

// Counts nesting and refuses aliases while yaml-cpp parses; builds nothing.
class YamlLimitsCheck : public YAML::EventHandler {
 public:
  YamlLimitsCheck(const std::string& file, int max_depth) : file_(file), max_depth_(max_depth) {}
  void OnDocumentStart(const YAML::Mark& m) override { document_start_ = m; }
  void OnDocumentEnd() override {}
  const YAML::Mark& document_start() const { return document_start_; }
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    fail(m, "YAML aliases (*name) are not accepted: write the value out (an alias of a large value can expand to gigabytes)");
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { enter(m); }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { enter(m); }
  void OnMapEnd() override { --depth_; }

 private:
  void enter(const YAML::Mark& m) {
    if (++depth_ > max_depth_) fail(m, "nested deeper than " + std::to_string(max_depth_) + " levels");
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& cause) const {
    throw InputFileError(file_, m.line + 1, m.column + 1, "", cause);
  }
  std::string file_;
  int max_depth_;
  int depth_ = 0;
  YAML::Mark document_start_;
};

// The first byte (offset) where `s` stops being UTF-8 (overlong forms and surrogates refused), or npos.
size_t invalid_utf8_at(const std::string& s) {
  size_t i = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned c = b[i];
    int n = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) n = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) n = 2;
    else if (c == 0xED) n = 2, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) n = 2;
    else if (c == 0xF0) n = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else if (c == 0xF4) n = 3, hi = 0x8F;
    else return i;
    if (i + static_cast<size_t>(n) >= s.size()) return i;
    for (int k = 1; k <= n; ++k) {
      const unsigned t = b[i + static_cast<size_t>(k)];
      if (t < (k == 1 ? lo : 0x80u) || t > (k == 1 ? hi : 0xBFu)) return i;
    }
    i += static_cast<size_t>(n) + 1;
  }
  return std::string::npos;
}

}  // namespace

void check_yaml_input(const std::string& text, const std::string& file, int max_depth) {
  if (const size_t at = invalid_utf8_at(text); at != std::string::npos) {
    int line = 1, column = 1;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') ++line, column = 1;
      else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
    }
    throw InputFileError(file, line, column, "", "not valid UTF-8 text (YAML files are UTF-8)");
  }
  std::istringstream in(text);
  YAML::Parser parser(in);
  YamlLimitsCheck check(file, max_depth);
  try {
    // One document: the loaders read only the first, and yaml-cpp 0.7 can report documents
    // forever on some broken input (", :\n2e9" made this loop spin; tests/fuzz/regressions).
    if (parser.HandleNextDocument(check) && parser.HandleNextDocument(check))
      throw InputFileError(file, check.document_start().line + 1, check.document_start().column + 1, "",
                           "a second YAML document; a ceiling file is one document (no '---' separators)");
  } catch (const YAML::Exception&) {
    // Syntax errors are the loader's to report, with its own wording.
  }
}

std::filesystem::path probes_path_for(const std::filesystem::path& descriptor) {
  return descriptor.parent_path() / (descriptor.stem().string() + ".probes.json");
}

}  // namespace ceiling
