// What the report reads of the step records the analysis wrote: the step kinds (step_kinds.json) and the
// straggler among ranks (ranks.csv) (see report_step_records.hpp).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/file_text.hpp"
#include "llmprof/ranks_record.hpp"
#include "llmprof/step_kinds_record.hpp"
#include "report/report_step_records.hpp"

namespace llmprof::detail {

Result<void> read_step_kinds_and_ranks(const RunLayout& layout, RunReportModel& model) {
  const auto kinds_path = layout.resolve(RunLayout::analysis_step_kinds());
  if (const auto text = read_file_text(kinds_path)) {
    auto kinds = read_step_kinds_json(*text, kinds_path.string());
    if (!kinds) return kinds.error();
    model.warnings.insert(model.warnings.end(), kinds->warnings.begin(), kinds->warnings.end());
    for (const StepKindReport& window : kinds->windows) {
      for (const StepKindFigures& kind : window.kinds) {
        // A kind of a named NVTX domain is that domain's stage (an older file has no "domain": the default one).
        const std::string name = kind.domain.empty() ? kind.name : kind.domain + ":" + kind.name;
        if (std::find(model.step_kinds.begin(), model.step_kinds.end(), name) == model.step_kinds.end())
          model.step_kinds.push_back(name);
      }
    }
  }
  const auto ranks_path = layout.resolve(RunLayout::analysis_ranks_csv());
  const auto ranks_text = read_file_text(ranks_path);
  if (!ranks_text) return {};
  std::istringstream ranks_stream(*ranks_text);
  auto ranks = read_ranks_csv(ranks_stream, ranks_path.string());
  if (!ranks) return ranks.error();
  ReportStraggler straggler;
  for (const RankFigures& rank : ranks->ranks) {
    ++straggler.ranks;
    const auto& lag_ms = rank.mean_step_start_lag_ms;
    if (lag_ms && std::isfinite(*lag_ms) && *lag_ms * 1e6 > straggler.mean_step_start_lag_ns) {
      straggler.rank = rank.rank;
      straggler.mean_step_start_lag_ns = *lag_ms * 1e6;
    }
  }
  if (straggler.ranks >= 2) model.straggler = straggler;
  return {};
}

}  // namespace llmprof::detail
