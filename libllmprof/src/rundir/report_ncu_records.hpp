// report.json's ncu_coverage, mfu_workload and ncu_launches (report_model.hpp's ReportNcuCoverage, ReportWorkloadMfu,
// ReportNcuLaunch) <-> JSON: one field table per record (report_ncu_records.cpp) writes the analysis's keys and
// reads them back into the report model, so the two cannot disagree on a key's name, type or null.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

// ncu_coverage's rule, the rows of its table: each share, and their sum (`reached`), lies in 0..1. A coverage that
// breaks it is dropped (nullopt), with a warning in `warnings` that starts with `subject` and names the figure and
// where it came from (`file`; "": the row's inputs). The analysis applies it to the coverage ncu/plan.json's check
// gives, and the report to the one report.json holds, so neither can state a coverage the other would refuse.
void withhold_impossible_figures(std::optional<ReportNcuCoverage>& coverage, std::vector<std::string>& warnings,
                                 std::string subject, std::string_view file = {});

// report.json's "ncu_coverage", "mfu_workload" and "ncu_launches" into `model`, by the same tables. Absent or null:
// nullopt (or no launches). A key of the wrong type, or an ncu_coverage without its measured and extrapolated
// shares, throws JsonFieldError naming it ("ncu_launches[3].flop"). A figure outside its row's bound is withheld with
// a warning in model.warnings; an ncu_coverage that breaks its rule is dropped (withhold_impossible_figures above).
void read_ncu_records(const boost::json::object& root, RunReportModel& model);

}  // namespace llmprof::detail
