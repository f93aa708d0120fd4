// The workload every stage runs: the user's `-- CMD` (workload.argv) or the bundled example
// llmprof-decode, with its environment and working directory.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llmprof/config.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/result.hpp"

namespace llmprof::detail {

// The workload as it runs in every stage (the profilers launch the same argv).
struct ResolvedWorkload {
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;  // config env + CUDA_VISIBLE_DEVICES
  std::filesystem::path working_directory;
  bool is_bundled_example = false;
  // Settings given that cannot take effect for this workload, one sentence each naming the setting.
  std::vector<std::string> ineffective_settings;
};

// workload.argv as configured, or the bundled example with workload.example_args. The working directory
// is workload.cwd, else the directory deep-profile runs in: recorded either way, so that a relative
// `./prog` in a resumed run or a pasted cmd.txt names the same file. An Error when the example is needed
// but not found (see find_example_workload).
Result<ResolvedWorkload> resolve_workload(const DeepProfileConfig& config, const DeepProfilerEnvironment& environment);

// Where the bundled example workload llmprof-decode is: beside `executable`, then
// <prefix>/bin (prefix = executable's parent's parent), then the build tree
// (<build>/examples/decode-workload/), then `extra_directories`. not_found names every place looked
// and how to build it or pass `-- CMD`.
Result<std::filesystem::path> find_example_workload(const std::filesystem::path& executable,
                                                    const std::vector<std::filesystem::path>& extra_directories);

}  // namespace llmprof::detail
