// libFuzzer target: json (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "json"
#include "fuzz_main.hpp"
