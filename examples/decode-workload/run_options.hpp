// Command-line options of llmprof-decode: parsing, presets and the checks that need no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model_config.hpp"

namespace decode_workload {

// Exit statuses of llmprof-decode.
enum ExitStatus : int {
  exit_success = 0,
  exit_runtime_failure = 1,  // the run itself failed (LibTorch error, metrics file not writable, ...)
  exit_usage = 2,            // invalid flags or an impossible configuration; detected before any work
};

struct RunOptions {
  std::string preset = "tiny";
  ModelConfig model;
  RunShape run;
  std::string dtype = "fp32";
  std::string device = "cpu";
  std::uint64_t seed = 1234;
  std::int64_t warmup = 1;
  std::int64_t threads = 0;  // CPU threads for LibTorch; 0 keeps LibTorch's default
  std::string metrics_out;   // empty: LLMPROF_METRICS_FILE, or no metrics file
  std::string tokens_out;    // empty: the generated tokens are only printed (the first 16 of sequence 0)
  std::string nvtx_domain;   // empty: NVTX's default domain
  bool torch_nvtx = false;
  bool cuda_graphs = false;      // decode steps replayed from one captured CUDA graph (needs --device cuda)
  bool tensor_parallel = false;  // one shard per rank of the launcher's processes (see tensor_parallel.hpp)
  // A deliberate straggler for checking the cross-rank view: with --tensor-parallel, rank straggler_rank
  // (-1: the last rank) sleeps straggler_ms before each decode step.
  std::int64_t straggler_ms = 0;
  std::int64_t straggler_rank = -1;
  bool show_help = false;
};

struct ParseOutcome {
  std::optional<RunOptions> options;  // set on success
  std::string error;                  // what is wrong and how to fix it, when options is empty
};

// Applies --preset first (wherever it appears), then every other flag over it, so
// `--preset 1b --batch 8` means the 1b preset at batch 8.
ParseOutcome parse_run_options(const std::vector<std::string>& arguments);

// Configuration checks that need no device: sizes positive, hidden % heads, heads % kv_heads, even head_dim,
// known dtype, well-formed device string. Returns an empty string when all is fine.
std::string check_run_options(const RunOptions& options);

// --tensor-parallel over `world_size` ranks: heads, kv-heads and intermediate must split evenly.
std::string check_tensor_parallel(const RunOptions& options, std::int64_t world_size);

std::string help_text();

// Chooses where metrics go: --metrics-out wins over the environment variable LLMPROF_METRICS_FILE.
std::string resolve_metrics_path(const RunOptions& options);

}  // namespace decode_workload
