// The Markdown section of the engine steps (llmprof/step_kinds.hpp); step_kinds.json has its record
// (llmprof/step_kinds_record.hpp).
#include <algorithm>
#include <set>

#include "analysis/step_rule.hpp"
#include "core/format.hpp"
#include "core/saturating.hpp"
#include "core/text.hpp"
#include "llmprof/step_kinds.hpp"

namespace llmprof {
namespace {

// The "Tokens per step kind" table of a window whose kinds have the workload's tokens; "" when none has.
std::string tokens_markdown(const StepKindReport& report) {
  const bool any = std::any_of(report.kinds.begin(), report.kinds.end(),
                               [](const StepKindFigures& kind) { return kind.tokens.has_value(); });
  std::string text;
  if (any) {
    text += "Tokens per step kind (the workload's own count, `nsys/step_tokens.json`):\n\n";
    text += "| kind | steps (workload) | prompt tokens | decode tokens | tokens per step | time per token |\n";
    text += "|---|---:|---:|---:|---:|---:|\n";
    for (const auto& kind : report.kinds) {
      if (!kind.tokens) continue;
      const StepKindTokens& tokens = *kind.tokens;
      text += "| `" + kind.name + "` | " + std::to_string(tokens.workload_steps) + " | " +
              std::to_string(tokens.prompt_tokens) + " | " + std::to_string(tokens.decode_tokens) + " | " +
              (tokens.tokens_per_step ? detail::format_number(*tokens.tokens_per_step) : std::string("—")) + " | " +
              (tokens.time_per_token_ns ? detail::format_duration_ns(*tokens.time_per_token_ns)
                                        : "withheld: " + tokens.withheld) +
              " |\n";
    }
    text += "\n";
  }
  for (const auto& note : report.token_notes) text += "- " + note + "\n";
  if (!report.token_notes.empty()) text += "\n";
  return text;
}

}  // namespace

std::string step_kinds_markdown(const std::vector<StepKindReport>& windows) {
  if (windows.empty()) return {};
  std::string text = "## Engine steps\n\n";
  std::int64_t nested = 0, unclosed = 0;
  for (const auto& report : windows) {
    detail::add_saturating(nested, report.nested_set_aside);
    detail::add_saturating(unclosed, report.unclosed_ranges);
  }
  if (const std::string rule = detail::step_rule_note(nested, unclosed); !rule.empty()) text += rule + "\n\n";
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const StepKindReport& report = windows[w];
    if (windows.size() > 1) text += "### Window " + std::to_string(w + 1) + "\n\n";
    text += (!report.inferred.empty()     ? "S" + report.inferred.substr(1)
             : report.step_range.empty() ? std::string("Kind ranges that stand alone, each instance one step")
                                         : "Step range `" + report.step_range + "`") +
            ": " + std::to_string(report.steps) + " steps" +
            (report.steps_left_out > 0
                 ? " (" + std::to_string(report.steps_left_out) + " more left out by nsys.capture_skip/capture_count)"
                 : std::string()) +
            ". **" + report.verdict + ".**";
    if (!report.window_shortfall.empty() && report.steps > 0) text += " " + report.window_shortfall + ".";
    if (!report.inference_check.empty()) text += " How sure: " + report.inference_check + ".";
    if (report.gpu_process) text += " The GPU work ran in process " + std::to_string(*report.gpu_process) + ".";
    if (!report.phases.empty()) text += " In every step: `" + detail::join(report.phases, "`, `") + "`.";
    if (report.figures_withheld) {
      text += "\n\n";
      continue;
    }
    if (report.zero_length_steps > 0)
      text += " " + std::to_string(report.zero_length_steps) + " of the steps lasted 0 ns on the host: their range "
              "closed as it opened (an engine marking a step it skipped, or a range around work done elsewhere), so no "
              "GPU work is attributed to them and the step times count them as 0 ns.";
    text += "\n\n| kind | steps | p50 | p90 | p99 | GPU busy | GPU time | share of " + report.window_basis +
            " | processes | top kernel |\n";
    text += "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
    for (const auto& kind : report.kinds) {
      std::vector<std::string> pids;
      for (auto pid : kind.processes) pids.push_back(std::to_string(pid));
      text += "| `" + (kind.domain.empty() ? kind.name : kind.domain + ":" + kind.name) + "` | " +
              std::to_string(kind.count) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p50_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p90_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.step_time.p99_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.gpu_busy_ns)) + " | " +
              detail::format_duration_ns(static_cast<double>(kind.gpu_time_ns)) + " | " +
              detail::format_fraction_percent(kind.window_share) + " | " + detail::join(pids, ", ") + " | " +
              (kind.top_kernels.empty() ? std::string("-") : "`" + kind.top_kernels.front().name + "`") + " |\n";
    }
    text += "\n" + tokens_markdown(report);
  }
  if (windows.size() > 1) {
    text += "Side by side (steps per kind, median step time):\n\n";
    std::set<std::string> names;
    for (const auto& report : windows)
      for (const auto& kind : report.kinds) names.insert(kind.name);
    for (const auto& name : names) {
      std::string line = "- `" + name + "`:";
      for (std::size_t w = 0; w < windows.size(); ++w) {
        const auto& kinds = windows[w].kinds;
        const auto found =
            std::find_if(kinds.begin(), kinds.end(), [&](const auto& kind) { return kind.name == name; });
        line += (w == 0 ? " " : " | ") + ("window " + std::to_string(w + 1) + " ");
        line += found == kinds.end() ? std::string("none")
                                     : std::to_string(found->count) + " steps, " +
                                           detail::format_duration_ns(static_cast<double>(found->step_time.p50_ns));
      }
      text += line + "\n";
    }
    text += "\n";
  }
  return text;
}

}  // namespace llmprof
