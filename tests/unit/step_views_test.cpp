// The step views and levers under hostile inputs, on the recorded H100 serving windows and the recorded sampled-preset
// export: the share a kind's verdict gives is of the window's GPU time, a kind-named range of another NVTX domain
// (a tokenizer's `decode`) is no step kind, zero-length steps are said, and a lever withheld for want of GPU figures
// says why. Expected figures: tests/data/serving/expected.tsv (tests/tools/step_kinds_expected.py: the window's GPU
// time is its own sum over the export's GPU activity tables).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/report.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/timeline.hpp"
#include "parse/sqlite_database.hpp"
#include "analysis/run_verdict.hpp"
#include "rundir/report_model_views.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

std::map<std::string, std::string> expected_figures(const std::string& file) {
  std::ifstream in(data_path("serving/expected.tsv"));
  std::map<std::string, std::string> figures;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, subject, figure, value;
    std::getline(fields, name, '\t');
    std::getline(fields, subject, '\t');
    std::getline(fields, figure, '\t');
    std::getline(fields, value, '\t');
    if (name == file) figures[subject + "/" + figure] = value;
  }
  REQUIRE(!figures.empty());
  return figures;
}

// A copy of a recorded serving export with `statements` run on it.
std::filesystem::path doctored(const llmprof::testing::TempDir& temp, const std::string& file,
                               const std::vector<std::string>& statements) {
  const auto copy = temp.path() / (file + ".sqlite");
  std::filesystem::copy_file(data_path("serving/" + file + ".sqlite"), copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  auto database = detail::SqliteDatabase::open_writable(copy);
  REQUIRE(database.has_value());
  for (const auto& statement : statements) {
    INFO(statement);
    REQUIRE(database->execute(statement));
  }
  return copy;
}

StepKindReport steps_of(const std::filesystem::path& sqlite, StepWindow window = {}) {
  auto captured = analyze_timeline(sqlite);
  REQUIRE(captured.has_value());
  auto steps = analyze_step_kinds(captured.value(), {}, window);
  REQUIRE(steps.has_value());
  return std::move(steps.value());
}

const StepKindFigures& kind_named(const StepKindReport& report, const std::string& name) {
  for (const auto& kind : report.kinds)
    if (kind.name == name) return kind;
  FAIL("no kind " << name);
  return report.kinds.front();
}

// Ranges of `domain` named `name` inside every scheduler_step, 100 to 500 ns after it starts (before its kind range),
// and the domain's NvtxDomainCreate row.
std::vector<std::string> ranges_of_domain(const std::string& domain, const std::string& name) {
  return {"INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT min(start), NULL, 75, '" +
              domain + "', globalTid, 7 FROM NVTX_EVENTS WHERE text = 'scheduler_step'",
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT start + 100, start + 500, "
          "59, '" + name + "', globalTid, 7 FROM NVTX_EVENTS WHERE text = 'scheduler_step'"};
}

}  // namespace

TEST_CASE("step views: a kind's share is of the window's GPU time (decode 44% of the H100 window, not 50%)") {
  for (const char* file : {"serving_window1_h100", "serving_window2_h100"}) {
    INFO(file);
    const auto expected = expected_figures(file);
    const StepKindReport steps = steps_of(data_path(std::string("serving/") + file + ".sqlite"));
    const double window = std::stod(expected.at("window/gpu_time_ns"));
    CHECK(double(steps.window_gpu_time_ns) == window);
    CHECK(steps.window_basis == "the window's GPU time");
    for (const auto& kind : steps.kinds) {
      INFO(kind.name);
      REQUIRE(kind.window_share.has_value());
      CHECK(*kind.window_share == Approx(std::stod(expected.at(kind.name + "/gpu_time_ns")) / window));
    }
    const StepKindFigures& heaviest = steps.kinds.front();
    CHECK_THAT(steps.verdict, Catch::EndsWith("; " + detail::format_fraction_percent(*heaviest.window_share) +
                                              " of the window's GPU time"));
    const std::string markdown = step_kinds_markdown({steps});
    CHECK_THAT(markdown, Catch::Contains("| share of the window's GPU time |"));
  }
  // The recorded window 1: decode_batch's 5.88 ms of the window's 13.3 ms, where the two kinds' 11.7 ms would give 50%.
  const StepKindReport first = steps_of(data_path("serving/serving_window1_h100.sqlite"));
  CHECK_THAT(first.verdict, Catch::StartsWith("decode steps: 22 of 40") && Catch::EndsWith("; 44% of the window's GPU time"));
  CHECK(detail::format_fraction_percent(*kind_named(first, "decode_batch").gpu_time_share) == "50%");
  // Steps left out by capture_skip/capture_count: the share is of the kept steps' own GPU time, and says so.
  const StepKindReport bounded = steps_of(data_path("serving/serving_window1_h100.sqlite"), StepWindow{10, 20});
  CHECK(bounded.window_basis == "the kept steps' GPU time");
  CHECK_THAT(bounded.verdict, Catch::Contains(" of the kept steps' GPU time"));
}

TEST_CASE("step views: GPU work outside the steps (a second engine thread's) lowers the kinds' share of the window") {
  // Every kernel again, as another thread's launches outside any range (no launch call recorded): the window's GPU
  // time grows by the kernels' summed time, the kinds' does not.
  llmprof::testing::TempDir temp;
  const auto copy = doctored(temp, "serving_window1_h100",
                             {"CREATE TEMP TABLE again AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL",
                              "UPDATE again SET correlationId = correlationId + 1000000000",
                              "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM again"});
  const auto expected = expected_figures("serving_window1_h100");
  const StepKindReport steps = steps_of(copy);
  const double kinds = std::stod(expected.at("scheduler_step/gpu_time_ns"));
  CHECK(double(steps.window_gpu_time_ns) > std::stod(expected.at("window/gpu_time_ns")));
  CHECK(double(steps.window_gpu_time_ns) < 2 * kinds);
  const auto& decode = kind_named(steps, "decode_batch");
  CHECK(*decode.window_share == Approx(double(decode.gpu_time_ns) / double(steps.window_gpu_time_ns)));
  CHECK(*decode.window_share < 0.25);
  CHECK(*decode.gpu_time_share > 0.45);  // of the kinds' GPU time it is still half
}

TEST_CASE("step views: a kind-named range of another NVTX domain is no engine step kind") {
  const auto expected = expected_figures("serving_window1_h100");
  SECTION("tokenizers:decode, Hugging Face tokenizers' domain: a library range") {
    llmprof::testing::TempDir temp;
    const StepKindReport steps = steps_of(doctored(temp, "serving_window1_h100", ranges_of_domain("tokenizers", "decode")));
    REQUIRE(steps.kinds.size() == 2);
    CHECK(steps.step_range == "scheduler_step");
    for (const auto& kind : steps.kinds) CHECK(kind.domain.empty());
    CHECK(std::to_string(steps.steps) == expected.at("steps/count"));
    CHECK(steps.phases == std::vector<std::string>{"sampling"});
    auto captured = analyze_timeline(temp.path() / "serving_window1_h100.sqlite");
    REQUIRE(captured.has_value());
    const auto* tokenizer = captured->find_stage("tokenizers:decode");
    REQUIRE(tokenizer != nullptr);
    CHECK(tokenizer->library == "Hugging Face tokenizers");
  }
  SECTION("detok:decode, a domain no rule knows: another component's range, shown with its domain") {
    llmprof::testing::TempDir temp;
    const StepKindReport steps = steps_of(doctored(temp, "serving_window1_h100", ranges_of_domain("detok", "decode")));
    REQUIRE(steps.kinds.size() == 2);
    for (const auto& kind : steps.kinds) CHECK(kind.name != "decode");
    CHECK(std::find(steps.phases.begin(), steps.phases.end(), "detok:decode") != steps.phases.end());
    CHECK_THAT(steps.verdict, Catch::StartsWith("decode steps: 22 of 40"));
  }
}

TEST_CASE("step views: zero-length steps are counted and explained") {
  llmprof::testing::TempDir temp;
  // Three scheduler_step ranges closed as they opened (their kinds then start outside every step).
  const auto copy = doctored(temp, "serving_window1_h100",
                             {"UPDATE NVTX_EVENTS SET end = start WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE "
                              "text = 'scheduler_step' ORDER BY start LIMIT 3)"});
  const StepKindReport steps = steps_of(copy);
  CHECK(steps.zero_length_steps == 3);
  CHECK_THAT(steps.verdict, Catch::EndsWith("3 of the 40 steps lasted 0 ns (their range closed as it opened: no work is "
                                            "attributed to them, and they count as 0 ns in the step times)"));
  CHECK_THAT(step_kinds_markdown({steps}), Catch::Contains("3 of the steps lasted 0 ns on the host"));
}

TEST_CASE("levers: a timeline without CUDA trace does not read as no timeline") {
  // The recorded sampled-preset export (nsys --trace=nvtx, H200): a timeline exists; its stages have no GPU work.
  llmprof::testing::TempDir temp;
  const auto main = temp.path() / "run";
  std::filesystem::create_directories(main / "nsys");
  std::filesystem::copy_file(data_path("gpu-metrics/nvtx_1b_h200_6steps.sqlite"), main / "nsys/profile.sqlite");
  AnalysisOptions options;
  options.cuda_traced = false;
  auto analysis = analyze_run_directory(main, options);
  REQUIRE(analysis.has_value());
  REQUIRE(write_analysis(*analysis, main / "analysis"));
  auto model = load_run_report(main);
  REQUIRE(model.has_value());
  REQUIRE(model->timeline.has_value());
  const auto verdict = detail::summarize_run_verdict(*model);
  REQUIRE_FALSE(verdict.stages.empty());
  for (const auto& lever : verdict.stages.front().levers) {
    INFO(lever.name << ": " << lever.withheld);
    CHECK_THAT(lever.withheld, !Catch::Contains("no nsys SQLite timeline"));
    if (lever.name == "launch overhead" || lever.name == "idle between graph replays")
      CHECK_THAT(lever.withheld, Catch::StartsWith("the capture traced no CUDA work"));
  }
}
