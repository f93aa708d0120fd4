// StopSignalWatcher: while alive, SIGINT and SIGTERM no longer kill this process; a watcher thread
// receives them and calls `on_signal(signal_number)` outside signal context, so the callback may
// lock, log and call DeepProfiler::request_stop or ProcessRunner::request_stop. Children keep the
// default signal dispositions and an unblocked mask (a self-pipe, not sigwait: see the .cpp).
#pragma once

#include <functional>
#include <memory>

#include "llmprof/export.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

class LLMPROF_API StopSignalWatcher {
 public:
  // Installs the handlers and starts the thread. Error (io_error) when the self-pipe cannot be made
  // (e.g. no file descriptor left); the signal dispositions are then unchanged.
  static Result<StopSignalWatcher> start(std::function<void(int)> on_signal);

  StopSignalWatcher(StopSignalWatcher&&) noexcept;
  StopSignalWatcher& operator=(StopSignalWatcher&&) noexcept;
  StopSignalWatcher(const StopSignalWatcher&) = delete;
  StopSignalWatcher& operator=(const StopSignalWatcher&) = delete;
  ~StopSignalWatcher();  // restores the previous handlers and joins the thread

  int received_signal() const noexcept;  // 0 when none arrived

 private:
  struct State;
  explicit StopSignalWatcher(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace llmprof
