// The report's "Across ranks" Markdown section (analysis/ranks.csv is ranks_csv.cpp's).
#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "llmprof/cross_rank.hpp"

namespace llmprof {
namespace {

std::string cell(const std::optional<double>& value, const char* unit = "") {
  return value ? detail::format_number(*value) + unit : "—";
}

std::string milliseconds(const std::optional<double>& value) {
  return value ? detail::format_number(*value) + " ms" : "—";
}

bool any_sampled(const CrossRankAnalysis& analysis) {
  return std::any_of(analysis.ranks.begin(), analysis.ranks.end(), [](const RankFigures& rank) { return rank.sampled.has_value(); });
}

// One row per rank: what the GPU's counters measured over its steps, and where the samples came from.
void sampled_markdown(const CrossRankAnalysis& analysis, std::ostringstream& md) {
  std::string stage;
  for (const auto& rank : analysis.ranks)
    if (rank.sampled) stage = rank.sampled->stage;
  md << "\n**Sampled by the GPU's counters** (each rank's " << stage << " steps; one nsys per GPU may sample)\n\n";
  md << "| rank | samples from | steps | samples | SM active | tensor active | MBU | DRAM per step | note |\n";
  md << "|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& rank : analysis.ranks) {
    if (!rank.sampled) continue;
    const RankSampling& sampled = *rank.sampled;
    const std::string source = !sampled.source_rank ? "—"
                               : *sampled.source_rank == rank.rank ? "itself"
                                                                   : "rank " + std::to_string(*sampled.source_rank);
    const SampledStage& figures = sampled.figures;
    md << "| " << rank.rank << " | " << source << " | " << sampled.steps << " | " << figures.samples << " | "
       << detail::format_fraction_percent(figures.sm_active.mean) << " | "
       << detail::format_fraction_percent(figures.tensor_active.mean) << " | "
       << detail::format_fraction_percent(figures.mbu) << " | " << detail::format_si(figures.dram_bytes_per_step, "B")
       << " | " << detail::markdown_cell(figures.note) << " |\n";
  }
}

}  // namespace

std::string cross_rank_csv(const CrossRankAnalysis& analysis) {
  return write_ranks_csv(analysis.ranks, analysis.step_basis);
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
  if (any_sampled(analysis)) sampled_markdown(analysis, md);
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
  // Measured on two H200s: in a launch-bound eager TP decode the NCCL kernels held 75-84%
  // of each rank's kernel time, almost all of it waiting for the peer's launches, not moving data.
  if (any_collective)
    md << "- NCCL share counts each collective kernel's whole duration, which includes waiting for the other "
          "ranks to join: a high share on the ranks that wait points at the straggler, not at the network\n";
  for (const auto& reason : analysis.not_computed) md << "- Not computed: " << reason << "\n";
  if (!analysis.step_rule.empty()) md << "- " << analysis.step_rule << "\n";
  return md.str();
}

}  // namespace llmprof
