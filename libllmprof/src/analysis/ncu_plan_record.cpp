// ncu/plan.json (NcuPlanFile, llmprof/ncu_plan.hpp): one field table per type writes the file and reads it back,
// and each row names its figure's bound, so a new plan figure is its member, one row here and its docs row
// (docs/report-json.md). The keys, their order and their nulls are the file's since schema llmprof.ncu_plan/1
// (scripts/gpu-verify.sh, scripts/compare_ncu_sets.py and tests/tools/ncu_plan_expected.py read them): the plan's
// figures sit flat at the top beside the check, and 0 in a figure the planner may not know is written null.
#include <boost/json/serialize.hpp>

#include "core/figure_checks.hpp"
#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/record_fields.hpp"
#include "llmprof/ncu_plan.hpp"

namespace llmprof {
namespace detail {
namespace {

constexpr std::string_view kNcuPlanSchema = "llmprof.ncu_plan/1";

// A figure where 0 stands for "not known" (a start-up the export did not record, a ratio without durations):
// written null, and null read back as 0.
template <auto Member, auto... Inner>
constexpr auto known_field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Member)>::RecordType;
  RecordField<Record> row = field<Member, Inner...>(key);
  row.write = [](const Record& record) -> boost::json::value {
    const double value = member_at<Member, Inner...>(record);
    if (value > 0) return value;
    return nullptr;
  };
  return row;
}

// A text where "" stands for "none" (a configuration measured, not extrapolated): written null.
template <auto Member>
constexpr auto text_or_null_field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Member)>::RecordType;
  RecordField<Record> row = field<Member>(key);
  row.write = [](const Record& record) -> boost::json::value {
    if ((record.*Member).empty()) return nullptr;
    return boost::json::value(record.*Member);
  };
  return row;
}

// A key written for the file's readers and not read back: a constant, or a figure the record derives from others.
template <class Record>
constexpr RecordField<Record> written_only(std::string_view key, boost::json::value (*write)(const Record&)) {
  RecordField<Record> row;
  row.key = key;
  row.write = write;
  row.read = [](const boost::json::object&, std::string_view, const std::string&, Record&) {};
  return row;
}

bool is_bounded(const NcuPlanFile& file) { return file.plan.max_seconds > 0; }
bool has_check(const NcuPlanFile& file) { return file.check.has_value(); }
bool has_measured_cost(const NcuPlanFile& file) { return file.measured_seconds_per_launch.has_value(); }

constexpr std::string_view kLaunchTable = "the stage's launch table (nsys)";
constexpr std::string_view kCostModel = "ncu.seconds_per_launch / seconds_per_pass and the passes";
constexpr std::string_view kNcuRows = "ncu's raw CSV against the plan";

}  // namespace

// Field rows stay literal, one per figure, and each record has its own table: a table is read, not computed, so
// these tables look like those of the other record files by design (the duplicates tool pairs them by shape).
template <>
struct RecordTable<NcuPlanPass> {
  using Pass = NcuPlanPass;
  static constexpr RecordField<Pass> fields[] = {
      field<&Pass::kernel_regex>("kernel_regex"),
      field<&Pass::by_mangled_name>("by_mangled_name"),
      field<&Pass::launch_skip>("launch_skip").within(FigureBound::non_negative, "the plan's --launch-skip"),
      field<&Pass::launch_count>("launch_count").within(FigureBound::non_negative, "the plan's passes"),
      field<&Pass::profiled_launches>("profiled_launches").within(FigureBound::non_negative, kLaunchTable),
      field<&Pass::replayed_launches>("replayed_launches").within(FigureBound::non_negative, kLaunchTable),
      field<&Pass::estimated_seconds>("estimated_seconds").within(FigureBound::non_negative, kCostModel),
      field<&Pass::kernels>("kernels"),
  };
};

template <>
struct RecordTable<PlannedConfig> {
  using Config = PlannedConfig;
  static constexpr RecordField<Config> fields[] = {
      name_field<&Config::kernel>("kernel"),
      field<&Config::config>("config"),
      field<&Config::grid>("grid"),
      field<&Config::block>("block"),
      field<&Config::group>("group"),
      field<&Config::group_configs>("group_configs").within(FigureBound::non_negative, kLaunchTable),
      field<&Config::first_launch>("first_launch").within(FigureBound::non_negative, kLaunchTable),
      field<&Config::late>("late"),
      written_only<Config>("measured", [](const Config& config) { return boost::json::value(!config.ordinals.empty()); }),
      text_or_null_field<&Config::extrapolated_from>("extrapolated_from"),
      field<&Config::stage_launches>("stage_launches").within(FigureBound::non_negative, kLaunchTable),
      field<&Config::stage_time_ns>("stage_time_ns").within(FigureBound::non_negative, kLaunchTable),
      field<&Config::ordinals>("ordinals"),
      field<&Config::pass>("pass"),
      known_field<&Config::planned_mean_ns>("planned_mean_ns").within(FigureBound::non_negative, kLaunchTable),
      written_only<Config>("duration_ratio",
                           [](const Config& config) -> boost::json::value {
                             const double ratio = planned_duration_ratio(config);
                             if (ratio > 0) return ratio;
                             return nullptr;
                           }),
      written_only<Config>("unrepresentative",
                           [](const Config& config) { return boost::json::value(is_unrepresentative(config)); }),
  };
};

template <>
struct RecordTable<NcuPlanCheck::Shortfall> {
  using Shortfall = NcuPlanCheck::Shortfall;
  static constexpr RecordField<Shortfall> fields[] = {
      field<&Shortfall::kernel>("kernel"),
      field<&Shortfall::config>("config"),
      field<&Shortfall::planned>("planned").within(FigureBound::non_negative, "the plan's ordinals"),
      field<&Shortfall::profiled>("profiled").within(FigureBound::non_negative, kNcuRows),
  };
};

template <>
struct RecordTable<NcuPlanCheck::PassTiming> {
  using Timing = NcuPlanCheck::PassTiming;
  static constexpr RecordField<Timing> fields[] = {
      field<&Timing::estimated_seconds>("estimated_seconds").within(FigureBound::non_negative, kCostModel),
      field<&Timing::measured_seconds>("measured_seconds").within(FigureBound::non_negative, "the pass's ncu run"),
      field<&Timing::first_launch_seconds>("first_launch_seconds")
          .within(FigureBound::non_negative, "ncu's first progress line of the pass"),
  };
};

template <>
struct RecordTable<NcuPlanCheck> {
  using Check = NcuPlanCheck;
  static constexpr RecordField<Check> fields[] = {
      field<&Check::rows>("rows").within(FigureBound::non_negative, kNcuRows),
      field<&Check::planned_launches>("planned_launches").within(FigureBound::non_negative, "the plan's ordinals"),
      field<&Check::profiled_planned_launches>("profiled_planned_launches").within(FigureBound::non_negative, kNcuRows),
      field<&Check::coverage_reached>("coverage_reached").within(FigureBound::fraction, kNcuRows),
      field<&Check::coverage_measured>("coverage_measured").within(FigureBound::fraction, kNcuRows).required_key(),
      field<&Check::coverage_extrapolated>("coverage_extrapolated")
          .within(FigureBound::fraction, kNcuRows)
          .required_key(),
      field<&Check::not_profiled>("not_profiled"),
      field<&Check::kernels_without_rows>("kernels_without_rows"),
      field<&Check::workload_endings>("workload_endings"),
      known_field<&Check::stage_seconds>("stage_seconds").within(FigureBound::non_negative, "the ncu stage's passes"),
      field<&Check::pass_timings>("pass_timings"),
  };
};

template <>
struct RecordTable<NcuPlanFile> {
  using File = NcuPlanFile;
  using Plan = NcuPlan;
  static constexpr RecordField<File> fields[] = {
      written_only<File>("schema", [](const File&) { return boost::json::value(kNcuPlanSchema); }),
      field<&File::plan, &Plan::stage>("stage").required_key(),
      field<&File::plan, &Plan::configs_known>("configs_known"),
      field<&File::plan, &Plan::planned_launches>("planned_launches").within(FigureBound::non_negative, kLaunchTable),
      field<&File::plan, &Plan::stage_kernel_time_ns>("stage_kernel_time_ns")
          .within(FigureBound::non_negative, kLaunchTable),
      field<&File::plan, &Plan::selection_coverage>("selection_coverage")
          .within(FigureBound::fraction, "the selection's kernel time / the stage's"),
      field<&File::plan, &Plan::expected_coverage>("expected_coverage").within(FigureBound::fraction, kLaunchTable),
      // The same figure under the name the check gives its measured part, for readers that compare the two.
      written_only<File>("coverage_measured",
                         [](const File& file) { return boost::json::value(file.plan.expected_coverage); }),
      field<&File::plan, &Plan::expected_coverage_extrapolated>("coverage_extrapolated")
          .within(FigureBound::fraction, kLaunchTable),
      known_field<&File::plan, &Plan::start_up_seconds>("start_up_seconds")
          .within(FigureBound::non_negative, "the nsys capture's ANALYSIS_DETAILS"),
      field<&File::plan, &Plan::pass_choice>("pass_choice"),
      field<&File::plan, &Plan::max_seconds>("max_seconds")
          .within(FigureBound::non_negative, "ncu.max_seconds")
          .written_when(is_bounded),
      field<&File::plan, &Plan::left_out_for_time>("left_out_for_time").written_when(is_bounded),
      field<&File::plan, &Plan::unbounded_estimated_seconds>("unbounded_estimated_seconds")
          .within(FigureBound::non_negative, kCostModel)
          .written_when(is_bounded),
      field<&File::plan, &Plan::unbounded_expected_coverage>("unbounded_expected_coverage")
          .within(FigureBound::fraction, kLaunchTable)
          .written_when(is_bounded),
      field<&File::plan, &Plan::stage_launches>("stage_launches").within(FigureBound::non_negative, kLaunchTable),
      field<&File::plan, &Plan::seconds_per_intercepted_launch>("seconds_per_intercepted_launch")
          .within(FigureBound::non_negative, "ncu.seconds_per_intercepted_launch"),
      field<&File::plan, &Plan::seconds_per_launch>("seconds_per_launch")
          .within(FigureBound::non_negative, "ncu.seconds_per_launch"),
      field<&File::plan, &Plan::seconds_per_launch_source>("seconds_per_launch_source"),
      field<&File::plan, &Plan::seconds_per_pass_source>("seconds_per_pass_source"),
      field<&File::plan, &Plan::seconds_per_pass>("seconds_per_pass")
          .within(FigureBound::non_negative, "ncu.seconds_per_pass"),
      field<&File::plan, &Plan::estimated_seconds>("estimated_seconds").within(FigureBound::non_negative, kCostModel),
      known_field<&File::plan, &Plan::extrapolated_time_ratio>("extrapolated_time_ratio")
          .within(FigureBound::non_negative, kLaunchTable),
      written_only<File>("representative_tolerance", [](const File&) { return boost::json::value(kRepresentativeTolerance); }),
      field<&File::plan, &Plan::passes>("passes"),
      field<&File::plan, &Plan::configs>("configs"),
      field<&File::plan, &Plan::kernels_without_launches>("kernels_without_launches"),
      field<&File::plan, &Plan::kernels_unreached>("kernels_unreached"),
      field<&File::check>("check").written_when(has_check),
      field<&File::measured_seconds_per_launch>("measured_seconds_per_launch")
          .within(FigureBound::non_negative, "the ncu stage's passes")
          .written_when(has_measured_cost),
  };
};

namespace {

// Each figure past its row's bound is withheld (0) with a warning naming the file. A check with a figure past its
// bound is left out whole: its coverage split would be a made-up one.
void check_ncu_plan_bounds(NcuPlanFile& file, const std::string& source_name) {
  FigureChecker plan_check(file.warnings, source_name);
  check_record_bounds(file, plan_check, source_name);
  for (std::size_t i = 0; i < file.plan.passes.size(); ++i)
    check_record_bounds(file.plan.passes[i], plan_check, source_name + " passes[" + std::to_string(i) + "]");
  for (std::size_t i = 0; i < file.plan.configs.size(); ++i)
    check_record_bounds(file.plan.configs[i], plan_check, source_name + " configs[" + std::to_string(i) + "]");
  if (!file.check) return;
  const std::size_t before = file.warnings.size();
  FigureChecker check_check(file.warnings, source_name + " check");
  check_record_bounds(*file.check, check_check, source_name + " check");
  for (auto& shortfall : file.check->not_profiled) check_record_bounds(shortfall, check_check, source_name);
  for (auto& timing : file.check->pass_timings) check_record_bounds(timing, check_check, source_name);
  if (file.warnings.size() == before) return;
  file.check.reset();
  file.warnings.push_back(source_name + ": the check is left out, a figure of it is past its bound");
}

}  // namespace
}  // namespace detail

std::string ncu_plan_json(const NcuPlan& plan, const std::optional<NcuPlanCheck>& check,
                          std::optional<double> measured_seconds_per_launch) {
  return boost::json::serialize(detail::write_record(NcuPlanFile{plan, check, measured_seconds_per_launch, {}}));
}

Result<NcuPlanFile> read_ncu_plan_json(std::string_view text, const std::string& source_name) {
  auto root = detail::parse_json_object(text, source_name);
  if (!root) return root.error();
  const std::string fix = "run the ncu stage again (`deep-profile run`) to write the plan again";
  NcuPlanFile file;
  try {
    if (const auto schema = detail::json_string(*root, "schema", "schema"); schema && *schema != detail::kNcuPlanSchema)
      return make_error(ErrorCode::parse_error,
                        source_name + ": schema \"" + *schema + "\" is not " + std::string(detail::kNcuPlanSchema), fix,
                        source_name);
    detail::require_record_keys<NcuPlanFile>(*root, "");
    // The check is an optional record: its own required keys (the coverage split) are asked of it here.
    if (const auto* check = detail::json_object_field(*root, "check", "check"))
      detail::require_record_keys<NcuPlanCheck>(*check, "check.");
    detail::read_record(*root, "", file);
    if (file.plan.stage.empty()) throw detail::JsonFieldError{"stage"};
  } catch (const detail::JsonFieldError& field) {
    return make_error(ErrorCode::parse_error,
                      source_name + ": field " + field.field + " has the wrong type or is missing", fix, source_name);
  }
  detail::check_ncu_plan_bounds(file, source_name);
  return file;
}

Result<NcuPlanFile> read_ncu_plan_file(const std::filesystem::path& plan_json) {
  const auto text = detail::read_file_text(plan_json);
  if (!text)
    return make_error(ErrorCode::io_error, "cannot read " + plan_json.string(),
                      "check the run directory's ncu/ folder", plan_json.string());
  return read_ncu_plan_json(*text, plan_json.string());
}

}  // namespace llmprof
