// RunLayout: the name of every file of a run directory (MAIN), in one place.
//
// The pipeline writes these files, and `deep-profile analyze`, `report`, `compare` and `sweep` read
// them back from MAIN alone, so each name is spelled here once. The static functions give a path
// relative to MAIN (what run.json records as artifacts, cmd_file and log_file, and what
// RunDirectory::write_text takes); a RunLayout made for one MAIN resolves them against it.
//
//   run.json config.toml env.json inputs.json sections.txt deep-profile.log logs/{probe,select}.log
//   gpu_state.json
//   stage1/{cmd.txt, stdout.log, stderr.log, metrics.json, repeats.json, repeats/<i>/}
//   nsys/{cmd.txt, profile.log, profile.nsys-rep, metrics.json, summary_<report>.csv, stats.log,
//         profile.sqlite, export.log, selection.json,
//         node/{profile.log, profile.nsys-rep, metrics.json, summary_<report>.csv, stats.log, profile.sqlite, ...}}
//   ncu/{cmd.txt, plan.json, plan.log, profile.log, profile.ncu-rep, import.log, raw.csv, plan_<n>.*, followup_<n>.*}
//   analysis/{kernels.csv, stages.csv, instances.csv, report.json}
//   report.md report.html
//   ranks/{<stage>.plan.json, r<k>/{stage1, nsys, ncu}/}   a run under a launcher: each rank's own folders
//   attempts/<n>/                                        run --resume: the earlier files of the stages run again
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "llmprof/export.hpp"
#include "llmprof/stage.hpp"

namespace llmprof {

class LLMPROF_API RunLayout {
 public:
  using path = std::filesystem::path;

  explicit RunLayout(path main_directory) : main_(std::move(main_directory)) {}
  const path& main_directory() const { return main_; }
  // MAIN/relative.
  path resolve(const path& relative) const { return main_ / relative; }

  // Top level.
  static path manifest() { return "run.json"; }            // llmprof.run/1, rewritten after every stage
  static path resolved_config() { return "config.toml"; }  // the configuration the run used
  static path environment() { return "env.json"; }         // host, GPUs, tool probe
  static path inputs() { return "inputs.json"; }           // the workload: argv, cwd, env overrides
  static path ncu_sections() { return "sections.txt"; }    // `ncu --list-sections`, verbatim
  static path log() { return "deep-profile.log"; }
  static path probe_log() { return "logs/probe.log"; }    // the readiness verdict
  static path select_log() { return "logs/select.log"; }  // the top-N selection, readable
  static path report_markdown() { return "report.md"; }
  static path report_html() { return "report.html"; }
  static path gpu_state() { return "gpu_state.json"; }  // llmprof.gpu_state/1: nvidia-smi around GPU stages

  // The subdirectories, one per stage that writes files.
  static path stage1_directory() { return "stage1"; }
  static path nsys_directory() { return "nsys"; }
  static path ncu_directory() { return "ncu"; }
  static path analysis_directory() { return "analysis"; }

  // stage1/: the workload bare.
  static path stage1_commands() { return "stage1/cmd.txt"; }
  static path stage1_stdout() { return "stage1/stdout.log"; }
  static path stage1_stderr() { return "stage1/stderr.log"; }
  static path stage1_metrics() { return "stage1/metrics.json"; }  // llmprof.workload_metrics/1
  static path stage1_repeats() { return "stage1/repeats.json"; }  // llmprof.repeats/1: every bare run's times
  // Repeat `index` >= 2 of run.repeats (the first is stage1/ itself): stdout.log, stderr.log, metrics.json;
  // every repeat's command is appended to stage1/cmd.txt.
  static path stage1_repeat_directory(int index) { return stage1_directory() / "repeats" / std::to_string(index); }

  // nsys/: the timeline.
  static path nsys_commands() { return "nsys/cmd.txt"; }
  static path nsys_log(std::string_view name) { return nsys_directory() / name; }  // "profile.log", ...
  static path nsys_report_base() { return "nsys/profile"; }   // -o; nsys appends .nsys-rep (or .qdstrm)
  static path nsys_metrics() { return "nsys/metrics.json"; }  // the workload's metrics while under nsys
  // The tokens the workload's steps carried in each capture window (llmprof/step_tokens.hpp), when it says.
  static path nsys_step_tokens() { return "nsys/step_tokens.json"; }
  // `nsys stats --output` prefix: nsys writes <prefix>_<report>.csv, e.g. nsys/summary_cuda_gpu_kern_sum.csv
  // (nsys_stats_report_path in nsys_stats.hpp spells that rule).
  static path nsys_stats_prefix() { return "nsys/summary"; }
  static path nsys_stats_log() { return "nsys/stats.log"; }
  static path nsys_sqlite() { return "nsys/profile.sqlite"; }
  static path nsys_export_log() { return "nsys/export.log"; }
  static path kernel_selection() { return "nsys/selection.json"; }  // llmprof.kernel_selection/1
  // nsys/node/: the second capture, traced per CUDA graph node (--cuda-graph-trace=node), taken when the first
  // one recorded graph launches whole; the same file names as nsys/ (its commands go to nsys/cmd.txt).
  // nsys/window-<k>/: window k >= 2 of a repeat capture (--capture-range-end=repeat[:N]); window 1 is analysed
  // in nsys/ itself. nsys numbers the reports nsys/profile.<k>.nsys-rep; nsys/windows.json lists them.
  static path nsys_window_directory(int window) { return nsys_directory() / ("window-" + std::to_string(window)); }
  static path nsys_windows() { return "nsys/windows.json"; }
  static path nsys_node_directory() { return "nsys/node"; }
  static path nsys_node_report_base() { return "nsys/node/profile"; }
  static path nsys_node_metrics() { return "nsys/node/metrics.json"; }
  static path nsys_node_stats_prefix() { return "nsys/node/summary"; }
  static path nsys_node_sqlite() { return "nsys/node/profile.sqlite"; }

  // ncu/: the kernels. `name` is "profile" for the main pass, "followup_<n>" for follow-up passes.
  static path ncu_commands() { return "ncu/cmd.txt"; }
  static path ncu_log(std::string_view name) { return ncu_directory() / name; }  // "profile.log", ...
  static path ncu_output_base(std::string_view name = "profile") { return ncu_directory() / name; }  // -o
  static path ncu_report(std::string_view name = "profile") {
    return ncu_directory() / (std::string(name) + ".ncu-rep");
  }
  static path ncu_csv(std::string_view name) { return ncu_directory() / (std::string(name) + ".csv"); }
  static path ncu_raw_csv() { return "ncu/raw.csv"; }  // `ncu --import --page raw --csv` of every pass
  static path ncu_import_log() { return "ncu/import.log"; }
  static path ncu_plan() { return "ncu/plan.json"; }     // the per-kernel plan, then its check
  static path ncu_plan_log() { return "ncu/plan.log"; }  // the plan in words

  // analysis/: written by the analysis, read by report, compare and sweep.
  static path analysis_kernels() { return "analysis/kernels.csv"; }
  static path analysis_stages() { return "analysis/stages.csv"; }
  static path analysis_instances() { return "analysis/instances.csv"; }  // every timeline stage instance
  static path analysis_report() { return "analysis/report.json"; }       // llmprof.report/2
  // Engine steps per kind (llmprof/step_kinds.hpp), one entry per capture window; the Markdown is appended
  // to report.md. Written only when the timeline has a step range with kinds (a serving engine's).
  static path analysis_step_kinds() { return "analysis/step_kinds.json"; }
  static path analysis_step_kinds_markdown() { return "analysis/step_kinds.md"; }

  // The folder a stage writes its files to (stage1, nsys, ncu, analysis); nullopt for the stages that
  // write single files at the top level (probe, select, report).
  static std::optional<path> stage_directory(Stage stage) {
    switch (stage) {
      case Stage::workload:
        return stage1_directory();
      case Stage::nsys:
        return nsys_directory();
      case Stage::ncu:
        return ncu_directory();
      case Stage::analyze:
        return analysis_directory();
      case Stage::probe:
      case Stage::select:
      case Stage::report:
        break;
    }
    return std::nullopt;
  }

  // ranks/: a run under a launcher. Every rank writes under its own ranks/r<k>/, one folder per stage it ran
  // (stage1, nsys, ncu); the primary rank's folder is a run directory of its own for the analysis.
  static path ranks_directory() { return "ranks"; }
  static path rank_directory(int rank) { return rank_directory(std::to_string(rank)); }
  // `rank` as text: a stage plan spells it as a token that rank-exec replaces with its own rank.
  static path rank_directory(std::string_view rank) { return ranks_directory() / ("r" + std::string(rank)); }
  static path rank_stage_directory(int rank, Stage stage) { return rank_directory(rank) / to_string(stage); }
  static path rank_stage_directory(std::string_view rank, Stage stage) {
    return rank_directory(rank) / to_string(stage);
  }
  // In each ranks/r<k>/<stage>/: rank-exec's command (cmd.txt) and status (status.json), and all the rank
  // printed (output.log); the profiler's report and exports lie beside them under their usual names.
  static path rank_stage_commands(int rank, Stage stage) { return rank_stage_directory(rank, stage) / "cmd.txt"; }
  static path rank_stage_output(int rank, Stage stage) { return rank_stage_directory(rank, stage) / "output.log"; }
  static path rank_stage_status(int rank, Stage stage) { return rank_stage_directory(rank, stage) / "status.json"; }
  // The launcher's one call per stage: MAIN/<stage>/cmd.txt and its output, MAIN/<stage>/launcher.log.
  static path launcher_commands(Stage stage) { return path(to_string(stage)) / "cmd.txt"; }
  static path launcher_log(Stage stage) { return path(to_string(stage)) / "launcher.log"; }
  // The cross-rank view (analysis/): one row per rank, and the same in words.
  static path analysis_ranks_csv() { return "analysis/ranks.csv"; }
  static path analysis_ranks_markdown() { return "analysis/ranks.md"; }
  // The stage plan deep-profile writes once for every rank-exec of the stage.
  static path rank_plan(Stage stage) { return ranks_directory() / (std::string(to_string(stage)) + ".plan.json"); }

  // attempts/<n>/: `run --resume` sets the earlier files of the stages it runs again aside here (n = 1, 2, ...).
  static path attempt_directory(int attempt) { return path("attempts") / std::to_string(attempt); }

 private:
  path main_;
};

}  // namespace llmprof
