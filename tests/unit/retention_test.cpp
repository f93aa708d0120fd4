// Retention never deletes a run that is still going: each run holds MAIN/run.lock (flock) for its
// lifetime, retention tries that lock without blocking and keeps the runs it cannot take.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "llmprof/run_directory.hpp"
#include "test_support.hpp"

using llmprof::ManualClock;
using llmprof::RunDirectory;
using llmprof::RunDirectoryOptions;
using llmprof::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// 2026-11-22T15:31:22Z (see run_directory_test.cpp).
ManualClock fixed_clock() {
  return ManualClock(std::chrono::system_clock::time_point(std::chrono::seconds(1795361482)));
}

}  // namespace

TEST_CASE("retention keeps an older run whose lock is held and removes it once that run is over") {
  TempDir dir;
  auto clock = fixed_clock();
  RunDirectoryOptions options;
  options.runs_root = dir / "runs";
  std::optional<RunDirectory> still_running = RunDirectory::create(options, clock).value();
  const fs::path running_path = still_running->path();
  CHECK(fs::exists(running_path / "run.lock"));

  clock.advance(std::chrono::minutes(1));
  options.keep_newest_runs = 1;
  const auto second = RunDirectory::create(options, clock).value();
  CHECK(fs::exists(running_path / "run.json"));  // before: removed while it was still writing
  REQUIRE(second.retention().has_value());
  REQUIRE(second.retention()->has_value());
  CHECK(second.retention()->value().removed.empty());
  CHECK(second.retention()->value().kept_unfinished == std::vector<fs::path>{running_path});

  still_running.reset();  // the run ends: its lock is released
  clock.advance(std::chrono::minutes(1));
  const auto third = RunDirectory::create(options, clock).value();
  CHECK_FALSE(fs::exists(running_path));
  REQUIRE(third.retention()->has_value());
  // The second run object is still alive in this scope, so only the first is removable.
  CHECK(third.retention()->value().removed == std::vector<fs::path>{running_path});
  CHECK(third.retention()->value().kept_unfinished == std::vector<fs::path>{second.path()});
}

TEST_CASE("retention sees the lock of a run held by another process, not only by this one") {
  TempDir dir;
  auto clock = fixed_clock();
  RunDirectoryOptions options;
  options.runs_root = dir / "runs";
  const fs::path other = RunDirectory::create(options, clock).value().path();  // finished: lock released
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {  // another deep-profile that is still running: holds the flock until killed
    const int fd = ::open((other / "run.lock").c_str(), O_RDWR);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  clock.advance(std::chrono::minutes(1));
  const auto removed = llmprof::apply_retention(options.runs_root, 1, {});
  ::kill(child, SIGKILL);  // a killed run drops its lock: the kernel releases a flock on exit
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(removed.has_value());
  CHECK(removed->removed.empty());
  CHECK(fs::exists(other / "run.json"));

  clock.advance(std::chrono::minutes(1));
  const auto newest = RunDirectory::create(options, clock).value();
  const auto after = llmprof::apply_retention(options.runs_root, 1, newest.path());
  REQUIRE(after.has_value());
  CHECK(after->removed == std::vector<fs::path>{other});
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("retention still removes old runs written before run.lock existed") {
  TempDir dir;
  auto clock = fixed_clock();
  RunDirectoryOptions options;
  options.runs_root = dir / "runs";
  const fs::path old = RunDirectory::create(options, clock).value().path();
  fs::remove(old / "run.lock");
  clock.advance(std::chrono::minutes(1));
  options.keep_newest_runs = 1;
  const auto newest = RunDirectory::create(options, clock).value();
  CHECK_FALSE(fs::exists(old));
  CHECK(newest.retention()->value().removed == std::vector<fs::path>{old});
}
