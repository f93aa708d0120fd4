// analysis/report.json's records <-> JSON: one writer and one reader per record of report_model.hpp,
// both driven by the same field table, so the analysis (which writes) and the report and compare
// layers (which read) cannot disagree on a field's name, type or null.
#pragma once

#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "llmprof/report_model.hpp"

namespace llmprof::detail {

// The record as report.json holds it: fields in table order, a figure not computed as null.
boost::json::object report_json(const ReportDevice& device);
boost::json::object report_json(const ReportStage& stage);
boost::json::object report_json(const ReportKernel& kernel);
boost::json::object report_json(const ReportBareRun& run);
boost::json::object report_json(const ReportRangeTiming& range);
boost::json::object report_json(const ReportNodeCapture& capture);

// The record read back. Unknown fields are ignored; an absent or null field keeps the record's
// default; a known field of the wrong type, or an empty required name, throws JsonFieldError naming
// `where` + the field ("stages[2].wall_ns").
void read_report_json(const boost::json::object& object, const std::string& where, ReportDevice& device);
void read_report_json(const boost::json::object& object, const std::string& where, ReportStage& stage);
void read_report_json(const boost::json::object& object, const std::string& where, ReportKernel& kernel);
void read_report_json(const boost::json::object& object, const std::string& where, ReportBareRun& run);
void read_report_json(const boost::json::object& object, const std::string& where, ReportRangeTiming& range);
void read_report_json(const boost::json::object& object, const std::string& where, ReportNodeCapture& capture);

// analysis/stages.csv and analysis/kernels.csv from the same tables: one column per field of the record, named
// and ordered as in report.json (a list field such as kernels[].stages joined with ';', null an empty cell, numbers
// to ten significant digits). A field added to a table is a column here too.
std::string report_csv(const std::vector<ReportStage>& stages);
std::string report_csv(const std::vector<ReportKernel>& kernels);

}  // namespace llmprof::detail
