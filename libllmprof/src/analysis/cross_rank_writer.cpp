// analysis/ranks.csv and the report's "Across ranks" Markdown section.
#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "llmprof/cross_rank.hpp"

namespace llmprof {
namespace {

std::string csv_number(const std::optional<double>& value) {
  if (!value) return "";
  std::ostringstream text;
  text.precision(9);
  text << *value;
  return text.str();
}

std::string cell(const std::optional<double>& value, const char* unit = "") {
  return value ? detail::format_number(*value) + unit : "—";
}

std::string milliseconds(const std::optional<double>& value) {
  return value ? detail::format_number(*value) + " ms" : "—";
}

}  // namespace

std::string cross_rank_csv(const CrossRankAnalysis& analysis) {
  std::ostringstream csv;
  csv << "rank,stage1_wall_s,nsys_wall_s,kernel_time_s,collective_kernel_time_s,collective_share,comm_compute_overlap,"
         "steps,mean_step_start_lag_ms,step_start_basis\n";
  for (const auto& rank : analysis.ranks) {
    csv << rank.rank << "," << csv_number(rank.stage1_wall_s) << "," << csv_number(rank.nsys_wall_s) << ","
        << csv_number(rank.kernel_time_s) << "," << csv_number(rank.collective_kernel_time_s) << ","
        << csv_number(rank.collective_share) << "," << csv_number(rank.comm_compute_overlap) << "," << rank.steps << ","
        << csv_number(rank.mean_step_start_lag_ms) << "," << analysis.step_basis << "\n";
  }
  return csv.str();
}

std::string cross_rank_markdown(const CrossRankAnalysis& analysis) {
  std::ostringstream md;
  md << "## Across ranks\n\n";
  md << "| rank | stage1 wall | nsys wall | kernel time | NCCL share | comm/compute overlap | steps | step start lag "
        "|\n";
  md << "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& rank : analysis.ranks) {
    md << "| " << rank.rank << " | " << cell(rank.stage1_wall_s, " s") << " | " << cell(rank.nsys_wall_s, " s") << " | "
       << cell(rank.kernel_time_s, " s") << " | " << detail::format_fraction_percent(rank.collective_share) << " | "
       << detail::format_fraction_percent(rank.comm_compute_overlap) << " | " << rank.steps << " | "
       << milliseconds(rank.mean_step_start_lag_ms) << " |\n";
  }
  md << "\n";
  for (const auto& imbalance : analysis.imbalance) {
    md << "- **Imbalance of " << imbalance.figure << "** (max/median): " << detail::format_number(imbalance.ratio)
       << " (max " << detail::format_number(imbalance.max) << " on rank " << imbalance.max_rank << ", median "
       << detail::format_number(imbalance.median) << ")\n";
  }
  if (analysis.latest_rank) {
    const std::string how =
        std::to_string(analysis.compared_steps) + " steps, " + analysis.step_basis +
        (analysis.step_basis == "GPU" ? " start of each step's first GPU work" : " start of each step's range") +
        ", aligned on the " + analysis.alignment;
    std::string share;
    if (analysis.step_period_ms && *analysis.step_period_ms > 0)
      share = ", " + detail::format_fraction_percent(*analysis.latest_lag_ms / *analysis.step_period_ms) +
              " of the median step (" + milliseconds(analysis.step_period_ms) + ")";
    if (analysis.straggler) {
      md << "- **Straggler**: rank " << *analysis.straggler << ", whose steps start "
         << milliseconds(analysis.straggler_lag_ms) << " after the earliest rank's on average" << share << " (" << how
         << ")\n";
    } else {
      md << "- **No straggler**: the latest rank, rank " << *analysis.latest_rank << ", starts its steps "
         << milliseconds(analysis.latest_lag_ms) << " after the earliest on average" << share << ", under the "
         << detail::format_fraction_percent(kStragglerStepShare) << " that names a straggler (" << how << ")\n";
    }
    md << "- **Skew after alignment**: median " << milliseconds(analysis.skew_median_ms) << ", max "
       << milliseconds(analysis.skew_max_ms) << " between the earliest and the latest step start\n";
  }
  const bool any_collective = std::any_of(analysis.ranks.begin(), analysis.ranks.end(), [](const RankFigures& rank) {
    return rank.collective_share && *rank.collective_share > 0;
  });
  // Measured on two H200s (2026-11-23): in a launch-bound eager TP decode the NCCL kernels held 75-84%
  // of each rank's kernel time, almost all of it waiting for the peer's launches, not moving data.
  if (any_collective)
    md << "- NCCL share counts each collective kernel's whole duration, which includes waiting for the other "
          "ranks to join: a high share on the ranks that wait points at the straggler, not at the network\n";
  for (const auto& reason : analysis.not_computed) md << "- Not computed: " << reason << "\n";
  if (!analysis.step_rule.empty()) md << "- " << analysis.step_rule << "\n";
  return md.str();
}

}  // namespace llmprof
