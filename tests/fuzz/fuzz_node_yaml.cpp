// libFuzzer target: node_yaml (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "node_yaml"
#include "fuzz_main.hpp"
