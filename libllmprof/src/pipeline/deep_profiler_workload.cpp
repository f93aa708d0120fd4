// The workload every stage runs: the user's `-- CMD` or the bundled example, plus its environment.
#include "pipeline/workload.hpp"
#include "process/process_launch.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kExampleName = "llmprof-decode";

std::vector<fs::path> example_candidates(const fs::path& executable, const std::vector<fs::path>& extra) {
  std::vector<fs::path> candidates;
  if (!executable.empty()) {
    const fs::path directory = executable.parent_path();
    candidates.push_back(directory / kExampleName);                        // installed side by side
    candidates.push_back(directory.parent_path() / "bin" / kExampleName);  // <prefix>/bin
    // Build tree: <build>/apps/deep-profile/deep-profile next to <build>/examples/decode-workload/.
    candidates.push_back(directory.parent_path().parent_path() / "examples" / "decode-workload" / kExampleName);
  }
  for (const auto& directory : extra) candidates.push_back(directory / kExampleName);
  return candidates;
}

}  // namespace

Result<fs::path> find_example_workload(const fs::path& executable, const std::vector<fs::path>& extra_directories) {
  const auto candidates = example_candidates(executable, extra_directories);
  std::string searched;
  for (const auto& candidate : candidates) {
    if (is_executable_file(candidate)) return candidate.lexically_normal();
    searched += (searched.empty() ? "" : ", ") + candidate.lexically_normal().string();
  }
  return make_error(
      ErrorCode::not_found,
      "the bundled example workload llmprof-decode was not found (searched: " +
          (searched.empty() ? std::string("nowhere: the deep-profile executable path is unknown") : searched) + ")",
      "build it (it needs LibTorch: `apt-get install libtorch-dev`, then configure with "
      "-DLLMPROF_BUILD_EXAMPLES=ON and build the llmprof-decode target), or profile your own "
      "program with `deep-profile run -- CMD ARGS...` (workload.argv in the config)",
      kExampleName);
}

Result<ResolvedWorkload> resolve_workload(const DeepProfileConfig& config, const DeepProfilerEnvironment& environment) {
  ResolvedWorkload workload;
  workload.environment = config.workload.env;
  std::error_code no_directory;
  workload.working_directory =
      config.workload.cwd.empty() ? fs::current_path(no_directory) : fs::absolute(config.workload.cwd, no_directory);
  if (no_directory)
    return make_error(ErrorCode::io_error, "cannot resolve the workload's working directory: " + no_directory.message(),
                      "run deep-profile from an existing directory, or set workload.cwd", config.workload.cwd.string());
  if (config.run.device_index) {
    // The workload sees only the chosen GPU, which it then calls cuda:0.
    workload.environment["CUDA_VISIBLE_DEVICES"] = std::to_string(*config.run.device_index);
  }
  if (!config.workload.argv.empty()) {
    workload.argv = config.workload.argv;
    if (!config.workload.example_args.empty())
      workload.ineffective_settings.push_back(
          "workload.example_args is set but has no effect: it applies to the bundled example only, and an explicit "
          "workload command (-- CMD or workload.argv) is given; put those arguments in the command instead");
    return workload;
  }
  auto example = find_example_workload(environment.executable, environment.example_search_directories);
  if (!example) return example.error();
  workload.is_bundled_example = true;
  workload.argv.push_back(fs::absolute(example.value()).string());
  if (config.run.device_index) {
    workload.argv.push_back("--device");
    workload.argv.push_back("cuda:0");
  }
  workload.argv.insert(workload.argv.end(), config.workload.example_args.begin(), config.workload.example_args.end());
  return workload;
}

}  // namespace llmprof::detail
