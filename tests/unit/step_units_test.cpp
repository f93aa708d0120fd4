// What one step of a stage is, on recorded H100 nsys exports of each shape (a range holding step ranges, one
// holding CUDA graph launches, one holding steps found only from the host's synchronisation, ranges that are
// steps, and a range with no step known), and every headline held against its Stages and Stage instances rows.
// Expected units: tests/tools/step_units_expected.py over the same exports (tests/data/oracles/step_units.txt), which
// also checks the zoo workloads' own step counts (tests/data/zoo/*.facts.json).
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/choice.hpp"
#include "llmprof/report.hpp"
#include "oracle.hpp"
#include "parse/sqlite_database.hpp"
#include "analysis/run_verdict.hpp"
#include "rundir/report_model_views.hpp"
#include "report/report_step_unit.hpp"
#include "report/report_view.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;

namespace {

struct Shape {
  const char* label;                 // the oracle's fixture name
  const char* source;                // under tests/data
  std::vector<std::string> dropped;  // NVTX ranges removed (the same capture from a workload emitting fewer)
  const char* main;                  // the stage the headline speaks of
  bool zoo = false;                  // the workload wrote its own step count (tests/data/zoo/*.facts.json)
};

const Shape kShapes[] = {
    {"graph-ranges", "zoo/many_steps_graph_ranges.sqlite", {}, "decode", true},
    {"graph-launches", "zoo/many_steps_graph_noranges.sqlite", {}, "decode", true},
    {"inferred", "zoo/many_steps_eager_noranges.sqlite", {}, "decode", true},
    {"eager", "nsys-sqlite/eager.sqlite", {}, "decode"},
    {"graph-steps", "nsys-sqlite/nodetrace.sqlite", {}, "decode"},
    {"serving", "serving/serving_window1_h100.sqlite", {}, "scheduler_step"},
    {"no-step", "nsys-sqlite/ex1b8.sqlite", {"decode_step"}, "decode"},
};

const Shape& shape_named(const std::string& label) {
  for (const auto& shape : kShapes)
    if (shape.label == label) return shape;
  FAIL("no shape " << label);
  return kShapes[0];
}

// A run directory whose only input is the shape's export, changed as the oracle changes it (NVTX rows only).
std::filesystem::path make_run(const llmprof::testing::TempDir& temp, const Shape& shape) {
  const auto run = temp.path() / shape.label;
  const auto sqlite = run / "nsys/profile.sqlite";
  std::filesystem::create_directories(sqlite.parent_path());
  std::filesystem::copy_file(data_path(shape.source), sqlite);
  std::filesystem::permissions(sqlite, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  auto database = detail::SqliteDatabase::open_writable(sqlite);
  REQUIRE(database.has_value());
  for (const auto& name : shape.dropped)
    REQUIRE(
        database->execute("DELETE FROM NVTX_EVENTS WHERE coalesce(text, (SELECT value FROM StringIds WHERE id = "
                          "textId)) = '" +
                          name + "'"));
  return run;
}

std::string line_of(const Shape& shape, const std::string& stage) {
  return std::string(shape.label) + " " + stage + ":";
}

// The Stages table's row of a stage in report.md, split into its cells.
std::vector<std::string> stages_row(const std::string& markdown, const std::string& label) {
  const auto table = markdown.find("## Stages");
  REQUIRE(table != std::string::npos);
  const auto row = markdown.find("\n| " + label + " |", table);
  REQUIRE(row != std::string::npos);
  const std::string line = markdown.substr(row + 1, markdown.find('\n', row + 1) - row - 1);
  std::vector<std::string> cells;
  for (std::size_t at = 1; at < line.size();) {
    const auto next = line.find(" |", at);
    if (next == std::string::npos) break;
    cells.push_back(line.substr(at + 1, next - at - 1));
    at = next + 2;
  }
  return cells;
}

std::size_t column_of(const std::string& markdown, const std::string& title) {
  const auto header = markdown.find("| Stage | Wall |");
  REQUIRE(header != std::string::npos);
  const std::string line = markdown.substr(header, markdown.find('\n', header) - header);
  std::size_t column = 0;
  for (std::size_t at = 0; (at = line.find(" | ", at)) != std::string::npos; at += 3) {
    ++column;
    if (line.compare(at + 3, title.size() + 2, title + " |") == 0) return column;
  }
  FAIL("no column " << title);
  return 0;
}

}  // namespace

TEST_CASE("each stage's step is the oracle's, on recorded exports of every shape") {
  llmprof::testing::TempDir temp;
  for (const auto& shape : kShapes) {
    INFO(shape.label);
    const auto run = make_run(temp, shape);
    auto analysis = analyze_run_directory(run, {});
    REQUIRE(analysis.has_value());
    for (const auto& stage : analysis->stages) {
      INFO(stage.name << ": " << stage.steps_source);
      const std::string line = line_of(shape, stage.qualified_name());
      CHECK(stage.step_basis == oracle_text("step_units", line, "basis"));
      REQUIRE(stage.steps.has_value());
      CHECK(*stage.steps == oracle_figure("step_units", line, "steps"));
      // The workload's own count of its decode steps.
      if (shape.zoo && stage.name == "decode") CHECK(*stage.steps == oracle_figure("step_units", line, "truth"));
    }
  }
}

TEST_CASE("every headline says per step only for a step, and its figures are its rows' divided by the step") {
  llmprof::testing::TempDir temp;
  for (const auto& shape : kShapes) {
    INFO(shape.label);
    const auto run = make_run(temp, shape);
    auto analysis = analyze_run_directory(run, {});
    REQUIRE(analysis.has_value());
    REQUIRE(write_analysis(*analysis, run / "analysis"));
    auto model = load_run_report(run);
    REQUIRE(model.has_value());
    const auto verdict = detail::summarize_run_verdict(*model);
    REQUIRE_FALSE(verdict.stages.empty());
    const auto& levers = verdict.stages.front();
    REQUIRE(levers.stage == shape.main);
    const ReportStage* named = detail::stage_named(*model, levers.stage);
    REQUIRE(named != nullptr);
    const ReportStage& stage = *named;
    const std::string line = line_of(shape, stage.name);
    const std::string basis = oracle_text("step_units", line, "basis");
    const double steps = oracle_figure("step_units", line, "steps");
    const double instances = oracle_figure("step_units", line, "instances");
    INFO(verdict.headline);

    // The unit: "per step" where a step is known and the headline says what defined it; otherwise the range.
    if (basis == "range_instances") {
      CHECK_THAT(verdict.headline, Catch::Contains("per `" + stage.name + "` range") && !Catch::Contains(" per step") &&
                                       Catch::Contains("No step is known inside `" + stage.name + "`"));
    } else {
      CHECK_THAT(verdict.headline, Catch::Contains(" per step") && !Catch::Contains(" range under the profiler"));
      CHECK_THAT(verdict.headline, Catch::Contains(detail::format_count(static_cast<std::int64_t>(steps))));
      CHECK_THAT(verdict.headline, Catch::Contains(detail::step_definition(*model, stage)));
    }

    // The headline's time per step is its Stage instances row's time per instance over the steps per instance (the
    // steady-state window where the row has a headroom, else the stage's time over its instances).
    const TimelineStage* timed = model->timeline->find_stage(stage.qualified_name());
    REQUIRE(timed != nullptr);
    REQUIRE(timed->cpu_duration.count == static_cast<std::int64_t>(instances));
    const double per_instance = steps / instances;
    const double row_step =
        timed->headroom ? timed->headroom->current_step_ns : static_cast<double>(*stage.rate_time_ns) / instances;
    REQUIRE(levers.profiled_step_ns.has_value());
    CHECK(*levers.profiled_step_ns == Approx(row_step / per_instance).epsilon(1e-9));
    CHECK_THAT(verdict.headline, Catch::Contains(detail::format_duration_ns(row_step / per_instance) + " per " +
                                                 stage.step_noun() + " under the profiler"));
    if (timed->headroom && levers.levers.front().name == "launch overhead" && levers.levers.front().speedup) {
      const double gpu_work = timed->headroom->predicted_step_ns / per_instance;
      CHECK(*levers.gpu_work_step_ns == Approx(gpu_work).epsilon(1e-9));
      CHECK_THAT(verdict.headline, Catch::Contains("Its GPU work is " + detail::format_duration_ns(gpu_work) + " per " +
                                                   stage.step_noun()));
    }

    // The Stages row says the same unit: its Steps cell counts the oracle's steps.
    const std::string markdown = render_markdown(*model);
    const auto row = stages_row(markdown, stage.name);
    const std::string cell = row.at(column_of(markdown, "Steps"));
    CHECK(cell == detail::steps_cell(stage));
    CHECK_THAT(cell, Catch::StartsWith(detail::format_count(static_cast<std::int64_t>(steps))));
    CHECK_THAT(cell,
               Catch::EndsWith(basis == "range_instances"  ? (steps == 1 ? "1 range (no step)" : "ranges (no step)")
                               : basis == "own_range"      ? "one each"
                               : basis == "graph_launches" ? "graph launches"
                               : basis == "inferred_steps" ? "inferred"
                                                           : "`decode_step`"));
  }
}

TEST_CASE("a step range and the bare run's tokens that disagree: the steps are the ranges, and a warning says both") {
  // The eager H100 decode holds 64 `decode_step` ranges; a workload saying it made 63 new tokens disagrees.
  llmprof::testing::TempDir temp;
  const auto run = make_run(temp, shape_named("eager"));
  llmprof::testing::write_file(run / "stage1/metrics.json",
                               R"({"schema": "llmprof.workload_metrics/1", "model": "llama-style", "device": "cuda:0",
          "device_name": "NVIDIA H100 80GB HBM3", "dtype": "bf16", "batch": 1, "prompt_tokens": 16, "new_tokens": 63,
          "layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4, "intermediate": 2816, "vocab": 32000,
          "parameters": 100000000, "prefill_s": 0.01, "decode_s": 0.3, "time_per_output_token_s": 0.0047,
          "tokens_per_s": 210, "generated_tokens": 63, "flop_per_prefill": 1.0e10, "flop_per_token": 1.0e9,
          "decode_flop": 6.3e10, "nvtx_domain": "", "nvtx_ranges": ["decode", "decode_step"]})");
  auto analysis = analyze_run_directory(run, {});
  REQUIRE(analysis.has_value());
  const ReportStage* decode = nullptr;
  for (const auto& stage : analysis->stages)
    if (stage.name == "decode") decode = &stage;
  REQUIRE(decode != nullptr);
  CHECK(decode->step_basis == choice_name(StepBasis::step_range));
  CHECK(*decode->steps == oracle_figure("step_units", "eager decode:", "steps"));
  bool warned = false;
  for (const auto& warning : analysis->warnings)
    warned |= warning.find("64 `decode_step` ranges, one per step") != std::string::npos &&
              warning.find("against 63 decode steps in its bare run") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("on every recorded run, the headline's bytes and limits per step are its Stages row's, in its unit") {
  // The recorded H100/H200 runs under examples/ with ncu's DRAM bytes: the headline's HBM limit is the Stages row's
  // DRAM per step at the peak, and the row's Steps cell counts the steps the headline names.
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(llmprof::testing::example_path(""))) {
    if (entry.path().filename() != "report.json" || entry.path().parent_path().filename() != "analysis") continue;
    const auto run = entry.path().parent_path().parent_path();
    auto model = load_run_report(run);
    REQUIRE(model.has_value());
    const auto verdict = detail::summarize_run_verdict(*model);
    if (verdict.stages.empty()) continue;
    const auto& levers = verdict.stages.front();
    const ReportStage* named = detail::stage_named(*model, levers.stage);
    REQUIRE(named != nullptr);
    const ReportStage& stage = *named;
    INFO(run.string() << ": " << verdict.headline);
    const std::string markdown = render_markdown(*model);
    const auto row = stages_row(markdown, detail::stage_label(stage));
    CHECK(row.at(column_of(markdown, "Steps")) == detail::steps_cell(stage));
    if (!levers.hbm_limit_step_ns) continue;
    const double peak = *model->device.peak_dram_bytes_per_s;
    CHECK(row.at(column_of(markdown, "DRAM per step")) == detail::format_si(stage.dram_bytes_per_step, "B"));
    CHECK(*levers.hbm_limit_step_ns == Approx(*stage.dram_bytes_per_step / peak * 1e9).epsilon(1e-12));
    // In the stage's unit: per step where one is known (after-1b, after-graphs), per `decode` range where not
    // (after-hf: HF generate's decode range holds every forward pass).
    const std::string limit = detail::format_duration_ns(*levers.hbm_limit_step_ns);
    CHECK_THAT(verdict.headline,
               Catch::Contains("The HBM limit is " + limit + " per " + stage.step_noun() + ".") ||
                   Catch::Contains("At the HBM limit a " + stage.step_noun() + " would take " + limit));
    CHECK_THAT(verdict.headline, Catch::Contains(detail::step_definition(*model, stage)));
    ++checked;
  }
  CHECK(checked >= 5);
}
