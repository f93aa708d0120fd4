// StopSignalWatcher: SIGINT/SIGTERM become a call on a normal thread (to stop the running children).
//
// A self-pipe rather than sigwait: sigwait needs the signals blocked, and a blocked mask is inherited
// through fork/exec, so the workload and the profilers would start with SIGTERM blocked and could only
// be stopped with SIGKILL. The handler here only writes the signal number to a pipe; the watcher
// thread reads it and runs the callback outside signal context.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "llmprof/stop_signal_watcher.hpp"

namespace llmprof {
namespace {

std::atomic<int> signal_pipe_write{-1};

extern "C" void forward_signal(int signal_number) {
  const int saved_errno = errno;
  const int descriptor = signal_pipe_write.load();
  if (descriptor >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signal_number);
    [[maybe_unused]] const auto written = ::write(descriptor, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

struct StopSignalWatcher::State {
  int pipe_read = -1;
  int pipe_write = -1;
  std::atomic<int> received{0};
  struct sigaction previous_interrupt {};
  struct sigaction previous_terminate {};
  std::thread watcher;
};

Result<StopSignalWatcher> StopSignalWatcher::start(std::function<void(int)> on_signal) {
  int descriptors[2];
  if (::pipe2(descriptors, O_CLOEXEC) != 0) {
    const int error = errno;
    return make_error(
        ErrorCode::io_error, std::string("cannot watch for SIGINT/SIGTERM: pipe2 failed: ") + std::strerror(error),
        error == EMFILE || error == ENFILE ? "close file descriptors or raise the limit (ulimit -n)" : "", "pipe2");
  }
  auto state = std::make_unique<State>();
  state->pipe_read = descriptors[0];
  state->pipe_write = descriptors[1];
  signal_pipe_write.store(state->pipe_write);
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &state->previous_interrupt);
  ::sigaction(SIGTERM, &action, &state->previous_terminate);
  State* raw = state.get();
  state->watcher = std::thread([state = raw, on_signal = std::move(on_signal)] {
    unsigned char byte = 0;
    while (true) {
      const auto count = ::read(state->pipe_read, &byte, 1);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0 || byte == 0) return;  // 0: the destructor's wake-up
      state->received.store(byte);
      if (on_signal) on_signal(byte);
    }
  });
  return StopSignalWatcher(std::move(state));
}

StopSignalWatcher::StopSignalWatcher(std::unique_ptr<State> state) : state_(std::move(state)) {}
StopSignalWatcher::StopSignalWatcher(StopSignalWatcher&&) noexcept = default;

StopSignalWatcher& StopSignalWatcher::operator=(StopSignalWatcher&& other) noexcept {
  if (this != &other) {
    StopSignalWatcher discarded(std::move(*this));  // restores this one's handlers first
    state_ = std::move(other.state_);
  }
  return *this;
}

StopSignalWatcher::~StopSignalWatcher() {
  if (!state_) return;  // moved from
  ::sigaction(SIGINT, &state_->previous_interrupt, nullptr);
  ::sigaction(SIGTERM, &state_->previous_terminate, nullptr);
  signal_pipe_write.store(-1);
  const unsigned char stop = 0;
  [[maybe_unused]] const auto written = ::write(state_->pipe_write, &stop, 1);
  if (state_->watcher.joinable()) state_->watcher.join();
  ::close(state_->pipe_read);
  ::close(state_->pipe_write);
}

int StopSignalWatcher::received_signal() const noexcept { return state_ ? state_->received.load() : 0; }

}  // namespace llmprof
