// `deep-profile analyze MAIN`: outputs, summary, --json and exit codes, on run directories built
// from the fixtures in a TempDir.
#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <sstream>

#include "deep_profile_cli.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/process.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

// `deep-profile analyze ARGS...`.
llmprof::testing::CliResult run_cli(const TempDir&, std::vector<std::string> args) {
  args.insert(args.begin(), "analyze");
  return llmprof::testing::run_deep_profile(args);
}

void make_main(const std::filesystem::path& main) {
  for (const auto& report : nsys_stats_report_names()) {
    const auto source = nsys_stats_report_path(data_path("h100-nsight-2025.3/nsys/ns1_st"), report);
    if (std::filesystem::exists(source)) {
      write_file(nsys_stats_report_path(main / "nsys" / "summary", report), read_file(source));
    }
  }
  write_file(main / "ncu" / "raw.csv", read_file(data_path("h100-nsight-2025.3/ncu/nc1_raw.csv")));
  write_file(main / "stage1" / "metrics.json", read_file(data_path("analysis/workload_metrics_decode.json")));
}

}  // namespace

TEST_CASE("analyze writes the three outputs and prints a summary", "[cli]") {
  TempDir dir;
  make_main(dir / "run");
  const auto result = run_cli(dir, {(dir / "run").string(), "--stage", "decode", "--top", "3"});
  INFO(result.err);
  CHECK(result.exit_code == 0);
  for (const char* file : {"kernels.csv", "stages.csv", "report.json"}) {
    CHECK(std::filesystem::is_regular_file(dir / "run" / "analysis" / file));
  }
  CHECK(result.out.find("device: NVIDIA H100 80GB HBM3") != std::string::npos);
  // 1435206 / max(177371307, 156817883) = 0.809% (tests/tools/analysis_expected.py: busy=0.008092)
  CHECK(result.out.find("decode: GPU busy 0.809%, 345 kernels") != std::string::npos);
  CHECK(result.out.find("host/launch-bound") != std::string::npos);
  CHECK(result.out.find("ncu selection for decode: coverage") != std::string::npos);
  const auto json = boost::json::parse(read_file(dir / "run" / "analysis" / "report.json")).as_object();
  CHECK(json.at("top_kernel_selection").as_object().at("n").as_int64() == 3);
}

TEST_CASE("analyze --json prints report.json", "[cli]") {
  TempDir dir;
  make_main(dir / "run");
  const auto result = run_cli(dir, {(dir / "run").string(), "--json"});
  CHECK(result.exit_code == 0);
  const auto json = boost::json::parse(result.out).as_object();
  CHECK(json.at("schema").as_string() == "llmprof.report/2");
  CHECK(result.out == read_file(dir / "run" / "analysis" / "report.json"));
  // With the verdict analyze stores last: the headline of the main stage and its levers.
  const auto& verdict = json.at("verdict").as_object();
  CHECK(verdict.at("headline").as_string().starts_with("decode: "));
  CHECK(verdict.at("stages").as_array().at(0).as_object().at("stage").as_string() == "decode");
}

TEST_CASE("a range named with a double quote and a pipe goes through analyze and report", "[cli]") {
  // Before: analyze wrote a report.json that report refused (exit 4), so there was no report at all.
  TempDir dir;
  make_main(dir / "run");
  const std::string odd = "d|ec\"ode";  // nsys's CSV: "d|ec""ode", quoted, the quote doubled
  for (const char* table : {"nvtx_sum", "nvtx_gpu_proj_sum", "nvtx_kern_sum"}) {
    const auto path = nsys_stats_report_path(dir / "run" / "nsys" / "summary", table);
    std::string text = read_file(path), edited;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      for (const char* name : {":decode,", "decode,"}) {
        if (line.rfind(name, 0) == 0) line = "\"d|ec\"\"ode\"," + line.substr(std::string(name).size());
      }
      if (line.size() > 8 && line.compare(line.size() - 8, 8, ",:decode") == 0)
        line = line.substr(0, line.size() - 8) + ",\"d|ec\"\"ode\"";
      edited += line + "\n";
    }
    REQUIRE(edited.find("d|ec\"\"ode") != std::string::npos);
    write_file(path, edited);
  }
  const auto analyzed = run_cli(dir, {(dir / "run").string(), "--stage", odd});
  INFO(analyzed.err);
  REQUIRE(analyzed.exit_code == 0);
  const auto json = boost::json::parse(read_file(dir / "run" / "analysis" / "report.json")).as_object();
  bool found = false;
  for (const auto& stage : json.at("stages").as_array()) found = found || stage.at("name").as_string() == odd;
  CHECK(found);
  const auto reported = llmprof::testing::run_deep_profile({"report", (dir / "run").string()});
  INFO(reported.err);
  CHECK(reported.exit_code == 0);
  const std::string markdown = read_file(dir / "run" / "report.md");
  CHECK(markdown.find("| d\\|ec\"ode | 1 | 177 ms") != std::string::npos);  // the pipe escaped in tables
  CHECK(read_file(dir / "run" / "report.html").find("d|ec&quot;ode") != std::string::npos);
}

TEST_CASE("analyze exit codes on bad input and bad usage", "[cli]") {
  TempDir dir;
  SECTION("missing run directory: exit 4") {
    const auto result = run_cli(dir, {(dir / "absent").string()});
    CHECK(result.exit_code == 4);
    CHECK(result.err.find("does not exist") != std::string::npos);
  }
  SECTION("unparsable ncu CSV: exit 4 naming the file") {
    make_main(dir / "run");
    write_file(dir / "run" / "ncu" / "raw.csv", "==ERROR== The application returned an error code (1).\n");
    const auto result = run_cli(dir, {(dir / "run").string()});
    CHECK(result.exit_code == 4);
    CHECK(result.err.find((dir / "run" / "ncu" / "raw.csv").string()) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "run" / "analysis" / "report.json"));
  }
  SECTION("ncu CSV without durations: exit 4 naming the file and the column, nothing written") {
    write_file(dir / "run" / "ncu" / "raw.csv", "\"ID\",\"Kernel Name\"\n\"\",\"\"\n\"0\",\"gemm_kernel\"\n");
    const auto result = run_cli(dir, {(dir / "run").string()});
    CHECK(result.exit_code == 4);
    CHECK(result.err.find((dir / "run" / "ncu" / "raw.csv").string() + ": missing column gpu__time_duration.sum") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "run" / "analysis" / "report.json"));
  }
  SECTION("no MAIN: exit 2") {
    CHECK(run_cli(dir, {}).exit_code == 2);
    CHECK(run_cli(dir, {"x", "--name-base", "mangled"}).exit_code == 2);
  }
}

TEST_CASE("analyze MAIN re-analyses a run as it was profiled: its config.toml and its gated capture") {
  TempDir dir;
  std::filesystem::copy(data_path("h100-1b-decode"), dir / "run", std::filesystem::copy_options::recursive);
  const auto result = run_cli(dir, {(dir / "run").string()});
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  const auto json = boost::json::parse(read_file(dir / "run" / "analysis" / "report.json")).as_object();
  const auto& selection = json.at("top_kernel_selection").as_object();
  // config.toml: run.top_n_kernels = 10, and nsys/cmd.txt: --capture-range=nvtx --nvtx-capture=decode.
  // Before: analyze's own --top 5, ungated. Python (csv over summary_cuda_gpu_kern_sum.csv): the 10
  // longest of 29 kernels hold 0.704874 of the captured kernel time (the 5 longest 0.481982).
  CHECK(selection.at("n").as_int64() == 10);
  CHECK(selection.at("coverage").to_number<double>() == Approx(0.704874).epsilon(1e-5));
  for (const auto& warning : json.at("warnings").as_array())
    CHECK(std::string(warning.as_string()).find("overrides") == std::string::npos);

  // An option given on the command line wins, and the report says so.
  const auto overridden = run_cli(dir, {(dir / "run").string(), "--top", "5"});
  REQUIRE(overridden.exit_code == 0);
  const auto again = boost::json::parse(read_file(dir / "run" / "analysis" / "report.json")).as_object();
  CHECK(again.at("top_kernel_selection").as_object().at("n").as_int64() == 5);
  CHECK(again.at("top_kernel_selection").as_object().at("coverage").to_number<double>() ==
        Approx(0.481982).epsilon(1e-5));
  const std::string warnings = boost::json::serialize(again.at("warnings"));
  CHECK(warnings.find("analyze --top 5 overrides what the run used (run.top_n_kernels = 10)") != std::string::npos);
}

TEST_CASE("analyze refuses negative, zero, absurd and non-numeric --top with exit 2") {
  TempDir dir;
  make_main(dir / "run");
  for (const char* top : {"-3", "0", "10001", "99999999999999999999", "abc", "2.5", "nan"}) {
    INFO("--top " << top);
    const auto result = run_cli(dir, {(dir / "run").string(), "--top", top});
    CHECK(result.exit_code == 2);  // before: -3 wrapped to 2^64-3 and reported "the top 29 ... covering 100%"
    CHECK_FALSE(std::filesystem::exists(dir / "run" / "analysis" / "report.json"));
  }
}

TEST_CASE("analyze MAIN reads the step tokens again: a fixed tokens file replaces stale step kinds", "[cli]") {
  TempDir dir;
  const auto main = dir / "run";
  // Two recorded H100 serving windows (tests/data/serving) and the workload's own tokens for them.
  std::filesystem::create_directories(main / "nsys" / "window-2");
  std::filesystem::copy_file(data_path("serving/serving_window1_h100.sqlite"), main / "nsys" / "profile.sqlite");
  std::filesystem::copy_file(data_path("serving/serving_window2_h100.sqlite"),
                             main / "nsys" / "window-2" / "profile.sqlite");
  write_file(main / "nsys" / "step_tokens.json", read_file(data_path("serving/serving_h100_step_tokens.json")));
  // What the run's own analysis wrote from the tokens file before it was fixed.
  write_file(main / "analysis" / "step_kinds.json", "{\"schema\": \"llmprof.step_kinds/1\", \"windows\": []}\n");
  write_file(main / "analysis" / "step_kinds.md", "## Engine steps\n\nstale\n");
  const auto result = run_cli(dir, {main.string(), "--stage", "decode_batch"});
  INFO(result.err);
  CHECK(result.exit_code == 0);
  const auto json = boost::json::parse(read_file(main / "analysis" / "step_kinds.json")).as_object();
  const auto& windows = json.at("windows").as_array();
  REQUIRE(windows.size() == 2);
  for (const auto& kind : windows.at(0).as_object().at("kinds").as_array()) {
    if (kind.as_object().at("name").as_string() != "decode_batch") continue;
    // tests/tools/step_kinds_expected.py: 82289.48579545454 ns per decode token in window 1.
    CHECK(kind.as_object().at("tokens").as_object().at("time_per_token_ns").to_number<double>() ==
          Approx(82289.48579545454).epsilon(1e-12));
  }
  CHECK(read_file(main / "analysis" / "step_kinds.md").find("stale") == std::string::npos);
  // A broken tokens file now: the step kinds stay, the time per token goes, and the reason is a warning.
  write_file(main / "nsys" / "step_tokens.json", "{}");
  const auto broken = run_cli(dir, {main.string(), "--stage", "decode_batch"});
  CHECK(broken.exit_code == 0);
  CHECK(read_file(main / "analysis" / "step_kinds.json").find("time_per_token_ns") == std::string::npos);
  CHECK(read_file(main / "analysis" / "report.json").find("no time per token") != std::string::npos);
}
