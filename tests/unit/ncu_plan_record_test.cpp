// ncu/plan.json as one record: the field table writes the file and reads it back (the recorded H100 decode's plan,
// bounded, with a check), a bad value is an error naming the file and the key or a withheld figure, and every key
// the table writes has its row in docs/report-json.md.
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "json_key_paths.hpp"
#include "launch_selection.hpp"
#include "llmprof/ncu_plan.hpp"
#include "test_support.hpp"

using namespace llmprof;
namespace fs = std::filesystem;
using llmprof::testing::data_path;
using llmprof::testing::read_file;

using llmprof::testing::collect_keys;
using llmprof::testing::every_kernel;

namespace {

// The recorded H100 decode (1b, batch 8) planned at ncu's default costs, bounded to 10 s (16.2 s unbounded) so that kernels are left out,
// and checked against ncu rows for every second planned configuration, with the ncu stage's timings.
NcuPlanFile recorded_plan_file() {
  auto launches = read_stage_kernel_launches(data_path("ncu-plan/ex1b8_configs.sqlite"), "decode");
  REQUIRE(launches.has_value());
  NcuPlanOptions options;
  options.seconds_per_pass = 8;
  options.start_up_seconds = 6.5;
  options.seconds_per_intercepted_launch = 4e-4;
  NcuPlanFile file;
  file.plan = fit_ncu_plan(every_kernel(launches.value()), launches.value(), options, 10);
  std::vector<ProfiledLaunch> rows;
  for (std::size_t i = 0; i < file.plan.configs.size(); i += 2)
    if (!file.plan.configs[i].ordinals.empty())
      rows.push_back({file.plan.configs[i].kernel, file.plan.configs[i].grid, file.plan.configs[i].block});
  file.check = check_ncu_plan(file.plan, rows, KernelNameBase::demangled);
  file.check->pass_timings = {{19.5, 21.25, 7.75}, {3.5, 4.0, std::nullopt}};
  file.check->workload_endings = {"pass 1 ended the workload after its planned launches at 19.6 s"};
  file.check->stage_seconds = 25.25;
  file.measured_seconds_per_launch = 0.55;
  return file;
}

std::string plan_text(const NcuPlanFile& file) {
  return ncu_plan_json(file.plan, file.check, file.measured_seconds_per_launch);
}

// Equal JSON, doubles within 1 ulp or so: Boost.JSON 1.81's parser rounds some 17-digit doubles to a neighbour
// (3.6648503737617805E-1 reads back as 3.664850373761781E-1), so a byte comparison would test the parser.
bool same_json(const boost::json::value& a, const boost::json::value& b, const std::string& where) {
  if (a.is_double() && b.is_double()) {
    const bool close = std::abs(a.get_double() - b.get_double()) <= 4e-16 * std::abs(a.get_double());
    if (!close) UNSCOPED_INFO(where);
    return close;
  }
  if (a.kind() != b.kind()) {
    UNSCOPED_INFO(where + ": kinds differ");
    return false;
  }
  if (a.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) {
      UNSCOPED_INFO(where + ": key counts differ");
      return false;
    }
    auto other = y.begin();
    for (const auto& [key, value] : x) {
      if (other->key() != key) {  // the same keys in the same order: the file's layout
        UNSCOPED_INFO(where + std::string(key) + ": key order differs");
        return false;
      }
      if (!same_json(value, other->value(), where + std::string(key) + ".")) return false;
      ++other;
    }
    return true;
  }
  if (a.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!same_json(x[i], y[i], where + "[" + std::to_string(i) + "]")) return false;
    return true;
  }
  if (a != b) UNSCOPED_INFO(where);
  return a == b;
}

bool same_json(const std::string& a, const std::string& b) {
  return same_json(boost::json::parse(a), boost::json::parse(b), "");
}

}  // namespace

TEST_CASE("ncu/plan.json reads back through its table as the plan, check and cost it was written from", "[ncu_plan]") {
  const NcuPlanFile written = recorded_plan_file();
  // The fixture exercises every optional part: a bounded plan with left-out kernels, extrapolated and measured
  // groups, and a check that names shortfalls.
  REQUIRE(written.plan.max_seconds == 10);
  REQUIRE_FALSE(written.plan.left_out_for_time.empty());
  REQUIRE_FALSE(written.check->not_profiled.empty());
  const std::string text = plan_text(written);
  auto read = read_ncu_plan_json(text, "ncu/plan.json");
  if (!read) FAIL(read.error().describe());
  CHECK(read->warnings.empty());
  // Written again from what was read: every key, in the same order, and every value kept.
  CHECK(same_json(plan_text(read.value()), text));
  CHECK(read->plan.stage == "decode");
  CHECK(read->plan.configs.size() == written.plan.configs.size());
  CHECK(read->plan.passes.size() == written.plan.passes.size());
  CHECK(read->plan.start_up_seconds == 6.5);
  REQUIRE(read->check.has_value());
  CHECK(read->check->coverage_measured == written.check->coverage_measured);
  CHECK(read->check->coverage_extrapolated == written.check->coverage_extrapolated);
  CHECK(read->check->pass_timings[0].first_launch_seconds == 7.75);
  CHECK_FALSE(read->check->pass_timings[1].first_launch_seconds.has_value());
  CHECK(read->measured_seconds_per_launch == 0.55);

  SECTION("through the file") {
    testing::TempDir temp;
    const fs::path path = temp.path() / "plan.json";
    testing::write_file(path, text);
    const auto from_file = read_ncu_plan_file(path);
    if (!from_file) FAIL(from_file.error().describe());
    CHECK(same_json(plan_text(from_file.value()), text));
  }
  SECTION("a plan before ncu ran: no check, no measured cost, neither key written") {
    NcuPlanFile before = written;
    before.check.reset();
    before.measured_seconds_per_launch.reset();
    before.plan.max_seconds = 0;
    const auto object = boost::json::parse(plan_text(before)).as_object();
    CHECK_FALSE(object.contains("check"));
    CHECK_FALSE(object.contains("measured_seconds_per_launch"));
    CHECK_FALSE(object.contains("max_seconds"));
    CHECK_FALSE(object.contains("left_out_for_time"));
    const auto again = read_ncu_plan_json(plan_text(before), "ncu/plan.json");
    REQUIRE(again.has_value());
    CHECK_FALSE(again->check.has_value());
    CHECK(same_json(plan_text(again.value()), plan_text(before)));
  }
}

TEST_CASE("a bad value in ncu/plan.json: the file and the key, or the figure withheld", "[ncu_plan]") {
  const NcuPlanFile written = recorded_plan_file();
  auto object = boost::json::parse(plan_text(written)).as_object();

  SECTION("a count that is a string is an error naming the file and the key") {
    object["configs"].as_array()[1].as_object()["stage_launches"] = "many";
    const auto read = read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json");
    REQUIRE_FALSE(read.has_value());
    CHECK_THAT(read.error().message, Catch::Contains("run/ncu/plan.json") && Catch::Contains("configs[1].stage_launches"));
  }
  SECTION("a check without its measured / extrapolated split is an error naming the key") {
    object["check"].as_object().erase("coverage_extrapolated");
    const auto read = read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json");
    REQUIRE_FALSE(read.has_value());
    CHECK_THAT(read.error().message, Catch::Contains("check.coverage_extrapolated"));
  }
  SECTION("a plan without its stage is an error") {
    object.erase("stage");
    const auto read = read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json");
    REQUIRE_FALSE(read.has_value());
    CHECK_THAT(read.error().message, Catch::Contains("field stage"));
  }
  SECTION("another schema is an error") {
    object["schema"] = "llmprof.ncu_plan/0";
    REQUIRE_FALSE(read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json").has_value());
  }
  SECTION("a coverage of 1.7 in the check leaves the check out, with a warning naming the file and the figure") {
    object["check"].as_object()["coverage_measured"] = 1.7;
    const auto read = read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json");
    REQUIRE(read.has_value());
    CHECK_FALSE(read->check.has_value());
    REQUIRE(read->warnings.size() == 2);
    CHECK_THAT(read->warnings[0], Catch::Contains("coverage_measured") && Catch::Contains("run/ncu/plan.json"));
    CHECK_THAT(read->warnings[1], Catch::Contains("the check is left out"));
    CHECK(read->plan.configs.size() == written.plan.configs.size());
  }
  SECTION("a plan's coverage of 1.7 and a negative launch count are withheld (0), each with its warning") {
    object["expected_coverage"] = 1.7;
    object["configs"].as_array()[0].as_object()["stage_launches"] = -4;
    const auto read = read_ncu_plan_json(boost::json::serialize(object), "run/ncu/plan.json");
    REQUIRE(read.has_value());
    CHECK(read->plan.expected_coverage == 0);
    CHECK(read->plan.configs[0].stage_launches == 0);
    REQUIRE(read->warnings.size() == 2);
    CHECK_THAT(read->warnings[0], Catch::Contains("expected_coverage"));
    CHECK_THAT(read->warnings[1], Catch::Contains("stage_launches") && Catch::Contains("configs[0]"));
    CHECK(read->check.has_value());
  }
}

TEST_CASE("every key the ncu plan's tables write is documented in docs/report-json.md", "[ncu_plan]") {
  std::set<std::string> keys;
  collect_keys(boost::json::parse(plan_text(recorded_plan_file())).as_object(), "", keys);
  const std::string docs = read_file(fs::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  const auto section = docs.find("## `ncu/plan.json`");
  REQUIRE(section != std::string::npos);
  const std::string rows = docs.substr(section, docs.find("\n## ", section + 1) - section);
  for (const auto& key : keys) {
    INFO(key);
    CHECK(rows.find("| `" + key + "` |") != std::string::npos);
  }
  // 30 top-level keys, 8 per pass, 17 per configuration, 11 in the check, 4 per shortfall, 3 per pass timing.
  CHECK(keys.size() == 30 + 8 + 17 + 11 + 4 + 3);
}
