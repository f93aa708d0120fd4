// --point-index, --merge and --executor slurm of `deep-profile sweep` (see sweep_executors.hpp).
#include "sweep_executors.hpp"

#include <algorithm>
#include <iostream>

#include "command.hpp"
#include "config_options.hpp"
#include "llmprof/stop_signal_watcher.hpp"
#include "llmprof/sweep_batch.hpp"

namespace deep_profile {
namespace fs = std::filesystem;
namespace {

int print_error(const llmprof::Error& error) {
  std::cerr << "deep-profile sweep: " << error.describe() << "\n";
  return exit_code_for(error);
}

fs::path sweep_directory_of(const SweepOptions& options, const llmprof::DeepProfileConfig& base_config) {
  const fs::path chosen = options.sweep_directory.empty()
                              ? llmprof::default_sweep_directory(base_config.run.runs_root, options.plan_file)
                              : fs::path(options.sweep_directory);
  return fs::absolute(chosen).lexically_normal();
}

// --point-index I: point I into SWEEP/point-<I>/, unless a finished run is already there.
int run_point(const SweepOptions& options, const llmprof::SweepPlan& plan, const fs::path& sweep,
              const fs::path& deep_profile) {
  const std::size_t index = *options.point_index;
  if (index >= plan.points.size()) {
    std::cerr << "deep-profile sweep: --point-index " << index << " is outside the plan " << options.plan_file
              << ", which has " << plan.points.size() << " points (0-" << plan.points.size() - 1 << ")\n";
    return exit_usage;
  }
  const llmprof::SweepPoint& point = plan.points[index];
  llmprof::ConfigSelection selection = options.base;
  for (const auto& override_text : point.override_strings()) selection.overrides.push_back(override_text);
  auto config = load_selected_config(selection);
  if (!config) {
    (void)report_config_error("sweep", config.error(), std::cerr);
    std::cerr << "  in point " << index << " (" << point.label << "); nothing was run\n";
    return exit_usage;
  }
  if (!options.workload.empty()) config->workload.argv = options.workload;
  auto runner = llmprof::make_system_process_runner();
  llmprof::SystemClock clock;
  llmprof::DeepProfilerEnvironment environment;
  environment.config_directories = config_search_dirs();
  environment.executable = deep_profile;
  const bool quiet = options.quiet;
  llmprof::SweepPointJob job(
      config.value(), sweep, index, *runner, clock,
      [quiet](const llmprof::ProgressEvent& event) {
        if (!quiet && event.kind != llmprof::ProgressEvent::Kind::tool_progress) {
          std::cerr << llmprof::format_progress_event(event) << "\n";
        }
      },
      environment);
  auto watcher = llmprof::StopSignalWatcher::start([&job](int) { job.request_stop(); });
  if (!watcher) return print_error(watcher.error());
  if (!quiet) std::cerr << "== sweep point " << index << " (" << point.label << ")\n";
  auto result = job.run();
  if (!result) return print_error(result.error());
  if (result->already_finished) {
    std::cout << "point " << index << " (" << point.label << ") already finished with status "
              << llmprof::to_string(result->status) << " in " << result->main_directory.string()
              << "; not run again (remove that directory to run it again)\n";
  } else {
    std::cout << "point " << index << " (" << point.label << "): " << llmprof::to_string(result->status) << " in "
              << result->main_directory.string() << "\n";
  }
  return result->exit_code();
}

// --merge: SWEEP/index.* from the point directories, whatever state each is in.
int merge_points(const llmprof::SweepPlan& plan, const fs::path& sweep, const llmprof::DeepProfileConfig& base_config) {
  auto index = llmprof::merge_sweep_points(plan, sweep, base_config.run.stage);
  if (!index) return print_error(index.error());
  std::cout << llmprof::render_sweep_index_markdown(index.value()) << "\nsweep index: " << (sweep / "index.md").string()
            << "\n";
  const bool all_ok =
      std::all_of(index->rows.begin(), index->rows.end(), [](const auto& row) { return row.status == "ok"; });
  return all_ok ? exit_ok : exit_incomplete;
}

// What every task passes on: the configuration the user named, with --config files made absolute
// because the tasks run wherever Slurm starts them.
std::vector<std::string> shared_arguments(const llmprof::ConfigSelection& base) {
  std::vector<std::string> arguments;
  if (!base.preset.empty()) arguments.insert(arguments.end(), {"--preset", base.preset});
  for (const auto& file : base.config_files)
    arguments.insert(arguments.end(), {"--config", fs::absolute(file).string()});
  for (const auto& override_text : base.overrides) arguments.insert(arguments.end(), {"--set", override_text});
  return arguments;
}

// --executor slurm [--submit]: the scripts, and with --submit the jobs.
int slurm_sweep(const SweepOptions& options, const llmprof::SweepPlan& plan, const fs::path& sweep,
                const fs::path& deep_profile) {
  // Every point is checked here, before a job exists: a typo in point 2 must fail now, not in a task.
  if (!load_point_configs(plan, options)) return exit_usage;
  llmprof::SweepBatchRequest request;
  request.deep_profile = deep_profile;
  request.plan_file = fs::absolute(options.plan_file).lexically_normal();
  request.sweep_directory = sweep;
  request.working_directory = fs::current_path();
  request.points = plan.points.size();
  request.concurrency = options.concurrency;
  request.shared_arguments = shared_arguments(options.base);
  request.workload = options.workload;
  auto scripts = llmprof::write_sweep_batch_scripts(request);
  if (!scripts) return print_error(scripts.error());
  std::cout << "wrote " << scripts->array_script.string() << " (job array of " << request.points << " points) and "
            << scripts->merge_script.string() << "\n";
  if (!options.submit) {
    std::cout << "submit with:\n  array=$(sbatch --parsable " << scripts->array_script.string()
              << ") && sbatch --dependency=afterany:$array " << scripts->merge_script.string() << "\n";
    return exit_ok;
  }
  auto runner = llmprof::make_system_process_runner();
  auto submitted = llmprof::submit_sweep_batch(scripts.value(), *runner);
  if (!submitted) return print_error(submitted.error());
  std::cout << "submitted job array " << submitted->array_job_id << " (" << request.points << " points) and merge job "
            << submitted->merge_job_id << " (runs after every point has ended)\n"
            << "follow with:  squeue -j " << submitted->array_job_id << "," << submitted->merge_job_id << "\n"
            << "point logs:   " << scripts->logs_directory.string() << "/point-<I>.out\n"
            << "index:        " << (sweep / "index.md").string() << " once the merge job has run\n";
  return exit_ok;
}

}  // namespace

int run_sweep_executor(const SweepOptions& options, const llmprof::SweepPlan& plan,
                       const llmprof::DeepProfileConfig& base_config, const fs::path& deep_profile) {
  const fs::path sweep = sweep_directory_of(options, base_config);
  if (options.point_index) return run_point(options, plan, sweep, deep_profile);
  if (options.merge) return merge_points(plan, sweep, base_config);
  return slurm_sweep(options, plan, sweep, deep_profile);
}

}  // namespace deep_profile
