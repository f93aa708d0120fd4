// The verdict: the main stage, its headline and the levers of it and of each engine step kind (see run_verdict.hpp).
#include "analysis/run_verdict.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <string>
#include <vector>

#include "analysis/run_levers.hpp"
#include "core/atomic_file.hpp"
#include "core/figure_checks.hpp"
#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "core/json_pretty.hpp"
#include "llmprof/run_layout.hpp"
#include "rundir/inferred_steps.hpp"
#include "rundir/report_model_json.hpp"
#include "rundir/report_model_views.hpp"

namespace llmprof::detail {
namespace {

std::string headline_figures(const RunReportModel& model, const ReportStage& stage, const VerdictStage& levers) {
  std::string text = stage.name + ": ";
  const auto& bare = model.bare_run;
  if (levers.main && bare && positive(bare->tokens_per_s) && positive(bare->time_per_output_token_s)) {
    text += format_number(bare->tokens_per_s) + " tokens/s (" +
            format_duration_ns(bare->time_per_output_token_s * 1e9) +
            (bare->batch == 1 ? " per token" : " per step of " + std::to_string(bare->batch) + " tokens") + ", bare), ";
  } else if (levers.step_ns) {
    text += format_duration_ns(*levers.step_ns) + " " + per_unit(stage) + " under the profiler, ";
  }
  text += verdict_class(stage.verdict);
  if (stage.gpu_busy_fraction) text += " (GPU busy " + format_fraction_percent(stage.gpu_busy_fraction) + ")";
  text += ".";
  if (const std::string unit = step_definition(model, stage); !unit.empty()) text += " " + unit;
  return text;
}

std::string lever_sentence(const ReportStage& stage, const VerdictStage& levers, const VerdictLever& lever) {
  const std::string gain = format_factor(*lever.speedup) + " faster";
  if (lever.name == "launch overhead")
    return "Its GPU work is " + format_duration_ns(*levers.gpu_work_step_ns) + " " + per_unit(stage) +
           ": without launch overhead, " + gain + ".";
  const std::string unit = "a " + stage.step_noun();
  if (lever.name == "HBM limit")
    return "At the HBM limit " + unit + " would take " + format_duration_ns(*levers.hbm_limit_step_ns) + ": " + gain +
           ".";
  if (lever.name == "compute limit")
    return "At the compute limit " + unit + " would take " + format_duration_ns(*levers.compute_limit_step_ns) + ": " +
           gain + ".";
  if (lever.name == "idle between graph replays") return "Without the idle between graph replays, " + gain + ".";
  return "Without waiting for the straggler rank, up to " + gain + ".";
}

// Without a lever's gain, what the GPU's own counters measured (the sampled preset: no ncu, no CUDA trace).
std::string sampled_sentence(const ReportStage& stage) {
  if (!stage.sampled_mbu) return "";
  std::string text = " Sampled from the GPU's counters: SM active " +
                     format_fraction_percent(stage.sampled_sm_active.mean) + ", tensor active " +
                     format_fraction_percent(stage.sampled_tensor_active.mean) + ", DRAM " +
                     format_fraction_percent(stage.sampled_mbu) + " of peak bandwidth";
  if (stage.sampled_dram_bytes_per_step)
    text += " (" + format_si(stage.sampled_dram_bytes_per_step, "B") + " per " + stage.step_noun() + ")";
  return text + ".";
}

std::string headline(const RunReportModel& model, const ReportStage& stage, const VerdictStage& levers) {
  std::string text = headline_figures(model, stage, levers);
  const VerdictLever& top = levers.levers.front();
  if (!top.speedup)
    return text + sampled_sentence(stage) +
           " No lever's gain can be computed from this run's figures: the levers say what each lacks.";
  text += " " + lever_sentence(stage, levers, top);
  // The floor under every kernel lever, when the biggest lever is not already that floor.
  if (top.name != "HBM limit" && top.name != "compute limit") {
    if (levers.hbm_limit_step_ns &&
        (!levers.compute_limit_step_ns || *levers.hbm_limit_step_ns >= *levers.compute_limit_step_ns))
      text += " The HBM limit is " + format_duration_ns(*levers.hbm_limit_step_ns) + " " + per_unit(stage) + ".";
    else if (levers.compute_limit_step_ns)
      text +=
          " The compute limit is " + format_duration_ns(*levers.compute_limit_step_ns) + " " + per_unit(stage) + ".";
  }
  return text;
}

}  // namespace

RunVerdict summarize_run_verdict(const RunReportModel& model) {
  RunVerdict verdict;
  const ReportStage* main = main_stage(model);
  if (main == nullptr) {  // no range of the workload's own: the captured window and its inferred steps
    verdict.headline = inferred_steps_headline(model);
    return verdict;
  }
  verdict.stages.push_back(stage_levers(model, *main, true));
  for (const auto& kind : model.step_kinds) {
    const ReportStage* stage = stage_named(model, kind);
    if (stage == nullptr || stage == main || !measured_stage(*stage)) continue;
    verdict.stages.push_back(stage_levers(model, *stage, false));
  }
  verdict.headline = headline(model, *main, verdict.stages.front());
  return verdict;
}

Result<std::string> store_run_verdict(const RunReportModel& model) {
  const RunLayout layout(model.main_directory);
  const auto path = layout.resolve(RunLayout::analysis_report());
  const auto text = read_file_text(path);
  if (!text)
    return make_error(ErrorCode::not_found, "no analysis/report.json in " + model.main_directory.string(),
                      "run `deep-profile analyze " + model.main_directory.string() + "` first", path.string());
  auto root = parse_json_object(*text, path);
  if (!root) return root.error();
  // The bounds of the verdict's table rows, applied where it is made as where report.json is read back; the levers'
  // ratios keep them by construction, so a warning here means an input broke an invariant the levers rely on.
  RunVerdict verdict = summarize_run_verdict(model);
  std::vector<std::string> warnings;
  FigureChecker check(warnings, "verdict");
  withhold_impossible_figures(verdict, check);
  if (!warnings.empty()) {
    auto& listed = (*root)["warnings"];
    if (!listed.is_array()) listed = boost::json::array();
    for (auto& warning : warnings) listed.as_array().emplace_back(warning);
  }
  (*root)["verdict"] = report_json(verdict);
  std::string stored = pretty_json(*root);
  if (auto written = write_file_atomically(path, stored); !written) return written.error();
  return stored;
}

}  // namespace llmprof::detail
