// Tasks side by side, for work that mostly waits on child processes: the probe's tool listings are separate nsys
// and ncu start-ups, each a fraction of a second, that depend on nothing but the tool's version.
#pragma once

#include <exception>
#include <functional>
#include <future>
#include <vector>

namespace llmprof::detail {

// Runs every task on a thread of its own and returns once all of them have ended. An exception a task threw is
// rethrown then (the first in the tasks' order), never while another task still runs.
inline void run_concurrently(std::vector<std::function<void()>> tasks) {
  std::vector<std::future<void>> running;
  running.reserve(tasks.size());
  for (auto& task : tasks) running.push_back(std::async(std::launch::async, std::move(task)));
  std::exception_ptr first_failure;
  for (auto& task : running) {
    try {
      task.get();
    } catch (...) {
      if (!first_failure) first_failure = std::current_exception();
    }
  }
  if (first_failure) std::rethrow_exception(first_failure);
}

}  // namespace llmprof::detail
