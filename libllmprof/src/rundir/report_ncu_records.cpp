// report.json's ncu_coverage, mfu_workload and ncu_launches through their field tables (core/record_fields.hpp): the
// analysis writes each record by its table and the report reads it back by the same table (report_ncu_records.hpp).
// A figure added to one of these records is its member (report_model.hpp), one row here, its computation and its docs
// row (docs/report-json.md).
#include "rundir/report_ncu_records.hpp"

#include <string>
#include <string_view>
#include <utility>

#include "core/figure_checks.hpp"
#include "core/json_fields.hpp"
#include "core/json_values.hpp"
#include "core/record_fields.hpp"

namespace llmprof::detail {
namespace {

// A row for a member that maps names to numbers in file order (a launch's FLOP per precision), written as an
// object of numbers through the writer and reader the device's peaks use too (core/json_values.hpp,
// core/json_fields.hpp). The row stays here while this table is its one user.
template <auto Member>
constexpr auto number_map_field(std::string_view key) {
  using Record = typename MemberPointer<decltype(Member)>::RecordType;
  RecordField<Record> row;
  row.key = key;
  row.write = [](const Record& record) { return boost::json::value(json_number_object(record.*Member)); };
  row.read = [](const boost::json::object& object, std::string_view name, const std::string& where, Record& record) {
    record.*Member = json_number_map(object, name, where);
  };
  return row;
}

}  // namespace

// Field rows stay literal, one per figure, and each record has its own table: a table is read, not computed, so
// these tables look like those of the other record files by design (the duplicates tool pairs them by shape).
template <>
struct RecordTable<ReportNcuCoverage> {
  using Coverage = ReportNcuCoverage;
  static constexpr std::string_view kPlan = "ncu/plan.json's check";
  static constexpr RecordField<Coverage> fields[] = {
      field<&Coverage::stage>("stage"),
      field<&Coverage::measured>("measured").within(FigureBound::fraction, kPlan).required_key(),
      field<&Coverage::extrapolated>("extrapolated").within(FigureBound::fraction, kPlan).required_key(),
      // Both shares are of one stage's kernel time, so together they are a share too.
      computed_field<&Coverage::reached>("reached").within(FigureBound::fraction, "measured + extrapolated"),
  };
};

template <>
struct RecordTable<ReportStageMfu> {
  using Stage = ReportStageMfu;
  static constexpr RecordField<Stage> fields[] = {
      name_field<&Stage::stage>("stage"),
      field<&Stage::model_flop_per_s>("model_flop_per_s")
          .within(FigureBound::non_negative, "stage1/metrics.json FLOP/token x tokens/s"),
      field<&Stage::mfu>("mfu").within(FigureBound::fraction, "model_flop_per_s / peak_flop_per_s"),
      field<&Stage::mfu_ncu>("mfu_ncu")
          .within(FigureBound::fraction, "ncu FLOP / the stage's time / the device's peak"),
  };
};

template <>
struct RecordTable<ReportWorkloadMfu> {
  using Mfu = ReportWorkloadMfu;
  static constexpr RecordField<Mfu> fields[] = {
      field<&Mfu::dtype>("dtype"),
      field<&Mfu::peak_flop_per_s>("peak_flop_per_s").within(FigureBound::non_negative, "device.peak_flop_per_s"),
      field<&Mfu::stages>("stages"),
  };
};

// No bounds: a run holds thousands of launches, and the kernels[] rows carry the same figures with theirs.
template <>
struct RecordTable<ReportNcuLaunch> {
  using Launch = ReportNcuLaunch;
  static constexpr RecordField<Launch> fields[] = {
      field<&Launch::id>("id"),
      field<&Launch::kernel_name>("kernel_name"),
      field<&Launch::nvtx_stack>("nvtx_stack"),
      field<&Launch::duration_ns>("duration_ns"),
      field<&Launch::flop>("flop"),
      number_map_field<&Launch::flop_by_precision>("flop_by_precision"),
      field<&Launch::dram_bytes>("dram_bytes"),
      field<&Launch::achieved_flop_per_s>("achieved_flop_per_s"),
      field<&Launch::dram_bytes_per_s>("dram_bytes_per_s"),
      field<&Launch::arithmetic_intensity>("arithmetic_intensity"),
      field<&Launch::pct_peak_compute>("pct_peak_compute"),
      field<&Launch::pct_peak_dram>("pct_peak_dram"),
      field<&Launch::bound>("bound"),
      field<&Launch::dominant_precision>("dominant_precision"),
      field<&Launch::missing>("missing"),
  };
};

boost::json::value report_json(const std::optional<ReportNcuCoverage>& coverage) { return field_json(coverage); }
boost::json::value report_json(const std::optional<ReportWorkloadMfu>& mfu) { return field_json(mfu); }
boost::json::array report_json(const std::vector<ReportNcuLaunch>& launches) {
  boost::json::value array = field_json(launches);
  return std::move(array.as_array());
}

void withhold_impossible_figures(std::optional<ReportNcuCoverage>& coverage, std::vector<std::string>& warnings,
                                 std::string subject, std::string_view file) {
  if (!coverage) return;
  FigureChecker check(warnings, std::move(subject));
  check_record_bounds(*coverage, check, file);
  if (check.any_withheld()) coverage.reset();
}

void read_ncu_records(const boost::json::object& root, RunReportModel& model) {
  read_field(root, "ncu_coverage", "ncu_coverage", model.ncu_coverage);
  if (model.ncu_coverage)
    require_record_keys<ReportNcuCoverage>(root.at("ncu_coverage").as_object(), "ncu_coverage.");
  withhold_impossible_figures(model.ncu_coverage, model.warnings, "report.json ncu_coverage",
                              "analysis/report.json ncu_coverage");
  read_field(root, "mfu_workload", "mfu_workload", model.mfu_workload);
  if (model.mfu_workload) {
    FigureChecker check(model.warnings, "report.json mfu_workload");
    check_record_bounds(*model.mfu_workload, check, "analysis/report.json mfu_workload");
    for (auto& stage : model.mfu_workload->stages)
      check_record_bounds(stage, check, "analysis/report.json mfu_workload", {}, stage.stage);
  }
  model.ncu_launches = read_records<ReportNcuLaunch>(root, "ncu_launches", "");
}

}  // namespace llmprof::detail
