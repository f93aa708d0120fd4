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
// The skeleton every page shares: <!DOCTYPE html>, <title>, the stylesheet, then `header_html`,
// <main>`body_html`</main>, <footer>`footer_html`</footer> and the sortable-table script.
struct HtmlPageParts {
  std::string title;        // plain text, escaped here
  std::string header_html;  // markup, e.g. <header class="top">...</header>
  std::string body_html;
  std::string footer_html;
};
std::string html_document(const HtmlPageParts& parts);
// A page with the plain header (`title`, `subtitle`) and footer: the comparison and sweep pages.
std::string html_page(const std::string& title, const std::string& subtitle, const std::string& body);

// data-sort attribute for a numeric cell ("" when absent, so it sorts first).
std::string sort_key(const std::optional<double>& value);

void write_stage_table_html(const RunReportModel& model, std::ostringstream& out);
void write_kernel_table_html(const RunReportModel& model, std::size_t max_rows, std::ostringstream& out);
void write_problems_html(const RunReportModel& model, std::ostringstream& out);
void write_reproduce_html(const RunReportModel& model, std::ostringstream& out);

}  // namespace llmprof::detail
