// Benchmark (not a test): every step deep-profile takes after the capture, replayed on a recorded SQLite export and
// timed, each as a ratio against `nsys stats` on the same export (what the nsys stage ran before issue 35).
//
//   bench_pipeline_replay --export FILE.sqlite --stage NAME [--repeat N] [--nsys PATH] [--dir PATH]
//
// Steps: the tables (nsys_stats_from_sqlite), the timeline (analyze_timeline), the step kinds, the kernel selection
// (90% coverage of the stage, as the defaults), the stage's launch table and the ncu plan (default options). The
// analysis and the report read a run directory and are timed by the pipeline's own stage records (run.json).
// `nsys` is looked up on PATH unless --nsys names it; without one the steps are timed alone.
#include <functional>
#include <iomanip>
#include <iostream>

#include "bench_options.hpp"
#include "llmprof/kernel_selection.hpp"
#include "llmprof/ncu_plan.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"
#include "nsys_stats_baseline.hpp"

namespace {

namespace fs = std::filesystem;
using llmprof::bench::seconds_since;
using llmprof::bench::summarize;
using llmprof::bench::Timings;

struct Options {
  fs::path sqlite_export;
  std::string stage;
  std::uint64_t repeat = 3;
  std::string nsys = "nsys";
  fs::path directory = fs::temp_directory_path() / "llmprof-bench-pipeline-replay";
};

const llmprof::bench::Usage kUsage{"bench_pipeline_replay",
                                   "--export FILE.sqlite --stage NAME [--repeat N] [--nsys PATH] [--dir PATH]"};

Options parse_options(int argc, char** argv) {
  Options options;
  llmprof::bench::parse_flags(argc, argv, kUsage,
                              {{"--export", [&](const std::string& v) { options.sqlite_export = v; }},
                               {"--stage", [&](const std::string& v) { options.stage = v; }},
                               {"--repeat",
                                [&](const std::string& v) {
                                  options.repeat = llmprof::bench::count_value<std::uint64_t>(kUsage, "--repeat", v);
                                }},
                               {"--nsys", [&](const std::string& v) { options.nsys = v; }},
                               {"--dir", [&](const std::string& v) { options.directory = v; }}});
  if (options.sqlite_export.empty()) kUsage.fail("--export is required");
  if (options.stage.empty()) kUsage.fail("--stage is required (the NVTX range to select and plan, e.g. decode)");
  if (options.repeat == 0) kUsage.fail("--repeat must be at least 1");
  return options;
}

// The step's best and median over the repeats; a step that fails stops the benchmark with its error.
Timings time_step(const Options& options, const std::string& name, const std::function<std::string()>& step) {
  std::vector<double> seconds;
  for (std::uint64_t i = 0; i < options.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const std::string error = step();
    seconds.push_back(seconds_since(start));
    if (!error.empty()) {
      std::cerr << name << ": " << error << "\n";
      std::exit(1);
    }
  }
  return summarize(seconds);
}

struct Step {
  std::string name;
  Timings timings;
};

std::vector<Step> replay(const Options& options) {
  std::vector<Step> steps;
  llmprof::NsysStats stats;
  std::vector<llmprof::StageKernelLaunch> launches;
  llmprof::KernelSelection selection;
  llmprof::TimelineReport timeline;
  steps.push_back({"tables", time_step(options, "tables", [&] {
                     auto read = llmprof::nsys_stats_from_sqlite(options.sqlite_export);
                     if (!read) return read.error().describe();
                     stats = std::move(read.value());
                     return std::string();
                   })});
  steps.push_back({"timeline", time_step(options, "timeline", [&] {
                     auto read = llmprof::analyze_timeline(options.sqlite_export);
                     if (!read) return read.error().describe();
                     timeline = std::move(read.value());
                     return std::string();
                   })});
  steps.push_back({"step kinds", time_step(options, "step kinds", [&] {
                     (void)llmprof::analyze_step_kinds(timeline);  // none found is an answer, not an error
                     return std::string();
                   })});
  steps.push_back({"selection", time_step(options, "selection", [&] {
                     llmprof::TopKernelRequest request;
                     request.stage = options.stage;
                     request.coverage = 0.9;
                     auto selected = llmprof::select_top_kernels(stats, request);
                     if (!selected) return selected.error().describe();
                     selection = std::move(selected.value());
                     return std::string();
                   })});
  // A trimmed export may lack the launch configurations: the plan then works from the selection's counts alone,
  // as the pipeline's does.
  steps.push_back({"launch table", time_step(options, "launch table", [&] {
                     auto read = llmprof::read_stage_kernel_launches(options.sqlite_export, options.stage);
                     if (read) launches = std::move(read.value());
                     return std::string();
                   })});
  if (launches.empty()) std::cerr << "no launch configurations in the export: the plan works from counts alone\n";
  steps.push_back({"ncu plan", time_step(options, "ncu plan", [&] {
                     (void)llmprof::plan_ncu_launches(selection, launches, llmprof::NcuPlanOptions{});
                     return std::string();
                   })});
  return steps;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<Step> steps = replay(options);
  std::optional<Timings> baseline;
  const fs::path nsys = llmprof::find_executable(options.nsys);
  if (!nsys.empty())
    baseline = llmprof::bench::time_nsys_stats(options.sqlite_export, nsys, options.repeat, options.directory);
  std::cout << std::fixed << std::setprecision(4) << options.sqlite_export.string() << ", stage " << options.stage
            << ", medians of " << options.repeat << " runs\n";
  double total = 0;
  for (const auto& step : steps) {
    total += step.timings.median_s;
    std::cout << "  " << std::left << std::setw(14) << step.name << std::right << std::setw(10)
              << step.timings.median_s << " s";
    if (baseline) std::cout << "  " << std::setprecision(3) << step.timings.median_s / baseline->median_s
                            << std::setprecision(4) << " of nsys stats";
    std::cout << "\n";
  }
  std::cout << "  " << std::left << std::setw(14) << "all steps" << std::right << std::setw(10) << total << " s";
  if (baseline) std::cout << "  " << std::setprecision(3) << total / baseline->median_s << " of nsys stats";
  std::cout << "\n";
  if (baseline)
    std::cout << "  nsys stats    " << std::setprecision(4) << std::setw(10) << baseline->median_s << " s  ("
              << nsys.string() << ")\n";
  else
    std::cout << "  nsys stats not timed: no '" << options.nsys << "' on PATH (--nsys PATH)\n";
  return 0;
}
