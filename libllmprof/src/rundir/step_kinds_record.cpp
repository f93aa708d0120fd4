// analysis/step_kinds.json (llmprof/step_kinds_record.hpp): one field table per type writes the file and reads it
// back, and each row names its figure's bound, so a new per-kind figure is its member, one row here, its computation
// and its docs row (docs/report-json.md), and nothing else. The keys and their order are the file's since
// schema llmprof.step_kinds/1 (scripts/zoo_live_steps.py and tests/tools/*.py read them): the step time's percentiles
// and total sit flat beside the kind's other figures.
#include <boost/json/serialize.hpp>

#include "core/figure_checks.hpp"
#include "core/json_fields.hpp"
#include "core/record_fields.hpp"
#include "llmprof/step_kinds_record.hpp"
#include "rundir/timeline_record_tables.hpp"

namespace llmprof {
namespace detail {

constexpr std::string_view kStepKindsSchema = "llmprof.step_kinds/1";

// Field rows stay literal, one per figure, and each record has its own table: a table is read, not computed, so
// these tables look like those of the other record files by design (the duplicates tool pairs them by shape).
template <>
struct RecordTable<StepKindTokens> {
  using Tokens = StepKindTokens;
  static constexpr RecordField<Tokens> fields[] = {
      field<&Tokens::workload_steps>("workload_steps").within(FigureBound::non_negative, "the workload's step tokens"),
      field<&Tokens::prompt_tokens>("prompt_tokens").within(FigureBound::non_negative, "the workload's step tokens"),
      field<&Tokens::decode_tokens>("decode_tokens").within(FigureBound::non_negative, "the workload's step tokens"),
      field<&Tokens::tokens_per_step>("tokens_per_step")
          .within(FigureBound::non_negative, "(prompt_tokens + decode_tokens) / the kind's count"),
      field<&Tokens::time_per_token_ns>("time_per_token_ns")
          .within(FigureBound::non_negative, "the kind's total_ns / (prompt_tokens + decode_tokens)"),
      field<&Tokens::withheld>("withheld"),
  };
};

template <>
struct RecordTable<StepKindFigures> {
  using Kind = StepKindFigures;
  static constexpr std::string_view kSteps = "the kind's step instances on the timeline";
  static constexpr RecordField<Kind> fields[] = {
      name_field<&Kind::name>("name"),
      field<&Kind::domain>("domain"),
      field<&Kind::count>("count").within(FigureBound::non_negative, kSteps),
      field<&Kind::step_time, &DurationSummary::p50_ns>("p50_ns").within(FigureBound::non_negative, kSteps),
      field<&Kind::step_time, &DurationSummary::p90_ns>("p90_ns").within(FigureBound::non_negative, kSteps),
      field<&Kind::step_time, &DurationSummary::p99_ns>("p99_ns").within(FigureBound::non_negative, kSteps),
      field<&Kind::step_time, &DurationSummary::total_ns>("total_ns").within(FigureBound::non_negative, kSteps),
      field<&Kind::gpu_busy_ns>("gpu_busy_ns").within(FigureBound::non_negative, "the GPU work its steps launched"),
      field<&Kind::gpu_time_ns>("gpu_time_ns").within(FigureBound::non_negative, "the GPU work its steps launched"),
      field<&Kind::top_kernels>("top_kernels"),
      field<&Kind::processes>("processes"),
      field<&Kind::gpu_time_share>("gpu_time_share")
          .within(FigureBound::fraction, "gpu_time_ns / the summed gpu_time_ns of the window's kinds"),
      field<&Kind::window_share>("window_share").within(FigureBound::fraction, "gpu_time_ns / window_gpu_time_ns"),
      field<&Kind::gpu_busy_share>("gpu_busy_share").within(FigureBound::fraction, "gpu_busy_ns / total_ns"),
      field<&Kind::tokens>("tokens"),
  };
};

template <>
struct RecordTable<StepKindReport> {
  using Window = StepKindReport;
  static constexpr std::string_view kSteps = "the step ranges on the timeline";
  static constexpr RecordField<Window> fields[] = {
      field<&Window::step_range>("step_range"),
      field<&Window::inferred>("inferred"),
      field<&Window::inference_check>("inference_check"),
      field<&Window::figures_withheld>("figures_withheld"),
      field<&Window::steps>("steps").within(FigureBound::non_negative, kSteps),
      field<&Window::steps_left_out>("steps_left_out").within(FigureBound::non_negative, kSteps),
      field<&Window::window_shortfall>("window_shortfall"),
      field<&Window::kinds>("kinds"),
      field<&Window::phases>("phases"),
      field<&Window::verdict>("verdict"),
      field<&Window::nested_set_aside>("nested_set_aside").within(FigureBound::non_negative, kSteps),
      field<&Window::unclosed_ranges>("unclosed_ranges").within(FigureBound::non_negative, kSteps),
      field<&Window::window_gpu_time_ns>("window_gpu_time_ns")
          .within(FigureBound::non_negative, "the GPU work of the window_basis"),
      field<&Window::window_basis>("window_basis"),
      field<&Window::zero_length_steps>("zero_length_steps").within(FigureBound::non_negative, kSteps),
      field<&Window::gpu_process>("gpu_process"),
      field<&Window::token_notes>("token_notes"),
  };
};

}  // namespace detail

std::string step_kinds_json(const std::vector<StepKindReport>& windows) {
  boost::json::object root;
  root["schema"] = detail::kStepKindsSchema;
  root["windows"] = detail::field_json(windows);
  return boost::json::serialize(root);
}

void check_step_kind_bounds(std::vector<StepKindReport>& windows, std::vector<std::string>& warnings,
                            std::string_view file) {
  for (std::size_t w = 0; w < windows.size(); ++w) {
    detail::FigureChecker check(warnings, "engine steps, window " + std::to_string(w + 1));
    detail::check_record_bounds(windows[w], check, file);
    for (auto& kind : windows[w].kinds) {
      detail::check_record_bounds(kind, check, file, {}, kind.name);
      if (kind.tokens) detail::check_record_bounds(*kind.tokens, check, file, {}, kind.name);
    }
  }
}

Result<StepKindsFile> read_step_kinds_json(std::string_view text, const std::string& source_name) {
  auto root = detail::parse_json_object(text, source_name);
  if (!root) return root.error();
  const std::string fix = "re-run `deep-profile analyze` on this run to write it again";
  StepKindsFile file;
  try {
    const auto schema = detail::json_string(*root, "schema", "schema");
    if (schema && *schema != detail::kStepKindsSchema)
      return make_error(ErrorCode::parse_error,
                        source_name + ": schema \"" + *schema + "\" is not " + std::string(detail::kStepKindsSchema),
                        fix, source_name);
    file.windows = detail::read_records<StepKindReport>(*root, "windows", "");
  } catch (const detail::JsonFieldError& field) {
    return make_error(ErrorCode::parse_error, source_name + ": field " + field.field + " has the wrong type or is missing",
                      fix, source_name);
  }
  check_step_kind_bounds(file.windows, file.warnings, source_name);
  return file;
}

}  // namespace llmprof
