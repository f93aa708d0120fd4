// What profiling cost, as multiples of the bare run: "this run took 9.8x the bare run: nsys 3.1x, ncu 4.6x", from
// the stage timings run.json holds (run.json "tool_cost", the run summary, bench/tool_cost).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "llmprof/export.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {

struct LLMPROF_API ToolCost {
  double bare_s = 0;  // stage1: the workload run bare, once
  double run_s = 0;   // every stage's time added up, stage1 included: what the whole run took
  std::optional<double> nsys_s;  // unset: the nsys stage did not run
  std::optional<double> ncu_s;   // unset: the ncu stage did not run

  double multiple() const { return run_s / bare_s; }
  std::optional<double> nsys_multiple() const;
  std::optional<double> ncu_multiple() const;
};

// nullopt without a bare run that succeeded in a measurable time (stage1 skipped, failed or 0 s): no multiple then.
// A stage that was skipped or never started counts as not run.
LLMPROF_API std::optional<ToolCost> tool_cost_of(std::span<const StageRecord> stages);

// "this run took 9.8x the bare run: nsys 3.1x, ncu 4.6x" (the tools that ran; multiples as format_factor writes them).
LLMPROF_API std::string describe_tool_cost(const ToolCost& cost);

}  // namespace llmprof
