// The verdict stored in report.json once the analysis has written every file it reads (see run_analysis.hpp).
#include "analysis/run_verdict.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_analysis.hpp"

namespace llmprof {

Result<std::string> write_run_verdict(const std::filesystem::path& main_directory) {
  // The model the report reads (report.json with its figures checked, step_kinds.json, ranks.csv), so the verdict
  // is computed from the figures the report shows.
  auto model = load_run_report(main_directory);
  if (!model) return model.error();
  return detail::store_run_verdict(*model);
}

}  // namespace llmprof
