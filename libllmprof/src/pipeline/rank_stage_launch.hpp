// The pipeline's side of a stage under a launcher: write the plan, run the launcher once, read every
// rank's status into run.json, and turn the worst rank into the stage's result.
#pragma once

#include <optional>
#include <vector>

#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/rank_files.hpp"

namespace llmprof::detail {

struct LaunchedRanks {
  std::optional<StageResult> problem;  // the stage did not succeed on every rank (names the rank)
  std::vector<RankStatus> statuses;    // those found, by rank
  int world_size = 0;                  // 0 when no rank reported
};

// `ranks`: the ranks that run plan.role (nullopt: every rank). Fills the stage record's command,
// cmd_file, log_file (MAIN/<stage>/launcher.log) and ranks.
LaunchedRanks launch_ranks(PipelineRun& run, const RankPlan& plan, const std::optional<std::vector<int>>& ranks);

}  // namespace llmprof::detail
