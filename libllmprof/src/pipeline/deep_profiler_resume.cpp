// DeepProfiler::resume(): continues a run that did not finish from its first stage that is not ok, with the
// configuration it recorded, after checking that neither the workload nor the tools changed since. The
// stages before that point keep their records and files; their outputs are read back from MAIN.
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "llmprof/logging.hpp"
#include "llmprof/process.hpp"
#include "llmprof/rank_analysis.hpp"
#include "llmprof/shell_quote.hpp"
#include "pipeline/deep_profiler_internal.hpp"
#include "pipeline/stage_records.hpp"
#include "process/signal_fallback.hpp"

namespace llmprof {
namespace fs = std::filesystem;
namespace detail {
namespace {

std::optional<FileFingerprint> fingerprint_of(const fs::path& file) {
  struct stat status {};
  if (::stat(file.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  FileFingerprint fingerprint;
  fingerprint.path = file.string();
  fingerprint.size = static_cast<std::uint64_t>(status.st_size);
  fingerprint.modified_ns = static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
                            static_cast<std::int64_t>(status.st_mtim.tv_nsec);
  return fingerprint;
}

// What changed in the workload's files since the run started, one phrase each; empty when nothing did.
std::vector<std::string> changed_files(const std::vector<FileFingerprint>& recorded) {
  std::vector<std::string> changes;
  for (const auto& before : recorded) {
    const auto now = fingerprint_of(before.path);
    if (!now)
      changes.push_back(before.path + " is gone");
    else if (!(*now == before))
      changes.push_back(before.path + " changed (size " + std::to_string(before.size) + " -> " +
                        std::to_string(now->size) + " bytes, or a newer modification time)");
  }
  return changes;
}

Error refusal(const std::string& what, const std::string& how, const fs::path& main) {
  return make_error(ErrorCode::invalid_argument, "cannot resume " + main.string() + ": " + what, how, main.string());
}

constexpr const char* kStartAgain = "start a new run instead: deep-profile run --config MAIN/config.toml -- CMD";

// The workload must be the one the run recorded: the same command, directory and environment overrides, and
// the same files (executable, scripts) as when it started.
std::optional<Error> check_workload(const RunManifest& manifest, const ResolvedWorkload& workload,
                                    const fs::path& main) {
  const WorkloadRecord& recorded = manifest.workload;
  if (!recorded.files)
    return refusal("its inputs.json has no fingerprint of the workload's files (the run predates run --resume)",
                   kStartAgain, main);
  if (recorded.argv != workload.argv)
    return refusal("the workload command differs from the recorded one (" + join_shell_command(recorded.argv) + ")",
                   kStartAgain, main);
  if (recorded.working_directory != workload.working_directory)
    return refusal("it ran in " +
                       (recorded.working_directory.empty() ? std::string("a directory it did not record")
                                                           : recorded.working_directory.string()) +
                       " and would now run in " + workload.working_directory.string() +
                       ", where a relative program or file path can name other files",
                   recorded.working_directory.empty() ? std::string(kStartAgain)
                                                      : "resume from " + recorded.working_directory.string() +
                                                            " (or set workload.cwd to it), or " + kStartAgain,
                   main);
  if (recorded.environment != workload.environment)
    return refusal("the workload's environment overrides differ from the recorded ones", kStartAgain, main);
  // Every file the command names now, resolved against the recorded directory, must be one the run
  // fingerprinted: a program or input that was not there when it started is another workload.
  for (const auto& now : fingerprint_workload_files(workload.argv, recorded.working_directory, {})) {
    const bool known = std::any_of(recorded.files->begin(), recorded.files->end(),
                                   [&](const FileFingerprint& file) { return file.path == now.path; });
    if (!known)
      return refusal("the workload names " + now.path + ", which the run did not fingerprint when it started",
                     kStartAgain, main);
  }
  const auto changes = changed_files(*recorded.files);
  if (!changes.empty()) {
    std::string listed;
    for (const auto& change : changes) listed += (listed.empty() ? "" : "; ") + change;
    return refusal("the workload changed since the run started: " + listed,
                   "figures of two different programs cannot be mixed; " + std::string(kStartAgain), main);
  }
  return std::nullopt;
}

std::string recorded_tool(const boost::json::object& tools, const char* name) {
  const auto* tool = tools.if_contains(name);
  if (tool == nullptr || !tool->is_object()) return "not recorded";
  const auto& object = tool->get_object();
  const auto* found = object.if_contains("found");
  if (found == nullptr || !found->is_bool() || !found->get_bool()) return "not found";
  std::string text = json_string(object, "path", std::string(name) + ".path").value_or("?");
  if (const auto* version = object.if_contains("version"); version != nullptr && version->is_object())
    text += " " + json_string(version->get_object(), "number", std::string(name) + ".version.number").value_or("?");
  return text;
}

template <class Info>
std::string probed_tool(const Info& info) {
  if (!info.found) return "not found";
  return info.path.string() + " " + (info.version ? info.version->to_string() : "?");
}

// The tools must be the ones the run used: nsys and ncu at the same path in the same version (env.json).
std::optional<Error> check_tools(PipelineRun& run, const fs::path& main) {
  const auto text = read_file_text(main / RunLayout::environment());
  if (!text) return refusal("it has no env.json to compare the tools with", kStartAgain, main);
  auto environment = parse_json_object(*text, main / RunLayout::environment());
  const auto* tools = environment ? environment->if_contains("tools") : nullptr;
  if (tools == nullptr || !tools->is_object()) return refusal("its env.json records no tools", kStartAgain, main);
  const ProbedTools probed = probe_tools(run.runner, probe_options(run));
  const std::pair<std::string, std::string> compared[] = {
      {recorded_tool(tools->get_object(), "nsys"), probed_tool(probed.nsys)},
      {recorded_tool(tools->get_object(), "ncu"), probed_tool(probed.ncu)}};
  std::string changes;
  for (std::size_t i = 0; i < 2; ++i) {
    if (compared[i].first == compared[i].second) continue;
    changes += std::string(changes.empty() ? "" : "; ") + (i == 0 ? "nsys " : "ncu ") + compared[i].first + " -> " +
               compared[i].second;
  }
  if (changes.empty()) return std::nullopt;
  return refusal("the profilers changed since the run started: " + changes,
                 "put the recorded tools back (nsys.path, ncu.path, PATH), or " + std::string(kStartAgain), main);
}

// The stage to continue from: the first after the probe that is not ok. The ncu stage plans from the selection
// in memory, so a resume at ncu re-runs select too (it takes well under a second).
Result<std::size_t> resume_point(const RunManifest& manifest, const fs::path& main) {
  for (std::size_t i = 1; i < kStages.size(); ++i) {
    const auto found = std::find_if(manifest.stages.begin(), manifest.stages.end(),
                                    [&](const StageRecord& stage) { return stage.name == to_string(kStages[i]); });
    if (found != manifest.stages.end() && found->status == StageStatus::ok) continue;
    return kStages[i] == Stage::ncu ? i - 1 : i;
  }
  return refusal("every stage of it finished ok, so there is nothing to resume",
                 "re-render its reports with deep-profile report MAIN, or start a new run", main);
}

// The outputs of the stages before the resume point, read back from MAIN. A file that cannot be read moves the
// resume point back to the stage that wrote it.
std::size_t rehydrate(PipelineRun& run, StageOutputs& outputs, std::size_t from) {
  const RunLayout layout = run.directory.layout();
  const auto index_of = [](Stage stage) {
    return static_cast<std::size_t>(std::find(kStages.begin(), kStages.end(), stage) - kStages.begin());
  };
  if (from > index_of(Stage::workload)) {
    if (auto ranges = read_emitted_ranges(layout.resolve(RunLayout::stage1_metrics())); ranges)
      outputs.workload.emitted_ranges = ranges.value();
  }
  const StageRecord* nsys_record = run.recorded(Stage::nsys);
  if (from > index_of(Stage::nsys) && nsys_record && nsys_record->status == StageStatus::ok) {
    // What was captured (gated or the ungated re-run, the node pass) is read from run.json's record of it,
    // never worked out again from the configuration.
    const std::optional<CaptureRecord>& capture = run.directory.manifest().capture;
    if (!capture) {
      run.say_about_run(
          "run.json has no record of the nsys capture (a run recorded before it existed): resuming at nsys");
      return index_of(Stage::nsys);
    }
    auto stats = load_capture_tables(layout.resolve(RunLayout::nsys_stats_prefix()),
                                     layout.resolve(RunLayout::nsys_sqlite()));
    if (!stats) {
      run.say_about_run("the nsys tables cannot be read back (" + stats.error().describe() + "): resuming at nsys");
      return index_of(Stage::nsys);
    }
    outputs.nsys.stats = std::move(stats.value());
    outputs.nsys.capture = capture;
    run.discovered_stage = capture->discovered_stage;  // run.on_empty_gate = discover's or run.stage = auto's choice
    run.stage_choice = capture->stage_choice;
    run.whole_window_selection = capture->whole_window_selection;
    run.learned_nsys_arguments = capture->learned_nsys_arguments;
    if (!capture->scope.empty()) {  // the run scoped the capture itself: ncu must follow the same scope
      run.capture_scope = capture->scope;
      run.followed_capture_range = capture->gate == CaptureGateKind::cuda_profiler_api ? NsysCaptureRange::cuda_profiler_api
                                                                                      : NsysCaptureRange::none;
    }
    if (capture->node_capture_directory) {
      auto node = load_capture_tables(layout.resolve(RunLayout::nsys_node_stats_prefix()),
                                      layout.resolve(RunLayout::nsys_node_sqlite()));
      if (!node) {
        run.say_about_run("the node-traced nsys tables cannot be read back (" + node.error().describe() +
                          "): resuming at nsys");
        return index_of(Stage::nsys);
      }
      outputs.nsys.stats = with_kernel_tables_of(std::move(*outputs.nsys.stats), node.value());
      outputs.nsys.kernels_from_node_capture = true;
    }
    outputs.nsys.no_kernels_without_gpu = no_kernels_to_select(*outputs.nsys.stats, run.nvidia_driver());
  }
  std::error_code error;
  if (from > index_of(Stage::analyze))
    outputs.analysis.written = fs::exists(layout.resolve(RunLayout::analysis_report()), error);
  return from;
}

// Moves the files of the stages that run again into MAIN/attempts/<n>/ (same relative paths): nothing they
// wrote before is lost, and nothing of it mixes with what they write now. Returns the attempts directory.
fs::path set_aside_earlier_attempt(PipelineRun& run, const std::vector<Stage>& rerun) {
  static const std::map<Stage, std::vector<fs::path>> files_of = {
      {Stage::workload, {RunLayout::stage1_directory()}},
      {Stage::nsys, {RunLayout::nsys_directory()}},
      {Stage::select, {RunLayout::kernel_selection(), RunLayout::select_log()}},
      {Stage::ncu, {RunLayout::ncu_directory()}},
      {Stage::analyze, {RunLayout::analysis_directory()}},
      {Stage::report, {RunLayout::report_markdown(), RunLayout::report_html()}}};
  int attempt = 1;
  std::error_code error;
  while (fs::exists(run.directory.path() / RunLayout::attempt_directory(attempt), error)) ++attempt;
  const fs::path attempts = RunLayout::attempt_directory(attempt);
  for (const auto& stage : rerun) {
    const auto found = files_of.find(stage);
    if (found == files_of.end()) continue;
    for (const auto& relative : found->second) {
      const fs::path from = run.directory.path() / relative;
      if (!fs::exists(from, error)) continue;
      fs::create_directories((run.directory.path() / attempts / relative).parent_path(), error);
      fs::rename(from, run.directory.path() / attempts / relative, error);
      if (error) run.note_about_run("could not set aside " + relative.string() + ": " + error.message());
    }
  }
  // gpu_state.json is rewritten from the resumed run's snapshots alone: the earlier ones (the kept stages' too)
  // stay readable beside the other earlier files.
  if (fs::exists(run.directory.path() / RunLayout::gpu_state(), error)) {
    fs::create_directories(run.directory.path() / attempts, error);
    fs::copy_file(run.directory.path() / RunLayout::gpu_state(),
                  run.directory.path() / attempts / RunLayout::gpu_state(), fs::copy_options::overwrite_existing,
                  error);
    if (error) run.note_about_run("could not keep the earlier gpu_state.json: " + error.message());
  }
  for (const auto& folder : {RunLayout::stage1_directory(), RunLayout::nsys_directory(), RunLayout::ncu_directory(),
                             RunLayout::analysis_directory()})
    fs::create_directories(run.directory.path() / folder, error);
  return attempts;
}

}  // namespace

std::vector<FileFingerprint> fingerprint_workload_files(const std::vector<std::string>& argv,
                                                        const fs::path& working_directory,
                                                        const std::string& path_variable) {
  std::vector<FileFingerprint> files;
  const fs::path base = working_directory.empty() ? fs::current_path() : fs::absolute(working_directory);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    // A program named by a path (`./prog`) is the file under the workload's directory, never the one under
    // deep-profile's own: find_executable would test it against the latter. A bare name is looked up in PATH.
    const bool searched = i == 0 && argv[0].find('/') == std::string::npos;
    fs::path candidate = searched ? find_executable(argv[0], path_variable) : fs::path(argv[i]);
    if (candidate.empty()) continue;
    if (candidate.is_relative()) candidate = base / candidate;
    auto fingerprint = fingerprint_of(candidate.lexically_normal());
    if (fingerprint && std::none_of(files.begin(), files.end(),
                                    [&](const FileFingerprint& file) { return file.path == fingerprint->path; }))
      files.push_back(std::move(*fingerprint));
  }
  return files;
}

}  // namespace detail

Result<RunSummary> DeepProfiler::resume(const fs::path& main) {
  const detail::SignalFallbackScope signals;  // as in run()
  const auto started = clock_.now();
  auto directory = RunDirectory::open_to_resume(main);
  if (!directory) return directory.error();
  if (is_ranked_run(main))
    return detail::refusal("it ran under a launcher, and resuming such runs is not supported yet", detail::kStartAgain,
                           main);
  auto workload = detail::resolve_workload(config_, environment_);
  if (!workload) return workload.error();
  if (auto refused = detail::check_workload(directory->manifest(), workload.value(), main)) return *refused;
  auto from = detail::resume_point(directory->manifest(), main);
  if (!from) return from.error();
  detail::PipelineRun run{config_,         runner_,           clock_, progress_, environment_,
                          stop_requested_, directory.value(), started};
  run.workload = std::move(workload.value());
  if (auto refused = detail::check_tools(run, main)) return *refused;

  // This run's lines only (llmprof/logging.hpp): another DeepProfiler on another thread keeps its own log.
  const auto run_log = detail::open_run_log(environment_, directory->layout().resolve(RunLayout::log()));
  detail::StageOutputs outputs;
  const std::size_t first = detail::rehydrate(run, outputs, from.value());
  std::set<Stage> kept(kStages.begin() + 1, kStages.begin() + static_cast<std::ptrdiff_t>(first));
  ResumptionRecord resumption;
  resumption.resumed_utc = format_utc_iso8601(clock_.wall_now());
  resumption.from_stage = to_string(kStages[first]);
  std::vector<Stage> rerun(kStages.begin() + static_cast<std::ptrdiff_t>(first), kStages.end());
  resumption.previous = detail::restart_stage_records(run, rerun);
  resumption.attempts_directory = detail::set_aside_earlier_attempt(run, rerun).string();
  directory->manifest().resumptions.push_back(resumption);
  run.note_about_run("resuming from stage " + resumption.from_stage +
                     "; the earlier files of the stages run again are in " + resumption.attempts_directory);
  RunSummary summary = detail::finish_run(run, outputs, kept);
  return summary;
}

}  // namespace llmprof
