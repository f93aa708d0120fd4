// Process-group and descendant queries for the system ProcessRunner.
#include "process/process_group.hpp"

#include "process/application_tree.hpp"
#include "process/orphan_watchdog.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

namespace llmprof::detail {

std::optional<std::string> read_whole_fd(int fd) {
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) return content;
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    content.append(buffer, static_cast<std::size_t>(got));
  }
}

std::optional<std::string> read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto content = read_whole_fd(fd);
  ::close(fd);
  return content;
}

bool process_group_has_live_members(pid_t group) {
  if (::kill(-group, 0) != 0 && errno != EPERM) return false;
#if defined(__linux__)
  std::error_code error;
  // increment(error), not a range-for: the range-for's ++ throws when /proc changes under it, and processes
  // come and go while we look.
  for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const auto& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::optional<std::string> read = read_proc_file((entry.path() / "stat").string());
    if (!read) continue;  // the process ended while we looked
    const std::string& stat = *read;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long parent = 0;
    long member_group = 0;
    if (fields >> state >> parent >> member_group && member_group == group && state != 'Z' && state != 'X') {
      return true;
    }
  }
  return static_cast<bool>(error);  // /proc unreadable: trust kill()
#else
  return true;
#endif
}

namespace {

struct ProcessStat {
  pid_t pid = 0;
  pid_t parent = 0;
  pid_t process_group = 0;
  char state = 0;
  unsigned long long start_time = 0;
  std::string name;
};

std::optional<ProcessStat> read_stat(pid_t pid) {
  const std::optional<std::string> read = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  if (!read) return std::nullopt;  // no such process (any more)
  const std::string& stat = *read;
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessStat result;
  result.pid = pid;
  result.name = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 1));
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice num_threads itrealvalue starttime (fields 3..22)
  std::string skipped;
  fields >> result.state >> result.parent >> result.process_group;
  for (int field = 6; field <= 21 && fields; ++field) fields >> skipped;
  fields >> result.start_time;
  if (!fields) return std::nullopt;
  return result;
}

std::vector<ProcessStat> all_processes() {
  std::vector<ProcessStat> processes;
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto stat = read_stat(static_cast<pid_t>(std::stol(name)))) processes.push_back(std::move(*stat));
  }
  return processes;
}

// Roots of the children running now, so that one session never claims another's orphans.
std::mutex roots_mutex;
std::set<pid_t>& active_roots() {
  static std::set<pid_t> roots;
  return roots;
}

}  // namespace

bool become_child_subreaper() {
#if defined(__linux__)
  static const bool done = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  return done;
#else
  return false;
#endif
}

std::set<std::pair<pid_t, unsigned long long>> DescendantTracker::orphans_now() {
  std::set<std::pair<pid_t, unsigned long long>> orphans;
  for (const auto& process : all_processes())
    if (process.parent == ::getpid() && process.pid != orphan_watchdog_pid())
      orphans.insert({process.pid, process.start_time});
  return orphans;
}

std::string next_launch_mark() {
  static std::atomic<unsigned long long> launches{0};
  return std::to_string(::getpid()) + "." + std::to_string(++launches);
}

DescendantTracker::DescendantTracker(pid_t root, std::set<std::pair<pid_t, unsigned long long>> orphans_before_root,
                                     std::string launch_mark)
    : root_(root), launch_mark_(std::move(launch_mark)), orphans_before_root_(std::move(orphans_before_root)) {
  if (const auto stat = read_stat(root)) root_start_time_ = stat->start_time;
  std::lock_guard lock(roots_mutex);
  active_roots().insert(root);
}

DescendantTracker::~DescendantTracker() {
  std::lock_guard lock(roots_mutex);
  active_roots().erase(root_);
}

void DescendantTracker::refresh() {
  const auto processes = all_processes();
  std::map<pid_t, std::vector<const ProcessStat*>> children;
  for (const auto& process : processes) children[process.parent].push_back(&process);
  std::vector<pid_t> frontier = {root_};
  for (const auto& tracked : tracked_) frontier.push_back(tracked.pid);
  {
    // Orphans re-parented to us (the subreaper) that are not the root of another running session.
    std::lock_guard lock(roots_mutex);
    for (const auto* orphan : children[::getpid()]) {
      // Started before the root: not its descendant (jiffies since boot; equal ones are taken as ours).
      if (orphan->start_time < root_start_time_ || orphans_before_root_.count({orphan->pid, orphan->start_time}))
        continue;
      if (!active_roots().count(orphan->pid) && descends_from_launch(orphan->pid, orphan->process_group))
        frontier.push_back(orphan->pid);
    }
  }
  std::set<pid_t> seen = {root_};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    for (const auto* child : children[parent]) {
      if (!seen.insert(child->pid).second || child->state == 'Z' || child->state == 'X') continue;
      frontier.push_back(child->pid);
      const bool known = std::any_of(tracked_.begin(), tracked_.end(), [&](const Tracked& t) {
        return t.pid == child->pid && t.start_time == child->start_time;
      });
      if (!known) tracked_.push_back({child->pid, child->start_time, child->name, parent});
    }
    // An orphan itself (frontier entry that is our child) is a descendant too.
    if (parent != root_) {
      if (auto stat = read_stat(parent); stat && stat->parent == ::getpid() && stat->state != 'Z') {
        const bool known =
            std::any_of(tracked_.begin(), tracked_.end(), [&](const Tracked& t) { return t.pid == parent; });
        if (!known) tracked_.push_back({parent, stat->start_time, stat->name, stat->parent});
      }
    }
  }
}

bool DescendantTracker::descends_from_launch(pid_t pid, pid_t process_group) const {
  if (!launch_mark_.empty()) {
    if (const auto environment = read_proc_file("/proc/" + std::to_string(pid) + "/environ")) {
      const std::string prefix = std::string(launch_mark_variable) + "=";
      for (std::size_t begin = 0; begin < environment->size();) {
        const auto end = std::min(environment->find('\0', begin), environment->size());
        const std::string_view entry(environment->data() + begin, end - begin);
        if (entry.substr(0, prefix.size()) == prefix) return entry.substr(prefix.size()) == launch_mark_;
        begin = end + 1;
      }
    }
  }
  // No mark to read (cleared by `env -i`, or environ unreadable): the root's process group, which a daemon keeps
  // unless it called setpgid or setsid. Such a daemon is left alone: nothing says it is this launch's.
  return process_group == root_;
}

void DescendantTracker::signal_all(int signal_number) const {
  for (const auto& tracked : tracked_) {
    const auto stat = read_stat(tracked.pid);
    if (stat && stat->start_time == tracked.start_time && stat->state != 'Z') ::kill(tracked.pid, signal_number);
  }
}

std::vector<const DescendantTracker::Tracked*> DescendantTracker::alive() const {
  std::vector<const Tracked*> found;
  for (const auto& tracked : tracked_) {
    const auto stat = read_stat(tracked.pid);
    if (stat && stat->start_time == tracked.start_time && stat->state != 'Z' && stat->state != 'X')
      found.push_back(&tracked);
  }
  return found;
}

namespace {
std::string describe(pid_t pid, const std::string& name) { return std::to_string(pid) + " (" + name + ")"; }
}  // namespace

std::vector<std::string> DescendantTracker::survivors() const {
  std::vector<std::string> names;
  for (const Tracked* tracked : alive()) names.push_back(describe(tracked->pid, tracked->name));
  return names;
}

bool DescendantTracker::any_alive() const { return !alive().empty(); }

// The executable now, not when first seen: a process forked by the tool runs the tool's executable until it
// execs the workload, and refresh() may have seen it in between.
bool DescendantTracker::is_tools(const Tracked& tracked, const ExecutableTest& is_tool) {
  if (!is_tool) return false;
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/" + std::to_string(tracked.pid) + "/exe", error);
  return !error && is_tool(executable);
}

std::pair<std::vector<std::string>, std::vector<std::string>> DescendantTracker::survivors_by_owner(
    const ExecutableTest& is_tool) const {
  std::pair<std::vector<std::string>, std::vector<std::string>> split;
  for (const Tracked* tracked : alive())
    (is_tools(*tracked, is_tool) ? split.second : split.first).push_back(describe(tracked->pid, tracked->name));
  return split;
}

void DescendantTracker::signal_workload(int signal_number, const ExecutableTest& is_tool) const {
  for (const Tracked* tracked : alive())
    if (!is_tools(*tracked, is_tool)) ::kill(tracked->pid, signal_number);
}

bool DescendantTracker::workload_alive(const ExecutableTest& is_tool) const {
  const auto found = alive();
  return std::any_of(found.begin(), found.end(), [&](const Tracked* tracked) { return !is_tools(*tracked, is_tool); });
}

namespace {

// argv of a process, as /proc/PID/cmdline holds it (NUL-separated); empty when it is gone or a kernel thread.
std::vector<std::string> command_line_of(pid_t pid) {
  std::vector<std::string> arguments;
  const auto text = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
  if (!text) return arguments;
  std::size_t begin = 0;
  while (begin < text->size()) {
    const auto end = text->find('\0', begin);
    arguments.push_back(text->substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return arguments;
}

std::string executable_of(pid_t pid) {
  std::error_code error;
  const auto executable = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", error);
  return error ? std::string() : executable.string();
}

}  // namespace

void DescendantTracker::find_application(const ApplicationQuery& query) {
  refresh();
  // The processes orphaned when the ending began left the application by themselves; those it orphans (a worker's
  // child when the worker is killed) did not.
  const bool first_look = !application_looked_;
  application_looked_ = true;
  std::vector<TreeProcess> tree;
  std::map<pid_t, unsigned long long> start_times;
  for (const auto& tracked : tracked_) {
    const auto stat = read_stat(tracked.pid);
    TreeProcess process;
    process.pid = tracked.pid;
    process.parent = tracked.parent;
    process.alive = stat && stat->start_time == tracked.start_time && stat->state != 'Z' && stat->state != 'X';
    if (process.alive) {
      const std::pair member{tracked.pid, tracked.start_time};
      if (first_look && stat->parent == ::getpid()) left_before_ending_.insert(member);
      process.orphaned = left_before_ending_.count(member) > 0;
      const std::string executable = executable_of(tracked.pid);
      process.profiler = runs_program(executable, command_line_of(tracked.pid), query.profiler_name);
      process.tool = query.is_tool && !executable.empty() && query.is_tool(executable);
      start_times[tracked.pid] = tracked.start_time;
    }
    tree.push_back(process);
  }
  // The root itself: the profiler when the caller names none, else when it runs it (ncu.path is ncu).
  TreeProcess root;
  root.pid = root_;
  root.parent = ::getpid();
  root.profiler = query.profiler_name.empty() ||
                  runs_program(executable_of(root_), command_line_of(root_), query.profiler_name);
  tree.push_back(root);
  for (const pid_t pid : application_processes(tree, root_, ::getpid(), query.targets, query.include_left))
    application_.emplace(std::pair{pid, start_times.at(pid)}, 0);
}

std::vector<std::string> DescendantTracker::signal_application(const ApplicationQuery& query, int signal_number) {
  find_application(query);
  std::vector<std::string> signalled;
  for (auto& [member, last_signal] : application_) {
    const auto stat = read_stat(member.first);
    if (last_signal == signal_number || !stat || stat->start_time != member.second || stat->state == 'Z') continue;
    last_signal = signal_number;
    if (::kill(member.first, signal_number) == 0) signalled.push_back(describe(member.first, stat->name));
  }
  return signalled;
}

bool DescendantTracker::application_alive(const ApplicationQuery& query, bool look_again) {
  if (look_again) find_application(query);
  return std::any_of(application_.begin(), application_.end(), [](const auto& entry) {
    const auto& [pid, start_time] = entry.first;
    const auto stat = read_stat(pid);
    return stat && stat->start_time == start_time && stat->state != 'Z' && stat->state != 'X';
  });
}

void DescendantTracker::reap_orphans() const {
  for (const auto& tracked : tracked_) {
    const auto stat = read_stat(tracked.pid);
    if (stat && stat->start_time == tracked.start_time && stat->parent == ::getpid())
      ::waitpid(tracked.pid, nullptr, WNOHANG);
  }
}

}  // namespace llmprof::detail
