// Kernel names shortened for chart labels (short_kernel_name in llmprof/report.hpp). Defined in the
// report layer, beside its only callers, since the report layer is where it is declared.
#include "core/format.hpp"
#include "llmprof/report.hpp"

namespace llmprof {

std::string short_kernel_name(std::string_view name, std::size_t max_length) {
  std::string qualified = detail::kernel_display_name(name, std::string::npos);
  if (const auto scope = qualified.rfind("::"); scope != std::string::npos) qualified = qualified.substr(scope + 2);
  if (qualified.empty()) qualified = std::string(name);
  // Cut in the middle: generated kernel names (nvjet_sm90_..._bias_TNT) differ at the end.
  if (qualified.size() > max_length && max_length > 4) {
    const std::size_t head = (max_length - 1) / 2, tail = max_length - 1 - head;
    qualified = qualified.substr(0, head) + "…" + qualified.substr(qualified.size() - tail);
  }
  return qualified;
}

}  // namespace llmprof
