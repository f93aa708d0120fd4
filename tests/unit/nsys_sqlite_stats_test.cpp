// nsys_stats_from_sqlite against `nsys stats` itself: the CSVs that nsys 2025.3.1 (H100) and Debian's nsys
// 2022.4.2 wrote for the same exports, read back with load_nsys_stats (tests/data/nsys-sqlite-stats/README.md).
//
// Integers are compared exactly, doubles within 1e-9 relative (NaN where the loader folds rows), tables
// as sets of rows (nsys's order among equal totals is SQLite's). What nsys 2022.4's CSVs cannot give
// exactly, and is asserted within its rounding instead:
// - gpukernsum has a row per kernel and grid/block shape; the loader merges them (average total/count
//   unrounded, deviation pooled from the shapes' rounded ones, median of the largest shape, percentages
//   summed). In eager and nodetrace 3 of 25 names have 2 or 3 shapes: there the average and deviation are
//   held to 0.05 + 1e-3 relative (eager: deviation 71.02 merged against 71.1 of the instances), the
//   percentage to 0.05 a shape (nodetrace: 8.2 summed against 8.1), the median not at all (eager's
//   nvjet_..._TNT: 4928.0 of its largest shape against 4160.0 of all its 2,560 instances).
// - nvtxgpuproj is a per-instance trace; the loader's level and child averages are exact, ours are rounded
//   to 0.1 as 2025.3's summary prints them: held to 0.05.
// - gpumemtimesum spells copies "[CUDA memcpy DtoD]"; from a 2025.3 export we give 2025.3's
//   "[CUDA memcpy Device-to-Device]" (from a 2022.4 export, 2022.4's spelling: edges2022).
// - nvtxkernsum prints "None,None" for the range and style of a kernel outside every range, read here as
//   range-less (nullopt, ""), which is what 2025.3's empty cells give.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "llmprof/csv.hpp"
#include "llmprof/nsys_stats.hpp"
#include "test_support.hpp"

using namespace llmprof;
using llmprof::testing::data_path;

namespace {

std::filesystem::path stats_file(const std::string& name) { return data_path("nsys-sqlite-stats/" + name); }

// How exactly the doubles of a row are held: exact (within 1e-9 relative) unless a CSV's rounding or the
// loader's merging of 2022.4 rows stands between.
struct Tolerance {
  double absolute = 0;  // beyond 1e-9 relative
  double relative = 1e-9;
  bool median = true;  // compare the median at all
};

bool same_double(double ours, double theirs, double absolute = 0, double relative = 1e-9) {
  if (std::isnan(ours) || std::isnan(theirs)) return std::isnan(ours) && std::isnan(theirs);
  return std::abs(ours - theirs) <= absolute + relative * std::max(1.0, std::abs(theirs));
}

void check_statistics(const NsysTimeStatistics& ours, const NsysTimeStatistics& theirs, const Tolerance& tolerance,
                      double percent_tolerance = 0) {
  CHECK(ours.total_time_ns == theirs.total_time_ns);
  CHECK(ours.count == theirs.count);
  CHECK(ours.min_ns == theirs.min_ns);
  CHECK(ours.max_ns == theirs.max_ns);
  CHECK(same_double(ours.average_ns, theirs.average_ns, tolerance.absolute));
  if (tolerance.median) CHECK(same_double(ours.median_ns, theirs.median_ns, tolerance.absolute));
  CHECK(same_double(ours.stddev_ns, theirs.stddev_ns, tolerance.absolute, tolerance.relative));
  CHECK(same_double(ours.time_percent, theirs.time_percent, percent_tolerance));
}

template <typename Row, typename Key>
std::map<std::string, Row> by_key(const std::vector<Row>& rows, Key key) {
  std::map<std::string, Row> keyed;
  for (const auto& row : rows) CHECK(keyed.emplace(key(row), row).second);  // one row per key
  return keyed;
}

template <typename Row, typename Key, typename Compare>
void check_table(const std::optional<std::vector<Row>>& ours, const std::optional<std::vector<Row>>& theirs, Key key,
                 Compare compare) {
  REQUIRE(ours.has_value() == theirs.has_value());
  if (!theirs) return;
  const auto ours_keyed = by_key(*ours, key);
  const auto theirs_keyed = by_key(*theirs, key);
  CHECK(ours->size() == theirs->size());
  for (const auto& [name, row] : theirs_keyed) {
    INFO("row " << name);
    const auto found = ours_keyed.find(name);
    REQUIRE(found != ours_keyed.end());
    compare(found->second, row);
  }
}

std::string range_key(const std::optional<NvtxRangeName>& range, const std::string& style) {
  return (range ? range->qualified() : std::string("<none>")) + "|" + style;
}

// Names that 2022.4's gpukernsum lists under more than one grid/block shape (their merged median is not exact).
std::map<std::string, int> kernel_shapes(const std::filesystem::path& csv) {
  std::map<std::string, int> shapes;
  auto reader = CsvReader::open(csv);
  REQUIRE(reader.has_value());
  REQUIRE(reader->read_header().has_value());
  const auto name = reader->column("Name");
  REQUIRE(name.has_value());
  for (auto more = reader->next(); more && *more; more = reader->next()) ++shapes[std::string(reader->fields()[*name])];
  return shapes;
}

// 2022.4's gpukernsum rows merged per name lose the exact median, and round the rest (see the file comment).
void check_kernel_table(const NsysStats& ours, const NsysStats& theirs, const std::map<std::string, int>& shapes,
                        bool kernels_failed) {
  if (kernels_failed) {
    CHECK_FALSE(theirs.kernels.has_value());
    CHECK(ours.kernels.has_value());
    return;
  }
  check_table(
      ours.kernels, theirs.kernels, [](const auto& row) { return row.name; },
      [&](const auto& a, const auto& b) {
        const auto found = shapes.find(b.name);
        const int merged = found != shapes.end() ? found->second : 1;
        Tolerance tolerance;
        if (merged > 1) tolerance = {0.05, 1e-3, false};
        check_statistics(a.time, b.time, tolerance, 0.05 * merged);
      });
}

void check_memory_table(const NsysStats& ours, const NsysStats& theirs) {
  if (!theirs.memory_operations) return;  // 2025.3 was not asked for it on these captures
  REQUIRE(ours.memory_operations.has_value());
  // A 2025.3 export is spelled as 2025.3 prints it; 2022.4 abbreviates.
  const auto spelled_2022 = [](std::string name) {
    for (const auto& [long_name, short_name] :
         {std::pair{"Device-to-Device", "DtoD"}, {"Host-to-Device", "HtoD"}, {"Device-to-Host", "DtoH"}}) {
      if (const auto at = name.find(long_name); at != std::string::npos)
        name.replace(at, std::strlen(long_name), short_name);
    }
    return name;
  };
  check_table(
      ours.memory_operations, theirs.memory_operations, [&](const auto& row) { return spelled_2022(row.operation); },
      [](const auto& a, const auto& b) { check_statistics(a.time, b.time, {}); });
}

// Every table of `ours` against the CSVs under `prefix`, with `tolerance` for the tables whose 2022.4
// layout loses precision (kernels, projections).
// `kernels_failed`: nsys stats stopped on the kernel table, so only ours is there (2022.4 on the synthetic
// twoproc2022).
void check_against_csv(const NsysStats& ours, const std::string& prefix, bool legacy, bool kernels_failed = false) {
  auto loaded = load_nsys_stats(stats_file(prefix));
  REQUIRE(loaded.has_value());
  if (legacy && loaded->range_kernels) {
    // nsys 2022.4 prints Python's None for the range and style of kernels launched outside every range
    // (edges2022), which the loader reads as a range named "None"; 2025.3 leaves the cells empty.
    for (auto& row : *loaded->range_kernels) {
      if (row.range == NvtxRangeName{"", "None"} && row.style == "None") {
        row.range.reset();
        row.style.clear();
      }
    }
  }
  const NsysStats& theirs = *loaded;
  const std::map<std::string, int> shapes =
      legacy && theirs.kernels ? kernel_shapes(stats_file(prefix + "_gpukernsum.csv")) : std::map<std::string, int>{};
  SECTION("cuda_gpu_kern_sum") { check_kernel_table(ours, theirs, shapes, kernels_failed); }
  SECTION("nvtx_sum") {
    check_table(
        ours.ranges, theirs.ranges, [](const auto& row) { return range_key(row.range, row.style); },
        [](const auto& a, const auto& b) { check_statistics(a.time, b.time, {}); });
  }
  SECTION("nvtx_kern_sum") {
    check_table(
        ours.range_kernels, theirs.range_kernels,
        [](const auto& row) { return range_key(row.range, row.style) + "|" + row.kernel_name; },
        [](const auto& a, const auto& b) {
          CHECK(a.process_id == b.process_id);
          CHECK(a.thread_id == b.thread_id);
          CHECK(a.range_instances == b.range_instances);
          CHECK(a.kernel_instances == b.kernel_instances);
          check_statistics(a.time, b.time, {});
        });
  }
  SECTION("nvtx_gpu_proj_sum") {
    const double rounding = legacy ? 0.05 : 0;
    check_table(
        ours.range_projections, theirs.range_projections,
        [](const auto& row) { return range_key(row.range, row.style); },
        [&](const auto& a, const auto& b) {
          CHECK(a.total_projection_ns == b.total_projection_ns);
          CHECK(a.total_range_ns == b.total_range_ns);
          CHECK(a.range_instances == b.range_instances);
          CHECK(a.total_gpu_operations == b.total_gpu_operations);
          CHECK(same_double(a.average_range_level, b.average_range_level, rounding));
          CHECK(same_double(a.average_children, b.average_children, rounding));
        });
  }
  SECTION("cuda_api_sum") {
    check_table(
        ours.cuda_api, theirs.cuda_api, [](const auto& row) { return row.name; },
        [](const auto& a, const auto& b) { check_statistics(a.time, b.time, {}); });
  }
  SECTION("cuda_gpu_mem_time_sum") { check_memory_table(ours, theirs); }
}

template <typename Rows>
bool ordered_by_total(const Rows& rows) {
  return std::is_sorted(rows.begin(), rows.end(),
                        [](const auto& a, const auto& b) { return a.time.total_time_ns > b.time.total_time_ns; });
}

}  // namespace

TEST_CASE("nsys_stats_from_sqlite equals nsys 2025.3.1's CSVs of the same H100 exports", "[nsys_sqlite_stats]") {
  for (const std::string name : {"eager", "graphtrace", "nodetrace"}) {
    DYNAMIC_SECTION(name) {
      const auto ours = nsys_stats_from_sqlite(stats_file(name + ".sqlite"));
      REQUIRE(ours.has_value());
      check_against_csv(*ours, name + "_st", false);
    }
  }
}

TEST_CASE("nsys_stats_from_sqlite equals nsys 2022.4's CSVs of the same exports", "[nsys_sqlite_stats]") {
  for (const std::string name :
       {"eager", "graphtrace", "nodetrace", "twoproc2022", "cpu2022", "engine_domain_cpu2022", "edges2022"}) {
    DYNAMIC_SECTION(name) {
      const auto ours = nsys_stats_from_sqlite(stats_file(name + ".sqlite"));
      REQUIRE(ours.has_value());
      // 2022.4's gpukernsum fails on the synthetic exports ("no such column: gridX"), so their CSV is absent.
      check_against_csv(*ours, name + "_2022", true, name == "twoproc2022" || name == "edges2022");
    }
  }
}

TEST_CASE("nsys_stats_from_sqlite: the H100 eager figures, in nsys's order", "[nsys_sqlite_stats]") {
  const auto stats = nsys_stats_from_sqlite(stats_file("eager.sqlite"));
  REQUIRE(stats.has_value());
  REQUIRE(stats->kernels.has_value());
  CHECK(stats->kernels->size() == 25);
  CHECK(count_kernel_launches(*stats) == 20160);
  CHECK(ordered_by_total(*stats->kernels));
  CHECK(ordered_by_total(*stats->cuda_api));
  CHECK(stats->cuda_api->front().name == "cudaLaunchKernel");
  CHECK(stats->cuda_api->front().time.time_percent == 67.1);
  REQUIRE(stats->memory_operations.has_value());
  REQUIRE(stats->memory_operations->size() == 1);
  CHECK(stats->memory_operations->front().operation == "[CUDA memcpy Device-to-Device]");
  CHECK(stats->memory_operations->front().time.count == 576);
  REQUIRE(stats->range_projections.has_value());
  CHECK(stats->range_projections->front().range == NvtxRangeName{"", "decode"});
  // Projection is a span: 592.5 ms for decode while its kernels ran 49.2 ms (nvtx_gpu_proj_sum's own figure).
  CHECK(stats->range_projections->front().total_projection_ns == 592472983);
}

TEST_CASE("nsys_stats_from_sqlite: tables the export cannot give are nullopt", "[nsys_sqlite_stats]") {
  const auto stats = nsys_stats_from_sqlite(stats_file("cpu2022.sqlite"));
  REQUIRE(stats.has_value());
  CHECK(stats->ranges.has_value());
  CHECK_FALSE(stats->kernels.has_value());
  CHECK_FALSE(stats->range_kernels.has_value());
  CHECK_FALSE(stats->range_projections.has_value());
  CHECK_FALSE(stats->cuda_api.has_value());
  CHECK_FALSE(stats->memory_operations.has_value());
  // A start/end range and a named domain, spelled as nsys 2022.4 prints them.
  const auto& ranges = *stats->ranges;
  CHECK(std::any_of(ranges.begin(), ranges.end(), [](const auto& row) { return row.style == "StartEnd"; }));
  CHECK(std::any_of(ranges.begin(), ranges.end(), [](const auto& row) {
    return row.range == NvtxRangeName{"scheduler", "schedule"};
  }));
}

TEST_CASE("nsys_stats_from_sqlite refuses missing and damaged files", "[nsys_sqlite_stats]") {
  const auto missing = nsys_stats_from_sqlite(stats_file("absent.sqlite"));
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::not_found);
  CHECK_FALSE(missing.error().hint.empty());

  const auto not_sqlite = nsys_stats_from_sqlite(stats_file("eager_st_nvtx_sum.csv"));
  REQUIRE_FALSE(not_sqlite.has_value());
  CHECK(not_sqlite.error().code == ErrorCode::parse_error);
  CHECK(not_sqlite.error().subject.find("eager_st_nvtx_sum.csv") != std::string::npos);
  CHECK_FALSE(not_sqlite.error().hint.empty());
}

TEST_CASE("load_capture_tables: the CSVs where any exists, else the SQLite export, else not found",
          "[nsys_sqlite_stats]") {
  testing::TempDir dir;
  const auto sqlite = dir / "profile.sqlite";
  const auto prefix = dir / "summary";
  CHECK(load_capture_tables(prefix, sqlite).error().code == ErrorCode::not_found);
  std::filesystem::copy_file(stats_file("graphtrace.sqlite"), sqlite);
  CHECK_FALSE(has_nsys_stats_csv(prefix));
  auto from_export = load_capture_tables(prefix, sqlite);
  REQUIRE(from_export.has_value());
  auto expected = nsys_stats_from_sqlite(sqlite);
  REQUIRE(expected.has_value());
  REQUIRE(from_export->ranges.has_value());
  CHECK(from_export->ranges->size() == expected->ranges->size());
  CHECK(from_export->kernels->size() == expected->kernels->size());
  // One CSV (nsys 2022.4's name for nvtx_sum) and the CSVs win: the other tables are absent, as nsys stats left them.
  std::filesystem::copy_file(stats_file("graphtrace_2022_nvtxsum.csv"), dir / "summary_nvtxsum.csv");
  CHECK(has_nsys_stats_csv(prefix));
  auto from_csv = load_capture_tables(prefix, sqlite);
  REQUIRE(from_csv.has_value());
  CHECK(from_csv->ranges.has_value());
  CHECK_FALSE(from_csv->kernels.has_value());
}
