// Golden-file comparison for rendered reports. Re-bless after an intended change with
//   LLMPROF_BLESS=1 ctest --test-dir build/<dir> -R 'report|run_comparison'
// which rewrites tests/data/golden/<name> with the current output (review the diff before committing).
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace llmprof::testing {

inline void check_golden(const std::string& name, const std::string& actual) {
  const auto path = data_path("golden/" + name);
  if (const char* bless = std::getenv("LLMPROF_BLESS"); bless != nullptr && std::string(bless) == "1") {
    write_file(path, actual);
    WARN("blessed " << path.string());
    return;
  }
  REQUIRE(std::filesystem::exists(path));
  const std::string expected = read_file(path);
  if (expected != actual) {
    // Show the first differing line so a failure is readable without a diff tool.
    std::size_t line = 1, i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) {
      if (expected[i] == '\n') ++line;
      ++i;
    }
    auto line_at = [](const std::string& text, std::size_t at) {
      const auto start = text.rfind('\n', at == 0 ? 0 : at - 1);
      const auto begin = start == std::string::npos ? 0 : start + 1;
      return text.substr(begin, text.find('\n', begin) - begin);
    };
    INFO("golden " << path.string() << " differs at line " << line << "\nexpected: " << line_at(expected, i)
                   << "\nactual:   " << line_at(actual, i) << "\n(re-bless with LLMPROF_BLESS=1 if intended)");
    CHECK(expected == actual);
  }
}

}  // namespace llmprof::testing
