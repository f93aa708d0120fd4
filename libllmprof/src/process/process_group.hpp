// Process-group and descendant queries for the system ProcessRunner.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace llmprof::detail {

// True while some process of the group is still running. A zombie does not count: an orphaned
// grandchild killed by our SIGTERM stays a zombie until init reaps it, which some container inits
// do only every second or two, yet kill(-group, 0) still finds it. Linux reads /proc to tell live
// members from zombies; elsewhere this is kill(-group, 0).
bool process_group_has_live_members(pid_t group);

// The whole content of an open file descriptor (read to its end), or nullopt when a read fails. For
// /proc/<pid>/ files: a process that exits after its file was opened makes read() fail with ESRCH,
// which std::ifstream read through istreambuf_iterator turns into an exception (basic_filebuf::underflow)
// that nothing catches; a process that vanishes while we look is normal, not an error.
std::optional<std::string> read_whole_fd(int fd);
// read_whole_fd of `path` opened read-only; nullopt when it cannot be opened or read.
std::optional<std::string> read_proc_file(const std::string& path);

// Makes this process the subreaper of its descendants (PR_SET_CHILD_SUBREAPER, Linux): a grandchild
// whose parent exits is re-parented to us instead of to init, so it can still be found and killed.
// Idempotent; false where the kernel does not support it.
bool become_child_subreaper();

// What decides the application among a child's descendants (application_tree.hpp): the processes the profiler
// profiles, the profiler's program name ("ncu"; empty: the child is the profiler), and the tool's own executables.
struct ApplicationQuery {
  std::vector<pid_t> targets;
  std::string profiler_name;
  std::function<bool(const std::filesystem::path&)> is_tool;
  bool include_left = true;  // false: processes that left the application and are no target are spared
};

// The environment variable each launch sets in its child (launch_mark()): every descendant inherits it, so a
// process re-parented to this process carries the launch it descends from (/proc/PID/environ), even after the
// parent links that led to it are gone.
inline constexpr const char* launch_mark_variable = "LLMPROF_LAUNCH_ID";
// A mark no other launch of this process has had ("<pid>.<n>").
std::string next_launch_mark();

// The processes a child started, wherever they went: into another process group or session
// (setsid escapes kill(-group)), or re-parented to this process when their parent exited. Found by
// walking /proc's parent links from the child, and among this process's direct children (orphans re-parented to
// it, the subreaper) only those that descend from this launch: its mark in their environment, or, where the mark
// cannot be read or was cleared, the root's process group. A harness's own children and another launch's
// orphans (a second DeepProfiler's daemons in the same process) are never claimed.
class DescendantTracker {
 public:
  // `orphans_before_root`: orphans_now() taken before the root was forked (after it, a root that daemonises and
  // exits at once has already handed its daemon to us). `launch_mark`: the value of launch_mark_variable the root
  // was started with (empty: none was set, and orphans are told by their process group alone).
  DescendantTracker(pid_t root, std::set<std::pair<pid_t, unsigned long long>> orphans_before_root,
                    std::string launch_mark = {});
  // The processes re-parented to this process now (pid, start time).
  static std::set<std::pair<pid_t, unsigned long long>> orphans_now();
  ~DescendantTracker();
  DescendantTracker(const DescendantTracker&) = delete;
  DescendantTracker& operator=(const DescendantTracker&) = delete;

  // Adds the live descendants /proc shows now (call while the child lives, and before signalling).
  void refresh();
  // Sends the signal to every tracked process that is still the same process (pid and start time).
  void signal_all(int signal_number) const;
  // The application under the root (application_tree.hpp), refreshed first, sent the signal: every process the
  // rule finds now, and every one it found before that is still the same process (a SIGKILL after the SIGTERM
  // reaches what the SIGTERM did, even once the links that found it are gone), each once: called again, only the
  // processes found since get it. Returns "pid (name)" of each process signalled.
  std::vector<std::string> signal_application(const ApplicationQuery& query, int signal_number);
  // Whether a process of the application (as above) is still alive (zombies excluded); `look_again`: the tree is
  // read and the rule applied first, else only the processes found before are checked.
  bool application_alive(const ApplicationQuery& query, bool look_again = true);
  // "pid (name)" of each tracked process still alive (zombies excluded).
  std::vector<std::string> survivors() const;
  // Decides, by a process's executable (/proc/<pid>/exe now), whether it is the child tool's own.
  using ExecutableTest = std::function<bool(const std::filesystem::path&)>;
  // survivors() split by `is_tool` (unset: none is the tool's): {the workload's, the tool's}.
  std::pair<std::vector<std::string>, std::vector<std::string>> survivors_by_owner(const ExecutableTest& is_tool) const;
  // Sends the signal to the live tracked processes that are not the tool's; whether any such one is still alive.
  void signal_workload(int signal_number, const ExecutableTest& is_tool) const;
  bool workload_alive(const ExecutableTest& is_tool) const;
  bool any_alive() const;
  // Reaps tracked processes that died as our children (re-parented orphans), so no zombie stays.
  void reap_orphans() const;

 private:
  struct Tracked {
    pid_t pid;
    unsigned long long start_time;  // /proc/<pid>/stat field 22: tells a reused pid apart
    std::string name;
    pid_t parent = 0;  // when first seen
  };
  // The application's members now, added to application_ (pid and start time).
  void find_application(const ApplicationQuery& query);
  // The tracked processes still alive as themselves (same start time, not a zombie).
  std::vector<const Tracked*> alive() const;
  static bool is_tools(const Tracked& tracked, const ExecutableTest& is_tool);
  pid_t root_;
  // The root's start time: an orphan started before it cannot be its descendant (a daemon an earlier child
  // left behind, re-parented to us as the subreaper), and is never claimed.
  unsigned long long root_start_time_ = 0;
  // Whether an orphan (a direct child of this process that is not a launch's root) descends from the root.
  bool descends_from_launch(pid_t pid, pid_t process_group) const;
  std::string launch_mark_;
  // Orphans already re-parented to this process when the root started (pid, start time): an earlier child's
  // daemon, never the root's. The start-time rule alone cannot tell one started in the root's clock tick
  // (10 ms) from the root's own.
  std::set<std::pair<pid_t, unsigned long long>> orphans_before_root_;
  std::vector<Tracked> tracked_;
  // Found by find_application, ever (pid, start time), with the last signal sent to each (0: none yet).
  std::map<std::pair<pid_t, unsigned long long>, int> application_;
  bool application_looked_ = false;
  // Orphans when find_application first looked: they left the application before its ending (pid, start time).
  std::set<std::pair<pid_t, unsigned long long>> left_before_ending_;
};

}  // namespace llmprof::detail
