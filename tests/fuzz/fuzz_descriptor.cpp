// libFuzzer target: descriptor (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "descriptor"
#include "fuzz_main.hpp"
