// The report's sections: titles, anchors, whether a run has them, and a verdict's class (see report_levers.hpp).
#include "report/report_levers.hpp"

namespace llmprof::detail {

std::string section_title(ReportSection section) {
  switch (section) {
    case ReportSection::bare_run:
      return "Bare run";
    case ReportSection::stages:
      return "Stages";
    case ReportSection::stage_instances:
      return "Stage instances";
    case ReportSection::ranks:
      return "Across ranks";
  }
  return "";
}

std::string markdown_anchor(ReportSection section) {
  switch (section) {
    case ReportSection::bare_run:
      return "#bare-run-stage-1-no-profiler";
    case ReportSection::stages:
      return "#stages";
    case ReportSection::stage_instances:
      return "#stage-instances-nsys-sqlite-timeline";
    case ReportSection::ranks:
      return "#across-ranks";
  }
  return "";
}

std::string html_anchor(ReportSection section) {
  switch (section) {
    case ReportSection::bare_run:
      return "#bare-run";
    case ReportSection::stages:
      return "#stages";
    case ReportSection::stage_instances:
      return "#stage-instances";
    case ReportSection::ranks:
      return "#ranks";
  }
  return "";
}

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

std::string verdict_class(const std::string& verdict) {
  const auto colon = verdict.find(':');
  return colon == std::string::npos ? verdict : verdict.substr(0, colon);
}

}  // namespace llmprof::detail
