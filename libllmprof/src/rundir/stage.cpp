// The one table of stage names (llmprof/stage.hpp).
#include "llmprof/stage.hpp"

#include <utility>

namespace llmprof {
namespace {

constexpr std::array<std::pair<Stage, const char*>, kStages.size()> kNames = {{
    {Stage::probe, "probe"},
    {Stage::workload, "stage1"},
    {Stage::nsys, "nsys"},
    {Stage::select, "select"},
    {Stage::ncu, "ncu"},
    {Stage::analyze, "analyze"},
    {Stage::report, "report"},
}};

}  // namespace

const char* to_string(Stage stage) noexcept {
  for (const auto& [value, name] : kNames) {
    if (value == stage) return name;
  }
  return "?";
}

std::optional<Stage> parse_stage(std::string_view name) noexcept {
  for (const auto& [value, text] : kNames) {
    if (name == text) return value;
  }
  return std::nullopt;
}

}  // namespace llmprof
