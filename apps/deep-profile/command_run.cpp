// deep-profile run: the whole pipeline (probe, bare run, nsys, top-N selection, ncu, analysis,
// reports) over a workload, with progress on stderr and a stage table at the end.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>

#include "command.hpp"
#include "config_options.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/stop_signal_watcher.hpp"
#include "llmprof/tool_cost.hpp"
#include "llmprof/workload_discovery.hpp"

namespace deep_profile {
namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

struct RunOptions {
  llmprof::ConfigSelection selection;
  bool quiet = false;
  std::string launcher;               // --launcher words, empty: one process
  std::string ranks;                  // --ranks list
  std::vector<std::string> workload;  // after "--"
  std::string resume;                 // --resume MAIN
  bool discover = false;              // --discover: name the workload's ranges, profile nothing
};

fs::path own_executable() {
  std::error_code error;
  const fs::path path = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : path;
}

const char* usage_text =
    "usage: deep-profile run [--config FILE]... [--preset NAME] [--set KEY=VALUE]... [KEY=VALUE]... [--quiet]\n"
    "                        [--launcher 'LAUNCHER WORDS' [--ranks LIST]] [-- CMD ARGS...]\n"
    "       deep-profile run --resume MAIN [--quiet]\n"
    "       deep-profile run --discover [--config FILE]... [--set KEY=VALUE]... [-- CMD ARGS...]\n\n"
    "Runs the workload (the bundled llmprof-decode example, or CMD) bare, under nsys, and under ncu on its top\n"
    "kernels, and leaves one run directory (MAIN) with run.json, the raw reports, the analysis and the reports.\n"
    "With --launcher (srun, mpirun, torchrun) every workload stage runs as\n"
    "`LAUNCHER deep-profile rank-exec --run-directory MAIN --stage S -- CMD`; each rank writes MAIN/ranks/r<k>/. nsys\n"
    "profiles every rank and ncu rank 0 unless --ranks (e.g. 0,3 or 0-3) names the ranks to profile.\n"
    "--resume MAIN continues a run that did not finish from its first stage that is not ok, with the configuration\n"
    "and workload MAIN recorded; it refuses (exit 2) when the workload or the tools changed since.\n"
    "--discover runs the workload once under a light, ungated nsys capture (NVTX and CUDA API) and prints the NVTX\n"
    "ranges it emits (counts, nesting), whether it calls cudaProfilerStart/Stop, and the --set line that would\n"
    "profile it; nothing else runs (exit 1 when the capture holds no NVTX range).\n\n"
    "exit codes: 0 everything asked for succeeded; 1 a stage failed or was skipped; 2 bad command line or\n"
    "config; 3 the machine is not ready (tool missing, no space, unwritable runs root); 4 the workload program\n"
    "is missing (e.g. the bundled example was not built); 124 a stage timed out; 130 interrupted (SIGINT/SIGTERM),\n"
    "artifacts and run.json kept.\n";

// Returns nullopt after printing help or an error (with `exit` set).
std::optional<RunOptions> parse_options(const std::vector<std::string>& args, int& exit) {
  RunOptions options;
  CommandSyntax syntax("run", usage_text);
  syntax.options.add_options()("quiet,q", po::bool_switch(&options.quiet),
                               "no progress lines; only errors and the final table")(
      "launcher", po::value(&options.launcher), "run every workload stage under this launcher, e.g. 'srun -n 2'")(
      "ranks", po::value(&options.ranks), "ranks nsys and ncu profile (default: nsys every rank, ncu rank 0)")(
      "resume", po::value(&options.resume), "continue the run in this MAIN directory from its first stage not ok")(
      "discover", po::bool_switch(&options.discover),
      "only name the ranges the workload emits and print the --set line that profiles them");
  auto line = parse_profiling_command_line(syntax, args, exit);
  if (!line) return std::nullopt;
  options.selection = std::move(line->selection);
  options.workload = std::move(line->workload);
  // `--resume "$MAIN"` with MAIN unset is `--resume ''`: read as "no --resume", it started a new full
  // run. An empty value is refused, like any other unusable run directory.
  const auto before_workload = std::find(args.begin(), args.end(), "--");
  const bool resume_given = std::any_of(args.begin(), before_workload, [](const std::string& word) {
    return word == "--resume" || word.rfind("--resume=", 0) == 0;
  });
  if (resume_given && options.resume.empty()) {
    std::cerr << "deep-profile run: --resume needs a run directory, and was given an empty one (an unset variable?)\n";
    exit = exit_usage;
    return std::nullopt;
  }
  return options;
}

// TTY: one self-overwriting status line for tool progress, full lines for the rest.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet) : quiet_(quiet), terminal_(::isatty(STDERR_FILENO) == 1) {}
  void operator()(const llmprof::ProgressEvent& event) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string line = llmprof::format_progress_event(event);
    const bool tool = event.kind == llmprof::ProgressEvent::Kind::tool_progress;
    // Off a terminal every line stays; ncu's per-kernel lines are thinned to about ten per run.
    if (!terminal_ && tool && event.kernel_total > 10 && event.kernel_index != event.kernel_total &&
        event.kernel_index % (event.kernel_total / 10) != 0) {
      return;
    }
    if (terminal_ && tool) {
      std::cerr << "\r\033[K" << line.substr(0, 160) << std::flush;
      status_shown_ = true;
      return;
    }
    if (status_shown_) std::cerr << "\r\033[K";
    status_shown_ = false;
    std::cerr << line << "\n" << std::flush;
  }

 private:
  bool quiet_;
  bool terminal_;
  bool status_shown_ = false;
  std::mutex mutex_;
};

void print_summary(const llmprof::RunSummary& summary, std::ostream& out) {
  out << "\nrun directory: " << summary.main_directory.string() << "\n";
  out << std::left << std::setw(9) << "stage" << std::setw(12) << "status" << std::setw(10) << "time"
      << "reason\n";
  for (const auto& stage : summary.stages) {
    std::ostringstream time;
    time << std::fixed << std::setprecision(1) << stage.duration_s << "s";
    out << std::setw(9) << stage.name << std::setw(12) << llmprof::to_string(stage.status) << std::setw(10)
        << time.str() << stage.reason << "\n";
  }
  if (const auto cost = llmprof::tool_cost_of(summary.stages)) out << llmprof::describe_tool_cost(*cost) << "\n";
  for (const auto& note : summary.notes) out << "note: " << note << "\n";
  if (!summary.skipped_for_hardware.empty()) {
    std::string stages;
    for (const auto& stage : summary.skipped_for_hardware) stages += (stages.empty() ? "" : ", ") + stage;
    out << "skipped for lack of hardware: " << stages << " (each stage's reason above says what is missing)\n";
  }
  out << "total size: " << std::fixed << std::setprecision(1) << static_cast<double>(summary.total_bytes) / 1e6
      << " MB; outcome: " << llmprof::to_string(summary.outcome) << "\n";
}

llmprof::Result<llmprof::DeepProfileConfig> load(const RunOptions& options) {
  auto config = load_selected_config(options.selection);
  if (!config) return config.error();
  if (!options.workload.empty()) config->workload.argv = options.workload;
  return config;
}

// --launcher/--ranks checked before anything is created: an unknown launcher, one not on PATH, or
// --ranks outside the world size the launcher words give.
std::optional<llmprof::RankLaunch> rank_launch_from(const RunOptions& options, int& exit) {
  if (options.launcher.empty()) {
    if (!options.ranks.empty()) {
      std::cerr << "deep-profile run: --ranks needs --launcher (one process has only rank 0)\n";
      exit = exit_usage;
    }
    return std::nullopt;
  }
  auto launcher = llmprof::parse_launcher(options.launcher);
  if (!launcher) {
    std::cerr << "deep-profile run: " << launcher.error().describe() << "\n";
    exit = exit_usage;
    return std::nullopt;
  }
  llmprof::RankLaunch launch{launcher.value(), std::nullopt};
  if (!options.ranks.empty()) {
    auto ranks = llmprof::parse_rank_list(options.ranks);
    if (!ranks) {
      std::cerr << "deep-profile run: " << ranks.error().describe() << "\n";
      exit = exit_usage;
      return std::nullopt;
    }
    if (launcher->world_size && ranks->back() >= *launcher->world_size) {
      std::cerr << "deep-profile run: --ranks " << options.ranks << " names rank " << ranks->back()
                << ", outside the world size " << *launcher->world_size << " that '" << options.launcher
                << "' starts (ranks 0-" << *launcher->world_size - 1 << ")\n";
      exit = exit_usage;
      return std::nullopt;
    }
    launch.ranks = ranks.value();
  }
  // After the command line's own checks: a bad --ranks is a usage error (2) whether or not the launcher
  // is installed here.
  if (llmprof::find_executable(launcher->words.front()).empty()) {
    std::cerr << "deep-profile run: the launcher '" << launcher->words.front() << "' was not found on PATH; install it "
              << "(Slurm: slurm-client, Open MPI: openmpi-bin, torchrun: pip install torch) or give its full path\n";
    exit = exit_not_ready;
    return std::nullopt;
  }
  return launch;
}

// --resume takes everything from MAIN: anything that would change the configuration or the workload is refused.
bool resume_alone(const RunOptions& options) {
  const auto& selection = options.selection;
  if (!selection.preset.empty() || !selection.config_files.empty() || !selection.overrides.empty() ||
      !options.workload.empty() || !options.launcher.empty() || !options.ranks.empty()) {
    std::cerr << "deep-profile run: --resume continues with the configuration and workload MAIN recorded "
                 "(MAIN/config.toml, MAIN/inputs.json); drop --config, --preset, --set, --launcher, --ranks and "
                 "-- CMD, or start a new run\n";
    return false;
  }
  return true;
}

// --discover: the ranges, the choice and the --set line (llmprof/workload_discovery.hpp).
int discover_command(const RunOptions& options) {
  auto config = load(options);
  if (!config) return report_config_error("run", config.error(), std::cerr);
  llmprof::init_logging({llmprof::LogLevel::error, options.quiet, nullptr});
  auto runner = llmprof::make_system_process_runner();
  llmprof::SystemClock clock;
  ProgressPrinter printer(options.quiet);
  llmprof::DeepProfilerEnvironment environment;
  environment.config_directories = config_search_dirs();
  environment.executable = own_executable();
  auto found = llmprof::discover_workload_ranges(
      config.value(), *runner, clock, [&printer](const auto& event) { printer(event); }, environment);
  if (!found) {
    std::cerr << "deep-profile run --discover: " << found.error().describe() << "\n";
    return exit_code_for(found.error());
  }
  std::cout << llmprof::describe_discovery(found->discovery) << "\n"
            << "discovery run: " << found->run.main_directory.string() << "\n";
  return exit_ok;
}

int run_command(const std::vector<std::string>& args) {
  int exit = exit_ok;
  auto options = parse_options(args, exit);
  if (!options) return exit;
  if (options->discover) {
    if (!options->resume.empty() || !options->launcher.empty()) {
      std::cerr << "deep-profile run: --discover takes neither --resume nor --launcher (discover on one process)\n";
      return exit_usage;
    }
    return discover_command(options.value());
  }
  if (!options->resume.empty() && !resume_alone(options.value())) return exit_usage;
  auto launch = rank_launch_from(options.value(), exit);
  if (exit != exit_ok) return exit;
  auto config = options->resume.empty() ? load(options.value()) : llmprof::load_recorded_config(options->resume);
  if (!config) return report_config_error("run", config.error(), std::cerr);
  llmprof::init_logging({llmprof::LogLevel::error, options->quiet, nullptr});
  auto runner = llmprof::make_system_process_runner();
  llmprof::SystemClock clock;
  ProgressPrinter printer(options->quiet);
  llmprof::DeepProfilerEnvironment environment;
  environment.config_directories = config_search_dirs();
  environment.executable = own_executable();
  environment.rank_launch = launch;
  llmprof::DeepProfiler profiler(
      config.value(), *runner, clock, [&printer](const auto& event) { printer(event); }, environment);
  auto watcher = llmprof::StopSignalWatcher::start([&profiler](int) { profiler.request_stop(); });
  if (!watcher) {
    std::cerr << "deep-profile run: " << watcher.error().describe() << "\n";
    return exit_code_for(watcher.error());
  }
  auto summary = options->resume.empty() ? profiler.run() : profiler.resume(options->resume);
  if (!summary) {
    std::cerr << "deep-profile run: " << summary.error().describe() << "\n";
    return exit_code_for(summary.error());
  }
  print_summary(summary.value(), std::cout);
  return exit_code_for(summary->outcome);
}

const CommandRegistrar registrar({"run",
                                  "profile a workload end to end (probe, nsys, top-N kernels, ncu, analysis, report)",
                                  run_command});

}  // namespace
}  // namespace deep_profile
