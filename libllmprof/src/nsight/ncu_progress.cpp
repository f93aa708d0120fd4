// ncu's per-kernel progress lines ("==PROF== Profiling ... - 17 passes"), parsed.
#include "llmprof/ncu_progress.hpp"

#include <charconv>

namespace llmprof {
namespace {

// Reads a non-negative integer at `text[position]`, advancing position; false when none is there.
bool read_int(std::string_view text, std::size_t& position, int& value) {
  const char* begin = text.data() + position;
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error != std::errc() || end == begin) return false;
  position += static_cast<std::size_t>(end - begin);
  return true;
}

bool expect(std::string_view text, std::size_t& position, std::string_view literal) {
  if (text.substr(position, literal.size()) != literal) return false;
  position += literal.size();
  return true;
}

}  // namespace

// ==PROF== Profiling "reduce_kernel" - 0 (1/40): 0%....50%....100% - 17 passes
std::optional<NcuKernelProgress> parse_ncu_progress_line(std::string_view line) {
  constexpr std::string_view prefix = "==PROF== Profiling \"";
  const std::size_t start = line.find(prefix);
  if (start == std::string_view::npos) return std::nullopt;
  const std::size_t name_begin = start + prefix.size();
  // Kernel names may contain quotes and " - " (templates); the id part is the last `" - N (`.
  std::size_t name_end = line.find("\" - ", name_begin);
  while (name_end != std::string_view::npos) {
    std::size_t position = name_end + 4;
    NcuKernelProgress progress;
    if (read_int(line, position, progress.launch_id) && expect(line, position, " (") &&
        read_int(line, position, progress.index) && expect(line, position, "/") &&
        read_int(line, position, progress.total) && expect(line, position, ")")) {
      progress.kernel_name = std::string(line.substr(name_begin, name_end - name_begin));
      const std::size_t passes_at = line.rfind(" - ");
      std::size_t passes_position = passes_at + 3;
      if (passes_at != std::string_view::npos && passes_at > position) {
        int passes = 0;
        if (read_int(line, passes_position, passes) && expect(line, passes_position, " pass")) progress.passes = passes;
      }
      return progress;
    }
    name_end = line.find("\" - ", name_end + 1);
  }
  return std::nullopt;
}

}  // namespace llmprof
