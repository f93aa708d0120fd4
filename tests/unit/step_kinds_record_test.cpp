// analysis/step_kinds.json as one record (llmprof/step_kinds_record.hpp): written and read back through its field
// tables, on the two H100 serving windows (tests/data/serving) with the workload's own step tokens attached; a value
// of the wrong type is an error naming the file and the key, a figure past its bound is withheld with a warning;
// every key the tables write has its row in docs/report-json.md.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cmath>
#include <set>

#include "llmprof/step_kinds.hpp"
#include "llmprof/step_kinds_record.hpp"
#include "llmprof/step_tokens.hpp"
#include "llmprof/timeline.hpp"
#include "serving_h100_windows.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;
using llmprof::testing::read_file;

namespace {

const std::string kFile = "run/analysis/step_kinds.json";

// Both windows, the workload's tokens attached (so the tokens record and token notes are written too).
std::vector<StepKindReport> h100_windows() {
  auto windows = testing::h100_serving_windows();
  attach_step_tokens(windows, testing::h100_serving_step_tokens());
  return windows;
}

// The file with one value replaced: windows[0].kinds[kind][key] = value.
std::string with_kind_value(const std::string& json, std::size_t kind, const std::string& key,
                            const boost::json::value& value) {
  auto root = boost::json::parse(json).as_object();
  root["windows"].as_array()[0].as_object()["kinds"].as_array()[kind].as_object()[key] = value;
  return boost::json::serialize(root);
}

// Every key of the written file as a path ("windows[].kinds[].tokens.withheld"), objects and arrays of them walked.
void collect_keys(const boost::json::value& value, const std::string& prefix, std::set<std::string>& keys) {
  if (value.is_array()) {
    for (const auto& element : value.get_array()) collect_keys(element, prefix + "[]", keys);
    return;
  }
  if (!value.is_object()) return;
  for (const auto& [key, member] : value.get_object()) {
    const std::string path = prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
    keys.insert(path);
    collect_keys(member, path, keys);
  }
}

// Boost.JSON 1.81's parser is not correctly rounded (its precise mode came later): a double may read back one unit in
// the last place off, so doubles are compared to 1e-15 of their size and everything else exactly.
bool same_json(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) return std::abs(a.get_double() - b.get_double()) <= 1e-15 * std::abs(b.get_double());
  if (a.is_array() && b.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!same_json(x[i], y[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
      if (i->key() != j->key() || !same_json(i->value(), j->value())) return false;
    return true;
  }
  return a == b;
}

}  // namespace

TEST_CASE("step_kinds.json reads back into the windows it was written from, through the one field table") {
  const auto windows = h100_windows();
  const std::string json = step_kinds_json(windows);
  const auto read = read_step_kinds_json(json, kFile);
  REQUIRE(read);
  CHECK(read->warnings.empty());
  REQUIRE(read->windows.size() == 2);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    INFO("window " << w + 1);
    const StepKindReport& back = read->windows[w];
    const StepKindReport& written = windows[w];
    CHECK(back.step_range == written.step_range);
    CHECK(back.steps == written.steps);
    CHECK(back.phases == written.phases);
    CHECK(back.verdict == written.verdict);
    CHECK(back.window_gpu_time_ns == written.window_gpu_time_ns);
    CHECK(back.gpu_process == written.gpu_process);
    CHECK(back.token_notes == written.token_notes);
    REQUIRE(back.kinds.size() == written.kinds.size());
    for (std::size_t k = 0; k < back.kinds.size(); ++k) {
      INFO(written.kinds[k].name);
      CHECK(back.kinds[k].name == written.kinds[k].name);
      CHECK(back.kinds[k].count == written.kinds[k].count);
      CHECK(back.kinds[k].step_time.p50_ns == written.kinds[k].step_time.p50_ns);
      CHECK(back.kinds[k].step_time.p99_ns == written.kinds[k].step_time.p99_ns);
      CHECK(back.kinds[k].step_time.total_ns == written.kinds[k].step_time.total_ns);
      CHECK(back.kinds[k].gpu_busy_ns == written.kinds[k].gpu_busy_ns);
      CHECK(back.kinds[k].processes == written.kinds[k].processes);
      REQUIRE(back.kinds[k].gpu_busy_share.has_value());
      CHECK(*back.kinds[k].gpu_busy_share == Approx(*written.kinds[k].gpu_busy_share).epsilon(1e-15));
      REQUIRE(back.kinds[k].top_kernels.size() == written.kinds[k].top_kernels.size());
      CHECK(back.kinds[k].top_kernels.front().name == written.kinds[k].top_kernels.front().name);
      REQUIRE(back.kinds[k].tokens.has_value() == written.kinds[k].tokens.has_value());
      if (written.kinds[k].tokens) {
        CHECK(back.kinds[k].tokens->decode_tokens == written.kinds[k].tokens->decode_tokens);
        REQUIRE(back.kinds[k].tokens->time_per_token_ns.has_value() ==
                written.kinds[k].tokens->time_per_token_ns.has_value());
        if (written.kinds[k].tokens->time_per_token_ns)
          CHECK(*back.kinds[k].tokens->time_per_token_ns ==
                Approx(*written.kinds[k].tokens->time_per_token_ns).epsilon(1e-15));
      }
    }
  }
  // Every row read back: the file written again from what was read is the file, key for key and in order
  // (inferred_spans is not written).
  CHECK(same_json(boost::json::parse(step_kinds_json(read->windows)), boost::json::parse(json)));
  // The layout readers outside the library use: the step time's figures flat at the kind's level.
  const auto kind = boost::json::parse(json).at("windows").at(0).at("kinds").at(0).as_object();
  CHECK(kind.at("p50_ns").as_int64() == windows[0].kinds[0].step_time.p50_ns);
  CHECK(kind.at("total_ns").as_int64() == windows[0].kinds[0].step_time.total_ns);
  CHECK(kind.at("gpu_busy_share").as_double() == *windows[0].kinds[0].gpu_busy_share);
}

TEST_CASE("step_kinds.json: a value of the wrong type is an error naming the file and the key") {
  const std::string json = step_kinds_json(h100_windows());
  const auto count = read_step_kinds_json(with_kind_value(json, 1, "count", "many"), kFile);
  REQUIRE_FALSE(count);
  CHECK_THAT(count.error().message, Catch::Contains(kFile));
  CHECK_THAT(count.error().message, Catch::Contains("windows[0].kinds[1].count"));
  const auto name = read_step_kinds_json(with_kind_value(json, 0, "name", ""), kFile);
  REQUIRE_FALSE(name);
  CHECK_THAT(name.error().message, Catch::Contains("windows[0].kinds[0].name"));
  auto root = boost::json::parse(json).as_object();
  root["schema"] = "llmprof.step_kinds/2";
  const auto schema = read_step_kinds_json(boost::json::serialize(root), kFile);
  REQUIRE_FALSE(schema);
  CHECK_THAT(schema.error().message, Catch::Contains("llmprof.step_kinds/2"));
}

TEST_CASE("step_kinds.json: a share past 1 or a negative count is withheld on reading, with a warning naming it") {
  const auto windows = h100_windows();
  const std::string json = step_kinds_json(windows);
  const std::string kind = windows[0].kinds[0].name;
  const auto share = read_step_kinds_json(with_kind_value(json, 0, "gpu_busy_share", 1.7), kFile);
  REQUIRE(share);
  CHECK_FALSE(share->windows[0].kinds[0].gpu_busy_share.has_value());
  CHECK(share->windows[0].kinds[1].gpu_busy_share == windows[0].kinds[1].gpu_busy_share);  // the others stand
  REQUIRE(share->warnings.size() == 1);
  CHECK_THAT(share->warnings[0], Catch::Contains("gpu_busy_share of '" + kind + "' = 1.7 cannot be true"));
  CHECK_THAT(share->warnings[0], Catch::Contains(kFile));
  const auto count = read_step_kinds_json(with_kind_value(json, 0, "count", -5), kFile);
  REQUIRE(count);
  CHECK(count->windows[0].kinds[0].count == 0);
  REQUIRE(count->warnings.size() == 1);
  CHECK_THAT(count->warnings[0], Catch::Contains("count of '" + kind + "' = -5 cannot be true"));
}

TEST_CASE("the analysis withholds a step-kind figure past its bound by the same rows, naming its inputs") {
  auto windows = h100_windows();
  windows[1].kinds[0].window_share = 1.25;
  std::vector<std::string> warnings;
  check_step_kind_bounds(windows, warnings);
  CHECK_FALSE(windows[1].kinds[0].window_share.has_value());
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::StartsWith("engine steps, window 2: window_share of '"));
  CHECK_THAT(warnings[0], Catch::Contains("gpu_time_ns / window_gpu_time_ns"));
}

TEST_CASE("every step_kinds.json key is documented in docs/report-json.md's section for it") {
  auto windows = h100_windows();
  windows[0].token_notes.push_back("a note");  // so every optional part of the file is written
  std::set<std::string> keys;
  collect_keys(boost::json::parse(step_kinds_json(windows)), "", keys);
  const std::string docs = read_file(std::filesystem::path(LLMPROF_SOURCE_DIR) / "docs" / "report-json.md");
  const auto start = docs.find("## `analysis/step_kinds.json`");
  REQUIRE(start != std::string::npos);
  const std::string section = docs.substr(start, docs.find("\n## ", start + 1) - start);
  for (const auto& key : keys) {
    INFO(key);
    CHECK(section.find("| `" + key + "` |") != std::string::npos);
  }
  CHECK(keys.count("windows[].kinds[].gpu_busy_share") == 1);
  CHECK(keys.count("windows[].kinds[].tokens.time_per_token_ns") == 1);
  CHECK(keys.count("windows[].kinds[].top_kernels[].total_ns") == 1);
}
