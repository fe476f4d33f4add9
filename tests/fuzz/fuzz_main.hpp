// The libFuzzer entry of one target (CEILING_FUZZ_TARGET): each input goes through
// ceiling::fuzz::run_target in a scratch directory of this process; a refusal that is not clean
// aborts, so libFuzzer keeps the input as a crash.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "entries.hpp"

#ifndef CEILING_FUZZ_TARGET
#error "define CEILING_FUZZ_TARGET before including fuzz_main.hpp"
#endif

namespace {
const std::filesystem::path& fuzz_scratch() {
  static const std::filesystem::path dir = [] {
    auto p = std::filesystem::temp_directory_path() /
             ("ceiling-fuzz-" + std::string(CEILING_FUZZ_TARGET) + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(fuzz_scratch(), ec);
    });
    return p;
  }();
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bad = ceiling::fuzz::run_target(CEILING_FUZZ_TARGET, data, size, fuzz_scratch());
  if (!bad.empty()) {
    std::fprintf(stderr, "ceiling fuzz %s: %s\n", CEILING_FUZZ_TARGET, bad.c_str());
    std::abort();
  }
  return 0;
}
