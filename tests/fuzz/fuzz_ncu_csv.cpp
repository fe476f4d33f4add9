// libFuzzer target: ncu_csv (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "ncu_csv"
#include "fuzz_main.hpp"
