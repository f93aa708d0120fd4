// What the report reads of the step records the analysis wrote: the step kinds (step_kinds.json) and the
// straggler among ranks (ranks.csv) (see report_levers.hpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/file_text.hpp"
#include "core/json_fields.hpp"
#include "core/text.hpp"
#include "report/report_levers.hpp"

namespace llmprof::detail {

Result<void> read_step_kinds_and_ranks(const RunLayout& layout, RunReportModel& model) {
  const auto kinds_path = layout.resolve(RunLayout::analysis_step_kinds());
  if (const auto text = read_file_text(kinds_path)) {
    auto root = parse_json_object(*text, kinds_path);
    if (!root) return root.error();
    try {
      for (const auto& window : json_objects(*root, "windows", "windows")) {
        for (const auto& kind : json_objects(window, "kinds", "windows[].kinds")) {
          auto name = json_string(kind, "name", "windows[].kinds[].name");
          // A kind of a named NVTX domain is that domain's stage (an older file has no "domain": the default one).
          const auto domain = json_string(kind, "domain", "windows[].kinds[].domain");
          if (name && domain && !domain->empty()) name = *domain + ":" + *name;
          if (name && std::find(model.step_kinds.begin(), model.step_kinds.end(), *name) == model.step_kinds.end())
            model.step_kinds.push_back(*name);
        }
      }
    } catch (const JsonFieldError& field) {
      return make_error(ErrorCode::parse_error, kinds_path.string() + ": field " + field.field + " has the wrong type",
                        "re-run `deep-profile analyze` on this run", kinds_path.string());
    }
  }
  // ranks.csv holds numbers and a basis word only (analysis/cross_rank_writer.cpp): no quoted fields.
  const auto ranks_text = read_file_text(layout.resolve(RunLayout::analysis_ranks_csv()));
  if (!ranks_text) return {};
  const auto lines = split_lines(*ranks_text);
  if (lines.empty()) return {};
  const auto header = split(lines.front(), ',');
  const auto rank_column = std::find(header.begin(), header.end(), "rank") - header.begin();
  const auto lag_column = std::find(header.begin(), header.end(), "mean_step_start_lag_ms") - header.begin();
  if (rank_column == std::ssize(header) || lag_column == std::ssize(header)) return {};
  ReportStraggler straggler;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto fields = split(lines[i], ',');
    if (fields.size() != header.size()) continue;
    ++straggler.ranks;
    char* rank_end = nullptr;
    char* lag_end = nullptr;
    const auto& rank_text = fields[static_cast<std::size_t>(rank_column)];
    const auto& lag_text = fields[static_cast<std::size_t>(lag_column)];
    const long long rank = std::strtoll(rank_text.c_str(), &rank_end, 10);
    const double lag_ms = std::strtod(lag_text.c_str(), &lag_end);
    if (rank_text.empty() || lag_text.empty() || *rank_end != '\0' || *lag_end != '\0' || !std::isfinite(lag_ms))
      continue;
    if (lag_ms * 1e6 > straggler.mean_step_start_lag_ns) {
      straggler.rank = rank;
      straggler.mean_step_start_lag_ns = lag_ms * 1e6;
    }
  }
  if (straggler.ranks >= 2) model.straggler = straggler;
  return {};
}

}  // namespace llmprof::detail
