// SignalFallbackScope (signal_fallback.hpp): a handler installed only where the host left the default action,
// counted across threads (two DeepProfilers at once share one handler).
#include "process/signal_fallback.hpp"

#include <signal.h>

#include <array>
#include <atomic>
#include <mutex>

namespace llmprof::detail {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr std::size_t kMaxGroups = 64;  // children running at once; beyond that a second signal misses some

std::atomic<int> received{0};
std::array<std::atomic<pid_t>, kMaxGroups> groups{};
static_assert(std::atomic<pid_t>::is_always_lock_free);  // read and written from a signal handler
static_assert(std::atomic<int>::is_always_lock_free);

std::mutex scope_mutex;
int scopes = 0;                  // under scope_mutex
bool installed[2] = {false, false};  // which of kSignals had their default action replaced

extern "C" void on_fallback_signal(int signal_number) {
  int expected = 0;
  if (received.compare_exchange_strong(expected, signal_number)) return;  // the first: the runs stop themselves
  // A second one: end the children's groups now, then the host, as the default action would have.
  for (auto& group : groups)
    if (const pid_t member = group.load(); member > 0) ::kill(-member, SIGKILL);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

}  // namespace

SignalFallbackScope::SignalFallbackScope() {
  std::lock_guard lock(scope_mutex);
  if (scopes++ > 0) return;
  received.store(0);
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    installed[i] = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (!installed[i]) continue;
    struct sigaction action {};
    action.sa_handler = on_fallback_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(kSignals[i], &action, nullptr);
  }
}

SignalFallbackScope::~SignalFallbackScope() {
  std::lock_guard lock(scope_mutex);
  if (--scopes > 0) return;
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    if (!installed[i]) continue;
    // Only while ours is still the handler: a StopSignalWatcher started during the run put its own in place.
    struct sigaction current {};
    ::sigaction(kSignals[i], nullptr, &current);
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == on_fallback_signal)
      ::sigaction(kSignals[i], &default_action, nullptr);
  }
  // The host left this signal at its default action: it ends the host now, as it would have when it came, only
  // after the runs have stopped their children and closed their records.
  if (const int signal_number = received.exchange(0); signal_number != 0) ::raise(signal_number);
}

int fallback_signal_received() noexcept { return received.load(); }

void register_child_group(pid_t group) noexcept {
  for (auto& slot : groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void unregister_child_group(pid_t group) noexcept {
  for (auto& slot : groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

}  // namespace llmprof::detail
