// The cost of profiling as multiples of the bare run (see tool_cost.hpp).
#include "llmprof/tool_cost.hpp"

#include <algorithm>

#include "core/format.hpp"

namespace llmprof {
namespace {

const StageRecord* stage_named(std::span<const StageRecord> stages, std::string_view name) {
  const auto found = std::find_if(stages.begin(), stages.end(), [&](const StageRecord& stage) { return stage.name == name; });
  return found == stages.end() ? nullptr : &*found;
}

bool ran(const StageRecord* stage) {
  return stage != nullptr && stage->status != StageStatus::skipped && stage->status != StageStatus::pending;
}

std::optional<double> tool_seconds(std::span<const StageRecord> stages, std::string_view name) {
  const StageRecord* stage = stage_named(stages, name);
  return ran(stage) ? std::optional<double>(stage->duration_s) : std::nullopt;
}

}  // namespace

std::optional<double> ToolCost::nsys_multiple() const {
  return nsys_s ? std::optional<double>(*nsys_s / bare_s) : std::nullopt;
}

std::optional<double> ToolCost::ncu_multiple() const {
  return ncu_s ? std::optional<double>(*ncu_s / bare_s) : std::nullopt;
}

std::optional<ToolCost> tool_cost_of(std::span<const StageRecord> stages) {
  const StageRecord* bare = stage_named(stages, "stage1");
  if (bare == nullptr || bare->status != StageStatus::ok || !(bare->duration_s > 0)) return std::nullopt;
  ToolCost cost;
  cost.bare_s = bare->duration_s;
  for (const auto& stage : stages) cost.run_s += std::max(stage.duration_s, 0.0);
  cost.nsys_s = tool_seconds(stages, "nsys");
  cost.ncu_s = tool_seconds(stages, "ncu");
  return cost;
}

std::string describe_tool_cost(const ToolCost& cost) {
  std::string text = "this run took " + detail::format_factor(cost.multiple()) + " the bare run";
  std::string tools;
  if (auto nsys = cost.nsys_multiple()) tools += "nsys " + detail::format_factor(*nsys);
  if (auto ncu = cost.ncu_multiple()) tools += (tools.empty() ? "ncu " : ", ncu ") + detail::format_factor(*ncu);
  return tools.empty() ? text : text + ": " + tools;
}

}  // namespace llmprof
