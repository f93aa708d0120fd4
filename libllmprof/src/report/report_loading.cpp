// Reads a run directory into a RunReportModel: report.json (required), run.json, env.json,
// inputs.json, config.toml and cmd.txt files (each optional, with a note when absent).
#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/figure_checks.hpp"
#include "core/file_text.hpp"
#include "core/format.hpp"
#include "core/json_fields.hpp"
#include "core/record_fields.hpp"
#include "core/text.hpp"
#include "core/toml_flatten.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_layout.hpp"
#include "report/report_capture_scope.hpp"
#include "rundir/inferred_steps.hpp"
#include "rundir/kernel_selection_json.hpp"
#include "report/report_step_records.hpp"
#include "report/report_ranges.hpp"
#include "report/report_repeats.hpp"
#include "report/report_step_unit.hpp"
#include "report/report_timeline.hpp"
#include "rundir/report_model_json.hpp"
#include "rundir/report_ncu_records.hpp"
#include "rundir/run_records.hpp"

namespace llmprof {
namespace json = boost::json;
using detail::JsonFieldError;
namespace detail {

}  // namespace detail

namespace {

// The schema this reader follows; /1 (written before the stage spellings were unified) still reads.
constexpr const char* kReportSchema = "llmprof.report/2";
constexpr const char* kReportSchemaV1 = "llmprof.report/1";

ReportDevice device_from(const json::object& root) {
  ReportDevice device;
  const auto* found = root.if_contains("device");
  if (found == nullptr || found->is_null()) return device;
  if (!found->is_object()) throw JsonFieldError{"device"};
  detail::read_report_json(found->get_object(), "device.", device);
  return device;
}

ReportStage stage_from(const json::object& object, std::size_t index, bool version1) {
  const std::string where = "stages[" + std::to_string(index) + "].";
  ReportStage stage;
  detail::read_report_json(object, where, stage);
  stage.dram_keys_recorded = object.contains("dram_coverage");
  // /1 files written by other tools (and the recorded fixtures) spell the second-opinion MFU differently.
  if (version1 && !stage.mfu_workload)
    stage.mfu_workload = detail::json_number(object, "workload_mfu", where + "workload_mfu");
  return stage;
}

ReportKernel kernel_from(const json::object& object, std::size_t index, bool version1) {
  const std::string where = "kernels[" + std::to_string(index) + "].";
  ReportKernel kernel;
  detail::read_report_json(object, where, kernel);
  if (version1 && !kernel.precision) kernel.precision = detail::json_string(object, "precision", where + "precision");
  return kernel;
}

// report.json may be hand-edited, from another tool or from an older llmprof: a figure outside its
// range is withheld with a warning rather than printed as "700%" or "inf%", by the bounds of the same table rows
// the analysis checks them with (detail::withhold_impossible_figures).
void withhold_read_figures(RunReportModel& model) {
  for (std::size_t i = 0; i < model.stages.size(); ++i) {
    auto& stage = model.stages[i];
    detail::FigureChecker check(model.warnings, "report.json stage '" + stage.name + "'");
    detail::withhold_impossible_figures(stage, check, "analysis/report.json stages[" + std::to_string(i) + "]");
  }
  for (std::size_t i = 0; i < model.kernels.size(); ++i) {
    auto& kernel = model.kernels[i];
    detail::FigureChecker check(model.warnings, "report.json kernel '" + kernel.name.substr(0, 80) + "'");
    detail::withhold_impossible_figures(kernel, check, "analysis/report.json kernels[" + std::to_string(i) + "]");
  }
  if (model.top_kernel_selection) {
    detail::FigureChecker check(model.warnings, "report.json top_kernel_selection");
    detail::withhold_impossible_figures(*model.top_kernel_selection, check, "analysis/report.json top_kernel_selection");
    model.top_kernel_selection_notes.figures_withheld = check.any_withheld();
  }
  if (model.verdict) {
    detail::FigureChecker check(model.warnings, "report.json verdict");
    detail::withhold_impossible_figures(*model.verdict, check, "analysis/report.json");
  }
}

// A record report.json holds at `key` when the analysis stored one (the headline and levers, the node's capture):
// absent or null in a report.json written before it stored them.
template <class Record>
void read_optional_record(const json::object& root, const std::string& key, std::optional<Record>& record) {
  const auto* value = root.if_contains(key);
  if (value == nullptr || value->is_null()) return;
  if (!value->is_object()) throw JsonFieldError{key};
  Record read;
  detail::read_report_json(value->get_object(), key + ".", read);
  record = std::move(read);
}

void read_analysis(const json::object& root, RunReportModel& model) {
  model.schema = detail::json_string(root, "schema", "schema").value_or("");
  if (model.schema != kReportSchema && model.schema != kReportSchemaV1) throw JsonFieldError{"schema"};
  const bool version1 = model.schema == kReportSchemaV1;
  model.device = device_from(root);
  std::size_t index = 0;
  for (const auto& stage : detail::json_objects(root, "stages", "stages"))
    model.stages.push_back(stage_from(stage, index++, version1));
  index = 0;
  for (const auto& kernel : detail::json_objects(root, "kernels", "kernels"))
    model.kernels.push_back(kernel_from(kernel, index++, version1));
  std::stable_sort(model.kernels.begin(), model.kernels.end(), [](const ReportKernel& a, const ReportKernel& b) {
    return a.total_time_ns.value_or(0) > b.total_time_ns.value_or(0);
  });
  if (const auto* selection = root.if_contains("top_kernel_selection"); selection != nullptr && !selection->is_null()) {
    if (!selection->is_object()) throw JsonFieldError{"top_kernel_selection"};
    model.top_kernel_selection =
        detail::read_top_kernel_selection(selection->get_object(), "top_kernel_selection.");
  }
  model.warnings = detail::json_strings(root, "warnings", "warnings");
  detail::read_ncu_records(root, model);
  // The selection's sentence quotes the ncu plan's check where it is of the selection's stage.
  if (model.top_kernel_selection && model.ncu_coverage && model.ncu_coverage->stage == model.top_kernel_selection->stage) {
    model.top_kernel_selection_notes.ncu_measured = model.ncu_coverage->measured;
    model.top_kernel_selection_notes.ncu_extrapolated = model.ncu_coverage->extrapolated;
  }
  read_optional_record(root, "node_capture", model.node_capture);
  detail::read_timeline(root, model);
  detail::annotate_selection_scope(model);
  detail::read_bare_run_and_ranges(root, model);
  read_optional_record(root, "verdict", model.verdict);
  withhold_read_figures(model);
}

void read_environment(const json::object& root, RunEnvironmentSummary& environment) {
  environment.present = true;
  environment.host = detail::json_string(root, "host", "host").value_or("");
  environment.os = detail::json_string(root, "os", "os").value_or("");
  std::size_t index = 0;
  for (const auto& gpu : detail::json_objects(root, "gpus", "gpus")) {
    const std::string where = "gpus[" + std::to_string(index++) + "].";
    GpuRecord record;
    record.index = static_cast<int>(detail::json_integer(gpu, "index", where + "index").value_or(0));
    record.name = detail::json_string(gpu, "name", where + "name").value_or("");
    record.driver = detail::json_string(gpu, "driver", where + "driver").value_or("");
    record.memory_mib = detail::json_integer(gpu, "memory_mib", where + "memory_mib").value_or(0);
    environment.gpus.push_back(record);
  }
  environment.tool_versions = detail::tool_versions_from_environment(root);
}

std::optional<std::string> read_text(const std::filesystem::path& path) { return detail::read_file_text(path); }

Error file_field_error(const std::filesystem::path& path, const JsonFieldError& field, const std::string& schema) {
  return make_error(ErrorCode::parse_error,
                    path.string() + ": field '" + field.field + "' is missing or has the wrong type",
                    schema.empty() ? "" : "the file must follow schema " + schema, path.string());
}

void read_manifest_parts(const RunManifest& manifest, const std::filesystem::path& main, RunReportModel& model) {
  model.run_id = manifest.run_id;
  model.created_utc = manifest.created_utc;
  model.run_status = to_string(manifest.status);
  model.workload_argv = manifest.workload.argv;
  if (manifest.capture) model.capture_scope = manifest.capture->scope;
  for (const auto& stage : manifest.stages) {
    // The report step itself is "running" while it renders; that is not a problem to report.
    const bool rendering_now = stage.name == "report" && stage.status == StageStatus::running;
    if (stage.status != StageStatus::ok && !rendering_now)
      model.stage_problems.push_back({stage.name, to_string(stage.status), stage.reason});
    // The profiling stages' own warnings (e.g. a CUPTI conflict); the analysis lists its gaps itself.
    if (stage.name != "analyze" && stage.name != "report") {
      for (const auto& warning : stage.warnings) model.stage_warnings.emplace_back(stage.name, warning);
    }
    if (stage.command && !stage.command->empty()) {
      model.reproduce.push_back({stage.name, *stage.command, RunLayout::manifest().string()});
    } else if (stage.cmd_file) {
      if (auto text = read_text(main / *stage.cmd_file))
        model.reproduce.push_back({stage.name, std::string(detail::trim(*text)), *stage.cmd_file});
    }
  }
}

// run.json, env.json and inputs.json: each optional (a note says what is unknown without it), each
// an error when present but unreadable.
Result<void> read_run_files(const RunLayout& layout, const std::filesystem::path& main_directory,
                            RunReportModel& model) {
  const auto run_path = layout.resolve(RunLayout::manifest());
  if (auto manifest = read_manifest(layout.main_directory())) {
    read_manifest_parts(*manifest, main_directory, model);
  } else if (manifest.error().code == ErrorCode::not_found) {
    model.notes.push_back("run.json is absent: no workload, stage status or commands recorded");
  } else {
    Error error = manifest.error();
    error.message = run_path.string() + ": " + error.message;
    error.subject = run_path.string();
    return error;
  }

  const auto env_path = layout.resolve(RunLayout::environment());
  if (auto env_text = read_text(env_path)) {
    auto env = detail::parse_json_object(*env_text, env_path);
    if (!env) return env.error();
    try {
      read_environment(*env, model.environment);
      detail::read_nvidia_driver(*env, model);
    } catch (const JsonFieldError& field) {
      return file_field_error(env_path, field, "");
    }
  } else {
    model.notes.push_back("env.json is absent: GPU, driver and tool versions unknown");
  }

  if (model.workload_argv.empty()) {
    const auto inputs_path = layout.resolve(RunLayout::inputs());
    if (auto inputs_text = read_text(inputs_path)) {
      auto inputs = detail::parse_json_object(*inputs_text, inputs_path);
      if (!inputs) return inputs.error();
      try {
        model.workload_argv = detail::json_strings(*inputs, "argv", "argv");
      } catch (const JsonFieldError& field) {
        return file_field_error(inputs_path, field, "llmprof.inputs/1");
      }
    }
  }

  return {};
}

}  // namespace

Result<RunReportModel> load_run_report(const std::filesystem::path& main_directory) {
  RunReportModel model;
  model.main_directory = main_directory;
  model.run_id = main_directory.filename().string();
  if (model.run_id.empty() || model.run_id == ".")
    model.run_id = std::filesystem::absolute(main_directory).parent_path().filename().string();

  if (auto checked = check_main_directory(main_directory, "to report on"); !checked) return checked.error();
  const RunLayout layout(main_directory);
  const auto report_path = layout.resolve(RunLayout::analysis_report());
  const auto report_text = read_text(report_path);
  if (!report_text) {
    return make_error(
        ErrorCode::not_found, "no analysis/report.json in " + main_directory.string(),
        "run `deep-profile analyze " + main_directory.string() + "` first (it writes analysis/report.json)",
        report_path.string());
  }
  auto report = detail::parse_json_object(*report_text, report_path);
  if (!report) return report.error();
  try {
    read_analysis(*report, model);
  } catch (const JsonFieldError& field) {
    return file_field_error(report_path, field, std::string(kReportSchema) + " (or " + kReportSchemaV1 + ")");
  }

  if (auto ranks = read_text(layout.resolve(RunLayout::analysis_directory() / "ranks.md")))
    model.cross_rank_markdown = *ranks;

  if (auto read = detail::read_step_kinds_and_ranks(layout, model); !read) return read.error();
  if (auto read = detail::read_inferred_steps(layout, model); !read) return read.error();
  detail::complete_step_units(model);
  if (auto read = read_run_files(layout, main_directory, model); !read) return read.error();
  if (auto read = detail::read_repeats_and_gpu_state(main_directory, model); !read) return read.error();

  const auto config_path = layout.resolve(RunLayout::resolved_config());
  if (auto config_text = read_text(config_path)) {
    auto entries = detail::flatten_toml_text(*config_text, config_path.string());
    if (!entries) return entries.error();
    model.config = std::move(*entries);
  } else {
    model.notes.push_back("config.toml is absent: the resolved configuration is unknown");
  }
  return model;
}

Result<void> write_reports(const std::filesystem::path& main_directory) {
  auto model = load_run_report(main_directory);
  if (!model) return model.error();
  const RunLayout layout(main_directory);
  // Engine steps per kind (the analyze stage writes them for a serving engine's timeline): appended as written.
  const auto steps = detail::read_file_text(layout.resolve(RunLayout::analysis_step_kinds_markdown()));
  std::string markdown = render_markdown(*model);
  if (steps) markdown += "\n" + *steps;
  if (auto written = detail::write_file_atomically(layout.resolve(RunLayout::report_markdown()), markdown); !written) {
    return written;
  }
  std::string html = render_html(*model);
  if (steps) {
    const std::string section =
        "<section id=\"engine-steps\"><pre>" + detail::html_escape(*steps) + "</pre></section>\n";
    const auto end = html.rfind("<script");
    html.insert(end == std::string::npos ? html.size() : end, section);
  }
  return detail::write_file_atomically(layout.resolve(RunLayout::report_html()), html);
}

}  // namespace llmprof
