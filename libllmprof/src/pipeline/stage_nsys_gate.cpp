// The empty-NVTX-gate diagnosis: nsys's "No reports were generated" says nothing about why; compare
// the gate with the range names the workload actually emitted and print the exact fix.
#include <algorithm>

#include "core/text.hpp"
#include "pipeline/nsys_capture.hpp"

namespace llmprof::detail {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + ("\"" + name + "\"");
  return joined;
}

// The emitted range to suggest: the selection stage when emitted, else the closest name.
std::string suggested_range(const std::string& gate_name, const EmittedRanges& emitted, const std::string& preferred) {
  if (std::find(emitted.names.begin(), emitted.names.end(), preferred) != emitted.names.end()) return preferred;
  return *std::min_element(emitted.names.begin(), emitted.names.end(), [&](const auto& a, const auto& b) {
    return edit_distance(gate_name, a) < edit_distance(gate_name, b);
  });
}

}  // namespace

// nsys --nvtx-capture takes "range" (default domain) or "range@domain".
std::string diagnose_empty_gate(const std::string& gate, const std::optional<EmittedRanges>& emitted,
                                const std::string& preferred_stage) {
  const auto at = gate.find('@');
  const std::string gate_name = gate.substr(0, at);
  const std::string gate_domain = at == std::string::npos ? "" : gate.substr(at + 1);
  std::string text = "the NVTX gate nsys.nvtx_capture=\"" + gate + "\" never opened, so nsys wrote no report. ";
  if (!emitted || emitted->names.empty()) {
    return text +
           "The range names the workload emits are unknown (it wrote no llmprof metrics with nvtx_ranges). Fix: run "
           "once "
           "with --set nsys.capture_range=none and read the range names in report.md's NVTX table, then set "
           "nsys.nvtx_capture to one of them.";
  }
  const std::string emitted_domain =
      emitted->domain.empty() ? "the default domain" : "domain \"" + emitted->domain + "\"";
  text += "The workload emitted the ranges " + join_names(emitted->names) + " in " + emitted_domain + ". ";
  const bool name_emitted = std::find(emitted->names.begin(), emitted->names.end(), gate_name) != emitted->names.end();
  if (name_emitted && gate_domain != emitted->domain) {
    const std::string fixed = emitted->domain.empty() ? gate_name : gate_name + "@" + emitted->domain;
    return text + "The name matches but the domain does not. Fix: --set nsys.nvtx_capture=" + fixed;
  }
  if (name_emitted) {
    return text +
           "The name and domain match, so nsys did not see the range: keep NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "
           "(the pipeline passes it with --env-var) and check that the range is pushed on a thread nsys traces "
           "(--trace includes nvtx).";
  }
  const std::string suggestion = suggested_range(gate_name, emitted.value(), preferred_stage);
  const std::string fixed = emitted->domain.empty() ? suggestion : suggestion + "@" + emitted->domain;
  return text + "Fix: --set nsys.nvtx_capture=" + fixed + " (or --set nsys.capture_range=none for an ungated capture).";
}

}  // namespace llmprof::detail
