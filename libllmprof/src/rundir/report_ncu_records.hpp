// report.json's ncu_coverage, mfu_workload and ncu_launches (report_model.hpp's ReportNcuCoverage, ReportWorkloadMfu,
// ReportNcuLaunch) <-> JSON: one field table per record (report_ncu_records.cpp) writes the analysis's keys and
// reads them back into the report model, so the two cannot disagree on a key's name, type or null.
#pragma once

#include <optional>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "llmprof/report_model.hpp"

namespace llmprof::detail {

// The record as report.json holds it: keys in table order, a figure not computed as null, an absent record as null.
boost::json::value report_json(const std::optional<ReportNcuCoverage>& coverage);
boost::json::value report_json(const std::optional<ReportWorkloadMfu>& mfu);
boost::json::array report_json(const std::vector<ReportNcuLaunch>& launches);

// report.json's "ncu_coverage", "mfu_workload" and "ncu_launches" into `model`, by the same tables. Absent or null:
// nullopt (or no launches). A key of the wrong type, or an ncu_coverage without its measured and extrapolated
// shares, throws JsonFieldError naming it ("ncu_launches[3].flop"). A figure outside its row's bound is withheld with
// a warning in model.warnings; an ncu_coverage share outside 0..1 drops the record, as the analysis does.
void read_ncu_records(const boost::json::object& root, RunReportModel& model);

}  // namespace llmprof::detail
