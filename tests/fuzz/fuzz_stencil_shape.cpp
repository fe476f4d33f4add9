// libFuzzer target: stencil_shape (tests/fuzz/entries.cpp says what it feeds and what counts as a failure).
#define CEILING_FUZZ_TARGET "stencil_shape"
#include "fuzz_main.hpp"
