// The two recorded H100 windows of examples/serving/serve.py (tests/data/serving/serving_window{1,2}_h100.sqlite)
// as step kinds, and the workload's own step tokens for them: what the step-kind, step-token and step_kinds.json
// record tests share.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "llmprof/step_kinds.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/timeline.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

inline std::vector<StepKindReport> h100_serving_windows() {
  std::vector<StepKindReport> windows;
  for (const char* file : {"serving_window1_h100", "serving_window2_h100"}) {
    auto timeline = analyze_timeline(data_path(std::string("serving/") + file + ".sqlite"));
    REQUIRE(timeline);
    auto steps = analyze_step_kinds(timeline.value());
    REQUIRE(steps);
    windows.push_back(*steps);
  }
  return windows;
}

inline StepTokens h100_serving_step_tokens() {
  auto tokens = load_step_tokens(data_path("serving/serving_h100_step_tokens.json"));
  REQUIRE(tokens);
  return tokens.value();
}

}  // namespace llmprof::testing
