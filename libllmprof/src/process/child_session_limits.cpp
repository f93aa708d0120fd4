// The session's timer tick (child_session.hpp): whether the child has exited, its deadline and stop
// requests, ending its descendants on request, and stopping its whole process tree (SIGTERM, then SIGKILL
// after the grace).
#include <csignal>
#include <thread>

#include <sys/wait.h>

#include "process/child_session.hpp"
#include "process/signal_fallback.hpp"

namespace llmprof::detail {
namespace {

using SteadyClock = ChildSession::SteadyClock;

// How often the exit status, the stop flag and the deadline are checked.
constexpr auto poll_interval = std::chrono::milliseconds(5);
// After a normal exit, how long output is still read from processes the child left behind.
constexpr auto drain_limit = std::chrono::milliseconds(500);
// How long descendants sent SIGKILL may take to exit before they are reported as survivors: the kernel tears a
// killed process down before it is gone, and a GPU process's teardown (its CUDA context, its mappings) is not
// instant. Only a process that needed SIGKILL makes the stage wait, and only until it is gone.
constexpr auto killed_exit_wait = std::chrono::seconds(5);
// How often the tree is read while an ending may come (watch_tree).
constexpr auto tree_watch_interval = std::chrono::milliseconds(500);

}  // namespace

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
    if (stop_requested_.load() || fallback_signal_received() != 0) {
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
// write what it gathered from them. Only the application's processes (see DescendantEnding).
void ChildSession::end_descendants_on_request(SteadyClock::time_point now) {
  if (!spec_.end_descendants || !descendants_) return;
  if (!descendants_ending_began_) {
    DescendantEnding& ending = *spec_.end_descendants;
    if (!ending.requested() && spec_.end_descendants_after && now - started_at_ >= *spec_.end_descendants_after) {
      ending_at_limit_ = true;
      ending.request();
    }
    if (!ending.requested()) {
      watch_tree(now);
      return;
    }
    descendants_ending_began_ = now;
    tree_read_at_ = now;
    signal_ending(spec_.descendants_kill_grace.count() > 0 ? SIGTERM : SIGKILL);
  } else if (!descendants_kill_sent_ && now - *descendants_ending_began_ >= spec_.descendants_kill_grace) {
    kill_ending(now);
  } else if (now - tree_read_at_ >= tree_watch_interval) {
    // What the application started since (a launcher that had not started ncu's application yet, a worker
    // spawned while the front shut down) gets the same signal; what already had it does not get it again.
    tree_read_at_ = now;
    signal_ending(descendants_kill_sent_ ? SIGKILL : SIGTERM);
  }
}

// Parent links as first seen are what place a process in the application once its parent is gone (a worker whose
// front died): the tree is read when the child names a new target, while its ancestors still run, and twice a
// second besides (a look at /proc took 6 ms with 103 processes on a loaded 2-core machine: about 1% of a core).
void ChildSession::watch_tree(SteadyClock::time_point now) {
  const std::size_t targets = spec_.end_descendants->targets().size();
  if (targets == targets_seen_ && now - tree_read_at_ < tree_watch_interval) return;
  targets_seen_ = targets;
  tree_read_at_ = now;
  descendants_->refresh();
}

void ChildSession::kill_ending(SteadyClock::time_point now) {
  descendants_kill_sent_ = true;
  descendants_killed_at_ = now;
  signal_ending(SIGKILL);
}

ApplicationQuery ChildSession::application_query() const {
  const DescendantEnding& ending = *spec_.end_descendants;
  std::vector<pid_t> targets;
  for (const int target : ending.targets()) targets.push_back(target);
  // A run that leaves survivors running leaves the processes that left the application too (a daemon).
  return {std::move(targets), ending.profiler_name(), spec_.is_tool_executable, spec_.end_survivors_after.has_value()};
}

void ChildSession::signal_ending(int signal_number) {
  auto signalled = descendants_->signal_application(application_query(), signal_number);
  if (signal_number == SIGKILL) ending_killed_.insert(ending_killed_.end(), signalled.begin(), signalled.end());
}

// Checked every tick once the child has exited; the tree is read again (what the application started since) only
// every tree_watch_interval.
bool ChildSession::ending_alive(SteadyClock::time_point now) {
  const bool look_again = now - tree_read_at_ >= tree_watch_interval;
  if (look_again) tree_read_at_ = now;
  return descendants_->application_alive(application_query(), look_again);
}

// After the child has exited: when we were stopping the tree, give the rest of the group the same
// grace, then SIGKILL whatever is left.
bool ChildSession::tree_finished(SteadyClock::time_point now) {
  // An ending the child outlived by less than its grace: what ignored SIGTERM still gets SIGKILL (ncu exits as
  // soon as its application is gone, long before the grace, and a SIGTERM-proof grandchild of the application
  // would otherwise outlive the run, holding its port).
  // A process SIGKILL was sent to is gone once the kernel has run its exit: until then (up to killed_exit_wait; on a
  // loaded 2-core machine a killed worker still showed as sleeping right after the signal) it is not a survivor.
  if (stop_reason_ == StopReason::none && descendants_ending_began_ && descendants_ && ending_alive(now)) {
    if (!descendants_kill_sent_) {
      if (now - *descendants_ending_began_ < spec_.descendants_kill_grace) return false;
      kill_ending(now);
      return false;
    }
    if (now - *descendants_killed_at_ < killed_exit_wait) return false;
  }
  if (stop_reason_ == StopReason::none || kill_sent_) return true;
  if (!group_alive()) return true;
  if (now - stop_began_ < spec_.kill_grace) return false;
  signal_tree(SIGKILL);
  return true;
}

bool ChildSession::output_finished(SteadyClock::time_point now) const {
  if (!stdout_pump_.open && !stderr_pump_.open) return true;
  // Something the child left behind still holds the pipe; do not wait for it forever.
  return stop_requested_.load() || fallback_signal_received() != 0 || now - exited_at_ >= drain_limit;
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

void ChildSession::end_survivors(std::chrono::milliseconds grace) {
  // Polled, not waited on: the survivors are re-parented orphans or live in other sessions, and reaping the
  // ones that are now our children is what lets any_alive() see them go.
  // The tool's own survivors (ProcessSpec::is_tool_executable) are left: a profiler's agent finishes its report.
  const auto& is_tool = spec_.is_tool_executable;
  const auto wait_while_alive = [this, &is_tool](SteadyClock::time_point deadline) {
    while (descendants_->workload_alive(is_tool) && SteadyClock::now() < deadline) {
      descendants_->reap_orphans();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    descendants_->reap_orphans();
  };
  // refresh() first each time: a survivor that loops over short children (`while :; do sleep 0.05; done`) has one
  // started since the last look, which would outlive its parent's SIGKILL and turn up in the next stage's list.
  descendants_->refresh();
  descendants_->signal_workload(SIGTERM, is_tool);
  wait_while_alive(SteadyClock::now() + grace);
  if (!descendants_->workload_alive(is_tool)) return;
  descendants_->refresh();
  survivors_killed_ = descendants_->survivors_by_owner(is_tool).first;
  descendants_->signal_workload(SIGKILL, is_tool);
  wait_while_alive(SteadyClock::now() + std::chrono::seconds(2));
}

bool ChildSession::group_alive() const {
  if (process_group_ > 0 && process_group_has_live_members(process_group_)) return true;
  return descendants_ && descendants_->any_alive();
}

}  // namespace llmprof::detail
