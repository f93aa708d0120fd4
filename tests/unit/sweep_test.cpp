// Sweep plans (TOML [[point]] tables and --point arguments) and the index report over fixture runs.
#include <catch2/catch.hpp>

#include "llmprof/sweep.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;
using llmprof::testing::TempDir;

TEST_CASE("a TOML plan gives one point per [[point]] with dotted overrides") {
  const auto plan = parse_sweep_plan_toml(R"(
[[point]]
name = "batch 1"
workload.example_args = ["--batch", "1"]

[[point]]
workload.example_args = ["--batch", "16"]
run.top_n_kernels = 5
ncu.set = "full"
)",
                                          "plan.toml");
  REQUIRE(plan);
  REQUIRE(plan->points.size() == 2);
  CHECK(plan->points[0].label == "batch-1");
  REQUIRE(plan->points[0].overrides.size() == 1);
  CHECK(plan->points[0].override_strings()[0] == "workload.example_args=[ '--batch', '1' ]");
  const auto second = plan->points[1].override_strings();
  REQUIRE(second.size() == 3);
  CHECK(second[0] == "ncu.set=full");  // strings bare, as typed after --set key=
  CHECK(second[1] == "run.top_n_kernels=5");
  CHECK(plan->points[1].label == "set-full_top_n_kernels-5_example_args-batch-16");
}

TEST_CASE("bad TOML plans are errors naming the file, point and key") {
  auto syntax = parse_sweep_plan_toml("[[point]\nx=1", "plan.toml");
  REQUIRE_FALSE(syntax);
  CHECK(syntax.error().message.rfind("plan.toml:1:", 0) == 0);
  auto stray = parse_sweep_plan_toml("batch = 4\n", "plan.toml");
  REQUIRE_FALSE(stray);
  CHECK(stray.error().message.find("unexpected top-level key 'batch'") != std::string::npos);
  auto empty = parse_sweep_plan_toml("[[point]]\nname = \"a\"\n", "plan.toml");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message.find("point 1 has no overrides") != std::string::npos);
  auto twice = parse_sweep_plan_toml("[[point]]\nname='a'\nx.y=1\n[[point]]\nname='a'\nx.y=2\n", "plan.toml");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message.find("labelled 'a'") != std::string::npos);
  CHECK_FALSE(parse_sweep_plan_toml("", "plan.toml"));
  auto missing = load_sweep_plan(data_path("no-such-plan.toml"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::not_found);
}

TEST_CASE("set arguments split on top-level commas only") {
  const auto plan =
      parse_sweep_points({"workload.example_args=[\"--batch\",\"4\"],run.top_n_kernels=5", "ncu.set=full"});
  REQUIRE(plan);
  REQUIRE(plan->points.size() == 2);
  REQUIRE(plan->points[0].overrides.size() == 2);
  CHECK(plan->points[0].overrides[0].key == "workload.example_args");
  CHECK(plan->points[0].overrides[0].value == "[\"--batch\",\"4\"]");
  CHECK(plan->points[0].overrides[1].to_string() == "run.top_n_kernels=5");
  CHECK(plan->points[1].label == "set-full");
  auto bad = parse_sweep_points({"nokey"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "--point argument 1: 'nokey' is not key=value");  // the flag the CLI takes
  CHECK(bad.error().hint == "write --point 'section.key=value,section.other=value'");
}

TEST_CASE("unnamed points whose long values differ only at the end still get distinct labels") {
  // As run on the H100: the same long workload argv, only the batch differs at the very end.
  const std::string argv =
      "workload.argv=[\"/tmp/ex/examples/decode-workload/llmprof-decode\",\"--preset\",\"1b\",\"--batch\",\"";
  const auto plan = parse_sweep_points({argv + "1\"]", argv + "4\"]", argv + "16\"]"});
  REQUIRE(plan);
  REQUIRE(plan->points.size() == 3);
  CHECK(plan->points[0].label != plan->points[1].label);
  CHECK(plan->points[1].label != plan->points[2].label);
  CHECK(plan->points[2].label.size() <= 64);
  CHECK_THAT(plan->points[2].label, Catch::EndsWith("batch-16"));
}

TEST_CASE("the index reads tokens/s from stage1/metrics.json and busy/MFU from report.json") {
  SweepPoint b4{"b4", {{"workload.example_args", "[\"--batch\",\"4\"]"}}};
  SweepPoint rerun{"rerun", {{"ncu.set", "full"}}};
  SweepPoint failed{"b16", {{"workload.example_args", "[\"--batch\",\"16\"]"}}};
  const auto index =
      build_sweep_index({{b4, data_path("runs/h100-decode-b4"), std::nullopt},
                         {rerun, data_path("runs/h100-decode-b4-rerun"), std::nullopt},
                         {failed, std::nullopt, make_error(ErrorCode::process_failed, "workload ran out of memory")}});
  REQUIRE(index.rows.size() == 3);
  CHECK(*index.rows[0].tokens_per_s == Approx(32 / 0.1774));
  CHECK(index.rows[0].batch == 4);
  CHECK(*index.rows[0].stage_busy_fraction ==
        Approx(1435206.0 / 177371307).epsilon(1e-4));  // over max(wall, projection)
  CHECK(index.rows[0].stage_mfu.has_value());
  CHECK(index.rows[0].status == "ok");
  CHECK(*index.rows[1].tokens_per_s == Approx(32 / 0.1951));
  CHECK(index.rows[2].status == "failed");
  CHECK(index.rows[2].error.find("out of memory") != std::string::npos);
  const auto markdown = render_sweep_index_markdown(index);
  CHECK(markdown.find("| b4 | `workload.example_args=[\"--batch\",\"4\"]` | ok | 4 | 180.4 |") != std::string::npos);
  CHECK(markdown.find("**b16** failed: workload ran out of memory") != std::string::npos);
  const auto json = sweep_index_to_json(index);
  CHECK(json.find("\"schema\": \"llmprof.sweep_index/2\"") != std::string::npos);
  const auto html = render_sweep_index_html(index);
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("workload.example_args=[&quot;--batch&quot;,&quot;4&quot;]") != std::string::npos);
}

TEST_CASE("run_sweep runs every point in order, records failures and writes the index") {
  TempDir temp;
  auto plan = parse_sweep_points({"x.batch=1", "x.batch=4", "x.batch=16"});
  REQUIRE(plan);
  std::vector<std::string> called;
  auto runner = [&](const SweepPoint& point, std::size_t index) -> Result<std::filesystem::path> {
    called.push_back(point.label + "#" + std::to_string(index));
    if (index == 1) return make_error(ErrorCode::timeout, "stage nsys timed out");
    return data_path(index == 0 ? "runs/h100-decode-b4" : "runs/h100-decode-b4-rerun");
  };
  SweepRunOptions options;
  options.sweep_directory = temp / "sweep";
  auto index = run_sweep(*plan, runner, options);
  REQUIRE(index);
  CHECK(called == std::vector<std::string>{"batch-1#0", "batch-4#1", "batch-16#2"});
  CHECK(index->rows[1].status == "failed");
  CHECK(index->rows[2].status == "ok");
  CHECK(read_file(temp / "sweep/index.md").find("batch-16") != std::string::npos);
  CHECK(std::filesystem::exists(temp / "sweep/index.html"));
  CHECK(std::filesystem::exists(temp / "sweep/index.json"));

  called.clear();
  options.stop_on_failure = true;
  auto stopped = run_sweep(*plan, runner, options);
  REQUIRE(stopped);
  CHECK(called.size() == 2);
  CHECK(stopped->rows[2].status == "not run");
}
