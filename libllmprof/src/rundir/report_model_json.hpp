// analysis/report.json's records <-> JSON: one writer and one reader per record of report_model.hpp,
// both driven by the same field table, so the analysis (which writes) and the report and compare
// layers (which read) cannot disagree on a field's name, type or null.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "core/figure_checks.hpp"
#include "llmprof/report_model.hpp"

namespace llmprof::detail {

// The record as report.json holds it: fields in table order, a figure not computed as null.
boost::json::object report_json(const ReportDevice& device);
boost::json::object report_json(const ReportStage& stage);
boost::json::object report_json(const ReportKernel& kernel);
boost::json::object report_json(const ReportBareRun& run);
boost::json::object report_json(const ReportRangeTiming& range);
boost::json::object report_json(const ReportNodeCapture& capture);
boost::json::object report_json(const RunVerdict& verdict);

// The record read back. Unknown fields are ignored; an absent or null field keeps the record's
// default; a known field of the wrong type, or an empty required name, throws JsonFieldError naming
// `where` + the field ("stages[2].wall_ns"). ReportBareRun's keys are all required: absent or null throws too.
void read_report_json(const boost::json::object& object, const std::string& where, ReportDevice& device);
void read_report_json(const boost::json::object& object, const std::string& where, ReportStage& stage);
void read_report_json(const boost::json::object& object, const std::string& where, ReportKernel& kernel);
void read_report_json(const boost::json::object& object, const std::string& where, ReportBareRun& run);
void read_report_json(const boost::json::object& object, const std::string& where, ReportRangeTiming& range);
void read_report_json(const boost::json::object& object, const std::string& where, ReportNodeCapture& capture);
void read_report_json(const boost::json::object& object, const std::string& where, RunVerdict& verdict);

// Withholds each figure of the record that breaks the bound its table row names (a fraction, a percentage of peak,
// a finite amount >= 0), with a warning from `check` naming the figure and what it came from: the row's inputs
// where the analysis makes the figures (`file` empty), or `file` ("analysis/report.json stages[2]") where the
// report reads them back. A stage's top_kernels' shares too. `only`: just the rows of these keys, for inputs
// checked before the figures computed from them.
void withhold_impossible_figures(ReportStage& stage, FigureChecker& check, std::string_view file = {},
                                 std::span<const std::string_view> only = {});
void withhold_impossible_figures(ReportKernel& kernel, FigureChecker& check, std::string_view file = {});
// The verdict's step figures (times >= 0) and its levers' gains (> 1); a gain withheld here gets a reason in its
// lever's `withheld`, so the lever's row never reads an empty reason.
void withhold_impossible_figures(RunVerdict& verdict, FigureChecker& check, std::string_view file = {});

// analysis/stages.csv and analysis/kernels.csv from the same tables: one column per field of the record, named
// and ordered as in report.json (a list field such as kernels[].stages joined with ';', null an empty cell, numbers
// to ten significant digits). A field added to a table is a column here too.
std::string report_csv(const std::vector<ReportStage>& stages);
std::string report_csv(const std::vector<ReportKernel>& kernels);

}  // namespace llmprof::detail
