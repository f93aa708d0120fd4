// The Verdict section of both reports (see report_verdict.hpp).
#include "report/report_verdict.hpp"

#include <sstream>

#include "core/format.hpp"
#include "report/report_capture_scope.hpp"
#include "report/report_ranges.hpp"
#include "report/report_sections.hpp"
#include "report/report_stage_bytes.hpp"
#include "report/report_step_unit.hpp"
#include "report/report_view.hpp"

namespace llmprof::detail {
namespace {

// One row of a stage's levers: the gain (or the reason it is withheld) and the figures it comes from.
struct LeverCells {
  std::string gain;
  std::string figures;
};

LeverCells lever_cells(const VerdictLever& lever) {
  if (lever.speedup)
    return {format_factor(*lever.speedup) + (lever.after.empty() ? "" : " once " + lever.after + " is gone"),
            lever.figure};
  return {kNotComputed, "withheld: " + lever.withheld + (lever.figure.empty() ? "" : "; " + lever.figure)};
}

// The caption names the stage the stored record names; a record naming a stage report.json does not hold (a hand-edited
// file) still reads, by the name it gives.
std::string levers_caption(const RunReportModel& model, const VerdictStage& levers) {
  const ReportStage* stage = stage_named(model, levers.stage);
  const std::string noun = stage ? stage->step_noun() : "step";
  const std::string unit = stage ? step_definition(model, *stage) : "";
  return std::string("Levers for ") + (levers.main ? "the main stage " : "the step kind ") +
         (stage ? stage->name : levers.stage) + ", by measured gain (the " + noun + " now over the " + noun +
         " with the lever pulled" +
         (levers.step_ns ? ": " + format_duration_ns(*levers.step_ns) + " per " + noun + " " +
                               (levers.step_from_bare_run ? "in the bare run" : "under the profiler")
                         : std::string()) +
         ")" + (unit.empty() ? "" : ". " + unit.substr(0, unit.size() - 1));
}

// The verdict and the one figure behind it: the stage's verdict up to its first clause's end ("host/launch-bound:
// GPU busy 22% of the stage"), linked to the section with its figures. The rest of the verdict (GPU idle time by
// cause, graph replays, what to cut, bytes against the model's, the MFU gap) is the table under the list.
std::string verdict_headline(const ReportStage& stage) {
  return normalise_percentages(std::string_view(stage.verdict).substr(0, stage.verdict.find("; ")));
}

std::string verdict_rest(const ReportStage& stage) {
  const auto cut = stage.verdict.find("; ");
  return cut == std::string::npos ? std::string()
                                  : normalise_percentages(std::string_view(stage.verdict).substr(cut + 2));
}

bool any_verdict_rest(const std::vector<VerdictGroup>& groups) {
  for (const auto& group : groups)
    if (!verdict_rest(*group.head).empty()) return true;
  return false;
}

constexpr const char* kRestSummary = "The rest of each verdict";
constexpr const char* kRestHeader = "The rest of its verdict";

ReportSection verdict_section(const RunReportModel& model, const ReportStage& stage) {
  return timeline_stage_of(model, stage) ? ReportSection::stage_instances : ReportSection::stages;
}

// The folded ranges' own figures, from the timeline: GPU busy, what the GPU idle time was spent on, the
// GPU work of an instance against the instance, and the measured bytes.
struct FoldedRow {
  std::string range, busy, launching, sync, nothing, gpu_work, dram, mbu;
};

FoldedRow folded_row(const RunReportModel& model, const ReportStage& stage) {
  FoldedRow row{stage_label(stage), format_fraction_percent(stage.gpu_busy_fraction), kNotComputed, kNotComputed,
                kNotComputed, kNotComputed, dram_per_step_cell(stage), mbu_cell(stage)};
  if (const TimelineStage* timed = timeline_stage_of(model, stage)) {
    if (const double idle = static_cast<double>(timed->idle.total_ns()); idle > 0) {
      row.launching = format_fraction_percent(static_cast<double>(timed->idle.host_launching_ns) / idle);
      row.sync = format_fraction_percent(static_cast<double>(timed->idle.host_in_sync_ns) / idle);
      row.nothing = format_fraction_percent(static_cast<double>(timed->idle.nothing_launched_ns) / idle);
    }
    if (timed->headroom)
      row.gpu_work = format_duration_ns(timed->headroom->predicted_step_ns) + " of " +
                     format_duration_ns(timed->headroom->current_step_ns);
  }
  return row;
}

constexpr const char* kFoldedHeader[] = {"Range",           "GPU busy",       "GPU idle: host launching",
                                         "in a synchronise", "nothing launched", "GPU work per instance",
                                         "DRAM per step",   "MBU"};

std::string folded_names(const VerdictGroup& group) {
  std::string names;
  for (const auto* stage : group.folded) names += (names.empty() ? "" : ", ") + stage->name;
  return names;
}

// A link to `section` in each format: "[Stage instances](#stage-instances-...)", "<a href=...>Stage instances</a>".
std::string section_link_markdown(ReportSection section) {
  return "[" + section_title(section) + "](" + markdown_anchor(section) + ")";
}
std::string section_link_html(ReportSection section) {
  return "<a href=\"" + html_anchor(section) + "\">" + section_title(section) + "</a>";
}

// A lever's Section cell: the link to the section its figures come from, where the report has that section.
std::string lever_section_cell(const RunReportModel& model, const VerdictLever& lever,
                               std::string (*link)(ReportSection)) {
  return has_section(model, lever.section) ? link(lever.section) : std::string(kNotComputed);
}

void write_levers_markdown(const RunReportModel& model, const VerdictStage& levers, std::ostream& out) {
  out << markdown_cell(levers_caption(model, levers))
      << ":\n\n| Lever | Gain | Measured | Section |\n|---|--:|---|---|\n";
  for (const auto& lever : levers.levers) {
    const auto cells = lever_cells(lever);
    out << "| " << lever.name << " | " << markdown_cell(cells.gain) << " | " << markdown_cell(cells.figures) << " | "
        << lever_section_cell(model, lever, section_link_markdown) << " |\n";
  }
  out << "\n";
}

void write_stage_verdicts_markdown(const RunReportModel& model, std::ostream& out) {
  const auto groups = fold_stage_verdicts(model);
  if (groups.empty()) {
    out << "No stage verdicts were computed (report.json has none).\n\n";
    return;
  }
  out << "Every stage's verdict; nested ranges that share their parent's verdict are folded under it:\n\n";
  for (const auto& group : groups) {
    const ReportSection section = verdict_section(model, *group.head);
    out << "- **" << markdown_cell(stage_label(*group.head)) << "**: " << markdown_cell(verdict_headline(*group.head))
        << " (" << section_link_markdown(section) << ")\n";
    if (!group.folded.empty())
      out << "  - **" << markdown_cell(folded_names(group)) << "**: the same ("
          << markdown_cell(verdict_class(group.head->verdict)) << "); "
          << (group.folded.size() == 1 ? "its own figures are" : "their own figures are") << " in the table below\n";
  }
  out << "\n";
  if (any_verdict_rest(groups)) {
    out << "<details><summary>" << kRestSummary << "</summary>\n\n| Stage | " << kRestHeader << " |\n|---|---|\n";
    for (const auto& group : groups)
      if (const std::string rest = verdict_rest(*group.head); !rest.empty())
        out << "| " << markdown_cell(stage_label(*group.head)) << " | " << markdown_cell(rest) << " |\n";
    out << "\n</details>\n\n";
  }
  for (const auto& group : groups) {
    if (group.folded.empty()) continue;
    out << "<details><summary>Ranges folded under " << markdown_cell(group.head->name)
        << ": their own figures</summary>\n\n|";
    for (const char* title : kFoldedHeader) out << " " << title << " |";
    out << "\n|---|--:|--:|--:|--:|--:|--:|--:|\n";
    for (const auto* stage : group.folded) {
      const auto row = folded_row(model, *stage);
      out << "| " << markdown_cell(row.range) << " | " << row.busy << " | " << row.launching << " | " << row.sync
          << " | " << row.nothing << " | " << row.gpu_work << " | " << row.dram << " | " << row.mbu << " |\n";
    }
    out << "\nGPU idle shares are of each range's GPU idle time; GPU work per instance is the steady-state GPU busy "
           "time of an instance against the instance's time (Stage instances).\n\n</details>\n\n";
  }
}

void write_levers_html(const RunReportModel& model, const VerdictStage& levers, std::ostream& out) {
  out << "<table class=\"levers\"><caption>" << html_escape(levers_caption(model, levers))
      << "</caption><thead><tr><th>Lever</th><th class=\"num\">Gain</th><th>Measured</th><th>Section</th></tr>"
         "</thead><tbody>";
  for (const auto& lever : levers.levers) {
    const auto cells = lever_cells(lever);
    out << "<tr" << (lever.speedup ? "" : " class=\"withheld\"") << "><td>" << html_escape(lever.name)
        << "</td><td class=\"num\">" << html_escape(cells.gain) << "</td><td>" << html_escape(cells.figures)
        << "</td><td>" << lever_section_cell(model, lever, section_link_html) << "</td></tr>";
  }
  out << "</tbody></table>";
}

void write_tiles_html(const RunReportModel& model, std::ostream& out) {
  out << "<div class=\"tiles\">";
  for (const auto* stage : leaf_stages(model)) {
    const bool starved = stage->gpu_busy_fraction && *stage->gpu_busy_fraction < 0.5;
    out << "<div class=\"tile" << (starved ? " warn" : "") << "\"><div class=\"tile-stage\">"
        << html_escape(stage->name) << "</div><div class=\"tile-value\">"
        << format_fraction_percent(stage->gpu_busy_fraction)
        << "</div><div class=\"tile-caption\">GPU busy</div><div class=\"tile-sub\">MFU "
        << format_fraction_percent(stage->mfu) << " profiled · " << format_fraction_percent(stage->mfu_workload)
        << " workload</div>";
    // A memory-bound stage is judged by bandwidth: its MBU and how far a step is from the DRAM limit.
    if (const std::string mbu = memory_bound_mbu_line(*stage); !mbu.empty())
      out << "<div class=\"tile-sub\">" << html_escape(mbu) << "</div>";
    if (const std::string headroom = memory_bound_headroom_line(*stage); !headroom.empty())
      out << "<div class=\"tile-sub\">" << html_escape(headroom) << "</div>";
    out << "</div>";
  }
  out << "</div>";
}

// Parallel to write_stage_verdicts_markdown, each format with its own markup, so the two read alike (the duplicates
// tool pairs them by shape).
void write_stage_verdicts_html(const RunReportModel& model, std::ostream& out) {
  const auto groups = fold_stage_verdicts(model);
  out << "<ul class=\"verdicts\">";
  for (const auto& group : groups) {
    const auto& head = *group.head;
    const bool starved = head.gpu_busy_fraction && *head.gpu_busy_fraction < 0.5;
    const ReportSection section = verdict_section(model, head);
    out << "<li class=\"verdict" << (starved ? " warn" : "") << "\"><strong>" << html_escape(stage_label(head))
        << "</strong> " << html_escape(verdict_headline(head)) << " (" << section_link_html(section) << ")";
    if (!group.folded.empty())
      out << "<div class=\"folded\"><strong>" << html_escape(folded_names(group)) << "</strong>: the same ("
          << html_escape(verdict_class(head.verdict)) << "); "
          << (group.folded.size() == 1 ? "its own figures" : "their own figures") << " below</div>";
    out << "</li>";
  }
  out << "</ul>";
  if (any_verdict_rest(groups)) {
    out << "<details class=\"folded\"><summary>" << kRestSummary
        << "</summary><div class=\"table-wrap\"><table "
           "class=\"folded\"><thead><tr><th>Stage</th><th>"
        << kRestHeader << "</th></tr></thead><tbody>";
    for (const auto& group : groups)
      if (const std::string rest = verdict_rest(*group.head); !rest.empty())
        out << "<tr><td>" << html_escape(stage_label(*group.head)) << "</td><td>" << html_escape(rest) << "</td></tr>";
    out << "</tbody></table></div></details>";
  }
  for (const auto& group : groups) {
    if (group.folded.empty()) continue;
    out << "<details class=\"folded\"><summary>Ranges folded under " << html_escape(group.head->name)
        << ": their own figures</summary><div class=\"table-wrap\"><table class=\"folded\"><caption>GPU idle "
           "shares are of each range's GPU idle time; GPU work per instance is the steady-state GPU busy time of an "
           "instance against the instance's time (Stage instances)</caption><thead><tr>";
    for (const char* title : kFoldedHeader) out << "<th>" << title << "</th>";
    out << "</tr></thead><tbody>";
    for (const auto* stage : group.folded) {
      const auto row = folded_row(model, *stage);
      out << "<tr><td>" << html_escape(row.range) << "</td>";
      for (const auto* cell : {&row.busy, &row.launching, &row.sync, &row.nothing, &row.gpu_work, &row.dram, &row.mbu})
        out << "<td class=\"num\">" << html_escape(*cell) << "</td>";
      out << "</tr>";
    }
    out << "</tbody></table></div></details>";
  }
}

}  // namespace

std::string verdict_not_stored() {
  return "No verdict stored: this analysis/report.json was written before the analysis stored its headline and "
         "levers; run `deep-profile analyze` on this run directory to compute them.";
}

std::vector<VerdictGroup> fold_stage_verdicts(const RunReportModel& model) {
  auto parent_of = [&](const ReportStage& stage) -> const ReportStage* {
    if (!stage.parent || stage.parent->empty()) return nullptr;
    for (const auto& other : model.stages)
      if (&other != &stage && (other.qualified_name() == *stage.parent || other.name == *stage.parent) &&
          other.domain == stage.domain)
        return &other;
    return nullptr;
  };
  // A stage's head: the furthest ancestor reached through parents of the same verdict class; the main stage,
  // the one the headline speaks of, always heads its own group.
  const ReportStage* main = main_stage(model);
  auto head_of = [&](const ReportStage& stage) {
    const ReportStage* head = &stage;
    const std::string kind = verdict_class(stage.verdict);
    for (const ReportStage* up = parent_of(stage);
         head != main && up != nullptr && up != &stage && verdict_class(up->verdict) == kind; up = parent_of(*up)) {
      head = up;
      if (head->level <= 0) break;
    }
    return head;
  };
  std::vector<VerdictGroup> groups;
  for (const auto& stage : model.stages) {
    if (stage.verdict.empty()) continue;
    const ReportStage* head = head_of(stage);
    auto found = std::find_if(groups.begin(), groups.end(), [&](const VerdictGroup& g) { return g.head == head; });
    if (found == groups.end()) {
      groups.push_back({head, {}});
      found = groups.end() - 1;
    }
    if (head != &stage) found->folded.push_back(&stage);
  }
  return groups;
}

void write_headline_markdown(const RunReportModel& model, std::ostream& out) {
  if (model.nvidia_gpu_present == false) return;
  if (!model.verdict)
    out << "*" << markdown_cell(verdict_not_stored()) << "*\n\n";
  else if (!model.verdict->headline.empty())
    out << "**" << markdown_cell(model.verdict->headline) << "**\n\n";
}

void write_verdict_markdown(const RunReportModel& model, std::ostream& out) {
  out << "\n## Verdict\n\n";
  if (model.nvidia_gpu_present == false) {
    out << "**" << no_gpu_statement() << "**\n\n";
    return;
  }
  if (model.verdict)
    for (const auto& levers : model.verdict->stages) write_levers_markdown(model, levers, out);
  write_stage_verdicts_markdown(model, out);
}

void write_verdict_html(const RunReportModel& model, std::ostream& out) {
  out << "<section class=\"card\" id=\"verdict\"><h2>Verdict</h2>";
  if (model.nvidia_gpu_present == false) {
    out << "<p class=\"lead\"><strong>" << html_escape(no_gpu_statement()) << "</strong></p></section>\n";
    return;
  }
  if (!model.verdict) {
    out << "<p class=\"note\" id=\"headline\">" << html_escape(verdict_not_stored()) << "</p>";
  } else {
    if (!model.verdict->headline.empty())
      out << "<p class=\"headline\" id=\"headline\">" << html_escape(model.verdict->headline) << "</p>";
    for (const auto& levers : model.verdict->stages) write_levers_html(model, levers, out);
  }
  write_tiles_html(model, out);
  write_stage_verdicts_html(model, out);
  out << "</section>\n";
}

}  // namespace llmprof::detail
