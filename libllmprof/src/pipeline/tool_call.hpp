// Running a tool from a stage: the call (ToolCall), its record in run.json and cmd.txt, and what its
// outcome means for the stage.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "pipeline/stage_interface.hpp"

namespace llmprof::detail {

// The recorded_comment of a profile command recorded without_overwrite().
inline constexpr const char* kRecordedWithoutOverwrite =
    "# recorded without the overwrite flag deep-profile ran it with (nsys --force-overwrite=true, ncu -f): pasted, "
    "the profiler refuses to replace this run's report; give it another output path to capture again";

// Runs one child, records "exit_code" and appends its command to `cmd_file` (relative to MAIN).
struct ToolCall {
  ToolCall(Stage stage_, std::vector<std::string> argv_) : stage(stage_), argv(std::move(argv_)) {}
  Stage stage;
  std::vector<std::string> argv;
  // What cmd.txt records instead of argv, with `recorded_comment` (a "# ..." line) saying why: a profile
  // without its overwrite flag, so that a pasted line cannot replace this run's own report.
  std::optional<std::vector<std::string>> recorded_argv;
  std::string recorded_comment;
  std::map<std::string, std::string> environment;  // added to deep-profile's own
  std::filesystem::path log_file;     // relative to MAIN; stdout+stderr
  std::filesystem::path stdout_file;  // relative to MAIN; when set, stdout goes here instead
  std::chrono::milliseconds timeout{0};
  std::function<void(const std::string&)> on_line;  // every output line (stdout and stderr)
  // Lets on_line end the tool's workload (its descendants) while the tool goes on (ProcessSpec).
  std::shared_ptr<DescendantEnding> end_descendants;
  std::chrono::milliseconds descendants_kill_grace{10000};
  std::optional<std::chrono::milliseconds> end_descendants_after;  // the runner's own request (ProcessSpec)
};
Result<ProcessOutcome> run_tool(PipelineRun& run, const ToolCall& call);

// run.leave_survivors and run.survivor_grace_s as a ProcessSpec's end_survivors_after: after every stage's
// process, the workload's survivors are ended (run_tool leaves the tool's own, see is_tool_process).
std::optional<std::chrono::milliseconds> survivor_grace(const PipelineRun& run);
// Whether a process running `executable` is the tool's own, not its workload's: an Nsight binary (a path with a
// component named nsight-*: /opt/nvidia/nsight-systems/2025.3.1/target-linux-x64/nsys, Debian's
// /usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys-launcher, nsight-compute-2025.3.1/...), or
// `tool_executable` itself (a launcher's own helpers). Seen on nsys 2022.4: its CLI exits while
// `nsys --start-agent` (re-parented to us) still writes the report; ending it lost the capture's last ranges.
bool is_tool_process(const std::filesystem::path& executable, const std::filesystem::path& tool_executable);
// After a process of `stage` exited normally: one warning naming its survivors by PID and name, and whether
// they were ended (SIGTERM; SIGKILL for those that outlived the grace) or left running. `what` names whose they
// are: "the workload", "the workload under nsys", "rank 1's workload".
void report_survivors(PipelineRun& run, Stage stage, const std::string& what, const ProcessOutcome& outcome);
// A profiler's call in stage `stage` (nsys, ncu): the workload's environment, output to `log_file`
// (relative to MAIN), and a timeout of `timeout_s` seconds.
ToolCall profiler_call(const PipelineRun& run, Stage stage, std::vector<std::string> argv,
                       std::filesystem::path log_file, double timeout_s);
// Records the call in run.json and appends it to `cmd_file`, then runs it. The stage's result when the
// tool could not start, was interrupted or timed out (`what` names it: "nsys profile"); else nullopt,
// with `outcome` set.
std::optional<StageResult> run_profiler_call(PipelineRun& run, const ToolCall& call,
                                             const std::filesystem::path& cmd_file, const std::string& what,
                                             std::optional<ProcessOutcome>& outcome);
// The call as cmd.txt, run.json and the report record it, the one writer of those lines
// (reproduce_command_line): its recorded argv and environment, the workload's working directory (where
// run_tool starts every tool) and "> FILE" (absolute) for a stdout_file.
std::string command_line(const PipelineRun& run, const ToolCall& call);
// Appends the call's command line (after its recorded_comment) to a cmd.txt (creating it); cmd.txt
// holds every command the stage ran.
void append_command(PipelineRun& run, const std::filesystem::path& cmd_file, const ToolCall& call);

// Warns (in the stage record, hence the report) when the workload's output in `log_file` (relative to
// MAIN) shows its own CUPTI client lost to nsys/ncu (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
void warn_about_cupti_conflict(PipelineRun& run, Stage stage, const std::filesystem::path& log_file);
// nsys exit 143 because it ended the workload when the NVTX range closed (capture-range-end stop-shutdown).
bool ended_by_capture_range(const PipelineRun& run, const ProcessOutcome& outcome);

// StageResult for a process that did not succeed: interrupted, timeout or a failed exit.
StageResult outcome_problem(const ProcessOutcome& outcome, const std::string& what, const std::string& log_file);
// Warns when a report file is larger than run.report_size_cap_gb.
void check_report_size(PipelineRun& run, Stage stage, const std::filesystem::path& report);

}  // namespace llmprof::detail
