// Expected figures read from an oracle's committed output, tests/data/oracles/<oracle>.txt, instead of
// numbers pasted into the test: tests/cmake/oracles.cmake runs the oracle (tests/tools/<oracle>_expected.py)
// and fails when it no longer prints that file, and the C++ test fails when the library no longer matches
// it, so the oracle and the assertion cannot drift apart.
//
//   oracle_figure("selection", "ns1 decode target=0.9 cap=30:", "coverage") == 0.943341
//
// A line is found by its beginning; in its rest a figure is "key=value" or "key value".
#pragma once

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "test_support.hpp"

namespace llmprof::testing {

// The text of figure `key` on the line of tests/data/oracles/<oracle>.txt that starts with `line_start`.
inline std::string oracle_text(const std::string& oracle, const std::string& line_start, const std::string& key) {
  std::istringstream lines(read_file(data_path("oracles/" + oracle + ".txt")));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(line_start, 0) != 0) continue;
    std::istringstream words(line.substr(line_start.size()));
    for (std::string word, previous; words >> word; previous = word) {
      if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
      if (previous == key) return word;
    }
    FAIL("tests/data/oracles/" << oracle << ".txt: no figure " << key << " on the line starting " << line_start);
  }
  FAIL("tests/data/oracles/" << oracle << ".txt: no line starts with " << line_start);
  return {};
}

// The rest of the line of tests/data/oracles/<oracle>.txt that starts with `line_start` (a sentence, not figures).
inline std::string read_oracle_line(const std::string& oracle, const std::string& line_start) {
  std::istringstream lines(read_file(data_path("oracles/" + oracle + ".txt")));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(line_start, 0) == 0) return line.substr(line_start.size());
  FAIL("tests/data/oracles/" << oracle << ".txt: no line starts with " << line_start);
  return {};
}

inline double oracle_figure(const std::string& oracle, const std::string& line_start, const std::string& key) {
  return std::stod(oracle_text(oracle, line_start, key));
}

}  // namespace llmprof::testing
