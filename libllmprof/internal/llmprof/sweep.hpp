// Sweeps: a list of configuration override sets run one after another, one MAIN directory per
// point (never one nsys session around the whole sweep), and an index report comparing them.
//
// Plan sources:
//   TOML file:      [[point]]                      # one table per configuration
//                   name = "batch-4"               # optional label; default: the overrides joined
//                   workload.example_args = ["--batch", "4"]
//                   ncu.set = "roofline"
//   command line:   --point 'workload.example_args=["--batch","4"],run.top_n_kernels=5'  (repeatable;
//                   commas inside [...] or quotes do not split)
// Each override becomes "section.key=value" text for ConfigSources::overrides (strings bare,
// arrays/numbers/booleans as TOML literals).
//
// The pipeline calls run_sweep with a function that runs one point (DeepProfiler) and returns its
// MAIN directory; run_sweep writes <sweep_dir>/index.{md,html,json} from those directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct SweepOverride {
  std::string key;    // "workload.example_args"
  std::string value;  // as typed after "key=" on the command line: 4, true, decode, ["--batch", "4"]
  std::string to_string() const { return key + "=" + value; }
};

struct SweepPoint {
  std::string label;  // "batch-4"; unique within a plan; safe as part of a run id ([A-Za-z0-9._-])
  std::vector<SweepOverride> overrides;
  std::vector<std::string> override_strings() const;  // for ConfigSources::overrides
};

struct SweepPlan {
  std::vector<SweepPoint> points;
};

// Errors (parse_error / invalid_argument) name the file or argument, the point and the key.
Result<SweepPlan> parse_sweep_plan_toml(std::string_view toml_text, const std::string& source_name);
Result<SweepPlan> load_sweep_plan(const std::filesystem::path& toml_file);
// One point per `deep-profile sweep --point` argument.
Result<SweepPlan> parse_sweep_points(const std::vector<std::string>& point_arguments);
// invalid_argument naming the setting and the point when a point overrides a setting that cannot take
// effect: workload.example_args beside an explicit workload command (`-- CMD`, workload.argv in the base
// configuration or in that point), which only the bundled example reads, so the points would run the
// same command and still be listed as distinct.
Result<void> check_sweep_settings_take_effect(const SweepPlan& plan, bool explicit_workload_command);

// One row of the index: what the point's MAIN directory says.
struct SweepIndexRow {
  std::string label;
  std::vector<std::string> overrides;
  std::optional<std::filesystem::path> main_directory;  // unset when the point failed before creating one
  std::string status;                                   // run.json status, or "failed" / "not run"
  std::string error;                                    // why the point failed, when it did
  std::optional<int> batch;                             // stage1/metrics.json
  std::optional<double> tokens_per_s;                   // stage1/metrics.json
  std::optional<double> time_per_output_token_s;        // stage1/metrics.json
  std::optional<double> stage_wall_ns;                  // report.json, the chosen stage
  std::optional<double> stage_busy_fraction;            // report.json
  std::optional<double> stage_mfu;                      // report.json (profiled FLOP)
  std::optional<double> stage_mfu_workload;             // report.json (workload FLOP), when present
  std::vector<std::string> notes;                       // files that were absent or unreadable
};

struct SweepIndex {
  std::string stage = "decode";  // the stage whose busy fraction and MFU are compared
  std::vector<SweepIndexRow> rows;
};

// The outcome of one point as the pipeline reports it.
struct SweepPointOutcome {
  SweepPoint point;
  std::optional<std::filesystem::path> main_directory;
  std::optional<Error> error;
};

// Reads each point's MAIN (absent files become notes on the row, never errors: a failed point still
// gets its row).
SweepIndex build_sweep_index(const std::vector<SweepPointOutcome>& outcomes, const std::string& stage = "decode");

std::string render_sweep_index_markdown(const SweepIndex& index);
std::string render_sweep_index_html(const SweepIndex& index);
std::string sweep_index_to_json(const SweepIndex& index);  // schema "llmprof.sweep_index/2"
// <sweep_directory>/index.md, index.html, index.json (atomically).
Result<void> write_sweep_index(const SweepIndex& index, const std::filesystem::path& sweep_directory);

// Sweeps whose points run as separate processes (`deep-profile sweep --point-index I`, one Slurm array
// task each): point I always runs into SWEEP/point-<I>/, so a task that is run again finds it, and the
// index is built from those directories afterwards (merge_sweep_points) rather than from outcomes.

// SWEEP/point-<I>, I without padding, as $SLURM_ARRAY_TASK_ID spells it.
std::filesystem::path sweep_point_directory(const std::filesystem::path& sweep_directory, std::size_t index);
// SWEEP when none is given: <runs_root>/sweep-<plan file name without extension>, the same for every
// task of one plan, so that tasks started separately agree on it.
std::filesystem::path default_sweep_directory(const std::filesystem::path& runs_root,
                                              const std::filesystem::path& plan_file);

// The index of SWEEP/point-0..N-1 for the plan's N points, written to SWEEP/index.{md,html,json}. A
// point with no run.json (its task never started, or failed before creating the run), or whose run
// stopped without finishing (run.json still says running and nobody holds its run.lock: the task was
// killed), is a failed row that says so and names the task's log SWEEP/logs/point-<I>.out; a run
// still going elsewhere keeps status running. Every point gets its row: the index never waits.
// The Result is an error only when the index cannot be written.
Result<SweepIndex> merge_sweep_points(const SweepPlan& plan, const std::filesystem::path& sweep_directory,
                                      const std::string& stage = "decode");

// Runs one point and returns its MAIN directory (the pipeline's DeepProfiler::run behind it).
using SweepPointRunner = std::function<Result<std::filesystem::path>(const SweepPoint& point, std::size_t index)>;

struct SweepRunOptions {
  std::filesystem::path sweep_directory;  // where index.{md,html,json} go
  std::string stage = "decode";
  bool stop_on_failure = false;  // default: a failed point is recorded and the next one runs
};

// Runs the points in order, then writes the index (also after a failure or a stop). The index is
// returned even when points failed; the Result is an error only when the index cannot be written.
Result<SweepIndex> run_sweep(const SweepPlan& plan, const SweepPointRunner& run_point, const SweepRunOptions& options);

}  // namespace llmprof
