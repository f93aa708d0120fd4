// Launcher words, rank lists, shell-word splitting, rank-exec on one rank (plan -> status.json), and
// the per-rank records of run.json. The launchers themselves run in tests/e2e/ranks_test.cpp.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "llmprof/rank.hpp"
#include "llmprof/rank_launch.hpp"
#include "llmprof/run_directory.hpp"
#include "llmprof/shell_quote.hpp"
#include "test_support.hpp"
#include "pipeline/gpu_metrics_claim.hpp"
#include "rundir/run_records.hpp"

namespace fs = std::filesystem;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

TEST_CASE("launcher words give the family and world size and torchrun gets --no-python") {
  struct Case {
    const char* words;
    const char* family;
    std::optional<int> world_size;
  };
  const Case entry = GENERATE(values<Case>({
      {"srun -n 2", "srun", 2},
      {"srun --ntasks=8 --gpus-per-task=1", "srun", 8},
      {"srun -n4 --mpi=pmix", "srun", 4},
      {"mpirun --allow-run-as-root -np 2", "mpirun", 2},
      {"/usr/bin/mpiexec -n 3", "mpirun", 3},
      {"torchrun --nproc-per-node 2 --no-python", "torchrun", 2},
      {"torchrun --nnodes=2 --nproc-per-node=4", "torchrun", 8},
      {"torchrun --nnodes=1:2 --nproc-per-node=4", "torchrun", std::nullopt},
      {"srun -N 2", "srun", std::nullopt},
  }));
  CAPTURE(entry.words);
  auto launcher = llmprof::parse_launcher(entry.words);
  REQUIRE(launcher);
  CHECK(launcher->family == entry.family);
  CHECK(launcher->world_size == entry.world_size);
  if (launcher->family == "torchrun") {
    CHECK(std::count(launcher->words.begin(), launcher->words.end(), "--no-python") == 1);
  }
}

TEST_CASE("an unknown or empty launcher is refused with the known ones named") {
  auto unknown = llmprof::parse_launcher("flux run -n 2");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "unknown launcher 'flux'");
  CHECK_THAT(unknown.error().hint, Catch::Contains("srun, mpirun, mpiexec, orterun, torchrun"));
  CHECK_FALSE(llmprof::parse_launcher("   "));
  auto quote = llmprof::parse_launcher("srun -n 2 'unterminated");
  REQUIRE_FALSE(quote);
  CHECK_THAT(quote.error().message, Catch::Contains("unterminated single quote"));
}

TEST_CASE("shell words split like a POSIX shell without expansions") {
  auto words = llmprof::split_shell_words(R"(srun  -n 2 --export="A B" 'c d'e \$HOME "x\"y")");
  REQUIRE(words);
  CHECK(*words == std::vector<std::string>{"srun", "-n", "2", "--export=A B", "c de", "$HOME", "x\"y"});
  CHECK(llmprof::split_shell_words("")->empty());
  CHECK_FALSE(llmprof::split_shell_words("a\\"));
  CHECK_FALSE(llmprof::split_shell_words("\"a"));
}

TEST_CASE("rank lists take numbers and ranges and refuse bad pieces") {
  CHECK(*llmprof::parse_rank_list("3,0") == std::vector<int>{0, 3});
  CHECK(*llmprof::parse_rank_list("0-2,2") == std::vector<int>{0, 1, 2});
  CHECK(llmprof::format_rank_list({0, 3}) == "0,3");
  // An absurd range is refused before anything is allocated: 0-50000000 built a set of 50 million
  // ranks (about 1.5 GB) and died of std::bad_alloc.
  for (const char* absurd : {"0-50000000", "2147483647", "0-2147483647", "5,1048576"}) {
    CAPTURE(absurd);
    auto parsed = llmprof::parse_rank_list(absurd);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.error().message, Catch::Contains("above 1048575"));
  }
  CHECK(llmprof::parse_rank_list("1048575")->size() == 1);
  for (const char* bad : {"", "a", "1,", "-1", "3-1", "1.5"}) {
    CAPTURE(bad);
    auto parsed = llmprof::parse_rank_list(bad);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.error().hint, Catch::Contains("--ranks 0,3"));
  }
}

namespace {

void write_plan(const fs::path& main, const std::string& stage, double timeout_s,
                const std::vector<std::string>& profiler = {}, const boost::json::object& extra = {}) {
  boost::json::array argv;
  for (const auto& word : profiler) argv.emplace_back(word);
  boost::json::object plan = {{"schema", "llmprof.rank_plan/1"},
                                    {"stage", stage},
                                    {"role", profiler.empty() ? "bare" : "nsys"},
                                    {"profiler_argv", argv},
                                    {"environment", {{"WHERE", (main / "ranks/r@RANK@/out.txt").string()}}},
                                    {"working_directory", ""},
                                    {"timeout_s", timeout_s},
                                    {"timeout_key", "workload.timeout_s"}};
  for (const auto& [key, value] : extra) plan[key] = value;
  write_file(main / "ranks" / (stage + ".plan.json"), boost::json::serialize(plan));
}

boost::json::object status_of(const fs::path& main, int rank, const std::string& stage) {
  return boost::json::parse(read_file(main / "ranks" / ("r" + std::to_string(rank)) / stage / "status.json"))
      .as_object();
}

llmprof::RankIdentity rank(int number, int world) {
  return {number, number, world, llmprof::RankSource::open_mpi, "test"};
}

}  // namespace

TEST_CASE("rank-exec runs the profiler on a selected rank and the workload bare on the others") {
  TempDir temp;
  write_plan(temp.path(), "nsys", 30, {"/bin/echo", "profiler-for-r@RANK@"});
  auto runner = llmprof::make_system_process_runner();
  llmprof::RankExecRequest request{temp.path(), "nsys", std::vector<int>{1}, {"/bin/sh", "-c", "echo workload $WHERE"}};
  auto profiled = llmprof::run_rank_exec(request, rank(1, 2), *runner);
  auto bare = llmprof::run_rank_exec(request, rank(0, 2), *runner);
  REQUIRE(profiled);
  REQUIRE(bare);
  CHECK(profiled->exit_code == 0);
  CHECK(read_file(temp.path() / "ranks/r1/nsys/output.log") == "profiler-for-r1 /bin/sh -c echo workload $WHERE\n");
  CHECK(read_file(temp.path() / "ranks/r0/nsys/output.log") ==
        "workload " + (temp.path() / "ranks/r0/out.txt").string() + "\n");
  CHECK(status_of(temp.path(), 1, "nsys").at("role") == "nsys");
  CHECK(status_of(temp.path(), 0, "nsys").at("role") == "bare");
  CHECK(status_of(temp.path(), 0, "nsys").at("outcome") == "ok");
  CHECK(status_of(temp.path(), 0, "nsys").at("world_size") == 2);
  // Each rank's cmd.txt, pasted into bash from elsewhere, runs that rank's command with its environment.
  for (const int number : {0, 1}) {
    const fs::path rank_dir = temp.path() / ("ranks/r" + std::to_string(number)) / "nsys";
    const std::string line = read_file(rank_dir / "cmd.txt");
    INFO(line);
    CHECK(line.find("WHERE=") != std::string::npos);
    const fs::path pasted = temp.path() / "pasted.sh";
    write_file(pasted, "cd / || exit 99\n" + line);
    const std::string output = (temp.path() / "pasted.out").string();
    REQUIRE(std::system(("bash '" + pasted.string() + "' > '" + output + "' 2>&1").c_str()) == 0);
    CHECK(read_file(output) == read_file(rank_dir / "output.log"));
  }
}

// Only one nsys may sample a GPU (2025.3.1 fails a second with "Already under profiling"): each rank samples the GPU
// it sees alone, or the one nsys lists under its local rank; a GPU already claimed, or a local rank without a listed
// GPU, leaves the rank unsampled, and its status says why.
TEST_CASE("rank-exec lets one rank per GPU sample GPU metrics and records which GPU", "[gpu-metrics]") {
  auto runner = llmprof::make_system_process_runner();
  const auto run_ranks = [&](const TempDir& temp, boost::json::object listed, std::optional<std::string> first_gpu,
                             std::optional<std::string> second_gpu) {
    const boost::json::object sampling = {{"gpu_metrics_option", "--gpu-metrics-devices"},
                                          {"gpu_metrics_listed", std::move(listed)},
                                          {"gpu_metrics_words", boost::json::array{"--gpu-metrics-frequency=20000"}},
                                          {"gpu_metrics_cuda_visible", true}};
    write_plan(temp.path(), "nsys", 30, {"/bin/echo", "nsys"}, sampling);
    llmprof::RankExecRequest request{temp.path(), "nsys", std::nullopt, {"workload"}};
    request.cuda_visible_devices = first_gpu;
    REQUIRE(llmprof::run_rank_exec(request, rank(1, 2), *runner));
    request.cuda_visible_devices = second_gpu;
    REQUIRE(llmprof::run_rank_exec(request, rank(0, 2), *runner));
  };
  const auto output = [](const TempDir& temp, int number) {
    return read_file(temp.path() / ("ranks/r" + std::to_string(number)) / "nsys/output.log");
  };
  const auto note = [](const TempDir& temp, int number) {
    return std::string(status_of(temp.path(), number, "nsys").at("gpu_metrics_note").as_string());
  };
  SECTION("every rank sees every GPU: each samples the one its local rank names") {
    TempDir temp;
    run_ranks(temp, {{"0", "0000:00:06.0"}, {"1", "0000:00:07.0"}}, std::nullopt, std::nullopt);
    CHECK(output(temp, 1) == "nsys --gpu-metrics-devices=1 --gpu-metrics-frequency=20000 workload\n");
    CHECK(output(temp, 0) == "nsys --gpu-metrics-devices=0 --gpu-metrics-frequency=20000 workload\n");
    CHECK(status_of(temp.path(), 1, "nsys").at("gpu_metrics") == "1");
    CHECK(status_of(temp.path(), 1, "nsys").at("gpu_metrics_bus") == "0000:00:07.0");
    CHECK_THAT(read_file(temp.path() / "ranks/r1/nsys/cmd.txt"), Catch::Contains("--gpu-metrics-devices=1"));
  }
  SECTION("more ranks than GPUs: the rank whose local rank names no GPU does not sample") {
    TempDir temp;
    run_ranks(temp, {{"0", "0000:00:06.0"}}, std::nullopt, std::nullopt);
    CHECK(output(temp, 1) == "nsys workload\n");
    CHECK(status_of(temp.path(), 1, "nsys").at("gpu_metrics") == "");
    CHECK_THAT(note(temp, 1), Catch::StartsWith("not sampling: nsys lists no GPU 1 for local rank 1 (1 listed)"));
    CHECK(output(temp, 0) == "nsys --gpu-metrics-devices=0 --gpu-metrics-frequency=20000 workload\n");
  }
  SECTION("each rank sees its own GPU: each samples it") {
    TempDir temp;
    run_ranks(temp, {{"0", "0000:00:06.0"}, {"1", "0000:00:07.0"}}, "1", "0");
    CHECK(output(temp, 1) == "nsys --gpu-metrics-devices=cuda-visible --gpu-metrics-frequency=20000 workload\n");
    CHECK(output(temp, 0) == "nsys --gpu-metrics-devices=cuda-visible --gpu-metrics-frequency=20000 workload\n");
  }
  SECTION("two ranks see the same one GPU: only the first samples it") {
    TempDir temp;
    run_ranks(temp, {{"0", "0000:00:06.0"}}, "0", "0");
    CHECK(status_of(temp.path(), 1, "nsys").at("gpu_metrics") == "cuda-visible");
    CHECK(output(temp, 0) == "nsys workload\n");
    CHECK_THAT(note(temp, 0), Catch::StartsWith("not sampling: rank 1 samples this GPU (visible:0)"));
  }
}

TEST_CASE("the GPU-metrics claim rule: one claim per GPU, and claims of the two kinds exclude each other",
          "[gpu-metrics]") {
  using llmprof::detail::decide_gpu_metrics_sampling;
  using llmprof::detail::GpuMetricsRequest;
  const std::map<std::string, std::string> two = {{"0", "0000:00:06.0"}, {"1", "0000:00:07.0"}};
  const auto decide = [&](std::vector<llmprof::detail::GpuMetricsClaim> claims, int local_rank,
                          std::optional<std::string> visible, bool supported = true) {
    return decide_gpu_metrics_sampling(claims, GpuMetricsRequest{3, local_rank, visible, supported, two});
  };
  CHECK(decide({}, 1, std::nullopt).devices_value == "1");
  CHECK(decide({}, 1, std::nullopt).bus == "0000:00:07.0");
  CHECK(decide({}, 1, "0,1").devices_value == "1");  // several visible: by local rank
  CHECK(decide({}, 1, " 2 ").devices_value == "cuda-visible");
  // An nsys without cuda-visible (2022.4) and a rank that sees one GPU: nsys's ids need not be CUDA's, so none.
  CHECK(decide({}, 1, "2", false).devices_value.empty());
  CHECK_THAT(decide({}, 1, "2", false).note, Catch::StartsWith("not sampling: this nsys has no --gpu-metrics-devices=cuda-visible"));
  CHECK(decide({{3, "listed:1"}}, 1, std::nullopt).devices_value == "1");  // its own claim from an earlier run
  CHECK(decide({}, 2, std::nullopt).devices_value.empty());  // no GPU 2 listed
  CHECK(decide({{0, "listed:1"}}, 1, std::nullopt).devices_value.empty());
  CHECK(decide({{0, "listed:0"}}, 1, std::nullopt).devices_value == "1");
  CHECK(decide({{0, "visible:2"}}, 1, "2").devices_value.empty());
  CHECK(decide({{0, "visible:2"}}, 1, "3").devices_value == "cuda-visible");
  const auto mixed = decide({{0, "visible:2"}}, 1, std::nullopt);  // GPU 1 might be the one CUDA calls 2
  CHECK(mixed.devices_value.empty());
  CHECK(mixed.note == "not sampling: rank 0 samples this GPU (visible:2), maybe the same one (one nsys per GPU may sample)");
  const auto claimed = decide({{0, "visible:2"}}, 1, "3");
  REQUIRE(claimed.claim);
  CHECK(claimed.claim->gpu == "visible:3");
}

// Ranks claim at the same time: the lock lets exactly one of them have the GPU.
TEST_CASE("GPU-metrics claims made at once by many ranks of a host give the GPU to exactly one", "[gpu-metrics]") {
  TempDir temp;
  const std::map<std::string, std::string> one = {{"0", "0000:00:06.0"}};
  std::vector<std::thread> ranks;
  std::atomic<int> sampling{0}, refused{0};
  for (int number = 0; number < 8; ++number) {
    ranks.emplace_back([&, number] {
      // Every rank local rank 0 of its own (as if each saw the GPU as its first): all want nsys's GPU 0.
      auto decision = llmprof::detail::claim_gpu_metrics_sampling(
          temp.path() / "gpu-metrics", "host", llmprof::detail::GpuMetricsRequest{number, 0, std::nullopt, true, one});
      if (decision && !decision->devices_value.empty()) ++sampling;
      if (decision && decision->devices_value.empty()) ++refused;
    });
  }
  for (auto& rank : ranks) rank.join();
  CHECK(sampling == 1);
  CHECK(refused == 7);
  const std::string claims = read_file(temp.path() / "gpu-metrics/host.claims");
  CHECK(std::count(claims.begin(), claims.end(), '\n') == 1);
}

TEST_CASE("rank-exec kills a hanging rank's tree at the plan's timeout and says which rank") {
  TempDir temp;
  write_plan(temp.path(), "stage1", 0.5);
  auto runner = llmprof::make_system_process_runner();
  llmprof::RankExecRequest request{temp.path(), "stage1", std::nullopt, {"/bin/sh", "-c", "sleep 30 & wait"}};
  auto result = llmprof::run_rank_exec(request, rank(1, 2), *runner);
  REQUIRE(result);
  CHECK(result->exit_code == 124);
  const auto status = status_of(temp.path(), 1, "stage1");
  CHECK(status.at("outcome") == "timeout");
  CHECK(std::string(status.at("reason").as_string()) ==
        "rank 1 ran past workload.timeout_s=0.5s; its process tree was killed (see ranks/r1/stage1/output.log)");
}

TEST_CASE("rank-exec refuses --ranks outside the world size before running anything") {
  TempDir temp;
  write_plan(temp.path(), "ncu", 30, {"/bin/false"});
  auto runner = llmprof::make_system_process_runner();
  llmprof::RankExecRequest request{temp.path(), "ncu", std::vector<int>{0, 3}, {"/bin/sh", "-c", "touch ran"}};
  auto result = llmprof::run_rank_exec(request, rank(0, 2), *runner);
  REQUIRE(result);
  CHECK(result->exit_code == 2);
  CHECK(status_of(temp.path(), 0, "ncu").at("outcome") == "refused");
  CHECK(std::string(status_of(temp.path(), 0, "ncu").at("reason").as_string()) ==
        "--ranks 0,3 names rank 3, outside the world size 2 (ranks 0-1); nothing was run");
  CHECK_FALSE(fs::exists(temp.path() / "ranks/r0/ncu/output.log"));
}

TEST_CASE("rank-exec without a plan is an error that says who writes it") {
  TempDir temp;
  auto runner = llmprof::make_system_process_runner();
  auto result = llmprof::run_rank_exec({temp.path(), "nsys", std::nullopt, {"true"}}, rank(0, 1), *runner);
  REQUIRE_FALSE(result);
  CHECK_THAT(result.error().hint, Catch::Contains("deep-profile run --launcher"));
}

TEST_CASE("run.json keeps per-rank records of a stage and has none for a single process") {
  llmprof::RunManifest manifest;
  manifest.run_id = "r";
  llmprof::StageRecord stage;
  stage.name = "nsys";
  stage.ranks.push_back(
      {1, 1, "host-a", "nsys", llmprof::StageStatus::failed, "rank 1 ran past", 124, 3.5, "ranks/r1/nsys"});
  manifest.stages.push_back(stage);
  manifest.stages.push_back(llmprof::StageRecord{"ncu"});
  const std::string text = llmprof::manifest_to_json(manifest);
  auto back = llmprof::manifest_from_json(text);
  REQUIRE(back);
  REQUIRE(back->stages[0].ranks.size() == 1);
  const auto& record = back->stages[0].ranks[0];
  CHECK(record.rank == 1);
  CHECK(record.host == "host-a");
  CHECK(record.status == llmprof::StageStatus::failed);
  CHECK(record.exit_code == 124);
  CHECK(record.directory == "ranks/r1/nsys");
  CHECK(boost::json::parse(text).at("stages").at(1).as_object().if_contains("ranks") == nullptr);
}

namespace {

// Every long option a launcher's --help names (recorded on the GPU machine, tests/data/launchers/).
std::vector<std::string> long_options_in(const std::string& help) {
  std::vector<std::string> options;
  for (std::size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    std::size_t end = at + 2;
    while (end < help.size() &&
           (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-' || help[end] == '_'))
      ++end;
    if (end > at + 2) options.push_back(help.substr(at, end - at));
  }
  return options;
}

// What Python's argparse does with an option-like word after torchrun's program: an exact name or a
// prefix of one of its options is taken (or refused as ambiguous) instead of passed on.
bool taken_by(const std::string& word, const std::vector<std::string>& launcher_options) {
  return std::any_of(launcher_options.begin(), launcher_options.end(),
                     [&](const std::string& option) { return option.rfind(word, 0) == 0; });
}

}  // namespace

TEST_CASE("rank-exec's own options pass through torchrun's parser untouched") {
  const std::string help = read_file(fs::path(LLMPROF_TEST_DATA_DIR) / "launchers/torchrun-2.11-help.txt");
  const std::vector<std::string> torchrun = long_options_in(help);
  REQUIRE(std::find(torchrun.begin(), torchrun.end(), "--run-path") != torchrun.end());
  CHECK(taken_by("--run", torchrun));  // what torchrun 2.11 refused on the H200 machine
  llmprof::RankExecRequest request;
  request.main_directory = "/runs/main";
  request.stage = "nsys";
  request.ranks = std::vector<int>{0, 1};
  const std::vector<std::string> words = llmprof::rank_exec_arguments(request);
  REQUIRE(words.back() == "--");
  CHECK(words == std::vector<std::string>{"rank-exec", "--run-directory", "/runs/main", "--stage", "nsys", "--ranks",
                                          "0,1", "--"});
  for (const std::string& word : words) {
    if (word.rfind("--", 0) != 0 || word == "--") continue;
    INFO(word);
    CHECK_FALSE(taken_by(word, torchrun));
  }
}
