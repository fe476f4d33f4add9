// libFuzzer target: matrix_market (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "matrix_market"
#include "fuzz_main.hpp"
