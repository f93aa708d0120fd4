// The capture record's gate names and the range it limits the timeline to (see capture_record.hpp).
#include "llmprof/capture_record.hpp"

#include <span>

#include "llmprof/choice.hpp"

namespace llmprof {

// The gate's spellings are nsys's own (--capture-range=cudaProfilerApi) and NsysCaptureRange's: run.json records
// the gate in the words the configuration gave it. Static rather than in an unnamed namespace: choice.hpp finds it
// by argument-dependent lookup, which looks in llmprof itself, not in a namespace nested in it.
static std::span<const std::string_view> choice_names(CaptureGateKind) noexcept {
  static constexpr std::string_view names[] = {"none", "nvtx", "cudaProfilerApi"};
  return names;
}

// The names are literals, so each view ends in a NUL: the C string the API returns.
const char* to_string(CaptureGateKind kind) noexcept { return choice_name(kind).data(); }

std::optional<CaptureGateKind> parse_capture_gate_kind(std::string_view text) noexcept {
  return parse_choice<CaptureGateKind>(text);
}

std::optional<std::string> CaptureRecord::gated_range() const {
  if (gate != CaptureGateKind::nvtx || !gate_opened || ungated_rerun) return std::nullopt;
  return range.substr(0, range.find('@'));
}

}  // namespace llmprof
