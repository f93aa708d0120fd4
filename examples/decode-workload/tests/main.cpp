// Catch2 entry point of the decode-workload tests (kept apart so edits to the tests do not recompile it).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
