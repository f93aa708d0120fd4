// The rule that tells the application ncu profiles from ncu, its launchers and everything else (process layer,
// process/application_tree.hpp), on trees of each shape a pass end meets. Pids are made up; each expectation
// is read off the tree drawn above it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "process/application_tree.hpp"

using llmprof::detail::application_processes;
using llmprof::detail::runs_program;
using llmprof::detail::TreeProcess;

namespace {

constexpr pid_t self = 1;   // deep-profile, the subreaper
constexpr pid_t root = 10;  // the session's child: ncu.path

TreeProcess process(pid_t pid, pid_t parent) { return {pid, parent, true, false, false}; }
TreeProcess profiler(pid_t pid, pid_t parent) { return {pid, parent, true, true, false}; }
TreeProcess dead(pid_t pid, pid_t parent) { return {pid, parent, false, false, false}; }
TreeProcess tool(pid_t pid, pid_t parent) { return {pid, parent, true, false, true}; }

std::vector<pid_t> sorted(std::vector<pid_t> pids) {
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace

TEST_CASE("the application is ncu's child and all under it, found from the worker ncu names", "[ownership]") {
  // ncu (root) -> front 20 -> worker 21 (target) -> 22; front -> resource tracker 23.
  const std::vector<TreeProcess> tree = {profiler(root, self), process(20, root), process(21, 20), process(22, 21),
                                         process(23, 20)};
  CHECK(sorted(application_processes(tree, root, self, {21})) == std::vector<pid_t>{20, 21, 22, 23});
  SECTION("the same without a target: every child of ncu") {
    CHECK(sorted(application_processes(tree, root, self, {})) == std::vector<pid_t>{20, 21, 22, 23});
  }
  SECTION("ncu under a name nothing recognises: the root is taken for it on the target's path, not without one") {
    // A launcher still starting ncu (pyenv's shim runs helpers under bash) has children that are no application.
    std::vector<TreeProcess> unnamed = tree;
    unnamed.front().profiler = false;
    CHECK(sorted(application_processes(unnamed, root, self, {21})) == std::vector<pid_t>{20, 21, 22, 23});
    CHECK(application_processes(unnamed, root, self, {}).empty());
  }
}

TEST_CASE("ncu behind a launcher: the launcher, ncu and the launcher's other children are spared", "[ownership]") {
  // launcher (root: sudo, a script) -> ncu 11 (by name) -> front 20 -> worker 21 (target); launcher -> helper 12;
  // ncu -> a second application child 24 (ncu's only: an application root too without a target).
  const std::vector<TreeProcess> tree = {profiler(11, root), process(12, root), process(20, 11), process(21, 20),
                                         process(24, 11)};
  CHECK(sorted(application_processes(tree, root, self, {21})) == std::vector<pid_t>{20, 21});
  SECTION("without a target, the children of ncu") {
    CHECK(sorted(application_processes(tree, root, self, {})) == std::vector<pid_t>{20, 21, 24});
  }
  SECTION("a target that is no longer in the tree: the same as none") {
    CHECK(sorted(application_processes(tree, root, self, {99})) == std::vector<pid_t>{20, 21, 24});
  }
  SECTION("a launcher named like ncu in front of the real one (CUDA's bin/ncu script): the deepest is ncu") {
    const std::vector<TreeProcess> chain = {profiler(11, root), profiler(13, 11), process(20, 13), process(21, 20)};
    CHECK(sorted(application_processes(chain, root, self, {21})) == std::vector<pid_t>{20, 21});
    CHECK(sorted(application_processes(chain, root, self, {})) == std::vector<pid_t>{20, 21});
  }
}

TEST_CASE("processes that left the application are still its own; others that were never in it are not",
          "[ownership]") {
  SECTION("a worker whose front died, first seen under it: its parent link as first seen holds") {
    const std::vector<TreeProcess> tree = {profiler(root, self), dead(20, root), process(21, 20), process(22, 21)};
    CHECK(sorted(application_processes(tree, root, self, {21})) == std::vector<pid_t>{21, 22});
    CHECK(sorted(application_processes(tree, root, self, {})) == std::vector<pid_t>{21, 22});
  }
  SECTION("a daemon re-parented to deep-profile before it was first seen, and its children") {
    const std::vector<TreeProcess> tree = {profiler(root, self), process(20, root), process(21, 20),
                                           process(30, self), process(31, 30)};
    CHECK(sorted(application_processes(tree, root, self, {21})) == std::vector<pid_t>{20, 21, 30, 31});
  }
  SECTION("a run that leaves survivors leaves them, orphaned after they were first seen too, not a target") {
    // 30 re-parented before it was first seen, 22 after (first seen under 21), each with a child; 40 a target.
    std::vector<TreeProcess> tree = {profiler(root, self), process(20, root), process(21, 20), process(22, 21),
                                     process(23, 22),      process(30, self), process(31, 30), process(40, self)};
    tree[3].orphaned = tree[5].orphaned = tree[7].orphaned = true;
    CHECK(sorted(application_processes(tree, root, self, {21}, false)) == std::vector<pid_t>{20, 21});
    CHECK(sorted(application_processes(tree, root, self, {21, 40}, false)) == std::vector<pid_t>{20, 21, 40});
    CHECK(sorted(application_processes(tree, root, self, {21}, true)) ==
          std::vector<pid_t>{20, 21, 22, 23, 30, 31, 40});
  }
  SECTION("a run that leaves survivors still ends what the ending itself orphaned, first seen after it began") {
    // The front 20 (the target, ended) forked 50 just before its SIGTERM; 50 is first seen re-parented, with its
    // child 51, not orphaned when the ending began. 30 had left before it (orphaned).
    std::vector<TreeProcess> tree = {profiler(root, self), dead(20, root), process(50, self), process(51, 50),
                                     process(30, self)};
    tree[4].orphaned = true;
    CHECK(sorted(application_processes(tree, root, self, {20}, false)) == std::vector<pid_t>{50, 51});
    CHECK(sorted(application_processes(tree, root, self, {20}, true)) == std::vector<pid_t>{30, 50, 51});
  }
  SECTION("a target that left the tree counts from its topmost ancestor below deep-profile, and ncu's child too") {
    const std::vector<TreeProcess> tree = {profiler(root, self), process(20, root), process(30, self),
                                           process(31, 30), process(32, 31)};
    CHECK(sorted(application_processes(tree, root, self, {32})) == std::vector<pid_t>{20, 30, 31, 32});
  }
  SECTION("a target beside ncu under its launcher is no application root") {
    // launcher -> ncu 11 -> front 20; launcher -> 12 (named by mistake): the application is ncu's child.
    const std::vector<TreeProcess> tree = {profiler(11, root), process(12, root), process(20, 11)};
    CHECK(sorted(application_processes(tree, root, self, {12})) == std::vector<pid_t>{20});
  }
}

TEST_CASE("never signalled: ncu, the root, deep-profile, the tool's own processes, the dead", "[ownership]") {
  // ncu 11 under the root; the application 20 -> 21, with a tool process 25 (an Nsight agent) under it, its own
  // helper 28 (a tool too) and a child 26 it started for the application, and a dead 27; a target naming ncu
  // itself, the root and deep-profile. The tools are spared, what they run for the application is not.
  const std::vector<TreeProcess> tree = {profiler(11, root), process(20, 11), process(21, 20), tool(25, 20),
                                         process(26, 25), tool(28, 25), dead(27, 20)};
  const auto found = sorted(application_processes(tree, root, self, {11, root, self, 21}));
  CHECK(found == std::vector<pid_t>{20, 21, 26});
  SECTION("a tree that holds the root and deep-profile themselves changes nothing") {
    std::vector<TreeProcess> with_both = tree;
    with_both.push_back(process(root, self));  // a launcher, not ncu
    with_both.push_back(process(self, 0));
    CHECK(sorted(application_processes(with_both, root, self, {21})) == std::vector<pid_t>{20, 21, 26});
  }
}

TEST_CASE("ncu's own launcher between ncu and the application: walked through, never signalled", "[ownership]") {
  // ncu (root, an Nsight binary) -> TreeLauncherSubreaper 12 (an Nsight binary: a tool) -> the application 20
  // (target) -> its worker 21. The application's root below ncu is the launcher; what it runs is the application.
  std::vector<TreeProcess> tree = {tool(12, root), process(20, 12), process(21, 20)};
  tree.push_back(profiler(root, self));
  tree.back().tool = true;
  CHECK(sorted(application_processes(tree, root, self, {20})) == std::vector<pid_t>{20, 21});
  SECTION("without a target: the launcher's children") {
    CHECK(sorted(application_processes(tree, root, self, {})) == std::vector<pid_t>{20, 21});
  }
}

TEST_CASE("a process runs ncu by its executable or as the program its command runs", "[ownership]") {
  CHECK(runs_program("/usr/local/cuda-12.8/nsight-compute-2025.3.1/target/linux-desktop-glibc_2_11_3-x64/ncu",
                     {"/usr/local/cuda/nsight-compute-2025.3.1/target/linux-desktop-glibc_2_11_3-x64/ncu", "-o", "p"},
                     "ncu"));
  // The fake ncu (a python3 script) and CUDA's bin/ncu (a bash script) as their interpreters run them.
  CHECK(runs_program("/usr/bin/python3.11", {"python3", "/opt/example/tests/fake_tools/ncu", "-o", "p", "app"}, "ncu"));
  CHECK(runs_program("/usr/bin/bash", {"/bin/bash", "/usr/local/cuda/bin/ncu", "--export", "p"}, "ncu"));
  CHECK(runs_program("/usr/bin/sudo", {"sudo", "-E", "ncu", "-o", "p"}, "ncu"));
  // The application, and a launcher whose first argument is a shell script's text.
  CHECK_FALSE(runs_program("/usr/bin/python3.11", {"python3", "engine.py", "--profiler", "ncu"}, "ncu"));
  CHECK_FALSE(runs_program("/bin/dash", {"/bin/sh", "-c", "\"$@\"; exit $?", "launcher", "/x/ncu"}, "ncu"));
  CHECK_FALSE(runs_program("/x/ncu", {"/x/ncu"}, ""));  // no name: nothing is the profiler by name
  CHECK_FALSE(runs_program("", {}, "ncu"));            // gone: no executable, no command line
}
