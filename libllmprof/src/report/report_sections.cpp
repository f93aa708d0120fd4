// The report's sections: titles, anchors, whether a run has them (see report_sections.hpp).
#include <array>

#include "report/report_sections.hpp"

namespace llmprof::detail {
namespace {

// One row per section, in the enum's order: the Markdown anchor is the one a renderer derives from the heading.
struct SectionRow {
  ReportSection section;
  const char* title;
  const char* markdown_anchor;
  const char* html_anchor;
};

constexpr std::array<SectionRow, 4> kSections = {{
    {ReportSection::bare_run, "Bare run", "#bare-run-stage-1-no-profiler", "#bare-run"},
    {ReportSection::stages, "Stages", "#stages", "#stages"},
    {ReportSection::stage_instances, "Stage instances", "#stage-instances-nsys-sqlite-timeline", "#stage-instances"},
    {ReportSection::ranks, "Across ranks", "#across-ranks", "#ranks"},
}};

const SectionRow& row_of(ReportSection section) {
  for (const auto& row : kSections)
    if (row.section == section) return row;
  return kSections.front();  // unreachable: every enumerator has a row
}

}  // namespace

std::string section_title(ReportSection section) { return row_of(section).title; }
std::string markdown_anchor(ReportSection section) { return row_of(section).markdown_anchor; }
std::string html_anchor(ReportSection section) { return row_of(section).html_anchor; }

bool has_section(const RunReportModel& model, ReportSection section) {
  switch (section) {
    case ReportSection::bare_run:
      return model.bare_run.has_value();
    case ReportSection::stages:
      return !model.stages.empty();
    case ReportSection::stage_instances:
      return model.timeline.has_value();
    case ReportSection::ranks:
      return !model.cross_rank_markdown.empty();
  }
  return false;
}

}  // namespace llmprof::detail
