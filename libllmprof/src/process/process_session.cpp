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
#include "process/child_setup.hpp"
#include "process/process_group.hpp"
#include "process/process_launch.hpp"
#include "process/process_lines.hpp"

namespace llmprof::detail {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;
using SteadyClock = std::chrono::steady_clock;  // real children need real time, not llmprof::Clock

// How often the exit status, the stop flag and the deadline are checked.
constexpr auto poll_interval = std::chrono::milliseconds(5);
// After a normal exit, how long output is still read from processes the child left behind.
constexpr auto drain_limit = std::chrono::milliseconds(500);

enum class StopReason { none, timed_out, interrupted, callback_failed };

struct OutputPump {
  OutputPump(asio::io_context& io, const char* stream_name) : pipe(io), name(stream_name) {}
  asio::readable_pipe pipe;
  const char* name;
  int file_fd = -1;                   // copy of the bytes goes here when >= 0 (not owned)
  std::optional<LineSplitter> lines;  // set when the spec has a callback for this stream
  std::array<char, 64 * 1024> buffer{};
  bool open = false;
};

class ChildSession {
 public:
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
  bool tree_finished(SteadyClock::time_point now);
  bool output_finished(SteadyClock::time_point now) const;
  void begin_stop(StopReason reason, SteadyClock::time_point now);
  void signal_tree(int signal_number);
  bool group_alive() const;
  ProcessOutcome outcome() const;

  const ProcessSpec& spec_;
  const std::atomic<bool>& stop_requested_;
  asio::io_context io_;
  asio::steady_timer timer_;
  OutputPump stdout_pump_;
  OutputPump stderr_pump_;
  std::optional<bp::basic_process<asio::io_context::executor_type>> process_;
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
  std::exception_ptr callback_error_;
  std::optional<Error> output_error_;
};

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
  const std::vector<std::string> environment = build_environment(spec_.environment);
  std::vector<const char*> environment_block;
  for (const auto& entry : environment) environment_block.push_back(entry.c_str());
  environment_block.push_back(nullptr);
  bp::posix::default_launcher launcher;
  boost::system::error_code error;
  std::string failure;
  try {
    auto start = [&](auto&&... extra) {
      // stdin is /dev/null: a background process group reading the terminal would be stopped.
      return launcher(io_.get_executor(), error, bp::filesystem::path(executable.native()), arguments,
                      ChildSetup{environment_block.data()}, bp::process_stdio{nullptr, child_stdout, child_stderr},
                      extra...);
    };
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
    descendants_.emplace(process_group_);
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

void ChildSession::schedule_tick() {
  timer_.expires_after(poll_interval);
  timer_.async_wait([this](boost::system::error_code error) {
    if (error) return;
    if (tick()) {
      schedule_tick();
    } else {
      io_.stop();
    }
  });
}

bool ChildSession::tick() {
  const auto now = SteadyClock::now();
  if (!wait_status_ && !status_unknown_) poll_exit(now);
  if (!wait_status_ && !status_unknown_) {
    enforce_limits(now);
    return true;
  }
  if (!tree_finished(now)) return true;
  return !output_finished(now);
}

void ChildSession::poll_exit(SteadyClock::time_point now) {
  boost::system::error_code error;
  if (process_->running(error)) return;
  exited_at_ = now;
  if (error) {
    status_unknown_ = true;  // ECHILD: reaped elsewhere, e.g. SIGCHLD set to SIG_IGN in the parent
  } else {
    wait_status_ = process_->native_exit_code();
  }
  // Reaped: forget the pid, so that basic_process's destructor cannot SIGKILL a process that was
  // given the same pid later.
  process_->detach();
}

void ChildSession::enforce_limits(SteadyClock::time_point now) {
  if (stop_reason_ == StopReason::none) {
    if (stop_requested_.load()) {
      begin_stop(StopReason::interrupted, now);
    } else if (deadline_ && now >= *deadline_) {
      begin_stop(StopReason::timed_out, now);
    }
  } else if (!kill_sent_ && now - stop_began_ >= spec_.kill_grace) {
    signal_tree(SIGKILL);
  }
  if (stop_reason_ == StopReason::none) end_descendants_on_request(now);
}

// The descendants only, never the child nor its process group: the child (a profiler) must live on to
// write what it gathered from them.
void ChildSession::end_descendants_on_request(SteadyClock::time_point now) {
  if (!spec_.end_descendants || !descendants_) return;
  if (!descendants_ending_began_) {
    if (!spec_.end_descendants->requested()) return;
    descendants_ending_began_ = now;
    descendants_->refresh();
    descendants_->signal_all(spec_.descendants_kill_grace.count() > 0 ? SIGTERM : SIGKILL);
  } else if (!descendants_kill_sent_ && now - *descendants_ending_began_ >= spec_.descendants_kill_grace) {
    descendants_kill_sent_ = true;
    descendants_->refresh();
    descendants_->signal_all(SIGKILL);
  }
}

// After the child has exited: when we were stopping the tree, give the rest of the group the same
// grace, then SIGKILL whatever is left.
bool ChildSession::tree_finished(SteadyClock::time_point now) {
  if (stop_reason_ == StopReason::none || kill_sent_) return true;
  if (!group_alive()) return true;
  if (now - stop_began_ < spec_.kill_grace) return false;
  signal_tree(SIGKILL);
  return true;
}

bool ChildSession::output_finished(SteadyClock::time_point now) const {
  if (!stdout_pump_.open && !stderr_pump_.open) return true;
  // Something the child left behind still holds the pipe; do not wait for it forever.
  return stop_requested_.load() || now - exited_at_ >= drain_limit;
}

void ChildSession::begin_stop(StopReason reason, SteadyClock::time_point now) {
  stop_reason_ = reason;
  stop_began_ = now;
  signal_tree(spec_.kill_grace.count() > 0 ? SIGTERM : SIGKILL);
}

void ChildSession::signal_tree(int signal_number) {
  if (signal_number == SIGKILL) kill_sent_ = true;
  if (process_group_ > 0) ::kill(-process_group_, signal_number);
  // Descendants that left the group (setsid) or were re-parented to us are signalled one by one.
  if (descendants_) {
    descendants_->refresh();
    descendants_->signal_all(signal_number);
  }
  // The child may have left our group (setsid); while it is not reaped its pid cannot be reused.
  if (process_ && !wait_status_ && !status_unknown_) ::kill(process_->id(), signal_number);
}

bool ChildSession::group_alive() const {
  if (process_group_ > 0 && process_group_has_live_members(process_group_)) return true;
  return descendants_ && descendants_->any_alive();
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
  // Only the child may hold the write ends now, so the pipes reach end-of-file when it is done.
  stdout_child_end.reset();
  stderr_child_end.reset();

  if (spec_.timeout) deadline_ = deadline_after(started_at_, *spec_.timeout);
  if (stdout_pump_.open) start_reading(stdout_pump_);
  if (stderr_pump_.open) start_reading(stderr_pump_);
  schedule_tick();
  io_.run();

  std::vector<std::string> survivors;
  if (descendants_) {
    descendants_->refresh();  // orphans of the tree are ours now (subreaper): find them too
    if (stop_reason_ == StopReason::none) survivors = descendants_->survivors();
    descendants_->reap_orphans();
  }
  if (callback_error_) std::rethrow_exception(callback_error_);
  // The last line may have had no terminator.
  if (stdout_pump_.lines) stdout_pump_.lines->finish();
  if (stderr_pump_.lines) stderr_pump_.lines->finish();
  ProcessOutcome result = outcome();
  result.surviving_descendants = std::move(survivors);
  if (output_error_) {
    Error error = *output_error_;
    error.message += " (the process itself: " + result.describe() + ")";
    return error;
  }
  return result;
}

}  // namespace

Result<ProcessOutcome> run_child_process(const ProcessSpec& spec, const std::atomic<bool>& stop_requested) {
  ChildSession session(spec, stop_requested);
  return session.run();
}

}  // namespace llmprof::detail
