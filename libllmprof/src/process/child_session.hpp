// The child-process session behind run_child_process (process_session.hpp): its output pumps and the
// ChildSession whose members process_session.cpp (launch, output, outcome) and child_session_limits.cpp (the tick:
// exit, deadline, stop requests, stopping the tree) define.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/v2/process.hpp>

#include "llmprof/process.hpp"
#include "llmprof/result.hpp"
#include "process/process_group.hpp"
#include "process/process_launch.hpp"
#include "process/process_lines.hpp"

namespace llmprof::detail {

// Why the session is stopping the child's process tree.
enum class StopReason { none, timed_out, interrupted, callback_failed };

// One output stream of the child read through a pipe: copied into its file and split into lines for a callback.
struct OutputPump {
  OutputPump(boost::asio::io_context& io, const char* stream_name) : pipe(io), name(stream_name) {}
  boost::asio::readable_pipe pipe;
  const char* name;
  int file_fd = -1;                   // copy of the bytes goes here when >= 0 (not owned)
  std::optional<LineSplitter> lines;  // set when the spec has a callback for this stream
  std::array<char, 64 * 1024> buffer{};
  bool open = false;
};

// One run of one child: launched in its own process group (process_session.cpp), its output pumped, and a
// timer tick that reaps it, enforces the deadline and stop requests, and stops its tree
// (child_session_limits.cpp).
class ChildSession {
 public:
  using SteadyClock = std::chrono::steady_clock;  // real children need real time, not llmprof::Clock

  ChildSession(const ProcessSpec& spec, const std::atomic<bool>& stop_requested)
      : spec_(spec),
        stop_requested_(stop_requested),
        timer_(io_),
        stdout_pump_(io_, "stdout"),
        stderr_pump_(io_, "stderr") {}

  Result<ProcessOutcome> run();

 private:
  Result<void> prepare_pump(OutputPump& pump, int file_fd, const std::function<void(const std::string&)>& on_line,
                            UniqueFd& child_end);
  Result<void> launch(const std::filesystem::path& executable, int child_stdout, int child_stderr);
  void start_reading(OutputPump& pump);
  void deliver(OutputPump& pump, std::size_t size);
  void close_pump(OutputPump& pump);
  void schedule_tick();
  bool tick();  // false once the run is over
  void poll_exit(SteadyClock::time_point now);
  void enforce_limits(SteadyClock::time_point now);
  void end_descendants_on_request(SteadyClock::time_point now);
  void watch_tree(SteadyClock::time_point now);  // refresh() while an ending may come
  ApplicationQuery application_query() const;
  void signal_ending(int signal_number);  // the application's processes (DescendantEnding)
  bool ending_alive(SteadyClock::time_point now);
  void kill_ending(SteadyClock::time_point now);  // SIGKILL to what the ending targets, once
  bool tree_finished(SteadyClock::time_point now);
  bool output_finished(SteadyClock::time_point now) const;
  void begin_stop(StopReason reason, SteadyClock::time_point now);
  void signal_tree(int signal_number);
  // After a normal exit: SIGTERM to the child's surviving descendants, SIGKILL to those alive after `grace`.
  void end_survivors(std::chrono::milliseconds grace);
  bool group_alive() const;
  ProcessOutcome outcome() const;

  const ProcessSpec& spec_;
  const std::atomic<bool>& stop_requested_;
  boost::asio::io_context io_;
  boost::asio::steady_timer timer_;
  OutputPump stdout_pump_;
  OutputPump stderr_pump_;
  std::optional<boost::process::v2::basic_process<boost::asio::io_context::executor_type>> process_;
  pid_t process_group_ = -1;
  std::optional<DescendantTracker> descendants_;  // the child's tree beyond its process group
  SteadyClock::time_point started_at_;
  std::optional<SteadyClock::time_point> deadline_;
  std::optional<int> wait_status_;  // raw waitpid() status once reaped
  bool status_unknown_ = false;     // someone else reaped the child (SIGCHLD ignored by the parent)
  SteadyClock::time_point exited_at_;
  StopReason stop_reason_ = StopReason::none;
  SteadyClock::time_point stop_began_;
  bool kill_sent_ = false;
  std::optional<SteadyClock::time_point> descendants_ending_began_;  // ProcessSpec::end_descendants honoured
  bool descendants_kill_sent_ = false;
  std::optional<SteadyClock::time_point> descendants_killed_at_;  // when that SIGKILL went out
  bool ending_at_limit_ = false;  // the session requested the ending at ProcessSpec::end_descendants_after
  std::vector<std::string> ending_killed_;  // "pid (name)" the ending sent SIGKILL
  std::size_t targets_seen_ = 0;  // watch_tree(): the targets when the tree was last read, and when that was
  SteadyClock::time_point tree_read_at_{};
  std::vector<std::string> survivors_killed_;  // end_survivors(): outlived the grace, got SIGKILL
  std::exception_ptr callback_error_;
  std::optional<Error> output_error_;
};

}  // namespace llmprof::detail
