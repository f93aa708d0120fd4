// StopSignalWatcher: SIGINT/SIGTERM become a call on a normal thread (to stop the running children).
//
// A self-pipe rather than sigwait: sigwait needs the signals blocked, and a blocked mask is inherited
// through fork/exec, so the workload and the profilers would start with SIGTERM blocked and could only
// be stopped with SIGKILL. The handler here only writes the signal number to a pipe; the watcher
// thread reads it and runs the callback outside signal context.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "llmprof/deep_profiler.hpp"

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

StopSignalWatcher::StopSignalWatcher(std::function<void(int)> on_signal) : state_(std::make_unique<State>()) {
  int descriptors[2];
  if (::pipe2(descriptors, O_CLOEXEC) != 0) throw std::runtime_error("StopSignalWatcher: pipe2 failed");
  state_->pipe_read = descriptors[0];
  state_->pipe_write = descriptors[1];
  signal_pipe_write.store(state_->pipe_write);
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &state_->previous_interrupt);
  ::sigaction(SIGTERM, &action, &state_->previous_terminate);
  State* state = state_.get();
  state_->watcher = std::thread([state, on_signal = std::move(on_signal)] {
    unsigned char byte = 0;
    while (true) {
      const auto count = ::read(state->pipe_read, &byte, 1);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0 || byte == 0) return;  // 0: the destructor's wake-up
      state->received.store(byte);
      if (on_signal) on_signal(byte);
    }
  });
}

StopSignalWatcher::~StopSignalWatcher() {
  ::sigaction(SIGINT, &state_->previous_interrupt, nullptr);
  ::sigaction(SIGTERM, &state_->previous_terminate, nullptr);
  signal_pipe_write.store(-1);
  const unsigned char stop = 0;
  [[maybe_unused]] const auto written = ::write(state_->pipe_write, &stop, 1);
  if (state_->watcher.joinable()) state_->watcher.join();
  ::close(state_->pipe_read);
  ::close(state_->pipe_write);
}

int StopSignalWatcher::received_signal() const noexcept { return state_->received.load(); }

}  // namespace llmprof
