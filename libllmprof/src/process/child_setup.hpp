// The Boost.Process v2 initializer that prepares the forked child before exec: its own process
// group, default signal handling, a signal when its parent dies, and the environment block.
//
// Why each step (Boost 1.81):
// - v2 has no process-group option: on_exec_setup (between fork and exec) calls setpgid(0, 0) so
//   that a timeout or a stop can signal the whole tree with kill(-pgid, ...).
// - On an exec failure the 1.81 launcher ends the forked child with exit(), which would run the
//   parent's atexit handlers and static destructors in the child; on_exec_error calls _exit() first
//   (the error number has already been sent to the parent by then).
// - v2's process_environment::on_setup is never defined in header-only mode (impl/environment.ipp
//   is not included), so on_setup hands the launcher the environment block itself.
#pragma once

#include <cerrno>
#include <csignal>

#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <boost/system/error_code.hpp>

namespace llmprof::detail {

struct ChildSetup {
  const char* const* environment;  // NAME=value entries, null-terminated; outlives the launch

  // In the parent, before fork.
  template <typename Launcher, typename Path>
  boost::system::error_code on_setup(Launcher& launcher, const Path&, const char* const*) {
    launcher.env = environment;
    return {};
  }

  // In the forked child, before exec: async-signal-safe calls only.
  template <typename Launcher, typename Path>
  boost::system::error_code on_exec_setup(Launcher&, const Path&, const char* const*) {
    // Its own process group, so a timeout or a stop can signal the whole tree.
    if (::setpgid(0, 0) != 0) return {errno, boost::system::system_category()};
    // A parent that handles SIGINT/SIGTERM on a sigwait() thread blocks them in every thread, and a
    // blocked mask or an ignored disposition survives exec: the child would then ignore our SIGTERM.
    sigset_t nothing_blocked;
    sigemptyset(&nothing_blocked);
    ::sigprocmask(SIG_SETMASK, &nothing_blocked, nullptr);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    for (const int signal_number : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE}) {
      ::sigaction(signal_number, &default_action, nullptr);
    }
#if defined(__linux__)
    // If this process dies without stopping the child (SIGKILL, crash), the child gets a SIGTERM.
    // The kernel sends it when the *thread* that forked exits (prctl(2)), not the process: the fork runs on the
    // thread that called ProcessRunner::run, which returns only after the child has exited and been reaped, so
    // a harness thread that ends (a pool's worker, a std::async task) never outlives a child it started. It
    // reaches this child only: what the child started gets nothing, which is why a SIGINT/SIGTERM the host
    // left at its default action is turned into a stop of the whole tree (signal_fallback.hpp).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    return {};
  }

  // Variadic because 1.81 detects this hook with a five-argument signature but calls it with four.
  template <typename... Arguments>
  void on_exec_error(Arguments&&...) {
    ::_exit(127);
  }
};

}  // namespace llmprof::detail
