// The one way a test skips: where its precondition is missing (the real Nsight tools, mpirun, a Slurm
// cluster, the LibTorch example, a non-root user) it prints "LLMPROF-SKIPPED: <why>" and returns. Every
// test that tests/CMakeLists.txt and tests/cmake/ register has SKIP_REGULAR_EXPRESSION "LLMPROF-SKIPPED",
// so ctest reports it as skipped, not passed. Where `required_by` names an environment variable set to
// "1" (scripts/test.sh sets LLMPROF_REQUIRE_CLUSTER and LLMPROF_REQUIRE_REAL_TOOLS, hence CI), the
// skip is a failure instead: there the precondition is installed, so a skip would hide a broken setup.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <string>

namespace llmprof::testing {

inline constexpr const char* kSkipMarker = "LLMPROF-SKIPPED";

// True when the environment variable `variable` is "1".
inline bool required_by_environment(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && std::string(value) == "1";
}

// Skips the calling test with `why` (the caller returns right after), or fails it when `required_by`
// is set to 1.
inline void skip_test(const std::string& why, const char* required_by = nullptr) {
  if (required_by != nullptr && required_by_environment(required_by)) {
    FAIL(why << "; " << required_by << "=1 forbids skipping");
  }
  std::cout << kSkipMarker << ": " << why << std::endl;
}

}  // namespace llmprof::testing
