// What a run measured, read back from its directory, so that `deep-profile analyze MAIN` re-analyses
// the run as it was profiled instead of with defaults (a top-10 gated run re-analysed with the default top-5 would
// measure something else).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "llmprof/deep_profiler.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/rank_analysis.hpp"
#include "pipeline/ncu_pass.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace fs = std::filesystem;

namespace {

// A run recorded before run.json's capture record: the last `nsys profile` line of its nsys/cmd.txt is the
// capture whose tables the analysis reads (an ungated re-run after an empty gate comes after the gated
// one); under a launcher, the primary rank's. The range of its --nvtx-capture when it has
// --capture-range=nvtx, else nullopt.
std::optional<std::string> gate_of_command_file(const fs::path& commands) {
  std::ifstream in(commands);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) != 0 && line.find(" profile ") != std::string::npos) last = line;  // '#': a comment
  }
  std::istringstream words(last);
  bool nvtx = false;
  std::optional<std::string> range;
  const std::string flag = "--nvtx-capture=";
  for (std::string word; words >> word;) {
    if (word == "--capture-range=nvtx") nvtx = true;
    if (word.rfind(flag, 0) == 0) {
      const std::string expression = word.substr(flag.size());
      range = expression.substr(0, expression.find_first_of("@'\""));
    }
  }
  return nvtx ? range : std::nullopt;
}

struct ExtraArgsFrequency {
  bool named = false;      // a --gpu-metrics-frequency flag is there
  std::optional<int> hz;   // the last one's value, when it is a whole number of hertz
};

// "--gpu-metrics-frequency=N" or "--gpu-metrics-frequency N"; the last flag counts.
ExtraArgsFrequency frequency_in_extra_args(const std::vector<std::string>& arguments) {
  constexpr std::string_view flag = "--gpu-metrics-frequency";
  ExtraArgsFrequency found;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (!argument.starts_with(flag)) continue;
    std::string value;
    if (argument.size() > flag.size() && argument[flag.size()] == '=')
      value = argument.substr(flag.size() + 1);
    else if (argument.size() == flag.size() && i + 1 < arguments.size())
      value = arguments[i + 1];
    else if (argument.size() != flag.size())
      continue;  // another flag that starts alike
    found.named = true;
    found.hz.reset();
    if (!value.empty() && value.size() <= 7 && value.find_first_not_of("0123456789") == std::string::npos)
      found.hz = std::stoi(value);
  }
  return found;
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
  options.cuda_traced = std::find(config.nsys.trace.begin(), config.nsys.trace.end(), "cuda") != config.nsys.trace.end();
  // The frequency the capture asked for: nsys.extra_args's when it names one (it follows ours on the command line,
  // and two GPUs sampled under one typeId read as twice the frequency asked for only if that is known).
  const ExtraArgsFrequency extra = frequency_in_extra_args(config.nsys.extra_args);
  if (extra.hz)
    options.gpu_metrics_expectation.requested_hz = *extra.hz;
  else if (!extra.named)  // off: no frequency asked for
    if (const auto hz = gpu_metrics_frequency_hz(config.nsys)) options.gpu_metrics_expectation.requested_hz = *hz;
  // load_config and DeepProfiler::run validate run.ignore_ranges first: a malformed entry here is a caller's bug.
  options.library_ranges = library_ranges_of(config).value();
  return options;
}

Result<DeepProfileConfig> load_recorded_config(const fs::path& main) {
  // A file given for the run directory is named as such ("run --resume FILE" said only that the run had no
  // config.toml, as if FILE were a directory).
  if (auto checked = check_main_directory(main, "to read its config.toml"); !checked) return checked.error();
  const fs::path config_file = main / RunLayout::resolved_config();
  std::error_code error;
  if (!fs::exists(config_file, error)) {
    return make_error(ErrorCode::not_found, "the run has no config.toml, so how it was profiled is unknown",
                      "pass the MAIN directory of a deep-profile run (runs/<run-id>)", config_file.string());
  }
  return load_config({{config_file}, {}});
}

Result<AnalysisOptions> analysis_options_of_run(const fs::path& main) {
  if (auto checked = check_main_directory(main, "to analyse"); !checked) return checked.error();
  auto config = load_recorded_config(main);
  if (!config && config.error().code == ErrorCode::not_found) {
    Error error = config.error();
    error.hint = "pass --stage, --top and --gated to say how it was profiled";
    return error;
  }
  if (!config) return config.error();
  auto manifest = read_manifest(main);
  AnalysisOptions options =
      analysis_options_for(config.value(), manifest ? capture_gate_of_run(main, *manifest) : std::nullopt);
  // run.on_empty_gate = discover: the stage discovery chose is the one select and ncu used.
  if (manifest && manifest->capture && manifest->capture->discovered_stage) {
    options.selection_stage = *manifest->capture->discovered_stage;
    options.capture_gated_on_stage = capture_gate_of_run(main, *manifest) == options.selection_stage;
  }
  return options;
}

std::optional<std::string> capture_gate_of_run(const fs::path& main, const RunManifest& manifest) {
  if (manifest.capture) return manifest.capture->gated_range();
  if (!is_ranked_run(main)) return gate_of_command_file(main / RunLayout::nsys_commands());
  return gate_of_command_file(main / RunLayout::rank_directory(primary_rank_of_run(manifest)) /
                              RunLayout::nsys_commands());
}

}  // namespace llmprof
