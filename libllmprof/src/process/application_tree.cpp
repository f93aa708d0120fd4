// The rule of application_tree.hpp: the application's roots below the profiler, and their subtrees.
#include "process/application_tree.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace llmprof::detail {
namespace {

class Tree {
 public:
  Tree(const std::vector<TreeProcess>& processes, pid_t root, pid_t self) : root_(root), self_(self) {
    for (const auto& process : processes) {
      if (process.pid == root) root_profiler_ = process.profiler;
      if (process.pid == root || process.pid == self) continue;
      by_pid_[process.pid] = &process;
      children_[process.parent].push_back(process.pid);
    }
    for (const auto& [pid, process] : by_pid_)
      if (process->profiler) profilers_.push_back(pid);
    if (root_profiler_) profilers_.push_back(root);
  }

  bool profiler_identified() const { return !profilers_.empty(); }
  // On a target's path, where no process runs the profiler by name, the root is taken for it (ncu.path is ncu
  // itself, under another name).
  bool is_profiler(pid_t pid) const {
    if (pid == root_) return root_profiler_ || !profiler_identified();
    const auto found = by_pid_.find(pid);
    return found != by_pid_.end() && found->second->profiler;
  }

  // The parent of `pid` in the tree; nullopt for the root, `self` and processes the tree does not hold.
  std::optional<pid_t> parent(pid_t pid) const {
    const auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return std::nullopt;
    return found->second->parent;
  }

  struct ApplicationRoot {
    pid_t pid;
    bool left_the_tree;  // the target's topmost ancestor below `self`, not a profiler's child
  };
  // The root of the application that `target` belongs to (see application_processes), if it is in the tree.
  std::optional<ApplicationRoot> application_root(pid_t target) const {
    if (!by_pid_.count(target) || is_profiler(target)) return std::nullopt;
    std::set<pid_t> seen;
    pid_t below = target;
    for (;;) {
      const auto up = parent(below);
      if (!up || !seen.insert(below).second) return std::nullopt;  // a parent the tree does not hold, or a cycle
      if (*up == self_) return ApplicationRoot{below, true};
      if (is_profiler(*up)) return ApplicationRoot{below, false};  // the root too, where no profiler is identified
      if (*up == root_) return std::nullopt;                       // beside the profiler, not under it
      below = *up;
    }
  }

  // The deepest profiler's children; none while no process runs the profiler (a launcher still starting it).
  std::vector<pid_t> children_of_deepest_profiler() const {
    if (!profiler_identified()) return {};
    pid_t deepest = profilers_.front();
    std::size_t deepest_depth = 0;
    for (const pid_t profiler : profilers_) {
      const std::size_t depth = depth_of(profiler);
      if (depth > deepest_depth) std::tie(deepest, deepest_depth) = std::pair{profiler, depth};
    }
    return children(deepest);
  }

  std::vector<pid_t> left_the_tree() const { return children(self_); }

  // The profilers, the root and every ancestor of a profiler: a launcher in front of ncu.
  std::set<pid_t> spared() const {
    std::set<pid_t> spared = {root_, self_};
    for (pid_t pid : profilers_) {
      if (pid == root_) continue;
      for (std::size_t steps = 0; steps <= by_pid_.size() && spared.insert(pid).second; ++steps) {
        const auto up = parent(pid);
        if (!up) break;
        pid = *up;
      }
    }
    for (const auto& [pid, process] : by_pid_)
      if (process->tool) spared.insert(pid);
    return spared;
  }

  std::vector<pid_t> children(pid_t pid) const {
    const auto found = children_.find(pid);
    return found == children_.end() ? std::vector<pid_t>{} : found->second;
  }

  // Runs an Nsight binary (TreeProcess::tool); false for the root and `self`, which are never walked through.
  bool is_tool(pid_t pid) const {
    const auto found = by_pid_.find(pid);
    return found != by_pid_.end() && found->second->tool;
  }

  bool alive(pid_t pid) const {
    const auto found = by_pid_.find(pid);
    return found != by_pid_.end() && found->second->alive;
  }

 private:
  std::size_t depth_of(pid_t pid) const {
    std::size_t depth = 0;
    for (auto up = parent(pid); up && depth <= by_pid_.size(); up = parent(*up)) ++depth;
    return depth;
  }

  pid_t root_;
  pid_t self_;
  bool root_profiler_ = false;
  std::map<pid_t, const TreeProcess*> by_pid_;
  std::map<pid_t, std::vector<pid_t>> children_;
  std::vector<pid_t> profilers_;
};

}  // namespace

std::vector<pid_t> application_processes(const std::vector<TreeProcess>& tree, pid_t root, pid_t self,
                                         const std::vector<pid_t>& targets, bool include_left) {
  const Tree processes(tree, root, self);
  std::vector<pid_t> roots;
  bool under_profiler = false;
  for (const pid_t target : targets) {
    const auto found = processes.application_root(target);
    if (!found) continue;
    roots.push_back(found->pid);
    under_profiler = under_profiler || !found->left_the_tree;
  }
  if (!under_profiler) {
    const auto children = processes.children_of_deepest_profiler();
    roots.insert(roots.end(), children.begin(), children.end());
  }
  // Re-parented to `self` before they were first seen. Without include_left, those that had left the application
  // when its ending began (`orphaned`) are spared below; one first seen only after that, re-parented already, was
  // orphaned by the ending itself and is the application's: a child the application forked just before the
  // ending's SIGTERM ended it (a process_tree test beside two busy loops failed 10 runs in 25 on such a `sleep 600`,
  // left running).
  const auto left = processes.left_the_tree();
  roots.insert(roots.end(), left.begin(), left.end());

  std::set<pid_t> spared = processes.spared();
  if (!include_left) {
    for (const auto& process : tree)
      if (process.orphaned && std::find(targets.begin(), targets.end(), process.pid) == targets.end())
        spared.insert(process.pid);
  }
  // A tool process is spared but walked through: what it runs that is no Nsight binary is the application's. Nsight
  // Compute ships a TreeLauncherSubreaper (an Nsight binary, so a tool) that can stand between ncu and the
  // application; stopping the walk at a tool is the likeliest reason the 1b example ran to its end under ncu 2025.3.1
  // on the H100, 27 s past a plan met at 17.2 s, while the tree's shape there is still to be recorded.
  std::set<pid_t> visited, members;
  std::vector<pid_t> frontier;
  const auto enterable = [&](pid_t pid) { return !spared.count(pid) || processes.is_tool(pid); };
  for (const pid_t pid : roots)
    if (enterable(pid)) frontier.push_back(pid);
  while (!frontier.empty()) {
    const pid_t pid = frontier.back();
    frontier.pop_back();
    if (!visited.insert(pid).second) continue;
    if (!spared.count(pid)) members.insert(pid);
    for (const pid_t child : processes.children(pid))
      if (enterable(child)) frontier.push_back(child);
  }
  std::vector<pid_t> live;
  for (const pid_t pid : members)
    if (processes.alive(pid)) live.push_back(pid);
  return live;
}

bool runs_program(const std::string& executable, const std::vector<std::string>& arguments, const std::string& name) {
  namespace fs = std::filesystem;
  if (name.empty()) return false;
  if (!executable.empty() && fs::path(executable).filename() == name) return true;
  for (std::size_t i = 1; i < arguments.size(); ++i) {
    if (arguments[i].empty() || arguments[i].front() == '-') continue;
    return fs::path(arguments[i]).filename() == name;
  }
  return false;
}

}  // namespace llmprof::detail
