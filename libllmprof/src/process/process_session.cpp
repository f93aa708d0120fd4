// The system ProcessRunner's engine: Boost.Process v2 starts the child, Boost.Asio pumps its pipes
// and ticks a timer on the calling thread, POSIX signals stop its process group.
//
// Why some POSIX calls remain next to Boost.Process v2 (Boost 1.81):
// - v2 has no process-group option, so the ChildSetup initializer (process/child_setup.hpp) puts the
//   child in its own group, and the tree is signalled with kill(-pgid, ...): v2's
//   terminate()/request_exit() reach only the direct child, not the workload nsys started.
// - v2's process_stdio opens a path without O_TRUNC, so output files are opened here and handed
//   over as descriptors; the pipes are made here too so both ends are close-on-exec.
// - v2 in 1.81 does not compile with BOOST_PROCESS_USE_STD_FS, so its paths are boost::filesystem.
#include "process/process_session.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/v2/posix/default_launcher.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/start_dir.hpp>
#include <boost/process/v2/stdio.hpp>

#include "core/duration.hpp"
#include "process/child_session.hpp"
#include "process/child_setup.hpp"
#include "process/orphan_watchdog.hpp"
#include "process/process_group.hpp"
#include "process/process_launch.hpp"
#include "process/process_lines.hpp"
#include "process/signal_fallback.hpp"

namespace llmprof::detail {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using SteadyClock = ChildSession::SteadyClock;

}  // namespace

Result<void> ChildSession::prepare_pump(OutputPump& pump, int file_fd,
                                        const std::function<void(const std::string&)>& on_line, UniqueFd& child_end) {
  if (!on_line) return {};  // no callback: the child writes straight into the file (or inherits)
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::process_failed,
                      std::string("cannot create a pipe for the ") + pump.name + " of '" + spec_.argv.front() +
                          "': " + std::strerror(errno),
                      "the process may be out of file descriptors (ulimit -n)");
  }
  child_end = UniqueFd(ends[1]);
  boost::system::error_code error;
  pump.pipe.assign(ends[0], error);
  if (error) {
    ::close(ends[0]);
    return make_error(ErrorCode::process_failed,
                      std::string("cannot watch the ") + pump.name + " pipe: " + error.message());
  }
  pump.file_fd = file_fd;
  pump.lines.emplace(on_line);
  pump.open = true;
  return {};
}

Result<void> ChildSession::launch(const std::filesystem::path& executable, int child_stdout, int child_stderr) {
  const std::vector<std::string> arguments(spec_.argv.begin() + 1, spec_.argv.end());
  // Every descendant inherits the launch's mark: what is re-parented to this process later is told apart from a
  // harness's own children and from another launch's (process_group.hpp: DescendantTracker).
  const std::string launch_mark = next_launch_mark();
  auto overrides = spec_.environment;
  overrides[launch_mark_variable] = launch_mark;
  const std::vector<std::string> environment = build_environment(overrides);
  std::vector<const char*> environment_block;
  for (const auto& entry : environment) environment_block.push_back(entry.c_str());
  environment_block.push_back(nullptr);
  bp::posix::default_launcher launcher;
  std::set<std::pair<pid_t, unsigned long long>> orphans_before_launch;
  boost::system::error_code error;
  std::string failure;
  try {
    auto start = [&](auto&&... extra) {
      // stdin is /dev/null: a background process group reading the terminal would be stopped.
      return launcher(io_.get_executor(), error, bp::filesystem::path(executable.native()), arguments,
                      ChildSetup{environment_block.data()}, bp::process_stdio{nullptr, child_stdout, child_stderr},
                      extra...);
    };
    // Before the snapshot: the watchdog is the host's child, never a launch's orphan.
    start_orphan_watchdog();
    orphans_before_launch = DescendantTracker::orphans_now();
    started_at_ = SteadyClock::now();
    auto started = spec_.working_directory.empty()
                       ? start()
                       : start(bp::process_start_dir(bp::filesystem::path(spec_.working_directory.native())));
    if (!error) process_.emplace(std::move(started));
  } catch (const std::exception& exception) {  // e.g. pidfd_open refused by a seccomp filter
    error = boost::system::error_code(EIO, boost::system::system_category());
    failure = exception.what();
    if (launcher.pid > 0) ::kill(launcher.pid, SIGKILL);
  }
  if (!error) {
    process_group_ = process_->id();
    register_child_group(process_group_);
    watch_child_group(process_group_);
    descendants_.emplace(process_group_, std::move(orphans_before_launch), launch_mark);
    return {};
  }
  if (launcher.pid > 0) ::waitpid(launcher.pid, nullptr, 0);  // the forked child ended in _exit(127)
  return make_error(ErrorCode::process_failed,
                    "could not start '" + executable.string() + "': " + (failure.empty() ? error.message() : failure),
                    "if it is a script, check its #! line names an interpreter that exists; "
                    "check the permissions of the program and of the working directory",
                    spec_.argv.front());
}

void ChildSession::start_reading(OutputPump& pump) {
  pump.pipe.async_read_some(asio::buffer(pump.buffer),
                            [this, &pump](boost::system::error_code error, std::size_t size) {
                              if (!pump.open) return;
                              if (size > 0) deliver(pump, size);
                              if (error) {
                                close_pump(pump);  // end of file (every writer closed it) or a read error
                              } else if (pump.open) {
                                start_reading(pump);
                              }
                            });
}

void ChildSession::deliver(OutputPump& pump, std::size_t size) {
  if (pump.file_fd >= 0 && !output_error_ && !write_fully(pump.file_fd, pump.buffer.data(), size)) {
    const std::filesystem::path& file = &pump == &stdout_pump_ ? spec_.stdout_file : spec_.stderr_file;
    const bool full = errno == ENOSPC || errno == EDQUOT;
    output_error_ = make_error(full ? ErrorCode::no_space : ErrorCode::io_error,
                               std::string("writing the ") + pump.name + " of '" + spec_.argv.front() + "' to '" +
                                   file.string() + "' failed: " + std::strerror(errno),
                               "check free space and permissions of the output directory", file.string());
  }
  try {
    pump.lines->feed(std::string_view(pump.buffer.data(), size));
  } catch (...) {
    callback_error_ = std::current_exception();
    close_pump(pump);
    stop_reason_ = StopReason::callback_failed;
    signal_tree(SIGKILL);
  }
}

void ChildSession::close_pump(OutputPump& pump) {
  pump.open = false;
  boost::system::error_code ignored;
  pump.pipe.close(ignored);
}

ProcessOutcome ChildSession::outcome() const {
  ProcessOutcome outcome;
  outcome.timeout = spec_.timeout;
  if (wait_status_) {
    if (WIFEXITED(*wait_status_)) {
      outcome.exited = true;
      outcome.exit_code = WEXITSTATUS(*wait_status_);
    } else if (WIFSIGNALED(*wait_status_)) {
      outcome.signal = WTERMSIG(*wait_status_);
      outcome.core_dumped = WCOREDUMP(*wait_status_);
    }
  }
  outcome.timed_out = stop_reason_ == StopReason::timed_out;
  outcome.interrupted = stop_reason_ == StopReason::interrupted;
  outcome.descendants_ended = descendants_ending_began_.has_value();
  outcome.descendants_ended_at_limit = outcome.descendants_ended && ending_at_limit_;
  outcome.descendants_killed = ending_killed_;
  outcome.wall_time = exited_at_ - started_at_;
  return outcome;
}

Result<ProcessOutcome> ChildSession::run() {
  auto executable = resolve_executable(spec_);
  if (!executable) return executable.error();
  if (auto directory = check_working_directory(spec_); !directory) return directory.error();
  auto files = open_output_files(spec_);
  if (!files) return files.error();

  UniqueFd stdout_child_end;
  UniqueFd stderr_child_end;
  if (auto prepared = prepare_pump(stdout_pump_, files->stdout_fd(), spec_.on_stdout_line, stdout_child_end);
      !prepared) {
    return prepared.error();
  }
  if (auto prepared = prepare_pump(stderr_pump_, files->stderr_fd(), spec_.on_stderr_line, stderr_child_end);
      !prepared) {
    return prepared.error();
  }
  // Per stream: the pipe when there is a callback, else the file, else the parent's own stream.
  const int child_stdout = stdout_child_end.valid()  ? stdout_child_end.get()
                           : files->stdout_fd() >= 0 ? files->stdout_fd()
                                                     : STDOUT_FILENO;
  const int child_stderr = stderr_child_end.valid()  ? stderr_child_end.get()
                           : files->stderr_fd() >= 0 ? files->stderr_fd()
                                                     : STDERR_FILENO;
  if (auto launched = launch(*executable, child_stdout, child_stderr); !launched) return launched.error();
  // Out of the table a second signal's SIGKILL reads, however this call ends (the group id may be reused later).
  struct GroupRegistration {
    pid_t group;
    ~GroupRegistration() {
      unregister_child_group(group);
      unwatch_child_group(group);
    }
  } const registration{process_group_};
  // Only the child may hold the write ends now, so the pipes reach end-of-file when it is done.
  stdout_child_end.reset();
  stderr_child_end.reset();

  if (spec_.timeout) deadline_ = deadline_after(started_at_, *spec_.timeout);
  if (stdout_pump_.open) start_reading(stdout_pump_);
  if (stderr_pump_.open) start_reading(stderr_pump_);
  schedule_tick();
  io_.run();

  std::vector<std::string> survivors;
  std::vector<std::string> tool_survivors;
  if (descendants_) {
    descendants_->refresh();  // orphans of the tree are ours now (subreaper): find them too
    if (stop_reason_ == StopReason::none)
      std::tie(survivors, tool_survivors) = descendants_->survivors_by_owner(spec_.is_tool_executable);
    if (!survivors.empty() && spec_.end_survivors_after) end_survivors(*spec_.end_survivors_after);
    descendants_->reap_orphans();
  }
  if (callback_error_) std::rethrow_exception(callback_error_);
  // The last line may have had no terminator.
  if (stdout_pump_.lines) stdout_pump_.lines->finish();
  if (stderr_pump_.lines) stderr_pump_.lines->finish();
  ProcessOutcome result = outcome();
  result.survivors_ended = !survivors.empty() && spec_.end_survivors_after.has_value();
  result.survivors_killed = std::move(survivors_killed_);
  result.surviving_descendants = std::move(survivors);
  result.tool_survivors = std::move(tool_survivors);
  if (output_error_) {
    Error error = *output_error_;
    error.message += " (the process itself: " + result.describe() + ")";
    return error;
  }
  return result;
}

Result<ProcessOutcome> run_child_process(const ProcessSpec& spec, const std::atomic<bool>& stop_requested) {
  ChildSession session(spec, stop_requested);
  return session.run();
}

}  // namespace llmprof::detail
