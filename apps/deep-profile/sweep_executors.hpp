// The ways `deep-profile sweep --plan F` runs a plan besides every point here in order: one point into
// its SWEEP/point-<I>/ (--point-index, what each Slurm array task runs), the index of those points
// (--merge, the merge job), and the Slurm scripts (--executor slurm [--submit]). The work is the
// library's (llmprof/sweep_batch.hpp); this is the printing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/sweep.hpp"

namespace deep_profile {

struct SweepOptions {
  llmprof::ConfigSelection base;
  std::string plan_file;
  std::vector<std::string> points;
  bool quiet = false;
  std::vector<std::string> workload;
  std::string sweep_directory;             // --sweep-dir; empty: <runs_root>/sweep-<plan file name>
  std::optional<std::size_t> point_index;  // --point-index
  bool merge = false;                      // --merge
  std::string executor = "local";          // --executor local|slurm
  std::optional<std::size_t> concurrency;  // --concurrency
  bool submit = false;                     // --submit
};

// The configuration of every point, or nullopt after printing every point's error.
std::optional<std::vector<llmprof::DeepProfileConfig>> load_point_configs(const llmprof::SweepPlan& plan,
                                                                          const SweepOptions& options);

// --point-index, --merge or --executor slurm (exactly one is set; --plan was given). Returns the exit code.
int run_sweep_executor(const SweepOptions& options, const llmprof::SweepPlan& plan,
                       const llmprof::DeepProfileConfig& base_config, const std::filesystem::path& deep_profile);

}  // namespace deep_profile
