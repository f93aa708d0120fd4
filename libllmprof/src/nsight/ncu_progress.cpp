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

namespace {

int passes_after(std::string_view line, std::size_t from) {
  const std::size_t passes_at = line.rfind(" - ");
  if (passes_at == std::string_view::npos || passes_at < from) return 0;
  std::size_t position = passes_at + 3;
  int passes = 0;
  return read_int(line, position, passes) && expect(line, position, " pass") ? passes : 0;
}

// ncu 2025.3.1 with --filter-mode per-launch-config (recorded on the H100, every line of a 1b decode pass):
//   ==PROF== Profiling "_ZN2at6native13reduce_kernel...": 0%....50%....100% - 17 passes
// no launch id and no n/N, since the filter decides per configuration how many launches come.
std::optional<NcuKernelProgress> parse_unnumbered(std::string_view line, std::size_t name_begin) {
  const std::size_t name_end = line.rfind("\": ");
  if (name_end == std::string_view::npos || name_end < name_begin) return std::nullopt;
  const std::string_view rest = line.substr(name_end + 3);
  if (!rest.starts_with("0%") && !rest.empty() && rest.front() != '.') return std::nullopt;
  NcuKernelProgress progress;
  progress.kernel_name = std::string(line.substr(name_begin, name_end - name_begin));
  progress.passes = passes_after(line, name_end);
  return progress;
}

}  // namespace

std::optional<int> parse_ncu_connected_process(std::string_view line) {
  constexpr std::string_view prefix = "==PROF== Connected to process ";
  const auto at = line.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + prefix.size());
  long long pid = 0;
  std::size_t digits = 0;
  for (; digits < rest.size() && digits < 10 && rest[digits] >= '0' && rest[digits] <= '9'; ++digits)
    pid = pid * 10 + (rest[digits] - '0');
  // A pid ends at a space or the line's end; Linux pids stay below 2^22 (pid_max's ceiling).
  if (digits == 0 || (digits < rest.size() && rest[digits] != ' ') || pid <= 0 || pid > (1 << 22)) return std::nullopt;
  return static_cast<int>(pid);
}

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
      progress.passes = passes_after(line, position);
      return progress;
    }
    name_end = line.find("\" - ", name_end + 1);
  }
  return parse_unnumbered(line, name_begin);
}

}  // namespace llmprof
