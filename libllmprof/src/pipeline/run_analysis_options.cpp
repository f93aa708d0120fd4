// What a run measured, read back from its directory, so that `deep-profile analyze MAIN` re-analyses
// the run as it was profiled instead of with defaults (issue: a top-10 gated run re-analysed as top-5).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "llmprof/deep_profiler.hpp"
#include "llmprof/rank_analysis.hpp"
#include "pipeline/deep_profiler_internal.hpp"

namespace llmprof {
namespace fs = std::filesystem;

namespace {

// The last `nsys profile` line of nsys/cmd.txt is the capture whose tables the analysis reads
// (an ungated re-run after an empty gate comes after the gated one).
// Under a launcher MAIN/nsys/cmd.txt holds the launcher's line and the primary rank's its nsys profile.
std::string last_profile_command(const fs::path& main) {
  fs::path commands = main / "nsys" / "cmd.txt";
  if (is_ranked_run(main)) {
    if (auto run = RunDirectory::open(main))
      commands = main / "ranks" / ("r" + std::to_string(primary_rank_of_run(run->manifest()))) / "nsys" / "cmd.txt";
  }
  std::ifstream in(commands);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.find(" profile ") != std::string::npos) last = line;
  }
  return last;
}

bool has_argument(const std::string& command, const std::string& argument) {
  std::istringstream words(command);
  for (std::string word; words >> word;) {
    if (word == argument) return true;
  }
  return false;
}

}  // namespace

AnalysisOptions analysis_options_for(const DeepProfileConfig& config, std::optional<std::string> capture_gate) {
  AnalysisOptions options;
  options.selection_stage = config.run.stage;
  // validate_config guarantees top_n_kernels >= 1; the max() guards a config built in code.
  options.top_n = static_cast<std::size_t>(std::max(config.run.top_n_kernels, 1));
  if (config.run.kernel_coverage > 0) options.kernel_coverage = config.run.kernel_coverage;
  options.max_kernels = static_cast<std::size_t>(std::max(config.run.max_kernels, 1));
  options.name_base = detail::selection_name_base(config.ncu.kernel_name_base);
  options.capture_gated_on_stage = capture_gate && *capture_gate == config.run.stage;
  return options;
}

Result<DeepProfileConfig> load_recorded_config(const fs::path& main) {
  const fs::path config_file = main / RunLayout::resolved_config();
  std::error_code error;
  if (!fs::exists(config_file, error)) {
    return make_error(ErrorCode::not_found, "the run has no config.toml, so how it was profiled is unknown",
                      "pass the MAIN directory of a deep-profile run (runs/<run-id>)", config_file.string());
  }
  return load_config({{config_file}, {}});
}

Result<AnalysisOptions> analysis_options_of_run(const fs::path& main) {
  auto config = load_recorded_config(main);
  if (!config && config.error().code == ErrorCode::not_found) {
    Error error = config.error();
    error.hint = "pass --stage, --top and --gated to say how it was profiled";
    return error;
  }
  if (!config) return config.error();
  std::optional<std::string> gate;
  const std::string profile = last_profile_command(main);
  const std::string capture = "--nvtx-capture=" + config->run.stage;
  if (has_argument(profile, "--capture-range=nvtx") &&
      (has_argument(profile, capture) || profile.find(capture + "@") != std::string::npos)) {
    gate = config->run.stage;
  }
  return analysis_options_for(config.value(), gate);
}

}  // namespace llmprof
