// restrict_export_to_window on recorded exports against tests/tools/restrict_window_expected.py, which picks each
// window from the export's own rows and applies the rule in Python over the rows it read (no SQL of ours): the rows
// left per table and the kernels' summed time must be the oracle's, and the recorded source must not change.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>

#include "llmprof/library_ranges.hpp"
#include "llmprof/range_discovery.hpp"
#include "oracle.hpp"
#include "parse/nsys_sqlite_window.hpp"
#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

using namespace llmprof;
using namespace llmprof::testing;
using llmprof::detail::ExportWindow;
using llmprof::detail::restrict_export_to_window;
using llmprof::detail::SqliteDatabase;
namespace fs = std::filesystem;

namespace {

std::int64_t query_integer(const fs::path& file, const std::string& sql) {
  auto database = SqliteDatabase::open_read_only(file);
  REQUIRE(database.has_value());
  auto statement = database->prepare(sql);
  REQUIRE(statement.has_value());
  auto row = statement->step();
  REQUIRE(row.has_value());
  REQUIRE(*row);
  return statement->integer(0);
}

std::int64_t rows(const fs::path& file, const std::string& table) {
  return query_integer(file, "SELECT COUNT(*) FROM " + table);
}

std::int64_t figure(const std::string& line, const std::string& key) {
  return std::stoll(oracle_text("restrict_window", line, key));
}

struct Case {
  std::string line;     // the oracle's line start
  std::string fixture;  // under tests/data
};

}  // namespace

TEST_CASE("a recorded export restricted to a window keeps the rows the oracle keeps", "[nsys_sqlite_window]") {
  const Case which = GENERATE(Case{"engine_eager_spawn_none calls 1000..3000: ", "zoo/engine_eager_spawn_none.sqlite"},
                              Case{"hf_dynamic_window calls 500..2500: ", "zoo/hf_dynamic_window.sqlite"},
                              Case{"many_steps_graph_sampled ranges 2..5: ", "zoo/many_steps_graph_sampled.sqlite"});
  INFO(which.fixture);
  TempDir directory;
  const fs::path source = data_path(which.fixture);
  const fs::path restricted = directory.path() / "profile.sqlite";
  const std::int64_t source_rows_before = rows(source, "StringIds");
  const ExportWindow window{figure(which.line, "start"), figure(which.line, "end")};

  auto result = restrict_export_to_window(source, restricted, window);
  REQUIRE(result.has_value());

  const std::string line = which.line;
  const auto expect = [&](const std::string& table, const std::string& key) {
    if (read_oracle_line("restrict_window", line).find(" " + key + "=") == std::string::npos) return;
    INFO(table);
    CHECK(rows(restricted, table) == figure(line, key));
  };
  expect("CUPTI_ACTIVITY_KIND_RUNTIME", "runtime");
  expect("NVTX_EVENTS", "nvtx");
  expect("CUPTI_ACTIVITY_KIND_KERNEL", "kernel");
  expect("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy");
  expect("CUPTI_ACTIVITY_KIND_MEMSET", "memset");
  expect("GPU_METRICS", "samples");
  const std::int64_t kernels = figure(line, "kernel_ns") > 0 ? rows(restricted, "CUPTI_ACTIVITY_KIND_KERNEL") : 0;
  CHECK(result->kernels_kept == kernels);
  if (kernels > 0)
    CHECK(query_integer(restricted, "SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL") ==
          figure(line, "kernel_ns"));
  CHECK(result->rows_removed > 0);
  // Tables without time stay whole, and the recorded source is untouched.
  CHECK(rows(restricted, "StringIds") == source_rows_before);
  CHECK(rows(source, "StringIds") == source_rows_before);
  CHECK_FALSE(fs::exists(restricted.string() + ".partial"));
}

namespace {

std::map<std::string, std::int64_t> kernels_by_name(const fs::path& file) {
  auto database = SqliteDatabase::open_read_only(file);
  REQUIRE(database.has_value());
  auto statement = database->prepare("SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                                     "s.id = k.shortName GROUP BY s.value");
  REQUIRE(statement.has_value());
  std::map<std::string, std::int64_t> counts;
  for (auto row = statement->step(); row && *row; row = statement->step())
    counts[std::string(statement->text(0))] = statement->integer(1);
  return counts;
}

}  // namespace

// Recorded on the H100 (nsys 2025.3.1): each workload once whole and once under nsys's own capture gated on its
// cudaProfilerStart/Stop window. The whole run restricted to the window range discovery finds in it must hold the
// window capture's kernels, name by name: nsys itself is the expected value.
TEST_CASE("a whole run restricted to its own window holds the kernels nsys's window capture holds",
          "[nsys_sqlite_window]") {
  const auto [line, whole, window] = GENERATE(
      std::tuple{std::string("hf_small_whole_window in its window: "), std::string("zoo/hf_small_whole_window.sqlite"),
                 std::string("zoo/hf_small_window.sqlite")},
      std::tuple{std::string("engine_eager_spawn_whole_window in its window: "),
                 std::string("zoo/engine_eager_spawn_whole_window.sqlite"),
                 std::string("zoo/engine_eager_spawn_small_window.sqlite")});
  INFO(whole);
  auto discovery = discover_capture(data_path(whole), LibraryRanges{});
  REQUIRE(discovery.has_value());
  REQUIRE(discovery->profiler_windows.size() == 1);
  const auto [start_ns, end_ns] = discovery->profiler_windows.front();
  CHECK(start_ns == figure(line, "start"));
  CHECK(end_ns == figure(line, "end"));

  TempDir directory;
  const fs::path restricted = directory.path() / "profile.sqlite";
  auto result = restrict_export_to_window(data_path(whole), restricted, {start_ns, end_ns});
  REQUIRE(result.has_value());
  CHECK(result->kernels_kept == figure(line, "kernel"));
  CHECK(rows(data_path(whole), "CUPTI_ACTIVITY_KIND_KERNEL") == figure(line, "whole_kernels"));
  CHECK(figure(line, "kernel") == figure(line, "window_capture_kernels"));
  CHECK(kernels_by_name(restricted) == kernels_by_name(data_path(window)));
}

TEST_CASE("restricting to a window that ends before it starts, or a source that is no export, says what is wrong",
          "[nsys_sqlite_window]") {
  TempDir directory;
  const fs::path restricted = directory.path() / "profile.sqlite";
  auto backwards = restrict_export_to_window(data_path("zoo/hf_dynamic_window.sqlite"), restricted, {200, 100});
  REQUIRE_FALSE(backwards.has_value());
  CHECK(backwards.error().code == ErrorCode::invalid_argument);
  CHECK_THAT(backwards.error().message, Catch::Contains("ends (100 ns) before it starts (200 ns)"));

  const fs::path not_sqlite = directory.path() / "report.sqlite";
  write_file(not_sqlite, "not a database\n");
  auto foreign = restrict_export_to_window(not_sqlite, restricted, {0, 100});
  REQUIRE_FALSE(foreign.has_value());
  CHECK_THAT(foreign.error().describe(), Catch::Contains(not_sqlite.string()));
  CHECK_FALSE(fs::exists(restricted));
  CHECK_FALSE(fs::exists(restricted.string() + ".partial"));
}
