// The verdict's headline, its levers ranked by measured gain (computed by the analysis, stored in report.json) and
// the folded nested ranges, on the recorded H100/H200 runs under examples/. Expected figures: tests/tools/verdict_levers_expected.py computes them from
// the same run directories with nothing of libllmprof (tests/data/oracles/verdict_levers.txt); the headline
// sentences are those figures rounded by hand, as written beside each.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/format.hpp"
#include "llmprof/report.hpp"
#include "oracle.hpp"
#include "analysis/run_verdict.hpp"
#include "report/report_verdict.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::example_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;

namespace {

RunReportModel load_example(const std::string& relative) {
  auto model = load_run_report(example_path(relative));
  if (!model) FAIL(model.error().describe());
  return *model;
}

const VerdictLever& lever_named(const VerdictStage& levers, const std::string& name) {
  for (const auto& lever : levers.levers)
    if (lever.name == name) return lever;
  FAIL("no lever " << name);
  return levers.levers.front();
}

// The oracle's figure, or nullopt where it printed "none".
std::optional<double> expected(const std::string& line, const std::string& key) {
  const std::string text = oracle_text("verdict_levers", line, key);
  if (text == "none") return std::nullopt;
  return std::stod(text);
}

void check_figure(const std::optional<double>& actual, const std::optional<double>& wanted, const std::string& what) {
  INFO(what);
  REQUIRE(actual.has_value() == wanted.has_value());
  if (wanted) CHECK(*actual == Approx(*wanted).epsilon(1e-9));
}

void check_against_oracle(const VerdictStage& levers, const std::string& line) {
  INFO(line);
  check_figure(levers.step_ns, expected(line, "step_ns"), "step_ns");
  CHECK(levers.step_from_bare_run == (oracle_text("verdict_levers", line, "step_source") == "bare"));
  check_figure(levers.gpu_work_step_ns, expected(line, "gpu_work_step_ns"), "gpu_work_step_ns");
  check_figure(levers.hbm_limit_step_ns, expected(line, "hbm_limit_ns"), "hbm_limit_ns");
  check_figure(levers.compute_limit_step_ns, expected(line, "compute_limit_ns"), "compute_limit_ns");
  check_figure(lever_named(levers, "launch overhead").speedup, expected(line, "launch_gain"), "launch_gain");
  check_figure(lever_named(levers, "HBM limit").speedup, expected(line, "hbm_gain"), "hbm_gain");
  check_figure(lever_named(levers, "compute limit").speedup, expected(line, "compute_gain"), "compute_gain");
  check_figure(lever_named(levers, "straggler rank").speedup, expected(line, "straggler_gain"), "straggler_gain");
}

}  // namespace

TEST_CASE("the levers of the recorded runs are the oracle's figures") {
  const struct {
    const char* run;
    const char* label;
  } runs[] = {{"ncu-budget-h100/after-1b", "after-1b"},
              {"ncu-budget-h100/after-graphs", "after-graphs"},
              {"ncu-budget-h100/serving", "serving"},
              {"tp-run-h200x2", "tp-h200x2"},
              {"sample-run-h100", "sample-run"},
              {"graphs-h100/cpp-graphs-auto", "graphs-auto"}};
  for (const auto& run : runs) {
    const auto model = load_example(run.run);
    const auto verdict = detail::summarize_run_verdict(model);
    REQUIRE_FALSE(verdict.stages.empty());
    for (const auto& levers : verdict.stages) {
      const std::string line =
          std::string(run.label) + (levers.main ? " main " : " kind ") + levers.stage + ":";
      check_against_oracle(levers, line);
    }
  }
}

TEST_CASE("the 1b eager decode on the H100: launch overhead first, the HBM limit after it, compute withheld") {
  const auto model = load_example("ncu-budget-h100/after-1b");
  const auto verdict = detail::summarize_run_verdict(model);
  REQUIRE(verdict.stages.size() == 1);
  const auto& levers = verdict.stages.front();
  CHECK(levers.stage == "decode");
  REQUIRE(levers.levers.size() == 5);
  // Ranked: gains now, then gains after another lever, then withheld.
  CHECK(levers.levers[0].name == "launch overhead");
  CHECK(levers.levers[0].after.empty());
  CHECK(levers.levers[1].name == "HBM limit");
  CHECK(levers.levers[1].after == "launch overhead");
  CHECK_FALSE(levers.levers[2].speedup);
  // 20.8 GFLOP per step at 867 TFLOP/s is 24.0 µs, under the HBM limit's 655 µs: the HBM limit binds.
  CHECK(lever_named(levers, "compute limit").withheld == "below the HBM limit (655 µs), which binds first");
  CHECK(lever_named(levers, "compute limit").figure ==
        "20.8 GFLOP per step at 867 TFLOP/s (bf16) = 24.0 µs (FLOP measured for 91% of its kernel time)");
  CHECK(lever_named(levers, "HBM limit").figure ==
        "2.20 GB per step at 3.36 TB/s = 655 µs (bytes measured for 91% of its kernel time)");
  CHECK(lever_named(levers, "idle between graph replays").withheld ==
        "no pair of consecutive CUDA graph replays in this stage");
  CHECK(lever_named(levers, "straggler rank").withheld == "a single-rank run, with no other rank to wait for");
  // 145.09 tokens/s; 882.187 ms / 128 = 6.892 ms; GPU busy 0.2246; 311.52 ms / 128 = 2.434 ms of GPU work per
  // step; 6.892 / 2.434 = 2.83; 2,198,058,658 B / 3.3558e12 B/s = 655.0 µs.
  // The report.json predates step units: its steps_source names the workload's new tokens.
  CHECK(verdict.headline ==
        "decode: 145 tokens/s (6.89 ms per token, bare), host/launch-bound (GPU busy 22%). A step is one of its 128 "
        "decode steps (the bare run's new tokens). Its GPU work is 2.43 ms per step: without launch overhead, 2.8x "
        "faster. The HBM limit is 655 µs per step.");
}

TEST_CASE("a CUDA-graph decode has no launch-overhead lever and leads with the HBM limit") {
  const auto model = load_example("ncu-budget-h100/after-graphs");
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& levers = verdict.stages.front();
  CHECK(levers.levers.front().name == "HBM limit");
  CHECK(lever_named(levers, "launch overhead").withheld == "not launch-bound (runs as CUDA graphs, GPU busy 99%)");
  // 403.49 tokens/s; 317.229 ms / 128 = 2.478 ms; 2,134,454,426 B / 3.3505e12 B/s (this run's own profiled peak)
  // = 637.1 µs; 2.478 / 0.6371 = 3.89.
  CHECK(verdict.headline ==
        "decode: 403 tokens/s (2.48 ms per token, bare), runs as CUDA graphs (GPU busy 99%). A step is one of its "
        "128 decode steps (the bare run's new tokens). At the HBM limit a step would take 637 µs: 3.9x faster.");
}

TEST_CASE("a serving run: the main stage and each engine step kind get their levers, under the profiler") {
  const auto model = load_example("ncu-budget-h100/serving");
  CHECK(model.step_kinds == std::vector<std::string>{"decode_batch", "mixed_batch"});
  const auto verdict = detail::summarize_run_verdict(model);
  REQUIRE(verdict.stages.size() == 2);
  CHECK(verdict.stages[0].main);
  CHECK(verdict.stages[1].stage == "mixed_batch");
  CHECK_FALSE(verdict.stages[1].main);
  CHECK(lever_named(verdict.stages[1], "HBM limit").withheld == "no DRAM bytes measured by ncu for its kernels");
  // No bare run: the step is the steady-state mean under the profiler, 1.342 ms; 265.0 µs of GPU work: 5.06x;
  // 174,161,920 B per step / 3.3340e12 B/s = 52.2 µs; GPU busy 0.1975.
  CHECK(verdict.headline ==
        "decode_batch: 1.34 ms per step under the profiler, host/launch-bound (GPU busy 20%). A step is one "
        "`decode_batch` range (22 of them). Its GPU work is 265 µs per step: without launch overhead, 5.1x faster. The "
        "HBM limit is 52.2 µs per step.");
}

TEST_CASE("the tensor-parallel run reads its straggler from analysis/ranks.csv") {
  const auto model = load_example("tp-run-h200x2");
  REQUIRE(model.straggler);
  CHECK(model.straggler->rank == 0);
  CHECK(model.straggler->ranks == 2);
  CHECK(model.straggler->mean_step_start_lag_ns == Approx(0.201146457e6));
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& straggler = lever_named(verdict.stages.front(), "straggler rank");
  CHECK(straggler.figure ==
        "rank 0 starts its steps 201 µs after the earliest rank on average, against 21.7 ms per step under the "
        "profiler (2 ranks)");
  // A report.json written before measured bytes: the kernel limits say why they are withheld.
  CHECK(lever_named(verdict.stages.front(), "HBM limit").withheld ==
        "report.json predates measured DRAM bytes: re-run `deep-profile analyze` on this run");
}

TEST_CASE("a run without a timeline or measured bytes withholds every gain and says why") {
  const auto model = load_example("sample-run-h100");
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& levers = verdict.stages.front();
  for (const auto& lever : levers.levers) {
    CHECK_FALSE(lever.speedup);
    CHECK_FALSE(lever.withheld.empty());
  }
  CHECK(lever_named(levers, "launch overhead").withheld ==
        "no nsys SQLite timeline for this stage: its GPU work per step is not measured");
  CHECK(verdict.headline ==
        "decode: 105 tokens/s (9.56 ms per token, bare), host/launch-bound (GPU busy 15%). No lever's gain can be "
        "computed from this run's figures: the levers say what each lacks.");
}

TEST_CASE("idle between graph replays: the gap against the replay, from the recorded graph-traced export") {
  // The figures of tests/data/oracles/graph_replays.txt ("graphtrace decode"), which graph_replays_expected.py
  // computes from the recorded H100 graph-traced export.
  RunReportModel model;
  ReportStage stage;
  stage.name = "decode";
  stage.kernel_time_ns = 1;
  stage.verdict = "runs as CUDA graphs: GPU busy 98% of the stage";
  model.stages.push_back(stage);
  TimelineReport timeline;
  TimelineStage timed;
  timed.name = "decode";
  timed.gpu_time_ns = 1;
  timed.graph_time_ns = 1;
  timed.active_ns = 1;
  timed.gpu_busy_ns = 1;
  timed.cpu_duration.count = 15;
  GraphReplayGaps replays;
  replays.replays = 15;
  replays.gap.count = static_cast<std::int64_t>(oracle_figure("graph_replays", "graphtrace decode:", "pairs"));
  replays.gap.mean_ns = oracle_figure("graph_replays", "graphtrace decode:", "gap_mean_ns");
  replays.replay_gpu.mean_ns = oracle_figure("graph_replays", "graphtrace decode:", "replay_gpu_mean_ns");
  timed.graph_replays = replays;
  timeline.stages.push_back(timed);
  model.timeline = timeline;
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& idle = lever_named(verdict.stages.front(), "idle between graph replays");
  REQUIRE(idle.speedup);
  // (835,029 + 16,766) / 835,029 = 1.0201
  CHECK(*idle.speedup == Approx((835029.1333333333 + 16766.071428571428) / 835029.1333333333));
  CHECK(idle.figure == "GPU idle 16.8 µs between replays (14 pairs) against 835 µs of GPU time per replay");
  CHECK(verdict.stages.front().levers.front().name == "idle between graph replays");
}

TEST_CASE("nested ranges that share their parent's verdict fold under it") {
  const auto model = load_example("ncu-budget-h100/after-1b");
  const auto groups = detail::fold_stage_verdicts(model);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].head->name == "decode");
  std::vector<std::string> folded;
  for (const auto* stage : groups[0].folded) folded.push_back(stage->name);
  CHECK(folded == std::vector<std::string>{"decode_step", "attention", "mlp", "lm_head", "sample"});
  CHECK(groups[1].head->name == "generate");
  CHECK(groups[1].folded.empty());
  const std::string markdown = render_markdown(model);
  CHECK(markdown.find("**decode_step, attention, mlp, lm_head, sample**: the same (host/launch-bound)") !=
        std::string::npos);
  // One full host/launch-bound sentence, not six.
  std::size_t sentences = 0;
  for (auto at = markdown.find("cut launch overhead (CUDA graphs, fused kernels)"); at != std::string::npos;
       at = markdown.find("cut launch overhead (CUDA graphs, fused kernels)", at + 1))
    ++sentences;
  CHECK(sentences == 7);  // 1 in the rest of the Verdict's bullet, 6 in the Stage instances table
  // The stored verdict's 0.0026% reads "< 0.1%" in the report; report.json keeps the sentence as written.
  CHECK(markdown.find("0.0026%") == std::string::npos);
  CHECK(markdown.find("&lt; 0.1% while it waited in a synchronise") != std::string::npos);  // "<" escaped for Markdown
  // Each lever links to the section with its source figure; a section the report lacks is not linked.
  CHECK(markdown.find("| launch overhead | 2.8x | GPU work 2.43 ms per step (timeline) against 6.89 ms per step in the "
                      "bare run | [Stage instances](#stage-instances-nsys-sqlite-timeline) |") != std::string::npos);
  CHECK(markdown.find("## Stage instances (nsys SQLite timeline)") != std::string::npos);
  CHECK(markdown.find("| straggler rank | — | withheld: a single-rank run, with no other rank to wait for | — |") !=
        std::string::npos);
  CHECK(markdown.find("## Across ranks") == std::string::npos);
  // The headline opens the report, before the run's metadata table.
  CHECK(markdown.find("**decode: 145 tokens/s") < markdown.find("| **Workload** |"));
}

TEST_CASE("percentages keep two or three digits and read < 0.1% below a tenth of a percent") {
  CHECK(format_fraction_percent(0.0000086) == "< 0.1%");
  CHECK(format_fraction_percent(0.00086) == "< 0.1%");
  CHECK(format_fraction_percent(0.001) == "0.10%");
  CHECK(format_fraction_percent(0.0000086, PercentDigits::three_significant) == "< 0.1%");
  CHECK(format_fraction_percent(0.0000086, PercentDigits::short_of_whole) == "< 0.1%");
  CHECK(format_fraction_percent(0.0) == "0%");
  CHECK(detail::format_signed_percent(0.05) == "< +0.1%");
  CHECK(detail::format_signed_percent(-0.05) == "> -0.1%");
  CHECK(detail::format_signed_percent(-4.0) == "-4.0%");
  CHECK(detail::format_factor(3.7656) == "3.8x");
  CHECK(detail::format_factor(1.0201) == "1.02x");
  CHECK(detail::format_factor(3.0) == "3.0x");
  CHECK(detail::format_factor(7.99) == "8.0x");
  CHECK(detail::format_factor(110.4) == "110x");
  CHECK(detail::format_factor(14.24) == "14.2x");
  CHECK(detail::normalise_percentages("40% while the host launched, 0.00086% while it waited, 0% else") ==
        "40% while the host launched, < 0.1% while it waited, 0% else");
  CHECK(detail::normalise_percentages("MFU 0.036% and 0.22%; v0.05% stays; 100%") ==
        "MFU < 0.1% and 0.22%; v0.05% stays; 100%");
}

TEST_CASE("a limit longer than the step it bounds breaks an invariant: neither the gain nor the limit is printed") {
  auto model = load_example("ncu-budget-h100/after-1b");
  // Ten times the measured bytes: 6.55 ms at the HBM limit, against 2.43 ms of GPU work per step.
  for (auto& stage : model.stages)
    if (stage.name == "decode") stage.dram_bytes_per_step = *stage.dram_bytes_per_step * 10;
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& hbm = lever_named(verdict.stages.front(), "HBM limit");
  CHECK_FALSE(hbm.speedup);
  CHECK(hbm.figure.empty());
  CHECK(hbm.withheld == "the step (2.43 ms) is shorter than the HBM limit (6.55 ms): its inputs disagree, so no limit "
                        "is given");
  CHECK_FALSE(verdict.stages.front().hbm_limit_step_ns);
  CHECK(verdict.headline.find("HBM limit") == std::string::npos);
  // With the HBM limit dropped, which limit binds is unknown: the compute limit's gain is withheld too.
  CHECK_FALSE(lever_named(verdict.stages.front(), "compute limit").speedup);
  CHECK(lever_named(verdict.stages.front(), "compute limit").withheld.rfind("the HBM limit is not measured (", 0) == 0);
}

TEST_CASE("a compute limit without a measured HBM limit is no lever: which limit binds is unknown") {
  // cpp-graphs-auto's report.json predates measured DRAM bytes; its 22.6 µs compute limit would read "110x faster".
  const auto model = load_example("graphs-h100/cpp-graphs-auto");
  const auto verdict = detail::summarize_run_verdict(model);
  const auto& compute = lever_named(verdict.stages.front(), "compute limit");
  CHECK_FALSE(compute.speedup);
  CHECK(compute.withheld ==
        "the HBM limit is not measured (report.json predates measured DRAM bytes: re-run `deep-profile analyze` on this "
        "run), so which limit binds is unknown");
  CHECK(verdict.headline ==
        "decode: 403 tokens/s (2.48 ms per token, bare), runs as CUDA graphs (GPU busy 99%). A step is one of its 128 "
        "`decode_step` ranges. No lever's gain can be computed from this run's figures: the levers say what each "
        "lacks.");
}

namespace {

// Words of a line of text: runs of characters between spaces, the way a reader counts them (a link's text and its
// target count, markup characters do not add words).
std::size_t word_count(const std::string& text) {
  std::istringstream words(text);
  std::size_t count = 0;
  for (std::string word; words >> word;) ++count;
  return count;
}

// The Markdown Verdict section's bullets (a folded sub-bullet is a bullet of its own).
std::vector<std::string> markdown_verdict_bullets(const std::string& markdown) {
  const auto start = markdown.find("\n## Verdict\n");
  REQUIRE(start != std::string::npos);
  const auto end = markdown.find("\n## ", start + 1);
  std::istringstream lines(markdown.substr(start, end - start));
  std::vector<std::string> bullets;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("- ", 0) == 0 || line.rfind("  - ", 0) == 0) bullets.push_back(line);
  return bullets;
}

// The HTML verdict list's items, tags removed (an item holds its folded ranges' line too).
std::vector<std::string> html_verdict_bullets(const std::string& html) {
  const auto list = html.find("<ul class=\"verdicts\">");
  REQUIRE(list != std::string::npos);
  const auto end = html.find("</ul>", list);
  std::vector<std::string> bullets;
  for (auto at = html.find("<li", list); at != std::string::npos && at < end; at = html.find("<li", at + 1)) {
    const std::string item = html.substr(at, html.find("</li>", at) - at);
    std::string text;
    bool in_tag = false;
    for (const char c : item) {
      if (c == '<') in_tag = true;
      if (!in_tag) text += c;
      if (c == '>') {
        in_tag = false;
        text += ' ';
      }
    }
    bullets.push_back(text);
  }
  return bullets;
}

// Every recorded run directory under examples/ (those with an analysis/report.json).
std::vector<std::filesystem::path> recorded_runs() {
  std::vector<std::filesystem::path> runs;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(example_path("")))
    if (entry.path().filename() == "report.json" && entry.path().parent_path().filename() == "analysis")
      runs.push_back(entry.path().parent_path().parent_path());
  std::sort(runs.begin(), runs.end());
  return runs;
}

constexpr std::size_t kMaxVerdictWords = 45;

void check_bullets(const std::vector<std::string>& bullets, const std::string& where) {
  for (const auto& bullet : bullets) {
    INFO(where << ": " << bullet);
    CHECK(word_count(bullet) <= kMaxVerdictWords);
  }
}

}  // namespace

TEST_CASE("every verdict bullet of every recorded run reads in a few seconds: 45 words at most, Markdown and HTML") {
  const auto runs = recorded_runs();
  // The recorded 1b runs whose bullets ran to 119-121 words are among them.
  const auto has = [&](const std::string& relative) {
    return std::find(runs.begin(), runs.end(), example_path(relative)) != runs.end();
  };
  REQUIRE(has("ncu-budget-h100/after-1b"));
  REQUIRE(has("ncu-budget-h100/after-graphs"));
  REQUIRE(has("speed-h200/after-1-1b"));
  REQUIRE(runs.size() >= 20);
  std::size_t bullets = 0;
  for (const auto& run : runs) {
    const auto model = load_run_report(run);
    REQUIRE(model.has_value());
    if (model->nvidia_gpu_present == false) continue;  // no verdict list: the report says a GPU is needed
    const auto markdown = markdown_verdict_bullets(render_markdown(*model));
    const auto html = html_verdict_bullets(render_html(*model));
    CHECK(markdown.size() >= html.size());
    check_bullets(markdown, run.string() + " (report.md as rendered)");
    check_bullets(html, run.string() + " (report.html as rendered)");
    bullets += markdown.size();
    // The committed renderings too, so that an example left unrendered fails here.
    if (const auto committed = llmprof::testing::read_file(run / "report.md"); !committed.empty())
      check_bullets(markdown_verdict_bullets(committed), run.string() + "/report.md");
    if (const auto committed = llmprof::testing::read_file(run / "report.html"); !committed.empty())
      check_bullets(html_verdict_bullets(committed), run.string() + "/report.html");
  }
  CHECK(bullets >= 40);
}

TEST_CASE("a verdict bullet is the verdict, the figure behind it and a link to the table with the rest") {
  const auto model = load_example("ncu-budget-h100/after-1b");
  const std::string markdown = render_markdown(model);
  // 10 words, where the recorded report had 119.
  CHECK(markdown.find("- **decode (in generate)**: host/launch-bound: GPU busy 22% of the stage ([Stage "
                      "instances](#stage-instances-nsys-sqlite-timeline))\n") != std::string::npos);
  // The rest of the verdict is a table under the list, one row per bullet that has more: GPU idle time by cause,
  // what to cut, the bytes against the model's, the MFU gap.
  CHECK(
      markdown.find("<details><summary>The rest of each verdict</summary>\n\n| Stage | The rest of its verdict |\n"
                    "|---|---|\n| decode (in generate) | of its GPU idle time, 63% while the host launched, &lt; 0.1% "
                    "while it waited in a synchronise, 37% with nothing launched; cut launch overhead (CUDA graphs, "
                    "fused kernels) or host work between launches; measured 2.20 GB per step against the 2.10 GB the "
                    "model must read (weights + KV cache): 105% (bytes measured for 91% of its kernel time); MFU "
                    "(profiled) 0.22% is 6.1x MFU (workload) &lt; 0.1%") != std::string::npos);
  const std::string html = render_html(model);
  CHECK(html.find("<strong>decode (in generate)</strong> host/launch-bound: GPU busy 22% of the stage (<a "
                  "href=\"#stage-instances\">Stage instances</a>)") != std::string::npos);
}
