// libFuzzer target: units (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "units"
#include "fuzz_main.hpp"
