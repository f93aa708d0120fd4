// End to end: serving engines whose front process never touches CUDA and blocks on its worker without a timeout
// (tests/e2e/blocking_front_engine.py, python3 multiprocessing, fork and spawn), profiled by the real deep-profile
// with the fake nsys/ncu. Under ncu the engine's worker serves until it is killed, and the fake ncu names only the
// worker ("Connected to process", FAKE_NCU_CONNECTED_PID_FILE), as ncu 2025.3.1 names only CUDA processes. Each
// pass must end the whole engine within seconds of its plan being met; nothing outside the run may be signalled.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "end_to_end.hpp"
#include "llmprof/run_directory.hpp"
#include "process/process_group.hpp"
#include "process_handshake.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
namespace fs = std::filesystem;

namespace {

const fs::path engine = fs::path(LLMPROF_SOURCE_DIR) / "tests/e2e/blocking_front_engine.py";

// The function names of the kernels the plan's first pass takes on the fake nsys's recorded tables (h100 ns1
// stats, no SQLite export: ncu/plan.json of such a run), for the fake ncu's progress lines, so that the pass meets
// its plan rather than its bound of twice its launches.
const char* planned_kernel_names =
    "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT,vectorized_layer_norm_kernel,flash_fwd_kernel,"
    "nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_relubias_TNT,nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_splitK_bias_TNT,"
    "vectorized_elementwise_kernel,nvjet_sm90_hsh_64x8_64x16_2x1_v_bz_bias_TNT,splitKreduce_kernel";

// A process from outside the run, started before it.
struct Sentinel {
  Sentinel() : pid(::fork()) {
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Sentinel() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  pid_t pid;
};

// "at 2.19 s" of "pass 1 ended the workload after its 8 planned launches at 2.19 s".
double ended_at_s(const std::string& ending) {
  std::smatch match;
  REQUIRE(std::regex_search(ending, match, std::regex(R"( at ([0-9.]+) s)")));
  return std::stod(match[1]);
}

void check_engine_ends(const std::string& start_method, const std::string& front) {
  INFO("--start-method " << start_method << " --front " << front);
  EndToEnd e2e;
  const fs::path pids = e2e.temp() / "pids";
  const fs::path worker_pid = e2e.temp() / "worker.pid";
  const Sentinel sentinel;
  REQUIRE(sentinel.pid > 0);
  Invocation invocation;
  invocation.args = {"--",
                     "python3",
                     engine.string(),
                     "--start-method",
                     start_method,
                     "--front",
                     front,
                     "--forever-under",
                     "ncu",
                     "--worker-pid-file",
                     worker_pid.string(),
                     "--pids-file",
                     pids.string()};
  invocation.env = {{"FAKE_NCU_MODE", "endless"},
                    {"FAKE_NCU_CONNECTED_PID_FILE", worker_pid.string()},
                    {"FAKE_NCU_KERNEL_NAMES", planned_kernel_names}};
  const CliResult finished = e2e.run(invocation);
  INFO(finished.out << finished.err);
  CHECK(finished.exit_code == 0);  // deep-profile lived on and finished
  const RunManifest manifest = e2e.manifest();
  const StageRecord& ncu = stage_of(manifest, "ncu");
  INFO(ncu.reason);
  CHECK(ncu.status == StageStatus::ok);
  CHECK(fs::exists(e2e.main() / "ncu/profile.ncu-rep"));  // the fake ncu lived on to write it
  CHECK(read_file(e2e.main() / "ncu/profile.log").find("==PROF== Report: ") != std::string::npos);

  // Every pass ended its engine at its plan, none at its bound (at least a minute): the engine would have served
  // until that. The first pass met its plan and its engine was gone, ncu's report written, within seconds.
  REQUIRE_FALSE(ncu.workload_endings.empty());
  for (const auto& ending : ncu.workload_endings) {
    INFO(ending);
    CHECK(ending.find("ended the workload after its") != std::string::npos);
    CHECK(ending.find("reached its bound") == std::string::npos);
  }
  CHECK_THAT(ncu.workload_endings.front(), Catch::StartsWith("pass 1 ended the workload after its 8 planned launches"));
  const auto plan = boost::json::parse(read_file(e2e.main() / "ncu/plan.json")).as_object();
  const double pass_s = plan.at("check").at("pass_timings").as_array()[0].at("measured_seconds").to_number<double>();
  // The grace (3 s) for a front that ignores SIGTERM, and a few seconds of ncu's own.
  CHECK(pass_s - ended_at_s(ncu.workload_endings.front()) < 10);
  CHECK(ncu.duration_s < 60);

  // No process of any run of the engine is left; the process from outside was not touched.
  std::istringstream lines(read_file(pids));
  std::string role;
  pid_t pid = 0;
  int processes = 0;
  while (lines >> role >> pid) {
    ++processes;
    INFO(role << " " << pid);
    CHECK_FALSE(running(pid));
  }
  CHECK(processes >= 2 * 4);  // stage1, nsys and at least two ncu passes ran the front and the worker
  CHECK(running(sentinel.pid));
}

}  // namespace

TEST_CASE("a front blocked on Queue.get() without a timeout ends with its worker", "[e2e][slow]") {
  for (const char* method : {"fork", "spawn"}) check_engine_ends(method, "queue");
}

TEST_CASE("a front blocked reading a pipe it also holds open ends with its worker", "[e2e][slow]") {
  for (const char* method : {"fork", "spawn"}) check_engine_ends(method, "pipe");
}

TEST_CASE("a front blocked in accept() ends with its worker", "[e2e][slow]") {
  for (const char* method : {"fork", "spawn"}) check_engine_ends(method, "socket");
}

TEST_CASE("a front blocked in join() of a helper that never touches CUDA ends with its worker", "[e2e][slow]") {
  for (const char* method : {"fork", "spawn"}) check_engine_ends(method, "join");
}

TEST_CASE("a front that ignores SIGTERM is killed after the grace", "[e2e][slow]") {
  for (const char* method : {"fork", "spawn"}) check_engine_ends(method, "ignore-term");
}
