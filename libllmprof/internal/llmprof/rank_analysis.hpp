// The cross-rank half of analysing a run made under a launcher (`deep-profile run --launcher`): the
// pipeline's analyze stage and `deep-profile analyze MAIN` both read it from the run directory, so a
// re-analysis with a newer deep-profile gives what a new run would.
#pragma once

#include <filesystem>

#include "llmprof/cross_rank.hpp"
#include "llmprof/result.hpp"
#include "llmprof/run_directory.hpp"

namespace llmprof {

// MAIN/ranks/ exists: the run's workload stages ran under a launcher.
bool is_ranked_run(const std::filesystem::path& main_directory);

// The world size: the most ranks any stage of run.json recorded.
int world_size_of_run(const RunManifest& manifest);

// The rank whose reports feed the single-rank analysis: the lowest one ncu profiled, else the lowest
// one nsys profiled, else 0.
int primary_rank_of_run(const RunManifest& manifest);

// Every rank's figures: its SQLite export (MAIN/ranks/r<k>/nsys/profile.sqlite) through the timeline
// engine or, without one, its `nsys stats` tables; its stage1 and nsys wall times from `manifest`. The
// alignment falls back to the range the capture was gated on (read from the primary rank's
// nsys/cmd.txt). A rank whose files do not parse is left without those figures and named in `warnings`.
CrossRankAnalysis analyze_ranks_of_run(const std::filesystem::path& main_directory, const RunManifest& manifest,
                                       std::vector<std::string>& warnings);

// MAIN/analysis/ranks.csv and ranks.md (the report's "Across ranks" section).
// The samples rank `rank`'s single-rank analysis measures its stages with (AnalysisOptions::attributed_samples):
// those of the capture that sampled its GPU, on its clock, or none with the reason; nullopt when no capture of the
// run sampled (its export then says why). Problems reading a capture go to `warnings`.
std::optional<AttributedSamples> attributed_samples_of_rank(const std::filesystem::path& main_directory,
                                                           const RunManifest& manifest, int rank,
                                                           std::vector<std::string>& warnings);

Result<void> write_cross_rank_files(const CrossRankAnalysis& analysis, const std::filesystem::path& main_directory);

}  // namespace llmprof
