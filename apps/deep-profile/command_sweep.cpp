// deep-profile sweep: the whole pipeline once per configuration point (one MAIN each), then an index
// comparing them (<runs_root>/sweep-<id>/index.{md,html,json}). This file parses the command line and
// runs the local executor; --point-index, --merge and --executor slurm are in sweep_executors.cpp.
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <mutex>

#include "command.hpp"
#include "config_options.hpp"
#include "llmprof/clock.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/stop_signal_watcher.hpp"
#include "llmprof/sweep.hpp"
#include "sweep_executors.hpp"

namespace deep_profile {
namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

const char* sweep_usage =
    "usage: deep-profile sweep [--plan FILE] [--point 'KEY=VALUE,KEY=VALUE']... [--config FILE]... [--preset NAME]\n"
    "                          [--set KEY=VALUE]... [KEY=VALUE]... [--quiet] [-- CMD ARGS...]\n"
    "       deep-profile sweep --plan FILE [--sweep-dir SWEEP] --point-index I | --merge\n"
    "                          | --executor slurm [--concurrency K] [--submit]   (and the options above)\n\n"
    "Runs `deep-profile run` once per point (a [[point]] table of the plan file, or one --point each), each in its\n"
    "own run directory, then writes <runs_root>/sweep-<id>/index.{md,html,json}. --set/--config/--preset apply to\n"
    "every point; a point's overrides come last.\n\n"
    "Points as separate jobs (SWEEP: --sweep-dir, else <runs_root>/sweep-<plan file name>):\n"
    "  --point-index I    runs point I alone into SWEEP/point-<I>/; a point already finished there is not run again\n"
    "  --merge            writes SWEEP/index.{md,html,json} from SWEEP/point-*/; a point without a finished run is a\n"
    "                     failed row that says why\n"
    "  --executor slurm   writes SWEEP/sweep.sbatch (a job array, one GPU per task, each task --point-index\n"
    "                     $SLURM_ARRAY_TASK_ID, at most --concurrency K at once) and SWEEP/merge.sbatch (--merge);\n"
    "                     --submit submits both with sbatch, the merge job with --dependency=afterany on the array.\n"
    "                     --executor local (the default) runs every point here, one after another.\n\n"
    "exit codes: 0 every point succeeded (scripts written, jobs submitted); 1 a point failed or was incomplete;\n"
    "2 bad command line, plan or config; 3 the index or scripts could not be written, sbatch missing or refusing;\n"
    "4 the workload program is missing; 124 a stage timed out (--point-index); 130 interrupted.\n";

// A count typed on the command line: digits only (program_options would read "-1" as a huge size_t).
std::optional<std::size_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<std::size_t>(std::stoul(text));
}

// The options that go together, checked before anything is loaded; a usage message when they do not.
std::optional<std::string> check_executor_options(SweepOptions& options, const std::string& point_index,
                                                  const std::string& concurrency) {
  if (options.executor != "local" && options.executor != "slurm")
    return "--executor must be local or slurm, not '" + options.executor + "'";
  if (!point_index.empty() && !(options.point_index = parse_count(point_index))) {
    return "--point-index takes a point number (0, 1, ...), not '" + point_index + "'";
  }
  if (!concurrency.empty() && (!(options.concurrency = parse_count(concurrency)) || *options.concurrency == 0)) {
    return "--concurrency takes a number of array tasks of at least 1, not '" + concurrency + "'";
  }
  const int modes = (options.point_index ? 1 : 0) + (options.merge ? 1 : 0) + (options.executor == "slurm" ? 1 : 0);
  if (modes > 1) return "--point-index, --merge and --executor slurm are separate steps: give one of them";
  if (modes == 1 && options.plan_file.empty()) {
    return "--point-index, --merge and --executor slurm need --plan FILE: every job reads its points from the same "
           "plan";
  }
  if ((options.submit || options.concurrency) && options.executor != "slurm")
    return "--submit and --concurrency go with --executor slurm";
  if (!options.sweep_directory.empty() && modes == 0)
    return "--sweep-dir goes with --point-index, --merge or --executor slurm";
  return std::nullopt;
}

std::optional<SweepOptions> parse_sweep_options(const std::vector<std::string>& args, int& exit) {
  SweepOptions options;
  std::string point_index, concurrency;
  CommandSyntax syntax("sweep", sweep_usage);
  syntax.options.add_options()("plan", po::value(&options.plan_file), "a TOML plan with [[point]] tables")(
      "point", po::value(&options.points), "one point: comma-separated KEY=VALUE overrides (repeatable)")(
      "quiet,q", po::bool_switch(&options.quiet), "no progress lines")(
      "sweep-dir", po::value(&options.sweep_directory),
      "SWEEP, the directory of the point runs and the index (with --plan)")(
      "point-index", po::value(&point_index), "run only point I (0-based) into SWEEP/point-<I>/")(
      "merge", po::bool_switch(&options.merge), "write SWEEP/index.* from SWEEP/point-*/")(
      "executor", po::value(&options.executor), "local (default: every point here) or slurm (a job array)")(
      "concurrency", po::value(&concurrency), "with --executor slurm: at most K array tasks at once")(
      "submit", po::bool_switch(&options.submit), "with --executor slurm: submit the array and the merge job");
  auto line = parse_profiling_command_line(syntax, args, exit);
  if (!line) return std::nullopt;
  if (auto problem = check_executor_options(options, point_index, concurrency)) {
    exit = usage_error(syntax, *problem);
    return std::nullopt;
  }
  options.base = std::move(line->selection);
  options.workload = std::move(line->workload);
  return options;
}

llmprof::Result<llmprof::SweepPlan> load_plan(const SweepOptions& options) {
  if (!options.plan_file.empty() && !options.points.empty()) {
    return llmprof::make_error(llmprof::ErrorCode::invalid_argument,
                               "give the points either with --plan or with --point, not both");
  }
  if (!options.plan_file.empty()) return llmprof::load_sweep_plan(options.plan_file);
  if (options.points.empty()) {
    return llmprof::make_error(llmprof::ErrorCode::invalid_argument, "a sweep needs points",
                               "pass --plan FILE or one --point 'KEY=VALUE,...' per configuration");
  }
  return llmprof::parse_sweep_points(options.points);
}

}  // namespace

std::optional<std::vector<llmprof::DeepProfileConfig>> load_point_configs(const llmprof::SweepPlan& plan,
                                                                          const SweepOptions& options) {
  std::vector<llmprof::DeepProfileConfig> configs;
  bool all_valid = true;
  for (const auto& point : plan.points) {
    llmprof::ConfigSelection selection = options.base;
    for (const auto& override_text : point.override_strings()) selection.overrides.push_back(override_text);
    auto config = load_selected_config(selection);
    if (!config) {
      (void)report_config_error("sweep", config.error(), std::cerr);
      std::cerr << "  in point " << point.label << "; nothing was run\n";
      all_valid = false;
      continue;
    }
    if (!options.workload.empty()) config->workload.argv = options.workload;
    configs.push_back(std::move(config.value()));
  }
  if (!all_valid) return std::nullopt;
  return configs;
}

namespace {

fs::path own_executable() {
  std::error_code error;
  const fs::path path = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : path;
}

struct SweepState {
  std::mutex mutex;
  llmprof::DeepProfiler* current = nullptr;
  std::atomic<bool> stopped{false};
};

// Every point in turn on this machine, each a whole pipeline run; Ctrl-C stops the point that runs and
// leaves the rest unrun (the index says so).
int run_sweep_locally(const SweepOptions& options, const llmprof::SweepPlan& plan,
                      const llmprof::DeepProfileConfig& base_config,
                      const std::vector<llmprof::DeepProfileConfig>& point_configs) {
  auto runner = llmprof::make_system_process_runner();
  llmprof::SystemClock clock;
  const std::string sweep_id = llmprof::generate_run_id(clock);
  SweepState state;
  auto watcher = llmprof::StopSignalWatcher::start([&state, &runner](int) {
    state.stopped.store(true);
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.current)
      state.current->request_stop();
    else
      runner->request_stop();
  });
  if (!watcher) {
    std::cerr << "deep-profile sweep: " << watcher.error().describe() << "\n";
    return exit_code_for(watcher.error());
  }
  llmprof::DeepProfilerEnvironment environment;
  environment.config_directories = config_search_dirs();
  environment.executable = own_executable();
  const bool quiet = options.quiet;
  auto run_point = [&](const llmprof::SweepPoint& point, std::size_t index) -> llmprof::Result<fs::path> {
    if (state.stopped.load())
      return llmprof::make_error(llmprof::ErrorCode::interrupted, "not run: the sweep was interrupted");
    llmprof::DeepProfileConfig config = point_configs[index];
    config.run.run_id = sweep_id + "-" + point.label;
    if (!quiet) std::cerr << "== sweep point " << point.label << "\n";
    llmprof::DeepProfiler profiler(
        config, *runner, clock,
        [quiet](const llmprof::ProgressEvent& event) {
          if (!quiet && event.kind != llmprof::ProgressEvent::Kind::tool_progress) {
            std::cerr << llmprof::format_progress_event(event) << "\n";
          }
        },
        environment);
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      state.current = &profiler;
    }
    auto summary = profiler.run();
    {
      std::lock_guard<std::mutex> lock(state.mutex);
      state.current = nullptr;
    }
    if (!summary) return summary.error();
    return summary->main_directory;
  };
  llmprof::SweepRunOptions run_options;
  run_options.sweep_directory = base_config.run.runs_root / ("sweep-" + sweep_id);
  run_options.stage = base_config.run.stage;
  auto index = llmprof::run_sweep(plan, run_point, run_options);
  if (!index) {
    std::cerr << "deep-profile sweep: " << index.error().describe() << "\n";
    return exit_code_for(index.error());
  }
  std::cout << llmprof::render_sweep_index_markdown(index.value())
            << "\nsweep index: " << (run_options.sweep_directory / "index.md").string() << "\n";
  if (state.stopped.load()) return exit_interrupted;
  const bool all_ok =
      std::all_of(index->rows.begin(), index->rows.end(), [](const auto& row) { return row.status == "ok"; });
  return all_ok ? exit_ok : exit_incomplete;
}

int sweep_command(const std::vector<std::string>& args) {
  int exit = exit_ok;
  auto options = parse_sweep_options(args, exit);
  if (!options) return exit;
  auto plan = load_plan(options.value());
  if (!plan) return report_config_error("sweep", plan.error(), std::cerr);  // the plan is configuration
  auto base_config = load_selected_config(options->base);
  if (!base_config) return report_config_error("sweep", base_config.error(), std::cerr);
  const bool explicit_command = !options->workload.empty() || !base_config->workload.argv.empty();
  if (auto effective = llmprof::check_sweep_settings_take_effect(plan.value(), explicit_command); !effective)
    return report_config_error("sweep", effective.error(), std::cerr);
  if (options->point_index || options->merge || options->executor == "slurm") {
    llmprof::init_logging({llmprof::LogLevel::error, options->quiet, nullptr});
    return run_sweep_executor(*options, plan.value(), base_config.value(), own_executable());
  }
  // Every point is loaded and checked before any runs: a typo in point 2 must not surface after
  // point 1 has spent hours on a GPU.
  auto point_configs = load_point_configs(plan.value(), *options);
  if (!point_configs) return exit_usage;
  llmprof::init_logging({llmprof::LogLevel::error, options->quiet, nullptr});
  return run_sweep_locally(*options, plan.value(), base_config.value(), point_configs.value());
}

const CommandRegistrar registrar({"sweep", "run the pipeline once per configuration point and index the runs",
                                  sweep_command});

}  // namespace
}  // namespace deep_profile
