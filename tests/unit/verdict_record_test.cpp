// The verdict as a record of report.json: the analysis stores it ("verdict"), the report reads it back through the
// same field table and renders only what it read. On a copy of the recorded 1b eager decode on the H100
// (examples/ncu-budget-h100/after-1b) with its stored verdict taken out, as an analysis older than the stored verdict
// wrote it; the verdict's own figures are checked against the oracle in report_verdict_test.cpp.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include <string>

#include "analysis/run_verdict.hpp"
#include "core/json_pretty.hpp"
#include "llmprof/report.hpp"
#include "llmprof/run_analysis.hpp"
#include "report/report_verdict.hpp"
#include "rundir/report_model_json.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::example_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;
using llmprof::testing::write_file;

namespace {

boost::json::object report_root(const std::filesystem::path& main) {
  return boost::json::parse(read_file(main / "analysis/report.json")).as_object();
}

void write_root(const std::filesystem::path& main, const boost::json::object& root) {
  write_file(main / "analysis/report.json", detail::pretty_json(root));
}

// The run directory's report.json, without its stored verdict, and run.json: what load_run_report and the verdict
// read.
std::filesystem::path copy_recorded_run(const TempDir& temp) {
  const auto from = example_path("ncu-budget-h100/after-1b");
  const auto main = temp.path() / "run";
  write_file(main / "analysis/report.json", read_file(from / "analysis/report.json"));
  write_file(main / "run.json", read_file(from / "run.json"));
  auto root = report_root(main);
  REQUIRE(root.erase("verdict") == 1);
  write_root(main, root);
  return main;
}

RunReportModel load(const std::filesystem::path& main) {
  auto model = load_run_report(main);
  if (!model) FAIL(model.error().describe());
  return *model;
}

void check_same(const std::optional<double>& read, const std::optional<double>& computed, const char* what) {
  INFO(what);
  REQUIRE(read.has_value() == computed.has_value());
  if (computed) CHECK(*read == Approx(*computed).epsilon(1e-12));
}

// Field for field: the record read back (or stored) against the one computed.
void check_same_verdict(const RunVerdict& read, const RunVerdict& wanted_verdict) {
  CHECK(read.headline == wanted_verdict.headline);
  REQUIRE(read.stages.size() == wanted_verdict.stages.size());
  for (std::size_t i = 0; i < wanted_verdict.stages.size(); ++i) {
    const auto& stage = read.stages[i];
    const auto& wanted = wanted_verdict.stages[i];
    INFO(wanted.stage);
    CHECK(stage.stage == wanted.stage);
    CHECK(stage.main == wanted.main);
    CHECK(stage.step_from_bare_run == wanted.step_from_bare_run);
    check_same(stage.step_ns, wanted.step_ns, "step_ns");
    check_same(stage.profiled_step_ns, wanted.profiled_step_ns, "profiled_step_ns");
    check_same(stage.gpu_work_step_ns, wanted.gpu_work_step_ns, "gpu_work_step_ns");
    check_same(stage.hbm_limit_step_ns, wanted.hbm_limit_step_ns, "hbm_limit_step_ns");
    check_same(stage.compute_limit_step_ns, wanted.compute_limit_step_ns, "compute_limit_step_ns");
    REQUIRE(stage.levers.size() == wanted.levers.size());
    for (std::size_t j = 0; j < wanted.levers.size(); ++j) {
      INFO(wanted.levers[j].name);
      CHECK(stage.levers[j].name == wanted.levers[j].name);
      check_same(stage.levers[j].speedup, wanted.levers[j].speedup, "speedup");
      CHECK(stage.levers[j].after == wanted.levers[j].after);
      CHECK(stage.levers[j].figure == wanted.levers[j].figure);
      CHECK(stage.levers[j].withheld == wanted.levers[j].withheld);
      CHECK(stage.levers[j].section == wanted.levers[j].section);
    }
  }
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace

TEST_CASE("the verdict the analysis stores in report.json reads back as computed, field for field") {
  TempDir temp;
  const auto main = copy_recorded_run(temp);
  const RunReportModel before = load(main);
  REQUIRE_FALSE(before.verdict);
  const RunVerdict computed = detail::summarize_run_verdict(before);
  REQUIRE(computed.stages.size() == 1);
  REQUIRE(computed.stages.front().levers.size() == 5);

  REQUIRE(write_run_verdict(main));
  const auto root = report_root(main);
  REQUIRE(root.contains("verdict"));
  CHECK(root.at("verdict").as_object().at("headline").as_string() == computed.headline);
  // The rest of report.json is left as it was.
  CHECK(root.at("stages").as_array().size() == before.stages.size());

  const RunReportModel after = load(main);
  REQUIRE(after.verdict);
  CHECK(after.warnings == before.warnings);  // every stored figure keeps its bound: nothing withheld
  check_same_verdict(*after.verdict, computed);
  // The section is its spelling in the file.
  const auto& lever = root.at("verdict").at("stages").at(0).at("levers").at(0).as_object();
  CHECK(lever.at("name").as_string() == "launch overhead");
  CHECK(lever.at("section").as_string() == "stage_instances");

  // Analysing again replaces the stored verdict rather than adding a second one.
  REQUIRE(write_run_verdict(main));
  // (The stages' own one-sentence verdicts are strings; the stored record is the one object under that key.)
  CHECK(occurrences(read_file(main / "analysis/report.json"), "\"verdict\": {") == 1);
}

// The recorded runs under examples/ carry the verdict `deep-profile analyze` stores, which their reports render; it
// must stay what the analysis computes from the same file's figures, or the recorded reports would show a verdict
// this version no longer gives (then store it again: write_run_verdict on each recorded run).
TEST_CASE("every recorded run's stored verdict is the one the analysis computes from its report.json") {
  std::size_t runs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(example_path(""))) {
    if (entry.path().filename() != "report.json" || entry.path().parent_path().filename() != "analysis") continue;
    INFO(entry.path().string());
    const RunReportModel model = load(entry.path().parent_path().parent_path());
    REQUIRE(model.verdict);
    check_same_verdict(*model.verdict, detail::summarize_run_verdict(model));
    ++runs;
  }
  CHECK(runs >= 20);
}

TEST_CASE("a stored gain that cannot be a gain is withheld on reading, with a warning and a reason in its row") {
  TempDir temp;
  const auto main = copy_recorded_run(temp);
  REQUIRE(write_run_verdict(main));
  auto root = report_root(main);
  auto& levers = root["verdict"].as_object()["stages"].as_array()[0].as_object()["levers"].as_array();
  REQUIRE(levers[0].as_object()["name"].as_string() == "launch overhead");
  REQUIRE(levers[1].as_object()["name"].as_string() == "HBM limit");
  levers[0].as_object()["speedup"] = 0.5;  // slower with the lever pulled
  levers[1].as_object()["speedup"] = -2.0;
  root["verdict"].as_object()["stages"].as_array()[0].as_object()["gpu_work_step_ns"] = -1.0;
  write_root(main, root);

  const RunReportModel model = load(main);
  REQUIRE(model.verdict);
  const auto& stage = model.verdict->stages.front();
  CHECK_FALSE(stage.levers[0].speedup);
  CHECK_FALSE(stage.levers[1].speedup);
  CHECK_FALSE(stage.gpu_work_step_ns);
  CHECK(stage.levers[0].withheld == "its gain cannot be true (see the warnings)");
  CHECK(stage.levers[1].after.empty());  // "once launch overhead is gone" no longer applies to a withheld gain
  const auto warned = [&](const std::string& start) {
    for (const auto& warning : model.warnings)
      if (warning.rfind(start, 0) == 0) return true;
    return false;
  };
  CHECK(
      warned("report.json verdict: speedup of 'decode' lever 'launch overhead' = 0.5 cannot be true (a gain is "
             "the step now over a shorter step: finite and > 1); withheld. It came from analysis/report.json "
             "verdict.stages[0]"));
  CHECK(warned("report.json verdict: speedup of 'decode' lever 'HBM limit' = -2 cannot be true"));
  CHECK(warned("report.json verdict: gpu_work_step_ns of 'decode' = -1 cannot be true"));
  const std::string markdown = render_markdown(model);
  CHECK(markdown.find("| launch overhead | — | withheld: its gain cannot be true (see the warnings); GPU work "
                      "2.43 ms per step") != std::string::npos);
  CHECK(markdown.find("0.5x") == std::string::npos);
  CHECK(markdown.find("| HBM limit | — | withheld: its gain cannot be true (see the warnings); 2.20 GB per "
                      "step at 3.36 TB/s") != std::string::npos);
}

TEST_CASE("the report renders the verdict report.json holds, edited or not, and never one of its own") {
  TempDir temp;
  const auto main = copy_recorded_run(temp);
  REQUIRE(write_run_verdict(main));
  const std::string computed = load(main).verdict->headline;
  auto root = report_root(main);
  auto& verdict = root["verdict"].as_object();
  verdict["headline"] = "decode: bound by the phase of the moon, as edited by hand.";
  auto& lever = verdict["stages"].as_array()[0].as_object()["levers"].as_array()[0].as_object();
  lever["figure"] = "a figure edited by hand";
  lever["speedup"] = 7.3;
  write_root(main, root);

  const RunReportModel model = load(main);
  const std::string markdown = render_markdown(model);
  const std::string html = render_html(model);
  CHECK(markdown.find("**decode: bound by the phase of the moon, as edited by hand.**") != std::string::npos);
  CHECK(markdown.find("| launch overhead | 7.3x | a figure edited by hand |") != std::string::npos);
  CHECK(html.find("<p class=\"headline\" id=\"headline\">decode: bound by the phase of the moon, as edited by "
                  "hand.</p>") != std::string::npos);
  CHECK(html.find("a figure edited by hand") != std::string::npos);
  // The figures report.json holds beside it would give the recorded headline: it is not there.
  REQUIRE_FALSE(computed.empty());
  CHECK(markdown.find(computed.substr(0, 40)) == std::string::npos);
  CHECK(html.find(computed.substr(0, 40)) == std::string::npos);
}

TEST_CASE("a report.json without a stored verdict renders a note saying how to get one, and no verdict") {
  TempDir temp;
  const auto main = copy_recorded_run(temp);
  const RunReportModel model = load(main);
  REQUIRE_FALSE(model.verdict);
  const std::string markdown = render_markdown(model);
  const std::string html = render_html(model);
  const std::string note = detail::verdict_not_stored();
  CHECK(note.find("`deep-profile analyze`") != std::string::npos);
  CHECK(occurrences(markdown, note) == 1);
  CHECK(markdown.find("*" + note + "*") < markdown.find("| **Workload** |"));  // where the headline would open it
  CHECK(occurrences(html, "<p class=\"note\" id=\"headline\">" + note + "</p>") == 1);
  // No headline and no levers made up at render time; the stages' own verdicts are still listed.
  CHECK(markdown.find("tokens/s (6.89 ms per token, bare)") == std::string::npos);
  CHECK(markdown.find("Levers for") == std::string::npos);
  CHECK(html.find("class=\"levers\"") == std::string::npos);
  CHECK(markdown.find("- **decode (in generate)**: host/launch-bound: GPU busy 22% of the stage") != std::string::npos);
}

TEST_CASE("every key of report.json's verdict is documented in docs/report-json.md") {
  RunVerdict verdict;
  verdict.stages.emplace_back().levers.emplace_back();
  const auto object = detail::report_json(verdict);
  const std::string docs = read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  const auto section = docs.find("## `verdict`");
  REQUIRE(section != std::string::npos);
  const std::string verdict_docs = docs.substr(section, docs.find("\n## ", section + 1) - section);
  // Each key as the table above names it: `headline`, `stages[].step_ns`, `levers[].speedup`.
  std::set<std::string> keys;
  const auto collect = [&](const boost::json::object& record, const std::string& prefix) {
    for (const auto& entry : record) keys.insert(prefix + std::string(entry.key()));
  };
  collect(object, "");
  collect(object.at("stages").at(0).as_object(), "stages[].");
  collect(object.at("stages").at(0).at("levers").at(0).as_object(), "levers[].");
  for (const auto& key : keys) {
    INFO(key);
    CHECK(verdict_docs.find("| `" + key + "` |") != std::string::npos);
  }
  CHECK(keys.size() == 17);  // headline, stages; 9 per stage; 6 per lever (stage and name, main, ... section)
}
