// Engine steps per kind and range discovery, on an export recorded with the real nsys 2022.4.2 of
// tests/e2e/engine_loop.cpp (scheduler_step > prefill_batch | decode_batch | mixed_batch, sampling; CPU only).
// Expected figures: tests/data/serving/expected.tsv, written by tests/tools/step_kinds_expected.py (Python
// sqlite3, its own nesting by a per-thread stack walk; no code shared with libllmprof).
#include <algorithm>
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "llmprof/config.hpp"
#include "llmprof/range_discovery.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/sync_steps.hpp"
#include "llmprof/timeline.hpp"
#include "parse/sqlite_database.hpp"
#include "pipeline/capture_windows.hpp"
#include "pipeline/stage_choice.hpp"
#include "serving_h100_windows.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

const char* kFixture = "engine_loop_cpu2022";
// Two windows of examples/serving/serve.py on the H100 (nsys 2025.3.1, --capture-range=cudaProfilerApi
// --capture-range-end=repeat:2, the engine worker's kernels), trimmed by tests/tools/trim_nsys_sqlite.py.
const char* kH100Windows[] = {"serving_window1_h100", "serving_window2_h100"};

std::map<std::string, std::string> expected_figures(const std::string& file = kFixture) {
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

std::filesystem::path fixture(const std::string& file = kFixture) {
  return data_path("serving/" + file + ".sqlite");
}

TimelineReport timeline(const std::string& file = kFixture) {
  auto report = analyze_timeline(fixture(file));
  REQUIRE(report.has_value());
  return report.value();
}

// The figures every fixture's oracle gives of a kind: count, step-time percentiles, its one process, its GPU busy
// share.
void check_kind_against_oracle(const StepKindFigures& kind, const std::map<std::string, std::string>& expected) {
  INFO(kind.name);
  CHECK(std::to_string(kind.count) == expected.at(kind.name + "/count"));
  CHECK(std::to_string(kind.step_time.p50_ns) == expected.at(kind.name + "/p50_ns"));
  CHECK(std::to_string(kind.step_time.p90_ns) == expected.at(kind.name + "/p90_ns"));
  CHECK(std::to_string(kind.step_time.p99_ns) == expected.at(kind.name + "/p99_ns"));
  REQUIRE(kind.processes.size() == 1);
  CHECK(std::to_string(kind.processes.front()) == expected.at(kind.name + "/processes"));
  // gpu_busy_ns over the steps' summed time ("-": the steps took no time, and there is no share).
  const std::string& busy_share = expected.at(kind.name + "/gpu_busy_share");
  if (busy_share == "-") {
    CHECK_FALSE(kind.gpu_busy_share.has_value());
  } else {
    REQUIRE(kind.gpu_busy_share.has_value());
    CHECK(*kind.gpu_busy_share == Approx(std::stod(busy_share)).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("step kinds of an engine loop recorded with nsys 2022.4 match the Python oracle") {
  const auto expected = expected_figures();
  const auto steps = analyze_step_kinds(timeline());
  REQUIRE(steps.has_value());
  CHECK(steps->step_range == expected.at("steps/step_range"));
  CHECK(std::to_string(steps->steps) == expected.at("steps/count"));
  std::vector<std::string> names;
  for (const auto& kind : steps->kinds) names.push_back(kind.name);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"decode_batch", "mixed_batch", "prefill_batch"});
  CHECK(steps->phases == std::vector<std::string>{"sampling"});
  for (const auto& kind : steps->kinds) {
    check_kind_against_oracle(kind, expected);
    CHECK_FALSE(kind.gpu_time_share.has_value());  // a CPU capture: no GPU work, no share invented
  }
  // No GPU work: ordered by count, and the verdict says there was none.
  CHECK(steps->kinds.front().name == "decode_batch");
  CHECK(steps->verdict.find("no GPU work recorded") != std::string::npos);
  CHECK_FALSE(steps->gpu_process.has_value());
}

TEST_CASE("step kinds of H100 serving windows (engine worker, GPU work) match the Python oracle") {
  std::vector<StepKindReport> windows;
  for (const char* file : kH100Windows) {
    INFO(file);
    const auto expected = expected_figures(file);
    const auto steps = analyze_step_kinds(timeline(file));
    REQUIRE(steps.has_value());
    CHECK(steps->step_range == expected.at("steps/step_range"));
    CHECK(std::to_string(steps->steps) == expected.at("steps/count"));
    CHECK(steps->phases == std::vector<std::string>{"sampling"});
    REQUIRE(steps->kinds.size() == 2);
    for (const auto& kind : steps->kinds) {
      check_kind_against_oracle(kind, expected);
      INFO(kind.name);
      CHECK(std::to_string(kind.gpu_time_ns) == expected.at(kind.name + "/gpu_time_ns"));
      CHECK(std::to_string(kind.gpu_busy_ns) == expected.at(kind.name + "/gpu_busy_ns"));
      REQUIRE_FALSE(kind.top_kernels.empty());
      CHECK(kind.top_kernels.front().name == expected.at(kind.name + "/top_kernel"));
      CHECK(std::to_string(kind.top_kernels.front().total_ns) == expected.at(kind.name + "/top_kernel_ns"));
      REQUIRE(kind.gpu_time_share.has_value());
    }
    // The engine worker ran every kernel: the report names it, not the front process.
    REQUIRE(steps->gpu_process.has_value());
    CHECK(std::to_string(*steps->gpu_process) == expected.at("decode_batch/processes"));
    const double shares = *steps->kinds[0].gpu_time_share + *steps->kinds[1].gpu_time_share;
    CHECK(shares == Approx(1.0).epsilon(1e-9));
    windows.push_back(*steps);
  }
  // The workload's own count inside each window (examples/ncu-budget-h100/repeat2-counts.json): 22/18, 21/19.
  const std::string markdown = step_kinds_markdown(windows);
  CHECK(markdown.find("- `decode_batch`: window 1 22 steps, 1.28 ms | window 2 21 steps, 2.03 ms") !=
        std::string::npos);
  CHECK(markdown.find("- `mixed_batch`: window 1 18 steps, 1.84 ms | window 2 19 steps, 2.96 ms") != std::string::npos);
}

TEST_CASE("an explicit step range that is absent gives no step report") {
  CHECK_FALSE(analyze_step_kinds(timeline(), "engine_step").has_value());
}

TEST_CASE("two windows: a section per window and a side-by-side line per kind") {
  const auto steps = analyze_step_kinds(timeline());
  REQUIRE(steps.has_value());
  const std::string markdown = step_kinds_markdown({*steps, *steps});
  CHECK(markdown.find("### Window 2") != std::string::npos);
  const std::string decode_count = std::to_string(steps->kinds.front().count);
  CHECK(markdown.find("- `decode_batch`: window 1 " + decode_count + " steps") != std::string::npos);
  CHECK(markdown.find(" | window 2 " + decode_count + " steps") != std::string::npos);
  CHECK(step_kinds_json({*steps}).find("\"schema\":\"llmprof.step_kinds/1\"") != std::string::npos);
}

TEST_CASE("range discovery names the ranges, their nesting and counts, and gives the --set line") {
  const auto expected = expected_figures();
  const auto report = timeline();
  auto discovery = discover_ranges(report, fixture());
  REQUIRE(discovery.has_value());
  for (const auto& range : discovery->ranges) {
    INFO(range.name);
    CHECK(std::to_string(range.count) == expected.at(range.name + "/count"));
    CHECK(range.parent.value_or("-") == expected.at(range.name + "/parent"));
  }
  CHECK(discovery->ranges.size() == 6);
  CHECK(std::to_string(discovery->profiler_start_calls) == expected.at("profiler_api/start_calls"));
  CHECK(std::to_string(discovery->profiler_stop_calls) == expected.at("profiler_api/stop_calls"));
  // No GPU and no profiler window: the most frequent kind, gated on the range that encloses every step once.
  CHECK(discovery->stage == "decode_batch");
  CHECK(discovery->capture_range == "nvtx");
  CHECK(discovery->nvtx_capture == "serve");
  CHECK(discovery->set_line() ==
        "--set nsys.capture_range=nvtx --set nsys.nvtx_capture=serve --set run.stage=decode_batch "
        "--set 'ncu.nvtx_include=[\"decode_batch/\"]'");
  const std::string text = describe_discovery(*discovery);
  CHECK(text.find("scheduler_step x60 (in serve)") != std::string::npos);
  CHECK(text.find("cudaProfilerStart/Stop calls: 0/0") != std::string::npos);
}

namespace {

// The words a POSIX shell (/bin/sh) makes of `line`, as a user who pastes it gets them.
std::vector<std::string> shell_words(const std::string& line) {
  llmprof::testing::TempDir directory;
  llmprof::testing::write_file(directory / "words.sh",
                               "set -- " + line + "\nfor word; do printf '%s\\0' \"$word\"; done\n");
  FILE* shell = ::popen(("/bin/sh '" + (directory / "words.sh").string() + "'").c_str(), "r");
  REQUIRE(shell != nullptr);
  std::string output;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, shell)) > 0;) output.append(buffer, got);
  REQUIRE(::pclose(shell) == 0);
  std::vector<std::string> words;
  for (std::size_t begin = 0, end; (end = output.find('\0', begin)) != std::string::npos; begin = end + 1)
    words.push_back(output.substr(begin, end - begin));
  return words;
}

}  // namespace

// The "To profile it:" line, pasted into a POSIX shell, must give deep-profile the settings it names: unquoted,
// the shell took the double quotes out of ncu.nvtx_include=["decode_batch/"], and a range name with a blank, a
// quote or a $ fell apart.
TEST_CASE("range discovery's --set line survives /bin/sh and loads as the settings it names", "[discover]") {
  auto report = timeline();
  const std::string hostile = "decode step's $x \"q\" `y`_batch";  // still a kind name (*_batch)
  for (auto& stage : report.stages)
    if (stage.name == "decode_batch") stage.name = hostile;
  for (const auto& [input, stage] : {std::pair{timeline(), std::string("decode_batch")}, std::pair{report, hostile}}) {
    auto discovery = discover_ranges(input, fixture());
    REQUIRE(discovery.has_value());
    REQUIRE(discovery->stage == stage);
    const auto words = shell_words(discovery->set_line());
    REQUIRE(words.size() == 2 * discovery->set_arguments.size());
    std::vector<std::string> overrides;
    for (std::size_t i = 0; i < words.size(); i += 2) {
      CHECK(words[i] == "--set");
      overrides.push_back(words[i + 1]);
    }
    CHECK(overrides == discovery->set_arguments);
    auto config = load_config({{}, overrides});
    INFO(discovery->set_line());
    REQUIRE(config.has_value());
    CHECK(config->run.stage == stage);
    CHECK(config->nsys.nvtx_capture == "serve");
    CHECK(config->ncu.nvtx_include == std::vector<std::string>{stage + "/"});
  }
}

TEST_CASE("capture windows: nsys's numbered reports are found in order, stopping at the first gap") {
  llmprof::testing::TempDir dir;
  const auto base = dir / "profile";
  llmprof::testing::write_file(dir / "profile.1.nsys-rep", "x");
  llmprof::testing::write_file(dir / "profile.2.qdstrm", "x");
  llmprof::testing::write_file(dir / "profile.4.nsys-rep", "x");
  CHECK(detail::numbered_windows(base) == std::vector<int>{1, 2});
  CHECK(detail::numbered_windows(dir / "other").empty());
}

TEST_CASE("a window bounded in steps keeps steps skip .. skip + count - 1 and the kinds inside them") {
  const auto expected = expected_figures();
  const auto steps = analyze_step_kinds(timeline(), {}, StepWindow{10, 20});
  REQUIRE(steps.has_value());
  CHECK(steps->steps == 20);
  CHECK(steps->steps_left_out == 40);
  for (const auto& kind : steps->kinds) {
    INFO(kind.name);
    CHECK(std::to_string(kind.count) == expected.at(kind.name + "/count_in_steps_10_to_29"));
  }
  CHECK(step_kinds_markdown({*steps}).find("20 steps (40 more left out by nsys.capture_skip/capture_count)") !=
        std::string::npos);
}

TEST_CASE("a step window past the capture's end says so: nothing kept, or fewer kept than asked, never silently") {
  const auto expected = expected_figures();
  const std::int64_t total = std::stoll(expected.at("scheduler_step/count"));
  const auto none = analyze_step_kinds(timeline(), {}, StepWindow{total + 10, 0});
  REQUIRE(none.has_value());
  CHECK(none->steps == 0);
  CHECK(none->steps_left_out == total);
  CHECK(none->kinds.empty());
  const std::string skipped = "no step kept: nsys.capture_skip = " + std::to_string(total + 10) +
                              " skips past every step (the capture holds " + std::to_string(total) +
                              " steps); set it below " + std::to_string(total);
  CHECK(none->verdict == skipped);
  CHECK(none->window_shortfall == skipped);

  const auto fewer = analyze_step_kinds(timeline(), {}, StepWindow{total - 10, 20});
  REQUIRE(fewer.has_value());
  CHECK(fewer->steps == 10);
  CHECK(fewer->window_shortfall == "nsys.capture_count = 20 asked for 20 steps after the " + std::to_string(total - 10) +
                                       " skipped, but the capture holds " + std::to_string(total) +
                                       " steps: only 10 are kept (steps " + std::to_string(total - 10) + " to " +
                                       std::to_string(total - 1) + ")");
  CHECK_THAT(step_kinds_markdown({*fewer}), Catch::Contains(fewer->window_shortfall));
  CHECK_THAT(step_kinds_json({*fewer}), Catch::Contains("\"window_shortfall\":\"nsys.capture_count = 20"));
  // Within the capture: nothing to say.
  CHECK(analyze_step_kinds(timeline(), {}, StepWindow{0, total})->window_shortfall.empty());
}

TEST_CASE("time per token per step kind: the workload's tokens over the kind's summed step time (Python oracle)") {
  // serving_h100_step_tokens.json is the workload's own count for the two recorded windows
  // (examples/ncu-budget-h100/repeat2-counts.json in the llmprof.step_tokens/1 schema).
  auto windows = testing::h100_serving_windows();
  attach_step_tokens(windows, testing::h100_serving_step_tokens());
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto expected = expected_figures(kH100Windows[w]);
    INFO("window " << w + 1);
    CHECK(windows[w].token_notes.empty());
    for (const auto& kind : windows[w].kinds) {
      INFO(kind.name);
      CHECK(std::to_string(kind.step_time.total_ns) == expected.at(kind.name + "/step_time_total_ns"));
      REQUIRE(kind.tokens.has_value());
      CHECK(kind.tokens->withheld.empty());
      REQUIRE(kind.tokens->time_per_token_ns.has_value());
      CHECK(*kind.tokens->time_per_token_ns ==
            Approx(std::stod(expected.at(kind.name + "/time_per_token_ns"))).epsilon(1e-9));
      CHECK(*kind.tokens->tokens_per_step ==
            Approx(std::stod(expected.at(kind.name + "/tokens_per_step"))).epsilon(1e-9));
    }
  }
  const std::string markdown = step_kinds_markdown(windows);
  INFO(markdown);
  CHECK(markdown.find("| `decode_batch` | 22 | 0 | 352 | 16 | 82.3 µs |") != std::string::npos);
  CHECK(step_kinds_json(windows).find("\"tokens\":{\"workload_steps\":22,\"prompt_tokens\":0,\"decode_tokens\":352") !=
        std::string::npos);
}

TEST_CASE("step tokens that disagree with the timeline withhold the time per token and say why") {
  auto windows = testing::h100_serving_windows();
  StepTokens tokens = testing::h100_serving_step_tokens();
  tokens.windows[0].kinds["decode_batch"].steps = 21;          // one decode step fewer than the timeline's 22
  tokens.windows[0].kinds["prefill_batch"].steps = 3;          // a kind the capture never saw
  tokens.windows[1].kinds.erase("mixed_batch");                // a kind the workload did not count
  tokens.windows.push_back(tokens.windows[1]);                 // a third window the capture lacks
  attach_step_tokens(windows, tokens);
  const auto& decode = *std::find_if(windows[0].kinds.begin(), windows[0].kinds.end(),
                                     [](const StepKindFigures& kind) { return kind.name == "decode_batch"; });
  REQUIRE(decode.tokens.has_value());
  CHECK_FALSE(decode.tokens->time_per_token_ns.has_value());
  CHECK(decode.tokens->withheld == "the workload counted 21 `decode_batch` steps in window 1, the timeline 22");
  CHECK(windows[0].token_notes ==
        std::vector<std::string>{"the workload counted 3 `prefill_batch` steps in window 1; the timeline has none"});
  CHECK(windows[1].token_notes == std::vector<std::string>{
                                      "the workload's step tokens name no `mixed_batch` in window 2",
                                      "the workload's step tokens have a window 3 that the capture does not"});
  const std::string markdown = step_kinds_markdown(windows);
  CHECK(markdown.find("withheld: the workload counted 21 `decode_batch` steps in window 1, the timeline 22") !=
        std::string::npos);
}

TEST_CASE("a step tokens file is read strictly: each bad input names the key") {
  const auto error_of = [](const std::string& text) {
    auto parsed = parse_step_tokens(text, "tokens.json");
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == ErrorCode::parse_error);
    return parsed.error().message;
  };
  const std::string head = R"({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"decode_batch": )";
  CHECK(error_of("[1]").find("not a JSON object") != std::string::npos);
  CHECK(error_of(R"({"schema": "llmprof.step_tokens/2", "windows": []})").find("tokens.json: schema must be") == 0);
  CHECK(error_of(R"({"schema": "llmprof.step_tokens/1"})") == "tokens.json: windows is missing");
  CHECK(error_of(head + R"({"steps": 2, "prompt_tokens": 0}}}]})") ==
        "tokens.json: windows[0].kinds.decode_batch.decode_tokens is missing");
  CHECK(error_of(head + R"({"steps": 2.5, "prompt_tokens": 0, "decode_tokens": 1}}}]})") ==
        "tokens.json: windows[0].kinds.decode_batch.steps must be an integer, not the number 2.5E0");
  CHECK(error_of(head + R"({"steps": 2, "prompt_tokens": -1, "decode_tokens": 1}}}]})") ==
        "tokens.json: windows[0].kinds.decode_batch.prompt_tokens must not be negative (got -1)");
  CHECK(error_of(R"({"schema": "llmprof.step_tokens/1", "windows": [{"kinds": {"": {}}}]})") ==
        "tokens.json: windows[0].kinds. names no step kind (an empty key)");
  auto good = parse_step_tokens(head + R"({"steps": 2, "prompt_tokens": 0, "decode_tokens": 4.0}}}]})", "t");
  REQUIRE(good.has_value());
  CHECK(good->windows.at(0).kinds.at("decode_batch").decode_tokens == 4);  // 4.0 from a Python float is 4
  auto missing = load_step_tokens(data_path("serving/no-such-file.json"));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::not_found);
}

// Issue 34: kinds however the engine shapes its ranges, each recorded with the real nsys 2022.4 from
// tests/e2e/engine_loop.cpp: kinds that stand alone (under `serve`, which holds 60 of them in one instance, so it
// is no step), SGLang's mode names at the top level of the thread, and the nested shape in the NVTX domain `llm`.
// The Python oracle finds the step range, the kinds and a window of steps 10..29 by its own rules.
TEST_CASE("step kinds of flat, SGLang-named and domain-scoped engine loops match the Python oracle") {
  for (const char* file : {"engine_flat_cpu2022", "engine_flat_sglang_cpu2022", "engine_domain_cpu2022"}) {
    INFO(file);
    const auto expected = expected_figures(file);
    const TimelineReport captured = timeline(file);
    const auto steps = analyze_step_kinds(captured);
    REQUIRE(steps.has_value());
    const std::string range = expected.at("steps/step_range");
    if (range == "-") {
      CHECK(steps->step_range.empty());
      CHECK(steps->phases.empty());
    } else {
      CHECK(steps->step_range == "llm:" + range);  // the domain's qualified name
    }
    CHECK(std::to_string(steps->steps) == expected.at("steps/count"));
    std::vector<std::string> names;
    for (const auto& kind : steps->kinds) {
      names.push_back(kind.name);
      check_kind_against_oracle(kind, expected);
    }
    std::sort(names.begin(), names.end());
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ",") + name;
    CHECK(joined == expected.at("steps/kinds"));
    // The decode-like kind leads (no GPU work: by count) and the verdict speaks of it by its short name, with its
    // NVTX domain where it has one.
    CHECK_THAT(steps->verdict, Catch::StartsWith((range == "-" || steps->step_range.find(':') == std::string::npos
                                                      ? std::string()
                                                      : std::string("llm:")) +
                                                 "decode steps: 48 of 60"));
    const auto window = analyze_step_kinds(captured, {}, StepWindow{10, 20});
    REQUIRE(window.has_value());
    CHECK(window->steps == 20);
    CHECK(window->steps_left_out == 40);
    for (const auto& kind : window->kinds) {
      INFO(kind.name);
      CHECK(std::to_string(kind.count) == expected.at(kind.name + "/count_in_steps_10_to_29"));
    }
  }
}

// The bundled example's ranges (decode x1 around 8 decode_step, no *_batch): no kind, and one line that says why
// and lists what the capture held; `decode` alone, once, is a phase of a decode loop, not a step kind.
TEST_CASE("without a step kind the reason is one line naming the ranges the capture holds") {
  auto captured = analyze_timeline(data_path("nsys-sqlite/ex1b8.sqlite"));
  REQUIRE(captured.has_value());
  CHECK_FALSE(analyze_step_kinds(captured.value()).has_value());
  const std::string why = no_step_kinds_reason(captured.value());
  CHECK(why.find('\n') == std::string::npos);
  CHECK_THAT(why, Catch::StartsWith("no step kind: no NVTX range named like one"));
  CHECK_THAT(why, Catch::Contains("decode x1"));
  CHECK_THAT(why, Catch::Contains("decode_step x8"));
}

// Issue 34: on an engine whose kinds stand alone under `serve` (nothing nested under a step), discovery picks among
// the kinds (before: "the nested range with the most GPU time", falling back to the first range), and its
// sentence quotes figures the oracle gives: decode_batch's 48 of the 60 steps.
TEST_CASE("discovery on kinds that stand alone picks the busiest kind and its sentence holds the oracle's figures") {
  const auto expected = expected_figures("engine_flat_cpu2022");
  const auto report = timeline("engine_flat_cpu2022");
  auto discovery = discover_ranges(report, fixture("engine_flat_cpu2022"));
  REQUIRE(discovery.has_value());
  CHECK(discovery->stage == "decode_batch");
  CHECK(discovery->why.rfind("`decode_batch` is the step kind (its ranges stand alone, each one step) with the most "
                             "instances (" +
                                 expected.at("decode_batch/count") + " of " + expected.at("steps/count") +
                                 "; no GPU work was recorded)",
                             0) == 0);
  CHECK(discovery->capture_range == "nvtx");
  CHECK(discovery->nvtx_capture == "serve");  // encloses every decode_batch once
}

// Issue 34, steps without NVTX: the H100 serving windows hold the engine's NVTX ranges too, so the ranges the
// Python oracle counted (decode_batch 22 + mixed_batch 18 of 40 steps; 21 + 19 in window 2) check the steps
// inferred from the launch sequence and its synchronisations, found with the ranges ignored, and their kinds grouped
// by GEMM signature.
TEST_CASE("steps cut at the host's synchronisation match the NVTX steps of the H100 serving windows") {
  for (const char* file : kH100Windows) {
    INFO(file);
    const auto expected = expected_figures(file);
    const auto inferred = infer_sync_steps(fixture(file));
    REQUIRE(inferred.has_value());
    REQUIRE(inferred->has_value());
    const StepKindReport& steps = **inferred;
    CHECK(std::to_string(steps.steps) == expected.at("steps/count"));
    CHECK_THAT(steps.inferred, Catch::Contains("from the launch sequence"));
    // Each step of the serving example waits twice: its inputs' upload, then its sampled tokens.
    CHECK_THAT(steps.inference_check, Catch::StartsWith("the launch sequence and the synchronisation agree") &&
                                          Catch::Contains("closed by 2 synchronisations"));
    CHECK_FALSE(steps.figures_withheld);
    std::map<std::string, std::int64_t> counts;
    for (const auto& kind : steps.kinds) counts[kind.name] = kind.count;
    CHECK(counts == std::map<std::string, std::int64_t>{
                        {"uniform-1", std::stoll(expected.at("decode_batch/count"))},
                        {"varying", std::stoll(expected.at("mixed_batch/count"))}});
    // The steps hold the same GPU work as the step ranges (kind and sampling, kernels and copies).
    std::int64_t gpu = 0;
    for (const auto& kind : steps.kinds) gpu += kind.gpu_time_ns;
    CHECK(gpu == std::stoll(expected.at("scheduler_step/gpu_time_ns")));
    const auto window = infer_sync_steps(fixture(file), StepWindow{10, 20});
    REQUIRE(window.has_value());
    REQUIRE(window->has_value());
    CHECK((*window)->steps == 20);
    CHECK((*window)->steps_left_out == 20);
    CHECK((*window)->window_shortfall.empty());
    // A window past the end keeps no step: no kind, and the verdict names the setting (no figure of no step).
    const auto past = infer_sync_steps(fixture(file), StepWindow{1000, 0});
    REQUIRE(past.has_value());
    REQUIRE(past->has_value());
    CHECK((*past)->steps == 0);
    CHECK((*past)->kinds.empty());
    CHECK((*past)->verdict == "no step kept: nsys.capture_skip = 1000 skips past every step (the capture holds " +
                                  std::to_string((*past)->steps_left_out) + " steps); set it below " +
                                  std::to_string((*past)->steps_left_out));
    CHECK((*past)->steps_left_out == (*window)->steps + (*window)->steps_left_out);
  }
  // A CPU capture has no kernel: no step.
  const auto none = infer_sync_steps(fixture());
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
}

// run.step_source = sync through write_engine_steps, as the analyze stage and `deep-profile analyze MAIN` call it:
// a run directory whose nsys/profile.sqlite is the H100 window; analysis/step_kinds.md says how the steps were
// found. With the default (auto) and no run.json saying the capture was the workload's window, ranges are used.
TEST_CASE("write_engine_steps with run.step_source = sync writes the inferred steps and says how") {
  llmprof::testing::TempDir main;
  std::filesystem::create_directories(main / "nsys");
  std::filesystem::create_directories(main / "analysis");  // the analyze stage's, before it writes the steps
  std::filesystem::copy_file(fixture("serving_window1_h100"), main / "nsys" / "profile.sqlite");
  std::vector<std::string> warnings;
  const auto windows = write_engine_steps(main.path(), AnalysisReport{}, {}, warnings, StepSource::sync);
  INFO(llmprof::testing::read_file(main / "analysis" / "step_kinds.md"));
  REQUIRE(windows.size() == 1);
  CHECK(windows.front().steps == 40);
  CHECK_THAT(llmprof::testing::read_file(main / "analysis" / "step_kinds.md"),
             Catch::Contains("Steps inferred without NVTX from the launch sequence") &&
                 Catch::Contains("How sure: the launch sequence and the synchronisation agree"));
  CHECK_THAT(llmprof::testing::read_file(main / "analysis" / "step_kinds.json"), Catch::Contains("\"inferred\""));
  warnings.clear();
  CHECK(write_engine_steps(main.path(), AnalysisReport{}, {}, warnings, StepSource::automatic).empty());
}

namespace {

// A copy of `file` whose workload opened one profiling window [start, stop] (cudaProfilerStart/Stop rows added to
// CUPTI_ACTIVITY_KIND_RUNTIME, as nsys records the calls).
std::filesystem::path with_profiler_window(const llmprof::testing::TempDir& temp, const std::string& file,
                                           std::int64_t start, std::int64_t stop) {
  const auto copy = temp / (file + ".sqlite");
  std::filesystem::copy_file(fixture(file), copy);
  auto database = detail::SqliteDatabase::open_writable(copy);
  REQUIRE(database.has_value());
  REQUIRE(database
              ->execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
                        "eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue "
                        "INTEGER, callchainId INTEGER)")
              .has_value());
  REQUIRE(database->execute("INSERT INTO StringIds (id, value) VALUES (90001, 'cudaProfilerStart_v4000'), "
                            "(90002, 'cudaProfilerStop_v4000')")
              .has_value());
  REQUIRE(database
              ->execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES (" +
                        std::to_string(start) + ", " + std::to_string(start + 10) + ", 0, 1, 90001), (" +
                        std::to_string(stop) + ", " + std::to_string(stop + 10) + ", 0, 2, 90002)")
              .has_value());
  return copy;
}

}  // namespace

// Issue 34: discovery counts inside the workload's own window and never suggests following that window for a range
// with no instance in it. The flat engine loop's first step, prefill_batch at 145,985,488..147,553,214 ns, is the
// only kind inside a window around it (to 147,553,500 ns; the next step starts at 147,553,665); a window before every range holds none, so the suggestion gates on `serve`.
TEST_CASE("discovery prefers what falls inside the workload's profiling window, and never suggests an empty one") {
  llmprof::testing::TempDir temp;
  const auto report = timeline("engine_flat_cpu2022");
  const auto around_first = with_profiler_window(temp, "engine_flat_cpu2022", 145985000, 147553500);
  auto inside = discover_ranges(report, around_first);
  REQUIRE(inside.has_value());
  CHECK(inside->profiler_windows.size() == 1);
  CHECK(inside->stage == "prefill_batch");  // 1 of 1 inside; decode_batch has 48 outside
  CHECK_THAT(inside->why, Catch::StartsWith("`prefill_batch` is the step kind (its ranges stand alone, each one step) "
                                            "with the most instances inside the workload's profiling windows (1 of 1"));
  CHECK(inside->capture_range == "cudaProfilerApi");

  llmprof::testing::TempDir other;
  const auto before_all = with_profiler_window(other, "engine_flat_cpu2022", 100, 200);
  auto outside = discover_ranges(report, before_all);
  REQUIRE(outside.has_value());
  CHECK(outside->stage == "decode_batch");
  CHECK_FALSE(outside->chosen_in_window);
  CHECK(outside->capture_range == "nvtx");  // not the window, where decode_batch has no instance
  CHECK(outside->nvtx_capture == "serve");
  CHECK_THAT(outside->why, Catch::Contains("none of the candidates has an instance inside its profiling windows"));
}

// Issue 34 on the GPU: examples/serving/serve.py --ranges flat (and --kind-names sglang) through --preset serving
// on the H200 (nsys 2025.3.1): the kinds stand alone, their GPU figures match the Python oracle, their counts the
// workload's own (tests/data/serving/serving_flat_h200_counts.json: 22 decode, 18 mixed in the window), and the
// steps cut at synchronisation, ranges ignored, split the same way.
TEST_CASE("kinds that stand alone in H200 serving windows match the oracle, the workload's counts and sync steps") {
  const std::map<std::string, std::map<std::string, std::int64_t>> workload = {
      {"serving_flat_h200", {{"decode_batch", 22}, {"mixed_batch", 18}}},
      {"serving_flat_sglang_h200", {{"decode", 22}, {"mixed", 18}}}};
  for (const auto& [file, counts] : workload) {
    INFO(file);
    const auto expected = expected_figures(file);
    const auto steps = analyze_step_kinds(timeline(file));
    REQUIRE(steps.has_value());
    CHECK(steps->step_range.empty());
    CHECK(std::to_string(steps->steps) == expected.at("steps/count"));
    std::map<std::string, std::int64_t> found;
    for (const auto& kind : steps->kinds) {
      found[kind.name] = kind.count;
      check_kind_against_oracle(kind, expected);
      CHECK(std::to_string(kind.gpu_time_ns) == expected.at(kind.name + "/gpu_time_ns"));
      CHECK(std::to_string(kind.gpu_busy_ns) == expected.at(kind.name + "/gpu_busy_ns"));
      REQUIRE_FALSE(kind.top_kernels.empty());
      CHECK(kind.top_kernels.front().name == expected.at(kind.name + "/top_kernel"));
    }
    CHECK(found == counts);
    const auto inferred = infer_sync_steps(fixture(file));
    REQUIRE(inferred.has_value());
    REQUIRE(inferred->has_value());
    std::map<std::string, std::int64_t> clusters;
    for (const auto& kind : (*inferred)->kinds) clusters[kind.name] = kind.count;
    CHECK(clusters == std::map<std::string, std::int64_t>{{"uniform-1", counts.begin()->second},
                                                          {"varying", std::next(counts.begin())->second}});
  }
}

TEST_CASE("run.stage = auto: the most GPU time, or among kinds level within 10% the one with the most steps") {
  // serving_flat_h200: decode_batch 6122190 ns over 22 steps, mixed_batch 6065138 ns over 18 (expected.tsv):
  // 50.2% and 49.8% of the kinds' GPU time, level.
  const auto steps = analyze_step_kinds(timeline("serving_flat_h200"));
  REQUIRE(steps.has_value());
  const auto level = detail::pick_step_kind(steps.value());
  CHECK(level.stage == "decode_batch");
  CHECK(level.why == "run.stage = auto chose `decode_batch`: the step kinds `decode_batch` 50% of the kinds' GPU "
                     "time, 22 steps; `mixed_batch` 50% of the kinds' GPU time, 18 steps are within 10% of the most "
                     "GPU time inside the captured window, and of those it has the most steps (22 of 40 steps; its "
                     "launch configurations repeat, so ncu measures it in the fewest launches)");
  SECTION("level the other way round: still the kind with more steps") {
    StepKindReport swapped = steps.value();
    std::swap(swapped.kinds[0], swapped.kinds[1]);
    swapped.kinds[0].gpu_time_ns = 6122190;  // mixed leads by 0.9%
    swapped.kinds[1].gpu_time_ns = 6065138;
    CHECK(detail::pick_step_kind(swapped).stage == "decode_batch");
  }
  SECTION("a lead beyond 10% wins whatever the counts") {
    StepKindReport led = steps.value();
    led.kinds[1].gpu_time_ns = 8000000;  // mixed 8.0 ms against decode 6.12 ms: 23% more
    led.kinds[1].gpu_time_share = 8000000.0 / (8000000.0 + 6122190.0);
    std::swap(led.kinds[0], led.kinds[1]);
    const auto choice = detail::pick_step_kind(led);
    CHECK(choice.stage == "mixed_batch");
    CHECK(choice.why == "run.stage = auto chose `mixed_batch`, the step kind with the most GPU time inside the "
                        "captured window (57% of the kinds' GPU time, 18 of 40 steps); the other kinds: decode_batch "
                        "x22");
  }
  SECTION("without GPU work, the most steps") {
    StepKindReport idle = steps.value();
    for (auto& kind : idle.kinds) kind.gpu_time_ns = 0;
    CHECK(detail::pick_step_kind(idle).stage == "decode_batch");
  }
}

