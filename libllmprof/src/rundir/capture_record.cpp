// The capture record's gate names and the range it limits the timeline to (see capture_record.hpp).
#include "llmprof/capture_record.hpp"

namespace llmprof {

const char* to_string(CaptureGateKind kind) noexcept {
  switch (kind) {
    case CaptureGateKind::none:
      return "none";
    case CaptureGateKind::nvtx:
      return "nvtx";
    case CaptureGateKind::cuda_profiler_api:
      return "cudaProfilerApi";  // nsys's own spelling (--capture-range=cudaProfilerApi)
  }
  return "none";
}

std::optional<CaptureGateKind> parse_capture_gate_kind(std::string_view text) noexcept {
  for (const CaptureGateKind kind :
       {CaptureGateKind::none, CaptureGateKind::nvtx, CaptureGateKind::cuda_profiler_api}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<std::string> CaptureRecord::gated_range() const {
  if (gate != CaptureGateKind::nvtx || !gate_opened || ungated_rerun) return std::nullopt;
  return range.substr(0, range.find('@'));
}

}  // namespace llmprof
