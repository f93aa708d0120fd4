// Exports of a workload with no NVTX range of its own, made from a recorded one: the H100 serving window
// (tests/data/serving/serving_window1_h100.sqlite, nsys 2025.3.1: 40 engine steps, 3,600 kernels of the spawned
// worker, a device-to-host copy per step). Its engine ranges are removed; optionally each step's `reduce_kernel`
// launch (the sampler's, one per step) is wrapped in `cub::DeviceScan::InclusiveScan` in the NVTX domain "CCCL", the
// only range a Hugging Face generate() left in its H100 capture on CUDA 13; optionally the workload's own window is
// added, a cudaProfilerStart before the first runtime call and a cudaProfilerStop after the last, as nsys records
// the calls (CUPTI_ACTIVITY_KIND_RUNTIME, names with their version suffix).
#pragma once

#include <filesystem>
#include <string>

#include "parse/sqlite_database.hpp"
#include "test_support.hpp"

namespace llmprof::testing {

struct WithoutOwnRanges {
  bool cccl_scans = false;       // CCCL's scan around each step's sampler launch
  bool profiler_window = false;  // cudaProfilerStart/Stop around every runtime call
  bool unsynchronised = false;   // no step waits: the copies and synchronisations gone, nothing to cut steps at
  // What nsys records of an engine whose worker it did not trace (forked without exec, no
  // --trace-fork-before-exec): the front's process and threads, no CUDA call, copy or kernel.
  bool front_only = false;
  // With profiler_window: the same work once more after the window's cudaProfilerStop (as a second generate() outside
  // the window would be), every call, kernel, copy and range shifted past the window, correlation ids renumbered.
  bool work_after_window = false;
};

inline constexpr const char* kRecordedServingWindow = "serving/serving_window1_h100.sqlite";

inline void execute_or_fail(::llmprof::detail::SqliteDatabase& database, const std::string& sql) {
  auto done = database.execute(sql);
  INFO(sql);
  REQUIRE(done.has_value());
}

inline std::filesystem::path export_without_own_ranges(const std::filesystem::path& directory, const std::string& name,
                                                       WithoutOwnRanges shape) {
  const auto copy = directory / (name + ".sqlite");
  std::filesystem::copy_file(data_path(kRecordedServingWindow), copy, std::filesystem::copy_options::overwrite_existing);
  auto database = ::llmprof::detail::SqliteDatabase::open_writable(copy);
  REQUIRE(database.has_value());
  execute_or_fail(*database, "DELETE FROM NVTX_EVENTS");
  if (shape.cccl_scans) {
    execute_or_fail(*database, "INSERT INTO StringIds (id, value) VALUES (90010, 'cub::DeviceScan::InclusiveScan')");
    // nvtxDomainCreateA("CCCL") on the launching thread (eventType 75), then one push/pop range (59) per launch.
    const std::string launches =
        "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId "
        "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'reduce_kernel'";
    execute_or_fail(*database, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                               "SELECT MIN(r.start) - 5000, NULL, 75, 'CCCL', r.globalTid, 1 " + launches);
    execute_or_fail(*database, "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, endGlobalTid, "
                               "domainId) SELECT r.start - 1000, r.end + 1000, 59, 90010, r.globalTid, r.globalTid, 1 " +
                                   launches);
  }
  if (shape.profiler_window) {
    execute_or_fail(*database, "INSERT INTO StringIds (id, value) VALUES (90001, 'cudaProfilerStart_v4000'), "
                               "(90002, 'cudaProfilerStop_v4000')");
    execute_or_fail(*database,
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                    "returnValue) SELECT MIN(start) - 20000, MIN(start) - 19000, 0, globalTid, 2000000001, 90001, 0 FROM "
                    "CUPTI_ACTIVITY_KIND_RUNTIME");
    execute_or_fail(*database,
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                    "returnValue) SELECT MAX(end) + 1000, MAX(end) + 2000, 0, globalTid, 2000000002, 90002, 0 FROM "
                    "CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId <> 90001");
  }
  if (shape.profiler_window && shape.work_after_window) {
    const std::string shift = "(SELECT MAX(end) + 1000000 FROM CUPTI_ACTIVITY_KIND_RUNTIME)";
    execute_or_fail(*database, "CREATE TEMP TABLE shift AS SELECT " + shift + " AS ns");
    execute_or_fail(*database, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, "
                               "nameId, returnValue) SELECT start + (SELECT ns FROM shift), end + (SELECT ns FROM shift), "
                               "eventClass, globalTid, correlationId + 10000000, nameId, returnValue FROM "
                               "CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId NOT IN (90001, 90002)");
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"}) {
      execute_or_fail(*database, std::string("CREATE TEMP TABLE after AS SELECT * FROM ") + table);
      execute_or_fail(*database, "UPDATE after SET start = start + (SELECT ns FROM shift), end = end + (SELECT ns FROM "
                                 "shift), correlationId = correlationId + 10000000");
      execute_or_fail(*database, std::string("INSERT INTO ") + table + " SELECT * FROM after");
      execute_or_fail(*database, "DROP TABLE after");
    }
    execute_or_fail(*database, "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, endGlobalTid, "
                               "domainId) SELECT start + (SELECT ns FROM shift), end + (SELECT ns FROM shift), eventType, "
                               "textId, globalTid, endGlobalTid, domainId FROM NVTX_EVENTS WHERE eventType = 59");
  }
  if (shape.unsynchronised) {
    execute_or_fail(*database, "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN "
                               "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY)");
    execute_or_fail(*database, "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    execute_or_fail(*database, "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IN "
                               "(SELECT id FROM StringIds WHERE value LIKE '%Synchronize%')");
  }
  if (shape.front_only) {
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME"})
      execute_or_fail(*database, std::string("DELETE FROM ") + table);
  }
  return copy;
}

}  // namespace llmprof::testing
