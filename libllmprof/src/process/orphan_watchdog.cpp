// The orphan watchdog (orphan_watchdog.hpp). It is forked from a host that may run many threads, so between
// fork and _exit it makes async-signal-safe calls only (signal-safety(7)): no allocation, no locks, no streams.
#include "process/orphan_watchdog.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <mutex>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace llmprof::detail {
namespace {

// Process groups a host runs at once; a group past this is not watched (the host's own stop still ends it).
constexpr std::size_t kMaxGroups = 256;
// Between the groups' SIGTERM and their SIGKILL: nsys and ncu write what they gathered on SIGTERM (the 1b example's
// nsys report took under 2 s to write on the H100), and nobody waits on them any more.
constexpr int kKillAfterMilliseconds = 5000;
constexpr int kPollMilliseconds = 50;

std::mutex start_mutex;
// The host's end of the socket pair, and the host it belongs to: a fork() of the host inherits both, and must
// neither talk to its parent's watchdog nor keep it from seeing its host's end.
std::atomic<int> host_end{-1};
std::atomic<pid_t> host{0};
std::atomic<pid_t> watchdog{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);  // read from a signal handler (send_message)

void sleep_milliseconds(int milliseconds) noexcept {
  timespec interval{0, static_cast<long>(milliseconds) * 1'000'000L};
  while (::nanosleep(&interval, &interval) != 0 && errno == EINTR) {
  }
}

// Everything but `keep`: the watchdog must not hold the host's pipes and sockets open (a CI reading the host's
// output would wait for it).
void close_other_descriptors(int keep, int highest) noexcept {
#if defined(SYS_close_range)
  if ((keep == 0 || ::syscall(SYS_close_range, 0U, static_cast<unsigned>(keep - 1), 0U) == 0) &&
      ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U) == 0)
    return;
#endif
  for (int descriptor = 0; descriptor <= highest; ++descriptor)
    if (descriptor != keep) ::close(descriptor);
}

void detach_from_host(int keep, int highest) noexcept {
  // Its own session: a Ctrl-C to the host's terminal or a kill of the host's group is the host's to handle; the
  // watchdog acts on the host's death, which it learns from the socket.
  ::setsid();
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD})
    ::sigaction(signal_number, &default_action, nullptr);
  sigset_t nothing_blocked;
  sigemptyset(&nothing_blocked);
  ::sigprocmask(SIG_SETMASK, &nothing_blocked, nullptr);
  close_other_descriptors(keep, highest);
  if (const int null = ::open("/dev/null", O_RDWR); null >= 0) {
    for (int standard = 0; standard <= 2; ++standard)
      if (standard != null) ::dup2(null, standard);
    if (null > 2) ::close(null);
  }
#if defined(__linux__)
  ::prctl(PR_SET_NAME, "llmprof-watch", 0, 0, 0);
#endif
}

void end_groups(std::array<pid_t, kMaxGroups>& groups) noexcept {
  bool any_left = false;
  for (auto& group : groups) {
    if (group > 0 && ::kill(-group, SIGTERM) == 0)
      any_left = true;
    else
      group = 0;
  }
  for (int waited = 0; any_left && waited < kKillAfterMilliseconds; waited += kPollMilliseconds) {
    sleep_milliseconds(kPollMilliseconds);
    any_left = false;
    for (auto& group : groups) {
      if (group > 0 && ::kill(-group, 0) != 0) group = 0;
      any_left = any_left || group > 0;
    }
  }
  for (const pid_t group : groups)
    if (group > 0) ::kill(-group, SIGKILL);
}

[[noreturn]] void watch(int socket, int highest) noexcept {
  detach_from_host(socket, highest);
  std::array<pid_t, kMaxGroups> groups{};
  for (;;) {
    std::int32_t message = 0;
    const ssize_t received = ::recv(socket, &message, sizeof message, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received <= 0) break;  // end of file: every copy of the host's end is closed, so the host is gone
    if (received != sizeof message || message == 0) continue;
    const pid_t group = message > 0 ? message : -message;
    for (auto& slot : groups) {
      if (message > 0 && slot == 0) {
        slot = group;
        break;
      }
      if (message < 0 && slot == group) {
        slot = 0;
        break;
      }
    }
  }
  end_groups(groups);
  ::_exit(0);
}

// The highest descriptor the close loop must reach where close_range(2) is missing (Linux before 5.9).
int highest_descriptor() noexcept {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > 65536)
    return 65535;
  return static_cast<int>(limit.rlim_cur) - 1;
}

// True while the watchdog this host started runs (false once it was reaped or auto-reaped: SIGCHLD ignored).
bool watchdog_running(pid_t pid) noexcept { return pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0; }

void send_message(std::int32_t message) noexcept {
  const int descriptor = host_end.load();
  if (descriptor < 0 || host.load() != ::getpid()) return;
  // MSG_NOSIGNAL: a watchdog that died must not take the host down with SIGPIPE. MSG_DONTWAIT: a stopped one must
  // not block a launch; a lost message costs at most a stale group in its table.
  while (::send(descriptor, &message, sizeof message, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR) {
  }
}

}  // namespace

bool start_orphan_watchdog() noexcept {
  std::lock_guard lock(start_mutex);
  const pid_t self = ::getpid();
  if (host.load() == self && watchdog_running(watchdog.load())) return true;
  if (const int stale = host_end.exchange(-1); stale >= 0) ::close(stale);  // a dead watchdog's, or our parent's
  watchdog.store(0);
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) return false;
  const int highest = highest_descriptor();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    return false;
  }
  if (pid == 0) {
    ::close(ends[1]);
    watch(ends[0], highest);
  }
  ::close(ends[0]);
  host.store(self);
  host_end.store(ends[1]);
  watchdog.store(pid);
  return true;
}

pid_t orphan_watchdog_pid() noexcept { return host.load() == ::getpid() ? watchdog.load() : 0; }

void watch_child_group(pid_t group) noexcept {
  if (group > 0) send_message(static_cast<std::int32_t>(group));
}

void unwatch_child_group(pid_t group) noexcept {
  if (group > 0) send_message(-static_cast<std::int32_t>(group));
}

}  // namespace llmprof::detail
