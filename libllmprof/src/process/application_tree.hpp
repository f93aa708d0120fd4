// Which of a profiler's descendants are the application it profiles: what a pass end may signal
// (DescendantEnding). A pure rule over a snapshot of the tree, so that it is tested on trees of any shape;
// DescendantTracker takes the snapshot from /proc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace llmprof::detail {

// One process of the session's tree as first seen.
struct TreeProcess {
  pid_t pid = 0;
  // The parent when first seen: a process re-parented since (its parent died) still belongs to that parent's
  // tree. A process first seen after it was re-parented to this process (the subreaper) has `self` here.
  pid_t parent = 0;
  bool alive = true;
  // Runs the profiler: ncu itself, or a launcher named like it (a script `ncu` run by its interpreter, `sudo ncu`).
  bool profiler = false;
  // Runs the tool's own executable (an Nsight binary): never signalled, whatever its place in the tree.
  bool tool = false;
  // It had been re-parented to `self` when the ending began: it left the application (a daemon it left).
  bool orphaned = false;
};

// The live processes of the application under `root`, the session's child (ncu, or a launcher that runs ncu),
// given `self` (this process, the subreaper) and `targets` (the processes the profiler says it profiles). `tree`
// holds the root's descendants and may hold the root itself, whose `profiler` says it runs the profiler.
//
// The application's roots are, for each target, its ancestor just below the deepest profiler on its path to
// `root` (ncu's direct child: the front of a serving engine, which never touches CUDA and is no target). Where no
// process runs the profiler by name, `root` is taken as the profiler there (ncu.path is ncu under another name); a
// target whose path leaves the tree (re-parented to `self`) counts from its topmost ancestor below `self`. Without
// a target under the profiler, the children of the deepest process that runs the profiler are roots too (none
// while no process does: a launcher still starting ncu has no application yet). Processes re-parented to `self`
// before they were first seen (they left the application) are roots as well.
//
// The result is every live process in the roots' subtrees, never `root`, `self`, a profiler or a tool process,
// nor an ancestor of a profiler (a launcher in front of ncu).
// `include_left` false leaves out the processes that had left the application when its ending began (`orphaned`:
// re-parented to `self` by then, whether first seen before or after) and what they started, unless they are
// targets (a daemon the workload left on purpose, for a run that leaves survivors running). A process first seen
// after the ending began, re-parented to `self` already, was orphaned by the ending and stays the application's.
std::vector<pid_t> application_processes(const std::vector<TreeProcess>& tree, pid_t root, pid_t self,
                                         const std::vector<pid_t>& targets, bool include_left = true);

// Whether a process is the program `name`: its executable's file name (/proc/PID/exe), or the first argument that
// is no option after argv[0] (the script an interpreter runs, `python3 /path/ncu`, `bash /usr/local/cuda/bin/ncu`;
// the command a launcher runs, `sudo -E ncu`). `arguments` is argv as /proc/PID/cmdline gives it.
bool runs_program(const std::string& executable, const std::vector<std::string>& arguments, const std::string& name);

}  // namespace llmprof::detail
