// Pieces of the HTML pages (run report, comparison, sweep index): the stylesheet, the sortable-table
// script, and the table sections of the run report.
#pragma once

#include <optional>
#include <sstream>
#include <string>

#include "llmprof/report.hpp"

namespace llmprof::detail {

const char* report_css();
// Click a <th> of a table.sortable to sort by that column (numeric when cells carry data-sort).
const char* sortable_table_script();
// <!DOCTYPE html> ... with the stylesheet, a header with `title` and `subtitle`, `body`, the script.
std::string html_page(const std::string& title, const std::string& subtitle, const std::string& body);

// data-sort attribute for a numeric cell ("" when absent, so it sorts first).
std::string sort_key(const std::optional<double>& value);

void write_stage_table_html(const RunReportModel& model, std::ostringstream& out);
void write_kernel_table_html(const RunReportModel& model, std::size_t max_rows, std::ostringstream& out);
void write_problems_html(const RunReportModel& model, std::ostringstream& out);
void write_reproduce_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
