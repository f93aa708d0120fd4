// The per-kernel ncu plan: given a stage's launch table, which launches are profiled, in how many ncu
// passes, and the coverage expected; the check of ncu's rows against the plan; the --filter-mode values
// of ncu --help. Expected figures for the recorded H100 decode come from tests/tools/ncu_plan_expected.py
// (Python sqlite3; its output is quoted where used).
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "llmprof/csv.hpp"
#include "llmprof/ncu_command.hpp"
#include "llmprof/ncu_plan.hpp"
#include "llmprof/tool_probe.hpp"
#include "parse/sqlite_database.hpp"
#include "nsight/tool_listings.hpp"
#include "launch_selection.hpp"
#include "oracle.hpp"
#include "test_support.hpp"

using namespace llmprof;
namespace fs = std::filesystem;
using llmprof::testing::data_path;
using llmprof::testing::oracle_figure;
using llmprof::testing::oracle_text;
using llmprof::testing::read_file;
using llmprof::testing::selection_of;

namespace {

// "845,48" from the oracle: each pass's end, in stage launches.
std::vector<std::int64_t> oracle_list(const std::string& line_start, const std::string& key) {
  std::vector<std::int64_t> values;
  std::istringstream items(oracle_text("ncu_plan", line_start, key));
  for (std::string item; std::getline(items, item, ',');) values.push_back(std::stoll(item));
  return values;
}

std::vector<std::int64_t> pass_ends(const NcuPlan& plan) {
  std::vector<std::int64_t> ends;
  for (const auto& pass : plan.passes) ends.push_back(pass.replayed_launches);
  return ends;
}

StageKernelLaunch launch(const std::string& kernel, const std::string& grid, std::int64_t duration_ns = 10) {
  return {kernel, grid, "(128, 1, 1)", 0, duration_ns};
}

// Distinct (function, exact configuration) pairs of `kernels` among the first `end` launches: what one ncu pass at
// --launch-count 1 profiles under per-function counting, computed without the planner.
std::int64_t function_configurations_before(const std::vector<StageKernelLaunch>& launches,
                                            const std::set<std::string>& kernels, std::int64_t end) {
  std::set<std::string> seen;
  for (std::int64_t i = 0; i < end && i < std::int64_t(launches.size()); ++i) {
    const auto& one = launches[std::size_t(i)];
    if (kernels.count(one.kernel))
      seen.insert((one.mangled.empty() ? one.kernel : one.mangled) + " " + one.grid + " " + one.block + " " +
                  std::to_string(one.shared_memory_bytes));
  }
  return std::int64_t(seen.size());
}

// The heaviest kernels of the table up to `target` of its time (the same rule as the oracle).
KernelSelection coverage_selection(const std::vector<StageKernelLaunch>& launches, double target) {
  std::map<std::string, std::int64_t> totals;
  std::int64_t stage = 0;
  for (const auto& one : launches) {
    totals[one.kernel] += one.duration_ns;
    stage += one.duration_ns;
  }
  std::vector<std::pair<std::string, std::int64_t>> sorted(totals.begin(), totals.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> names;
  std::int64_t reached = 0;
  for (const auto& [name, time] : sorted) {
    if (double(reached) >= target * double(stage)) break;
    names.push_back(name);
    reached += time;
  }
  return selection_of(launches, names);
}

// The compact launch table of tests/tools/export_launch_table.py.
std::vector<StageKernelLaunch> read_launch_table(const std::filesystem::path& file) {
  std::map<std::string, std::string> kernels;
  std::map<std::string, StageKernelLaunch> configs;
  std::vector<StageKernelLaunch> launches;
  std::istringstream text(read_file(file));
  for (std::string line; std::getline(text, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) fields.push_back(cell);
    if (fields.at(0) == "kernel") {
      kernels[fields.at(1)] = fields.at(2);
    } else if (fields.at(0) == "config") {
      configs[fields.at(1)] = {"", fields.at(2), fields.at(3), std::stoll(fields.at(4)), 0};
    } else {
      StageKernelLaunch one = configs.at(fields.at(1));
      one.kernel = kernels.at(fields.at(0));
      one.duration_ns = std::stoll(fields.at(2));
      launches.push_back(std::move(one));
    }
  }
  return launches;
}

NcuPlanOptions free_passes() {
  NcuPlanOptions options;
  options.seconds_per_pass = 0;
  return options;
}

}  // namespace

TEST_CASE("every configuration of every selected kernel gets its launch, wherever in the stage it first occurs") {
  // attention grows its grid with the context: three configurations, the last only late in the stage.
  std::vector<StageKernelLaunch> launches;
  for (int step = 0; step < 30; ++step) {
    launches.push_back(launch("gemm", "(64, 1, 1)"));
    launches.push_back(launch("attention", step < 10 ? "(8, 1, 1)" : step < 20 ? "(16, 1, 1)" : "(32, 1, 1)"));
  }
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"gemm", "attention"}), launches, free_passes());
  REQUIRE(plan.passes.size() == 1);
  CHECK(plan.passes[0].launch_count == 1);
  CHECK(plan.planned_launches == 4);
  REQUIRE(plan.configs.size() == 4);
  CHECK(plan.configs[1].kernel == "attention");
  CHECK(plan.configs[1].ordinals == std::vector<std::int64_t>{1});
  CHECK(plan.configs[3].grid == "(32, 1, 1)");
  CHECK(plan.configs[3].stage_launches == 10);
  CHECK(plan.expected_coverage == Approx(1.0));
  CHECK(plan.estimated_seconds == Approx(4 * 0.6));
}

TEST_CASE("kernels launched in one configuration are counted apart: one pass reaches them all") {
  // copy and add have the same configuration and alternate. ncu 2025.3.1 counts each function in each
  // configuration apart (measured: the next test case), so --launch-count 1 profiles copy #1, add #1 and gemm #1.
  std::vector<StageKernelLaunch> launches;
  for (int step = 0; step < 20; ++step) {
    launches.push_back(launch("copy", "(4, 1, 1)"));
    launches.push_back(launch("add", "(4, 1, 1)"));
    launches.push_back(launch("gemm", "(64, 1, 1)"));
  }
  const KernelSelection selection = selection_of(launches, {"copy", "add", "gemm"});
  SECTION("one launch each: the pass ends its workload after gemm's first launch") {
    NcuPlanOptions options;
    options.seconds_per_pass = 30;
    options.max_launch_count = 1;
    const NcuPlan plan = plan_ncu_launches(selection, launches, options);
    REQUIRE(plan.passes.size() == 1);
    CHECK(plan.passes[0].launch_count == 1);
    CHECK(plan.planned_launches == 3);
    CHECK(plan.passes[0].replayed_launches == 3);
    CHECK(plan.kernels_unreached.empty());
    CHECK_THAT(plan.pass_choice, Catch::EndsWith("(raising --launch-count and packing kernels into passes agree)"));
  }
  SECTION("two launches per configuration: --launch-count 2, ending after gemm's second") {
    NcuPlanOptions options = free_passes();
    options.launches_per_config = 2;
    const NcuPlan plan = plan_ncu_launches(selection, launches, options);
    REQUIRE(plan.passes.size() == 1);
    CHECK(plan.passes[0].launch_count == 2);
    CHECK(plan.planned_launches == 6);
    CHECK(plan.passes[0].replayed_launches == 6);
    for (const auto& config : plan.configs) CHECK(config.ordinals == std::vector<std::int64_t>{1, 2});
  }
}

TEST_CASE("ncu counts per function and configuration: the plan's counting against a real ncu pass (H200)") {
  // tests/data/ncu-plan/README.md: one ncu 2025.3.1 pass over the 19 kernels the 1b example's plan had split
  // in two (by mangled name, --filter-mode per-launch-config --launch-count 1, the whole decode range) profiled
  // the rows of counting_1b_h200.csv; ex1b_h200_34steps.sqlite is the nsys capture of the same example's first
  // 34 decode steps on the same machine.
  auto csv = llmprof::CsvReader::open(data_path("ncu-plan/counting_1b_h200.csv"));
  REQUIRE(csv.has_value());
  REQUIRE(csv->read_header().has_value());
  const auto name = csv->column("Kernel Name"), grid = csv->column("Grid Size"), block = csv->column("Block Size");
  REQUIRE((name && grid && block));
  std::set<std::tuple<std::string, std::string, std::string>> profiled;
  std::set<std::string> functions;
  for (auto more = csv->next(); more.has_value() && *more; more = csv->next()) {
    const auto fields = csv->fields();
    if (fields[*name].empty()) continue;  // the units row
    profiled.emplace(std::string(fields[*name]), std::string(fields[*grid]), std::string(fields[*block]));
    functions.emplace(fields[*name]);
  }
  REQUIRE(profiled.size() == 37);
  REQUIRE(functions.size() == 19);
  auto launches = read_stage_kernel_launches(data_path("ncu-plan/ex1b_h200_34steps.sqlite"), "decode");
  REQUIRE(launches.has_value());
  std::set<std::string> selected;
  std::set<std::tuple<std::string, std::string, std::string>> in_capture;
  std::set<std::pair<std::string, std::string>> configurations;
  for (const auto& one : launches.value())
    if (functions.count(one.mangled)) {
      selected.insert(one.kernel);
      in_capture.emplace(one.mangled, one.grid, one.block);
      configurations.emplace(one.grid, one.block);
    }
  // Every (function, configuration) of the first 34 steps was profiled once: 30 of them in 18 configurations
  // (a count shared across the functions of a configuration would have profiled at most 18). The other 7 rows
  // are copies whose grid grows with the context after step 34.
  CHECK(in_capture.size() == 30);
  CHECK(configurations.size() == 18);
  for (const auto& key : in_capture) CHECK(profiled.count(key) == 1);
  // The plan replays that counting: one pass at --launch-count 1, which profiles every (function, configuration)
  // that occurs before the launch where it ends its workload (the copies' later grids share a grid bucket with
  // their first and are not waited for).
  NcuPlanOptions options = free_passes();
  options.extrapolated_share_limit = 0;
  const NcuPlan plan = plan_ncu_launches(
      selection_of(launches.value(), std::vector<std::string>(selected.begin(), selected.end())), launches.value(),
      options);
  REQUIRE(plan.passes.size() == 1);
  CHECK(plan.passes[0].launch_count == 1);
  CHECK(plan.passes[0].profiled_launches ==
        function_configurations_before(launches.value(), selected, plan.passes[0].replayed_launches));
  CHECK(plan.passes[0].profiled_launches > std::int64_t(configurations.size()));
}

TEST_CASE("kernels crossing each other's configurations share one pass, none is dropped") {
  // A launches first in configuration c1, B first in c2. Counted per function (ncu 2025.3.1), one pass at
  // --launch-count 1 reaches all four (kernel, configuration) pairs.
  // ncu_plan_expected.py: crossing, cap 1: passes=[(1, 4, ['A', 'B'])] planned_groups=4
  const std::vector<StageKernelLaunch> launches = {launch("A", "(1, 1, 1)"), launch("B", "(2, 1, 1)"),
                                                   launch("B", "(1, 1, 1)"), launch("A", "(2, 1, 1)")};
  NcuPlanOptions options = free_passes();
  options.max_launch_count = 1;
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"A", "B"}), launches, options);
  REQUIRE(plan.passes.size() == 1);
  CHECK(plan.passes[0].kernels == std::vector<std::string>{"A", "B"});
  CHECK(plan.passes[0].profiled_launches == 4);
  CHECK(plan.kernels_unreached.empty());
  REQUIRE(plan.configs.size() == 4);
  for (const auto& config : plan.configs) CHECK(config.ordinals == std::vector<std::int64_t>{1});
  CHECK(plan.expected_coverage == Approx(1.0));
}

TEST_CASE("launch-skip is per configuration: a configuration with no launch past it is not planned") {
  std::vector<StageKernelLaunch> launches = {launch("gemm", "(64, 1, 1)"), launch("gemm", "(64, 1, 1)"),
                                             launch("gemm", "(64, 1, 1)"), launch("rare", "(2, 1, 1)", 30)};
  NcuPlanOptions options = free_passes();
  options.launch_skip = 1;
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"gemm", "rare"}), launches, options);
  CHECK(plan.kernels_unreached == std::vector<std::string>{"rare"});
  REQUIRE(plan.configs.size() == 2);
  CHECK(plan.configs[0].ordinals == std::vector<std::int64_t>{2});
  CHECK(plan.expected_coverage == Approx(30.0 / 60.0));
}

TEST_CASE("without a launch table the plan falls back on the selection's counts, configurations unknown") {
  std::vector<StageKernelLaunch> launches = {launch("a", "(1, 1, 1)"), launch("a", "(1, 1, 1)"),
                                             launch("b", "(1, 1, 1)")};
  NcuPlanOptions options;
  options.launches_per_config = 2;
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"a", "b"}), {}, options);
  CHECK_FALSE(plan.configs_known);
  REQUIRE(plan.passes.size() == 1);
  CHECK(plan.passes[0].launch_count == 2);
  CHECK(plan.planned_launches == 3);  // a twice, b once (it has one launch)
}

TEST_CASE("the plan for the recorded H100 decode (1b, batch 8) matches the independent oracle") {
  auto launches = read_stage_kernel_launches(data_path("ncu-plan/ex1b8_configs.sqlite"), "decode");
  REQUIRE(launches.has_value());
  // ncu_plan_expected.py: ex1b8 decode: launches=6488 stage_time=19501994 selected=19 configs=22
  CHECK(launches->size() == 6488);
  const KernelSelection selection = coverage_selection(launches.value(), 0.9);
  CHECK(selection.stage_kernel_time_ns == 19501994);
  REQUIRE(selection.kernels.size() == 19);
  SECTION("passes free: one pass at --launch-count 1") {
    // seconds_per_pass=0.0: groups=27 passes=[(1, 26)] planned_launches=26 planned_groups=26 (under the shared
    // count the plan assumed before, 5 passes). One group, nvjet 4x1's second configuration, first appears at
    // launch 5705 of 6488 (0.2% of the time): extrapolated from the kernel's first.
    const std::string line = "  seconds_per_pass=0.0:";
    const std::string split = "    seconds_per_pass=0.0 split:";
    const NcuPlan plan = plan_ncu_launches(selection, launches.value(), free_passes());
    REQUIRE(plan.passes.size() == 1);
    const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {{1, 26}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CHECK(plan.passes[i].launch_count == expected[i].first);
      CHECK(plan.passes[i].profiled_launches == expected[i].second);
    }
    CHECK(plan.planned_launches == oracle_figure("ncu_plan", line, "planned_launches"));
    CHECK(plan.configs.size() == oracle_figure("ncu_plan", line, "groups"));
    CHECK(plan.expected_coverage == Approx(oracle_figure("ncu_plan", line, "expected_coverage")).epsilon(1e-5));
    CHECK(plan.expected_coverage == Approx(oracle_figure("ncu_plan", split, "measured")).epsilon(1e-5));
    CHECK(plan.expected_coverage_extrapolated ==
          Approx(oracle_figure("ncu_plan", split, "extrapolated")).margin(1e-6));
    CHECK(pass_ends(plan) == oracle_list(split, "pass_ends"));
    CHECK(plan.estimated_seconds == Approx(oracle_figure("ncu_plan", split, "estimated_s")));
    // planned launches extrapolated / measured=1.039737 per-config ratio 0.8814..1.2480 beyond 25%=0
    CHECK(plan.extrapolated_time_ratio == Approx(1.039737).epsilon(1e-6));
    CHECK(plan.unrepresentative_configs.empty());
    double low = 10, high = 0;
    for (const auto& config : plan.configs) {
      if (config.ordinals.empty()) continue;
      low = std::min(low, planned_duration_ratio(config));
      high = std::max(high, planned_duration_ratio(config));
    }
    CHECK(low == Approx(0.8814).margin(5e-5));
    CHECK(high == Approx(1.2480).margin(5e-5));
  }
  SECTION("a pass costs 30 s: still one pass, both ways to passes agree") {
    // seconds_per_pass=30.0: groups=27 passes=[(1, 26)] planned_launches=26 planned_groups=26 (under the shared
    // count: 2 passes, the second at --launch-count 9, 36 launches; the H100 and H200 ran it so)
    const std::string line = "  seconds_per_pass=30.0:";
    const std::string split = "    seconds_per_pass=30.0 split:";
    NcuPlanOptions options;
    options.seconds_per_pass = 30;
    const NcuPlan plan = plan_ncu_launches(selection, launches.value(), options);
    REQUIRE(plan.passes.size() == 1);
    CHECK(plan.passes[0].launch_count == 1);
    CHECK(plan.passes[0].profiled_launches == 26);
    CHECK(plan.planned_launches == oracle_figure("ncu_plan", line, "planned_launches"));
    CHECK(plan.expected_coverage == Approx(oracle_figure("ncu_plan", line, "expected_coverage")).epsilon(1e-5));
    CHECK(pass_ends(plan) == oracle_list(split, "pass_ends"));
    CHECK(plan.estimated_seconds == Approx(oracle_figure("ncu_plan", split, "estimated_s")));
    CHECK(plan.estimated_seconds == Approx(26 * 0.6 + 30));
    // plan.log says which way was taken and both estimates; here both ways give the same pass.
    const std::string ways = "    seconds_per_pass=30.0 alternatives:";
    std::ostringstream choice;
    choice.precision(3);
    CHECK(oracle_figure("ncu_plan", ways, "packed_passes") == oracle_figure("ncu_plan", ways, "progressive_passes"));
    CHECK(oracle_figure("ncu_plan", ways, "packed_estimated_s") ==
          oracle_figure("ncu_plan", ways, "progressive_estimated_s"));
    choice << oracle_figure("ncu_plan", ways, "progressive_passes") << " pass(es), "
           << oracle_figure("ncu_plan", ways, "progressive_launches") << " launches, estimated "
           << oracle_figure("ncu_plan", ways, "progressive_estimated_s")
           << " s (raising --launch-count and packing kernels into passes agree)";
    CHECK(plan.pass_choice == choice.str());
    CHECK_THAT(ncu_plan_text(plan), Catch::Contains("  passes: " + plan.pass_choice + "\n"));
    // planned launches extrapolated / measured=1.039737 per-config ratio 0.8814..1.2480 beyond 25%=0
    CHECK(plan.extrapolated_time_ratio == Approx(1.039737).epsilon(1e-6));
    CHECK(plan.unrepresentative_configs.empty());
    CHECK_THAT(ncu_plan_json(plan), Catch::Contains("\"representative_tolerance\":2.5E-1"));
    CHECK_THAT(ncu_plan_text(plan), Catch::Contains("extrapolated, give 104% of the configurations' kernel time"));
    CHECK_THAT(ncu_plan_json(plan), Catch::Contains("\"schema\":\"llmprof.ncu_plan/1\""));
  }
  SECTION("the passes name their kernels by mangled name, the spelling ncu does not rename") {
    // ncu_plan_expected.py: mangled names: kernels with one=19 with several=0 all-selected regex length=2447
    // first=nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT
    const NcuPlan plan = plan_ncu_launches(selection, launches.value(), free_passes());
    for (const auto& kernel : selection.kernels) CHECK(plan.mangled_names.at(kernel.name).size() == 1);
    for (const auto& pass : plan.passes) {
      CHECK(pass.by_mangled_name);
      CHECK_THAT(pass.kernel_regex, Catch::StartsWith("regex:^(?:") && !Catch::Contains("void "));
    }
    std::vector<std::string> names;
    for (const auto& kernel : selection.kernels) names.push_back(kernel.name);
    const NcuKernelFilter all = ncu_kernel_filter(plan, names, KernelNameBase::demangled);
    CHECK(all.by_mangled_name);
    CHECK(all.kernel_regex.size() == 2447);
    CHECK_THAT(all.kernel_regex, Catch::StartsWith("regex:^(?:nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT|"));
    CHECK_THAT(ncu_plan_json(plan), Catch::Contains("\"by_mangled_name\":true"));
    CHECK_THAT(ncu_plan_text(plan), Catch::Contains("kernel(s) by mangled name"));
    // Under the function base namesakes are meant to match: no mangled names there.
    CHECK_FALSE(ncu_kernel_filter(plan, names, KernelNameBase::function).by_mangled_name);
  }
}

TEST_CASE("planned launches much shorter or longer than their configuration's mean are called unrepresentative") {
  // An attention kernel whose launches grow with the context (10, 20, ... 100 ns; first launch planned,
  // mean 55 ns: ratio 10/55) next to a copy kernel of steady duration in another configuration.
  std::vector<StageKernelLaunch> launches;
  for (int step = 1; step <= 10; ++step) {
    launches.push_back(launch("attention", "(8, 1, 1)", 10 * step));
    launches.push_back(launch("copy", "(2, 1, 1)", 30));
  }
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"attention", "copy"}), launches, free_passes());
  REQUIRE(plan.configs.size() == 2);
  CHECK(plan.configs[0].planned_mean_ns == 10);
  CHECK(planned_duration_ratio(plan.configs[0]) == Approx(10.0 / 55.0));
  CHECK(is_unrepresentative(plan.configs[0]));
  CHECK(planned_duration_ratio(plan.configs[1]) == Approx(1.0));
  CHECK_FALSE(is_unrepresentative(plan.configs[1]));
  CHECK(plan.unrepresentative_configs == std::vector<std::size_t>{0});
  // (10 * 10 + 30 * 10) / (550 + 300)
  CHECK(plan.extrapolated_time_ratio == Approx(400.0 / 850.0));
  CHECK_THAT(ncu_plan_text(plan), Catch::Contains("unrepresentative: attention  grid (8, 1, 1) block (128, 1, 1) smem 0: "
                                                  "planned launches average 10.0 ns against 55.0 ns over its 10 launches (0.182x)"));
  CHECK_THAT(ncu_plan_json(plan), Catch::Contains("\"unrepresentative\":true"));

  SECTION("the tolerance is 25% either way") {
    PlannedConfig config;
    config.stage_launches = 4;
    config.stage_time_ns = 400;
    config.planned_mean_ns = 125;
    CHECK_FALSE(is_unrepresentative(config));
    config.planned_mean_ns = 126;
    CHECK(is_unrepresentative(config));
    config.planned_mean_ns = 80;
    CHECK_FALSE(is_unrepresentative(config));
    config.planned_mean_ns = 79;
    CHECK(is_unrepresentative(config));
  }
  SECTION("without durations nothing is judged") {
    std::vector<StageKernelLaunch> timeless = launches;
    for (auto& one : timeless) one.duration_ns = 0;
    const NcuPlan blind = plan_ncu_launches(selection_of(launches, {"attention"}), timeless, free_passes());
    CHECK(blind.extrapolated_time_ratio == 0);
    CHECK(blind.unrepresentative_configs.empty());
    CHECK_THAT(ncu_plan_json(blind), Catch::Contains("\"extrapolated_time_ratio\":null"));
  }
}

TEST_CASE("a decode whose context grows: one pass that ends at launch 810, late copies extrapolated") {
  // The 1b decode with a 32-token prompt and 192 new tokens, recorded on the H100 (tests/tools/
  // export_launch_table.py). Before grouping, ending passes early and extrapolation the oracle planned
  // passes=[(3, 51, 13), (5, 70, 5)], 121 launches, 40 groups all profiled, coverage 0.901038, estimated 220.68 s
  // (every pass a whole replay). Now: the copies' 40 exact configurations fall into 28 grid buckets; the 5 that
  // first appear late in the stage (from launch 25,982 on, a new grid as the KV cache grows) are extrapolated.
  const std::string head = "1b p32 n192 decode:", line = "  passes=", split = "  split:";
  const auto launches = read_launch_table(data_path("ncu-plan/launches-1b-p32-n192.tsv"));
  REQUIRE(launches.size() == std::size_t(oracle_figure("ncu_plan", head, "launches")));
  const KernelSelection selection = coverage_selection(launches, 0.9);
  CHECK(selection.stage_kernel_time_ns == oracle_figure("ncu_plan", head, "stage_time"));
  REQUIRE(selection.kernels.size() == std::size_t(oracle_figure("ncu_plan", head, "selected")));
  NcuPlanOptions options;
  options.seconds_per_pass = 3.97 + 155712 * 0.00045;
  options.seconds_per_intercepted_launch = 0.00045;
  const NcuPlan plan = plan_ncu_launches(selection, launches, options);
  // passes=[(1, 24, 18)] (under the shared count the plan assumed before: --launch-count 11, 133 launches)
  REQUIRE(plan.passes.size() == 1);
  CHECK(plan.passes[0].launch_count == 1);
  CHECK(plan.passes[0].kernels.size() == 18);
  CHECK(plan.planned_launches == oracle_figure("ncu_plan", line, "planned_launches"));
  CHECK(pass_ends(plan) == oracle_list(split, "pass_ends"));
  CHECK(plan.kernels_unreached.empty());
  CHECK(plan.configs.size() == std::size_t(oracle_figure("ncu_plan", head, "groups")));
  const auto extrapolated = std::count_if(plan.configs.begin(), plan.configs.end(), [](const PlannedConfig& config) {
    return config.ordinals.empty() && !config.extrapolated_from.empty();
  });
  CHECK(extrapolated == oracle_figure("ncu_plan", split, "extrapolated_groups"));
  for (const auto& config : plan.configs)
    if (config.ordinals.empty()) CHECK(config.late);
  CHECK(plan.expected_coverage == Approx(oracle_figure("ncu_plan", split, "measured")).epsilon(1e-5));
  CHECK(plan.expected_coverage_extrapolated == Approx(oracle_figure("ncu_plan", split, "extrapolated")).epsilon(1e-5));
  CHECK(plan.estimated_seconds == Approx(oracle_figure("ncu_plan", line, "estimated_s")).margin(1e-4));
  // planned launches extrapolated / measured=1.035573 per-config ratio 0.6465..1.1333, beyond 25%: Kernel2
  // grid (2, 1, 8) (the attention's batched GEMM, whose work grows with the context; 0.63x on the H100 too)
  CHECK(plan.extrapolated_time_ratio == Approx(1.035573).epsilon(1e-6));
  REQUIRE(plan.unrepresentative_configs.size() == 1);
  const PlannedConfig& attention = plan.configs[plan.unrepresentative_configs.front()];
  CHECK_THAT(attention.kernel, Catch::StartsWith("void cutlass::Kernel2<cutlass_75_wmma_te"));
  CHECK(attention.config == "grid (2, 1, 8) block (128, 1, 1) smem 5120");
  CHECK(planned_duration_ratio(attention) == Approx(0.6465).margin(5e-5));
  const std::string json = ncu_plan_json(plan);
  CHECK_THAT(json, Catch::Contains("\"coverage_extrapolated\":"));
  CHECK_THAT(json, Catch::Contains("\"extrapolated_from\":\"grid ("));
  CHECK_THAT(ncu_plan_text(plan), Catch::Contains("extrapolated from grid ("));
}

TEST_CASE("a serving loop whose grids change every step: grouped configurations keep the plan bounded") {
  // tests/tools/ncu_plan_expected.py serving_launches(): the batch walks 1..64, a GEMM's and attention's grids
  // with it; 65 exact configurations in 1,200 launches.
  const std::string head = "serving loop:";
  std::vector<StageKernelLaunch> launches;
  for (std::int64_t step = 0; step < 400; ++step) {
    const std::int64_t batch = (step * 37 + step * step) % 64 + 1;
    launches.push_back({"gemm", "(" + std::to_string(4 * batch) + ", 1, 1)", "(128, 1, 1)", 0, 1000 + 50 * batch});
    launches.push_back({"attention", "(" + std::to_string(batch) + ", 8, 1)", "(256, 1, 1)", 4096, 800 + 40 * batch});
    launches.push_back({"norm", "(1, 1, 1)", "(512, 1, 1)", 0, 300});
  }
  std::set<std::string> exact;
  for (const auto& one : launches) exact.insert(one.kernel + launch_config_key(one));
  CHECK(exact.size() == std::size_t(oracle_figure("ncu_plan", head, "exact_configs")));
  NcuPlanOptions options;
  options.seconds_per_pass = 10;
  options.seconds_per_intercepted_launch = 0.00045;
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"gemm", "attention", "norm"}), launches, options);
  // At most one group per power of two of each grid dimension: 7 per batch-dependent kernel, 1 for the norm.
  CHECK(plan.configs.size() <= 15);
  CHECK(plan.configs.size() == std::size_t(oracle_figure("ncu_plan", head, "groups")));
  CHECK(plan.passes.size() == std::size_t(oracle_figure("ncu_plan", head, "passes")));
  CHECK(plan.planned_launches == oracle_figure("ncu_plan", head, "planned_launches"));
  CHECK(pass_ends(plan) == oracle_list(head, "pass_ends"));
  CHECK(std::isfinite(plan.estimated_seconds));
  CHECK(plan.estimated_seconds == Approx(oracle_figure("ncu_plan", head, "estimated_s")).margin(1e-4));
  CHECK(plan.expected_coverage == Approx(oracle_figure("ncu_plan", head, "measured")).epsilon(1e-5));
  CHECK(plan.expected_coverage_extrapolated == Approx(oracle_figure("ncu_plan", head, "extrapolated")).epsilon(1e-5));
  CHECK(plan.expected_coverage + plan.expected_coverage_extrapolated == Approx(1.0));
  // A row of any grid in a planned group's bucket counts for it: gemm (4, 1, 1)'s bucket holds (3, 1, 1) too.
  CHECK(grid_bucket("(3, 1, 1)") == "(4, 1, 1)");
  CHECK(grid_bucket("(256, 1, 1)") == "(256, 1, 1)");
  CHECK(grid_bucket("unknown") == "unknown");
}

TEST_CASE("a window without NVTX is its own stage: every launch of the export, configurations and mangled names") {
  // The H200 serving window (flat ranges, 40 steps). sqlite3 over the same export: 3640 kernel rows, 56 kernels,
  // 165 (kernel, grid, block) configurations, every row with a mangledName; the stage reader sees none of them
  // under a range the window lacks.
  const auto sqlite = data_path("serving/serving_flat_h200.sqlite");
  auto launches = read_capture_kernel_launches(sqlite);
  REQUIRE(launches.has_value());
  CHECK(launches->size() == 3640);
  std::set<std::string> kernels;
  std::set<std::string> configs;
  std::size_t without_mangled = 0;
  for (const auto& one : launches.value()) {
    kernels.insert(one.kernel);
    configs.insert(one.kernel + one.grid + one.block);
    without_mangled += one.mangled.empty() ? 1 : 0;
  }
  CHECK(without_mangled == 0);
  CHECK(kernels.size() == 56);
  CHECK(configs.size() == 165);
  CHECK_FALSE(read_stage_kernel_launches(sqlite, "the captured window").has_value());
  // Planned from them, every pass names its kernels by mangled name (nvjet GEMMs' demangled names did not
  // match ncu's: 8 of 30 planned launches were met without).
  const NcuPlan plan = plan_ncu_launches(coverage_selection(launches.value(), 0.9), launches.value(), free_passes());
  CHECK(plan.configs_known);
  REQUIRE_FALSE(plan.passes.empty());
  for (const auto& pass : plan.passes) CHECK(pass.by_mangled_name);
}

TEST_CASE("a recorded capture's start-up: 7.17 s from nsys's launch to the serving example's first decode_batch kernel") {
  // The H200 serving run of examples/speed-h200 (nested ranges), trimmed with ANALYSIS_DETAILS kept. sqlite3 over
  // it: startTime 7158006217 ns, the first kernel inside a decode_batch range at 14976254 ns: 7.172982471 s (the
  // run's plan.log: "start-up to the stage 7.17 s").
  const auto recorded = data_path("serving/serving_nested_startup_h200.sqlite");
  auto launches = read_stage_kernel_launches(recorded, "decode_batch");
  REQUIRE(launches.has_value());
  const auto start_up = stage_start_up_seconds(recorded, launches.value());
  REQUIRE(start_up.has_value());
  CHECK(*start_up == Approx(7.172982471).epsilon(1e-12));
}

TEST_CASE("a pass's start-up by the capture's own clock: the session's start to the capture's, then the first launch") {
  // The recorded window has no ANALYSIS_DETAILS (trimmed); a copy gets the row nsys 2025.3.2 exported for the same
  // example's window on the H200 (startTime 6431347018 ns: 6.43 s from nsys's launch to cudaProfilerStart).
  // sqlite3: the window's first kernel starts at 14416126 ns on the capture's clock.
  const auto recorded = data_path("serving/serving_flat_h200.sqlite");
  auto launches = read_capture_kernel_launches(recorded);
  REQUIRE(launches.has_value());
  CHECK_FALSE(stage_start_up_seconds(recorded, launches.value()).has_value());
  testing::TempDir dir;
  const auto copy = dir / "window.sqlite";
  fs::copy_file(recorded, copy);
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, "
                              "stopTime INTEGER); INSERT INTO ANALYSIS_DETAILS VALUES (281474976710656, 141966501, "
                              "6431347018, 6573313519)"));
  }
  const auto start_up = stage_start_up_seconds(copy, launches.value());
  REQUIRE(start_up.has_value());
  CHECK(*start_up == Approx((6431347018.0 + 14416126.0) / 1e9).epsilon(1e-12));
  CHECK_FALSE(stage_start_up_seconds(copy, {}).has_value());
  {
    auto database = detail::SqliteDatabase::open_writable(copy);
    REQUIRE(database.has_value());
    REQUIRE(database->execute("UPDATE ANALYSIS_DETAILS SET startTime = -5"));
  }
  CHECK_FALSE(stage_start_up_seconds(copy, launches.value()).has_value());
}

TEST_CASE("ncu.max_seconds: kernels giving up the least time per second saved are left out until the plan fits") {
  // The whole H200 serving window at 90%: mixed batches bring a grid per batch size (120 launches, one per
  // (kernel, exact configuration) before the pass's end, 72 s at 0.6 s a launch, passes free).
  auto launches = read_capture_kernel_launches(data_path("serving/serving_flat_h200.sqlite"));
  REQUIRE(launches.has_value());
  const KernelSelection selection = coverage_selection(launches.value(), 0.9);
  const NcuPlan unbounded = plan_ncu_launches(selection, launches.value(), free_passes());
  REQUIRE(unbounded.passes.size() == 1);
  CHECK(unbounded.planned_launches == 120);
  std::set<std::string> selected_names;
  for (const auto& kernel : selection.kernels) selected_names.insert(kernel.name);
  CHECK(unbounded.passes[0].profiled_launches ==
        function_configurations_before(launches.value(), selected_names, unbounded.passes[0].replayed_launches));
  for (const double bound : {0.0, 80.0}) {
    const NcuPlan same = fit_ncu_plan(selection, launches.value(), free_passes(), bound);
    CHECK(same.planned_launches == unbounded.planned_launches);
    CHECK(same.estimated_seconds == unbounded.estimated_seconds);
    CHECK(same.left_out_for_time.empty());
  }
  CHECK(ncu_plan_bound_text(unbounded).empty());

  const NcuPlan bounded = fit_ncu_plan(selection, launches.value(), free_passes(), 30);
  CHECK(bounded.estimated_seconds <= 30);
  CHECK(bounded.max_seconds == 30);
  CHECK(bounded.unbounded_estimated_seconds == Approx(unbounded.estimated_seconds));
  CHECK(bounded.unbounded_expected_coverage == Approx(unbounded.expected_coverage));
  REQUIRE_FALSE(bounded.left_out_for_time.empty());
  CHECK(bounded.expected_coverage < unbounded.expected_coverage);
  // The first kernel left out gave up the least kernel time per second saved among the candidates: the four
  // with the least kernel time per planned launch and each kernel alone in a pass, computed here.
  std::set<std::string> kept;
  for (const auto& config : bounded.configs) kept.insert(config.kernel);
  for (const auto& kernel : bounded.left_out_for_time) CHECK_FALSE(kept.count(kernel));
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_kernel;  // time, planned launches
  for (const auto& config : unbounded.configs) {
    by_kernel[config.kernel].first += config.stage_time_ns;
    by_kernel[config.kernel].second += std::int64_t(config.ordinals.size());
  }
  std::vector<std::pair<double, std::string>> per_launch;
  for (const auto& [kernel, figures] : by_kernel)
    if (figures.second > 0) per_launch.emplace_back(double(figures.first) / double(figures.second), kernel);
  std::sort(per_launch.begin(), per_launch.end());
  std::set<std::string> candidates;
  for (std::size_t i = 0; i < 4; ++i) candidates.insert(per_launch[i].second);
  for (const auto& pass : unbounded.passes)
    if (pass.kernels.size() == 1) candidates.insert(pass.kernels.front());
  std::set<std::string> candidates_found;
  for (const auto i : fit_candidates(selection, unbounded)) candidates_found.insert(selection.kernels[i].name);
  CHECK(candidates_found == candidates);
  const auto cost_of_leaving_out = [&](const std::string& name) {
    KernelSelection without = selection;
    const auto kernel = std::find_if(without.kernels.begin(), without.kernels.end(),
                                     [&](const auto& one) { return one.name == name; });
    const double time_ns = double(kernel->total_time_ns);
    without.kernels.erase(kernel);
    const double saved =
        unbounded.estimated_seconds - plan_ncu_launches(without, launches.value(), free_passes()).estimated_seconds;
    return saved > 0 ? time_ns / saved : 1e300;
  };
  REQUIRE(candidates.count(bounded.left_out_for_time.front()));
  for (const auto& kernel : candidates)
    CHECK(cost_of_leaving_out(bounded.left_out_for_time.front()) <= cost_of_leaving_out(kernel));
  CHECK_THAT(ncu_plan_bound_text(bounded),
             Catch::StartsWith("ncu.max_seconds = 30 s: the plan of every selected kernel was estimated at 72 s "
                               "for 90.5% of the stage's kernel time; "));
  CHECK_THAT(ncu_plan_text(bounded), Catch::Contains(ncu_plan_bound_text(bounded)));
  const auto json = boost::json::parse(ncu_plan_json(bounded)).as_object();
  CHECK(json.at("left_out_for_time").as_array().size() == bounded.left_out_for_time.size());

  SECTION("a bound no plan meets keeps one kernel") {
    KernelSelection three = selection;
    three.kernels.resize(3);
    const NcuPlan tight = fit_ncu_plan(three, launches.value(), free_passes(), 0.1);
    std::set<std::string> remaining;
    for (const auto& config : tight.configs) remaining.insert(config.kernel);
    CHECK(remaining.size() == 1);
    CHECK(tight.estimated_seconds > 0.1);
  }
}

TEST_CASE("a pass falls back on demangled patterns when one of its kernels has no mangled name") {
  std::vector<StageKernelLaunch> launches = {launch("gemm", "(64, 1, 1)", 60), launch("copy", "(8, 1, 1)", 30)};
  launches[0].mangled = "_Z4gemmPf";
  const KernelSelection selection = selection_of(launches, {"gemm", "copy"});
  const NcuPlan plan = plan_ncu_launches(selection, launches, free_passes());
  REQUIRE(plan.passes.size() == 1);
  CHECK_FALSE(plan.passes[0].by_mangled_name);
  CHECK(plan.passes[0].kernel_regex == "regex:^(?:gemm|copy)$");
  CHECK(ncu_kernel_filter(plan, {"gemm"}, KernelNameBase::demangled).kernel_regex == "regex:^(?:_Z4gemmPf)$");
}

TEST_CASE("the check finds every planned kernel's rows and names the planned launches ncu did not profile") {
  std::vector<StageKernelLaunch> launches = {launch("gemm", "(64, 1, 1)", 60), launch("attention", "(8, 1, 1)", 30),
                                             launch("attention", "(16, 1, 1)", 10)};
  const NcuPlan plan = plan_ncu_launches(selection_of(launches, {"gemm", "attention"}), launches, free_passes());
  REQUIRE(plan.planned_launches == 3);
  const NcuPlanCheck check =
      check_ncu_plan(plan, {{"gemm", "(64, 1, 1)", "(128, 1, 1)"}, {"attention", "(8, 1, 1)", "(128, 1, 1)"}},
                     KernelNameBase::demangled);
  CHECK(check.profiled_planned_launches == 2);
  REQUIRE(check.not_profiled.size() == 1);
  CHECK(check.not_profiled[0].kernel == "attention");
  CHECK(check.not_profiled[0].config == "grid (16, 1, 1) block (128, 1, 1) smem 0");
  CHECK(check.kernels_without_rows.empty());
  // attention (16, 1, 1) has no row: extrapolated from attention (8, 1, 1), and said so.
  CHECK(check.coverage_measured == Approx(0.9));
  CHECK(check.coverage_extrapolated == Approx(0.1));
  CHECK(check.coverage_reached == Approx(1.0));
  const NcuPlanCheck none = check_ncu_plan(plan, {}, KernelNameBase::demangled);
  CHECK(none.kernels_without_rows.size() == 2);
  CHECK(none.coverage_reached == 0);
}

TEST_CASE("ncu --help lists per-launch-config from 2025.3 on; 2022.3 has global and per-gpu only") {
  CHECK(parse_ncu_filter_modes(read_file(data_path("h100-nsight-2025.3/cli/ncu_help.txt"))) ==
        std::vector<std::string>{"global", "per-gpu", "per-launch-config"});
  CHECK(parse_ncu_filter_modes(read_file(data_path("debian-nsight-2022/cli/ncu_help.txt"))) ==
        std::vector<std::string>{"global", "per-gpu"});
  CHECK(parse_ncu_filter_modes("usage: ncu [options]").empty());
}

TEST_CASE("ncu filter mode per-launch-config reaches the argv and is refused where the probed ncu lacks it") {
  NcuProfileOptions options;
  options.application = {"/bin/true"};
  options.output = "/tmp/out";
  options.kernel_name = "regex:^(?:gemm)$";
  options.launch_count = 1;
  options.filter_mode = NcuFilterMode::per_launch_config;
  const NcuCommand command = NcuCommand::profile(options);
  const auto argv = command.argv();
  const auto mode = std::find(argv.begin(), argv.end(), "--filter-mode");
  REQUIRE(mode != argv.end());
  CHECK(*(mode + 1) == "per-launch-config");
  NcuInfo old;
  old.found = true;
  old.filter_modes = {"global", "per-gpu"};
  auto refused = command.validate(old);
  REQUIRE_FALSE(refused.has_value());
  CHECK_THAT(refused.error().message, Catch::Contains("no --filter-mode per-launch-config"));
  NcuInfo current = old;
  current.filter_modes.push_back("per-launch-config");
  CHECK(command.validate(current).has_value());
}
