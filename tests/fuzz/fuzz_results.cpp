// libFuzzer target: results (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "results"
#include "fuzz_main.hpp"
