// Progress of a deep-profile run: one-line renderings of its events.
#include <chrono>
#include <cstdio>

#include "llmprof/deep_profiler.hpp"

namespace llmprof {

std::string format_progress_event(const ProgressEvent& event) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%7.1fs] ", std::chrono::duration<double>(event.elapsed).count());
  std::string stage = event.stage;
  if (stage.size() < 8) stage.resize(8, ' ');
  std::string text = std::string(stamp) + stage + " ";
  switch (event.kind) {
    case ProgressEvent::Kind::stage_started:
      return text + "started: " + event.message;
    case ProgressEvent::Kind::stage_finished:
      text += event.status ? to_string(*event.status) : "finished";
      return event.message.empty() ? text : text + ": " + event.message;
    case ProgressEvent::Kind::tool_progress:
      if (event.kernel_total > 0 || event.passes > 0) {
        text += event.kernel_total > 0 ? "kernel " + std::to_string(event.kernel_index) + "/" +
                                             std::to_string(event.kernel_total) + " " + event.kernel_name
                                       : "kernel " + event.kernel_name;
        if (event.passes > 0) text += " (" + std::to_string(event.passes) + " passes)";
        if (!event.plan_progress.empty()) text += ", " + event.plan_progress;
        return text;
      }
      return text + event.message;
    case ProgressEvent::Kind::message:
      return text + (event.warning ? "warning: " : "") + event.message;
  }
  return text + event.message;
}

}  // namespace llmprof
