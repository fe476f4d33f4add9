#include "files.hpp"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace ceiling {

void write_file_atomically(const std::filesystem::path& file, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory " + dir.string() + ": " + ec.message());
  const fs::path tmp = dir / ("." + file.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw std::runtime_error("writing " + tmp.string() + " failed");
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(tmp, ignore);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + file.string() + ": " + ec.message());
  }
}

std::filesystem::path probes_path_for(const std::filesystem::path& descriptor) {
  return descriptor.parent_path() / (descriptor.stem().string() + ".probes.json");
}

}  // namespace ceiling
