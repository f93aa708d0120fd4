// The files that pass between deep-profile run and its rank-exec processes: the stage plan the
// pipeline writes once (MAIN/ranks/<stage>.plan.json) and the status each rank writes for itself
// (MAIN/ranks/r<rank>/<stage>/status.json).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"
#include "llmprof/stage.hpp"

namespace llmprof::detail {

// Stands for the rank number in a plan's paths; rank-exec replaces it with its own rank.
inline constexpr const char* kRankToken = "@RANK@";
// The role of a rank that runs the workload without a profiler (the others' role is their stage's name).
inline constexpr const char* kBareRole = "bare";

struct RankPlan {
  Stage stage = Stage::workload;           // workload (stage1), nsys or ncu
  std::string role = kBareRole;            // what a selected rank runs: nsys | ncu | bare
  std::vector<std::string> profiler_argv;  // the profiler, up to (not including) CMD; empty for bare
  std::map<std::string, std::string> environment;
  std::filesystem::path working_directory;
  double timeout_s = 0;     // per rank; 0: none
  std::string timeout_key;  // the config key it came from, for messages
  // run.survivor_grace_s: the rank's workload survivors are ended after it; nullopt (run.leave_survivors): left.
  std::optional<double> survivor_grace_s;
  // GPU-metrics sampling, decided per rank by rank-exec (pipeline/gpu_metrics_claim.hpp): the devices option of
  // this nsys ("" = no sampling), the words after it (frequency, set), the GPUs nsys lists (id -> PCI bus), and
  // whether it takes "cuda-visible".
  std::string gpu_metrics_option;
  std::vector<std::string> gpu_metrics_words;
  std::map<std::string, std::string> gpu_metrics_listed;
  bool gpu_metrics_cuda_visible = false;
};

std::string rank_plan_to_json(const RankPlan& plan);
Result<RankPlan> read_rank_plan(const std::filesystem::path& file);

struct RankStatus {
  int rank = 0;
  int local_rank = 0;
  int world_size = 0;
  std::string source;    // launcher family the variables came from
  std::string evidence;  // the variables read
  std::string host;
  std::string role;     // nsys | ncu | bare
  std::string command;  // shell-quoted
  std::string started_utc;
  // running | ok | failed | timeout | interrupted | refused (a bad request: nothing was run)
  std::string outcome = "running";
  std::string reason;
  std::optional<int> exit_code;
  double duration_s = 0;
  // "pid (name)" of the rank's workload processes that outlived it, and whether they were ended.
  std::vector<std::string> survivors;
  bool survivors_ended = false;
  std::vector<std::string> survivors_killed;  // those that outlived the grace and got SIGKILL
  // The rank's GPU-metrics sampling: the --gpu-metrics-devices value it used ("cuda-visible", a GPU id; "" none),
  // the sampled GPU's PCI bus where nsys's listing names it, and why.
  std::string gpu_metrics;
  std::string gpu_metrics_bus;
  std::string gpu_metrics_note;
};

std::string rank_status_to_json(const RankStatus& status);
Result<RankStatus> read_rank_status(const std::filesystem::path& file);

// Every occurrence of kRankToken replaced by `rank`.
std::string substitute_rank(std::string text, int rank);

}  // namespace llmprof::detail
