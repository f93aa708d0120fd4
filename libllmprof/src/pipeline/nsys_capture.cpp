// The nsys stage's pieces the ranked stages share (nsys_capture.hpp): the profile command, the stage's
// precondition, and the exports of a report: `nsys stats` tables under the names this nsys knows, and SQLite.
#include "pipeline/nsys_capture.hpp"

#include <algorithm>

#include "core/duration.hpp"
#include "llmprof/nsys_stats.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/tool_call.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

constexpr Stage kStage = Stage::nsys;

// The report names to ask this nsys for: the configured list as given, else each report the pipeline reads
// under the spelling `nsys stats --help-reports` listed (2022.4 `gpukernsum`, 2025.3 `cuda_gpu_kern_sum`).
// An Error names a report the tool does not have, before nsys profiles anything.
Result<std::vector<std::string>> stats_report_names(const PipelineRun& run, const NsysInfo& nsys) {
  const std::vector<std::string>& listed = nsys.stats_reports;
  const std::string version = nsys.version ? nsys.version->to_string() : "(unknown version)";
  if (!run.config.nsys.stats_reports.empty()) {
    for (const auto& name : run.config.nsys.stats_reports) {
      if (!listed.empty() && std::find(listed.begin(), listed.end(), name) == listed.end()) {
        return make_error(ErrorCode::unsupported, "nsys " + version + " has no report " + name,
                          "choose nsys.stats_reports from `nsys stats --help-reports`, or leave it empty so that "
                          "deep-profile picks the names this nsys has",
                          name);
      }
    }
    return run.config.nsys.stats_reports;
  }
  if (listed.empty()) return nsys_stats_report_names();  // the probe could not list them: ask for the current names
  const NsysStatsReportChoice choice = choose_nsys_stats_reports(listed);
  if (!choice.missing.empty()) {
    return make_error(
        ErrorCode::unsupported,
        "nsys " + version + " has no report " + choice.missing.front() + "; need Nsight Systems 2022.4 or newer",
        "install a newer Nsight Systems (scripts/install-nsight.sh) or point nsys.path at one", choice.missing.front());
  }
  return choice.names;
}

}  // namespace

NsysCommand nsys_profile_command(const PipelineRun& run, const NsysInfo& nsys, bool gated, const fs::path& output_base,
                                 const std::vector<std::string>& added_arguments) {
  const NsysConfig& config = run.config.nsys;
  NsysProfileOptions options = nsys_profile_options(config);  // the nsys section, mapped in one place
  options.nsys = nsys.path;
  // The workload emits no NVTX range of its own: the run follows its cudaProfilerStart/Stop window, or the whole run.
  if (run.followed_capture_range) {
    options.capture_range = *run.followed_capture_range;
    options.nvtx_capture.clear();
    if (options.capture_range == NsysCaptureRange::none) gated = false;
  }
  if (!gated) {  // this capture runs ungated (discovery, the ungated re-run, the node pass of one)
    options.capture_range = NsysCaptureRange::none;
    options.nvtx_capture.clear();
    options.capture_range_end.reset();
    options.capture_range_end_count = 0;
  }
  options.output_base = output_base;
  options.force_overwrite = true;
  options.extra_args.insert(options.extra_args.end(), run.learned_nsys_arguments.begin(),
                            run.learned_nsys_arguments.end());
  options.extra_args.insert(options.extra_args.end(), added_arguments.begin(), added_arguments.end());
  options.application = run.workload.argv;
  // nsys_profile_options mapped the frequency and set the key asks for; the probe decides whether and how to ask.
  if (options.gpu_metrics_frequency_hz > 0 && nsys.gpu_metrics.available) {
    options.gpu_metrics_option = nsys.gpu_metrics.devices_option;
    options.gpu_metrics_devices = nsys.gpu_metrics.devices;
    if (options.gpu_metrics_set.empty()) options.gpu_metrics_set = nsys.gpu_metrics.metric_set;
  }
  return NsysCommand::profile(std::move(options));
}

std::string gpu_metrics_plan_sentence(const NsysConfig& config, const NsysInfo& nsys) {
  if (config.gpu_metrics.mode == GpuMetricsMode::off) return "GPU-metrics sampling off (nsys.gpu_metrics = off)";
  const auto hz = gpu_metrics_frequency_hz(config);
  if (!nsys.gpu_metrics.available)
    return "GPU-metrics sampling not available, so the report has no sampled utilisation: " + nsys.gpu_metrics.reason +
           (config.gpu_metrics.mode == GpuMetricsMode::automatic
                ? ""
                : " (nsys.gpu_metrics = " + format_gpu_metrics_setting(config.gpu_metrics) + " asked for it)");
  const std::string set = config.gpu_metrics_set.empty() ? nsys.gpu_metrics.metric_set : config.gpu_metrics_set;
  return "GPU-metrics sampling at " + std::to_string(hz.value_or(0)) + " Hz on " + nsys.gpu_metrics.devices_option +
         "=" + nsys.gpu_metrics.devices + (set.empty() ? " (nsys's default metric set)" : " (metric set " + set + ")");
}

CaptureGateKind capture_gate_kind(NsysCaptureRange range) {
  switch (range) {
    case NsysCaptureRange::none:
      return CaptureGateKind::none;
    case NsysCaptureRange::nvtx:
      return CaptureGateKind::nvtx;
    case NsysCaptureRange::cuda_profiler_api:
      return CaptureGateKind::cuda_profiler_api;
  }
  return CaptureGateKind::none;
}

namespace {

// The tables from the SQLite export through our reader: on the H100 eager export 0.13 s against 9.8 s of
// `nsys stats` (bench/nsys_tables_bench.cpp, nsys 2022.4), the same rows (tests/unit/nsys_sqlite_stats_test.cpp).
// nullopt when the export is not there or cannot be read: `nsys stats` then makes the tables, as before.
std::optional<StageResult> tables_from_sqlite(PipelineRun& run, const NsysInfo& nsys, const fs::path& report,
                                              const fs::path& directory, NsysStats& stats) {
  StageResult exported = export_nsys_sqlite(run, nsys, report, directory);
  if (exported.status == StageStatus::interrupted) return exported;
  const fs::path sqlite = run.directory.path() / directory / RunLayout::nsys_sqlite().filename();
  if (exported.status != StageStatus::ok || !fs::exists(sqlite)) {
    if (exported.status != StageStatus::ok)
      run.warn(kStage, "the SQLite export failed (" + exported.reason + "), so `nsys stats` makes the tables");
    return std::nullopt;
  }
  auto tables = nsys_stats_from_sqlite(sqlite);
  if (!tables) {
    run.warn(kStage, "the SQLite export's tables could not be read (" + tables.error().describe() +
                         "), so `nsys stats` makes them");
    return std::nullopt;
  }
  stats = std::move(tables.value());
  log_info(to_string(kStage), "tables read from " + (directory / RunLayout::nsys_sqlite().filename()).string() +
                                  " (nsys.stats_reports is empty: no `nsys stats` run)");
  return StageResult::ok();
}

}  // namespace

StageResult export_nsys_stats(PipelineRun& run, const NsysInfo& nsys, const fs::path& report, const fs::path& directory,
                              NsysStats& stats) {
  if (run.config.nsys.export_sqlite && run.config.nsys.stats_reports.empty()) {
    if (auto done = tables_from_sqlite(run, nsys, report, directory, stats)) return *done;
  }
  auto names = stats_report_names(run, nsys);
  if (!names) return StageResult::failed(names.error().describe(), StageProblemKind::environment);
  const std::vector<std::string>& reports = names.value();
  const fs::path prefix = fs::absolute(run.directory.path() / directory / RunLayout::nsys_stats_prefix().filename());
  const NsysCommand command = NsysCommand::stats(nsys.path, report, reports, prefix, run.config.nsys.stats_extra_args);
  ToolCall call{kStage, command.argv()};
  call.log_file = directory / RunLayout::nsys_stats_log().filename();
  call.timeout = seconds_to_milliseconds(run.config.nsys.postprocess_timeout_s);
  call.on_line = [&run](const std::string& line) {
    if (line.rfind("Processing", 0) == 0) run.tool_progress(kStage, line);
  };
  append_command(run, directory / RunLayout::nsys_commands().filename(), call);
  auto outcome = run_tool(run, call);
  if (!outcome) return StageResult::failed("could not start nsys stats: " + outcome.error().describe());
  if (!outcome->succeeded()) return outcome_problem(outcome.value(), "nsys stats", call.log_file.string());
  auto loaded = load_nsys_stats(prefix);
  if (!loaded) return StageResult::failed("nsys stats wrote no usable tables: " + loaded.error().describe());
  stats = std::move(loaded.value());
  for (const auto& name : reports) {
    const fs::path file = nsys_stats_report_path(prefix, name);
    if (fs::exists(file))
      run.stage_report(kStage).artifacts.push_back(fs::relative(file, fs::absolute(run.directory.path())).string());
  }
  return StageResult::ok();
}

namespace {

StageResult run_sqlite_export(PipelineRun& run, const NsysInfo& nsys, const fs::path& report, const fs::path& sqlite) {
  const fs::path directory = sqlite.parent_path();
  const NsysCommand command =
      NsysCommand::export_sqlite(nsys.path, report, fs::absolute(run.directory.path() / sqlite));
  ToolCall call{kStage, command.argv()};
  call.log_file = directory / RunLayout::nsys_export_log().filename();
  call.timeout = seconds_to_milliseconds(run.config.nsys.postprocess_timeout_s);
  append_command(run, directory / RunLayout::nsys_commands().filename(), call);
  auto outcome = run_tool(run, call);
  if (!outcome) return StageResult::failed("could not start nsys export: " + outcome.error().describe());
  if (!outcome->succeeded())
    return outcome_problem(outcome.value(), "nsys export --type sqlite", call.log_file.string());
  // Listed only when written, so that the stage's artifact check does not take an export this nsys skipped
  // for a missing one; one it wrote is checked like every other file the stage hands on.
  if (fs::exists(run.directory.path() / sqlite)) run.stage_report(kStage).artifacts.push_back(sqlite.string());
  return StageResult::ok();
}

}  // namespace

StageResult export_nsys_sqlite(PipelineRun& run, const NsysInfo& nsys, const fs::path& report,
                               const fs::path& directory) {
  const fs::path sqlite = directory / RunLayout::nsys_sqlite().filename();
  // Once per report: the tables may have come from this export already (a new capture into the same directory,
  // the ungated re-run's, is exported again).
  if (const auto done = run.sqlite_exports.find(sqlite);
      done != run.sqlite_exports.end() && done->second.first == report)
    return done->second.second;
  StageResult result = run_sqlite_export(run, nsys, report, sqlite);
  run.sqlite_exports.insert_or_assign(sqlite, std::pair{report, result});
  return result;
}

std::optional<std::string> no_kernels_to_select(const NsysStats& stats, const NvidiaDriver& driver) {
  if ((stats.kernels && !stats.kernels->empty()) || driver.present) return std::nullopt;
  return "the timeline holds no CUDA kernel to select: kernel-level stages need an NVIDIA GPU, and this machine has "
         "none (" +
         driver.evidence + ")";
}

std::optional<StageResult> nsys_stage_precondition(const PipelineRun& run, const ProbeOutput& probe,
                                                   const WorkloadOutput& workload) {
  if (!run.config.run.enable_nsys) return StageResult::skipped("disabled (run.enable_nsys = false)");
  if (workload.failure) return StageResult::skipped("not run: " + *workload.failure);
  if (!probe.nsys.found) {
    const std::string why =
        probe.nsys.problems.empty() ? "nsys (Nsight Systems) was not found" : probe.nsys.problems.front();
    return StageResult::skipped(why + "; install Nsight Systems or set nsys.path", StageProblemKind::environment);
  }
  // A tool too old for a report the pipeline reads is refused before it profiles anything.
  if (auto names = stats_report_names(run, probe.nsys); !names) {
    return StageResult::skipped(names.error().describe(), StageProblemKind::environment);
  }
  if (probe.low_disk_space) return StageResult::skipped(*probe.low_disk_space, StageProblemKind::environment);
  return std::nullopt;
}

}  // namespace llmprof::detail
