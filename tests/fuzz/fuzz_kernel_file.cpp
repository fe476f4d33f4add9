// libFuzzer target: kernel_file (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "kernel_file"
#include "fuzz_main.hpp"
