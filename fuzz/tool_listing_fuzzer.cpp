// The tool-probe text parsers over arbitrary output: `nsys/ncu --version`, `nsys status
// --environment`, `nsys stats --help-reports`, `ncu --list-sections`, `ncu --list-sets`, the loader's
// missing-library lines.
//
// Invariants: no crash / UB / stack exhaustion (std::regex recurses per character); a version
// error names the text; a parsed version prints back as numbers it contains; section and set
// identifiers are non-empty; every missing library name occurs in the output.
#include "fuzz_support.hpp"
#include "llmprof/tool_probe.hpp"
#include "nsight/tool_listings.hpp"

namespace {

void check_version(const llmprof::Result<llmprof::ToolVersion>& version, std::string_view text) {
  if (!version) {
    LLMPROF_FUZZ_CHECK(!version.error().message.empty(), "version error without a message");
    return;
  }
  LLMPROF_FUZZ_CHECK(version->year >= 0 && version->major >= 0 && version->minor >= 0 && version->patch >= 0,
                     version->to_string());
  LLMPROF_FUZZ_CHECK(text.find(std::to_string(version->year)) != std::string_view::npos,
                     "year " + std::to_string(version->year) + " not in the text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = llmprof::fuzz::as_text(data, size);
  check_version(llmprof::parse_nsys_version(text), text);
  check_version(llmprof::parse_ncu_version(text), text);
  for (const auto& check : llmprof::parse_nsys_status_environment(text))
    LLMPROF_FUZZ_CHECK(!check.name.empty(), "environment check without a name");
  for (const auto& section : llmprof::parse_ncu_section_list(text))
    LLMPROF_FUZZ_CHECK(!section.identifier.empty() && text.find(section.identifier) != std::string_view::npos,
                       "section '" + section.identifier + "'");
  for (const auto& set : llmprof::parse_ncu_set_list(text))
    LLMPROF_FUZZ_CHECK(!set.identifier.empty() && text.find(set.identifier) != std::string_view::npos,
                       "set '" + set.identifier + "'");
  for (const auto& report : llmprof::parse_nsys_report_list(text))
    LLMPROF_FUZZ_CHECK(!report.empty() && text.find(report) != std::string_view::npos, "report '" + report + "'");
  const auto gpu_metrics = llmprof::parse_gpu_metrics_devices(text, "--gpu-metrics-devices");
  LLMPROF_FUZZ_CHECK(gpu_metrics.available == !gpu_metrics.listed.empty() &&
                         gpu_metrics.available == gpu_metrics.reason.empty(),
                     "GPU-metrics devices: available without a device, or a reason beside one");
  const auto set = llmprof::choose_gpu_metrics_set(text, gpu_metrics.listed);
  LLMPROF_FUZZ_CHECK(set.empty() || text.find(set) != std::string_view::npos, "GPU-metrics set '" + set + "'");
  for (const auto& library : llmprof::parse_missing_libraries(text))
    LLMPROF_FUZZ_CHECK(!library.empty() && text.find(library) != std::string_view::npos, "library '" + library + "'");
  return 0;
}
