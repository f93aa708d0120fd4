// KernelSelection <-> JSON (see kernel_selection_json.hpp): one table per type, walked by the writer, both readers,
// the required-key check of selection.json and the bounds.
#include "rundir/kernel_selection_json.hpp"

#include <boost/json/serialize.hpp>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/record_fields.hpp"
#include "core/text.hpp"
#include "llmprof/kernel_name.hpp"

namespace llmprof::detail {

template <>
struct RecordTable<SelectedKernel> {
  using Kernel = SelectedKernel;
  static constexpr RecordField<Kernel> fields[] = {
      name_field<&Kernel::name>("name").required_key(),
      field<&Kernel::match_name>("match_name"),  // absent in the first files: the name itself (see complete())
      field<&Kernel::share>("share")
          .within(FigureBound::fraction, "the kernel's time / the stage's kernel time")
          .required_key(),
      field<&Kernel::total_time_ns>("total_time_ns")
          .within(FigureBound::non_negative, "nsys nvtx_kern_sum")
          .required_key(),
      field<&Kernel::instances>("instances").within(FigureBound::non_negative, "nsys nvtx_kern_sum").required_key(),
  };
};

template <>
struct RecordTable<CoverageStep> {
  static constexpr RecordField<CoverageStep> fields[] = {
      field<&CoverageStep::target>("target").within(FigureBound::fraction, "coverage_step_targets").required_key(),
      field<&CoverageStep::reachable>("reachable"),
      field<&CoverageStep::kernels>("kernels"),
      field<&CoverageStep::more_kernels>("more_kernels"),
  };
};

namespace {

using Selection = KernelSelection;

constexpr std::string_view kRuleTarget = "target";

bool top_n_rule(const Selection& selection) { return selection.rule() == SelectionRule::top_n; }
bool coverage_rule(const Selection& selection) { return selection.rule() == SelectionRule::coverage; }

// rule.kind: written from the rule the record holds (a coverage target or none); read, it must be a rule this
// version knows, and "coverage" must come with its target.
constexpr RecordField<Selection> rule_kind_row() {
  RecordField<Selection> row = computed_field<&Selection::rule>("kind");
  row.read = [](const boost::json::object& object, std::string_view key, const std::string& where, Selection&) {
    auto kind = SelectionRule::top_n;
    read_field(object, key, where, kind);
    if (kind == SelectionRule::coverage && !json_number(object, kRuleTarget, where))
      throw JsonFieldError{where.substr(0, where.size() - key.size()) + std::string(kRuleTarget)};
  };
  row.required = true;
  return row;
}

constexpr RecordField<Selection> kRuleRows[] = {
    rule_kind_row(),
    field<&Selection::n>("n").written_when(top_n_rule),
    field<&Selection::coverage_target>(kRuleTarget)
        .within(FigureBound::fraction, "run.kernel_coverage")
        .written_when(coverage_rule),
    field<&Selection::max_kernels>("max_kernels").written_when(coverage_rule),
    field<&Selection::capped>("capped").written_when(coverage_rule),
};
std::span<const RecordField<Selection>> rule_rows() { return kRuleRows; }

// collectives_left_out.names and .kernels: files written before the collectives' own figures were recorded list only
// their names (the TP run of examples/tp-run-h200x2), which read as kernels without times; kernels, where present,
// replace them with the full records.
constexpr RecordField<Selection> collective_names_row() {
  RecordField<Selection> row = computed_field<&Selection::collective_names>("names");
  row.read = [](const boost::json::object& object, std::string_view key, const std::string& where,
                Selection& selection) {
    selection.collectives_left_out.clear();
    for (auto& name : json_strings(object, key, where))
      selection.collectives_left_out.push_back(SelectedKernel{.name = name, .match_name = name});
  };
  return row;
}

constexpr RecordField<Selection> collective_kernels_row() {
  RecordField<Selection> row = field<&Selection::collectives_left_out>("kernels");
  row.read = [](const boost::json::object& object, std::string_view key, const std::string& where,
                Selection& selection) {
    const auto* value = object.if_contains(key);
    if (value != nullptr && !value->is_null()) read_field(object, key, where, selection.collectives_left_out);
  };
  return row;
}

constexpr RecordField<Selection> kCollectiveRows[] = {
    computed_field<&Selection::collective_count>("count"),
    field<&Selection::collective_time_ns>("total_time_ns").within(FigureBound::non_negative, "nsys nvtx_kern_sum"),
    field<&Selection::collective_share>("share").within(FigureBound::fraction,
                                                        "the collectives' time / the stage's kernel time"),
    collective_names_row(),
    collective_kernels_row(),
};
std::span<const RecordField<Selection>> collective_rows() { return kCollectiveRows; }

}  // namespace

template <>
struct RecordTable<KernelSelection> {
  static constexpr RecordField<Selection> fields[] = {
      name_field<&Selection::stage>("stage").required_key(),
      field<&Selection::domain>("domain"),
      field<&Selection::n>("n"),
      name_field<&Selection::kernel_regex>("kernel_regex").required_key(),
      field<&Selection::coverage>("coverage")
          .within(FigureBound::fraction, "the selected kernels' time / the stage's kernel time")
          .required_key(),
      field<&Selection::name_base>("name_base").required_key(),
      field<&Selection::launch_count>("launch_count").within(FigureBound::non_negative, "the selection's launches"),
      field<&Selection::source>("source"),
      field<&Selection::stage_kernel_time_ns>("stage_kernel_time_ns")
          .within(FigureBound::non_negative, "nsys nvtx_kern_sum")
          .required_key(),
      field<&Selection::stage_kernel_instances>("stage_kernel_instances")
          .within(FigureBound::non_negative, "nsys nvtx_kern_sum"),
      field<&Selection::stage_kernel_count>("stage_kernel_count"),
      field<&Selection::kernels>("kernels"),
      field<&Selection::also_matched>("also_matched"),
      group_field<Selection, &rule_rows>("rule"),
      field<&Selection::more_coverage>("more_coverage"),
      group_field<Selection, &collective_rows>("collectives_left_out"),
  };
};

namespace {

// What the tables leave to the record: a selection.json written before n was recorded (the H100 sample run's)
// counts the kernels it lists, and a kernel recorded before match_name existed matches by its name.
void complete(Selection& selection) {
  if (selection.n == 0) selection.n = selection.kernels.size();
  for (auto* kernels : {&selection.kernels, &selection.collectives_left_out})
    for (auto& kernel : *kernels)
      if (kernel.match_name.empty()) kernel.match_name = kernel.name;
}

Error unreadable(const std::string& where, const std::string& what) {
  return make_error(ErrorCode::parse_error, where + ": " + what,
                    "the select stage writes this file; run `deep-profile run --resume MAIN` from select, or delete "
                    "it to have the analysis select again",
                    where);
}

}  // namespace

boost::json::object kernel_selection_json(const KernelSelection& selection) { return write_record(selection); }

std::string kernel_selection_file(const KernelSelection& selection) {
  boost::json::object document = write_record(selection);
  document["schema"] = "llmprof.kernel_selection/1";
  return boost::json::serialize(document);
}

void withhold_impossible_figures(KernelSelection& selection, FigureChecker& check, std::string_view file) {
  check_record_bounds(selection, check, file);
  for (auto& kernel : selection.kernels) check_record_bounds(kernel, check, file, {}, kernel.name.substr(0, 80));
  for (auto& kernel : selection.collectives_left_out)
    check_record_bounds(kernel, check, file, {}, kernel.name.substr(0, 80));
  for (auto& step : selection.more_coverage) check_record_bounds(step, check, file, {}, "more_coverage");
}

Result<KernelSelection> kernel_selection_from_json(const boost::json::object& object, const std::string& where) {
  KernelSelection selection;
  try {
    require_record_keys<KernelSelection>(object, "");
    read_record(object, "", selection);
  } catch (const JsonFieldError& error) {
    return unreadable(where, "the field " + error.field + " is missing or of the wrong type");
  }
  complete(selection);
  if (!selection.kernels.empty() && selection.n != selection.kernels.size()) {
    return unreadable(where, "n = " + std::to_string(selection.n) + " does not count the " +
                                 std::to_string(selection.kernels.size()) + " kernels listed");
  }
  std::vector<std::string> broken;
  FigureChecker check(broken, "the kernel selection");
  withhold_impossible_figures(selection, check, where);
  if (check.any_withheld()) return unreadable(where, join(broken, "; "));
  return selection;
}

Result<KernelSelection> read_kernel_selection(const std::filesystem::path& file) {
  const auto text = read_file_text(file);
  if (!text) {
    return make_error(ErrorCode::not_found, "cannot read the kernel selection " + file.string(),
                      "the select stage writes it (nsys/selection.json)", file.string());
  }
  auto object = parse_json_object(*text, file);
  if (!object) return object.error();
  return kernel_selection_from_json(object.value(), file.string());
}

KernelSelection read_top_kernel_selection(const boost::json::object& object, const std::string& where) {
  KernelSelection selection;
  read_record(object, where, selection);
  complete(selection);
  return selection;
}

}  // namespace llmprof::detail
