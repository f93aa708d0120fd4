// Benchmark (not a test): the timeline engine on an nsys SQLite export with millions of kernel rows.
//
//   bench_timeline_engine [--kernels N] [--file PATH] [--keep-file]
//
// Builds PATH (default: a temporary file) from the real eager decode export
// (tests/data/nsys-sqlite/eager.sqlite: 20,160 kernels, 576 copies, 64 decode steps) by appending
// shifted copies of its kernel, copy and launch-call rows (new correlation ids, times moved past the
// previous copy) until the kernel table holds at least N rows (default 10,000,000). One NVTX range
// `replay` is added around the copies, so the number of range instances stays that of the fixture
// plus one: what grows is rows, and peak memory must not grow with them (run with two N to see).
// Prints build time, analysis time, rows per second and peak RSS (getrusage ru_maxrss).
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "bench_options.hpp"
#include "llmprof/timeline.hpp"

namespace {

namespace fs = std::filesystem;

void exec(sqlite3* database, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(database, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::cerr << "bench_timeline_engine: " << (message ? message : "sqlite error") << " in: " << sql << "\n";
    std::exit(1);
  }
}

std::int64_t scalar(sqlite3* database, const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  sqlite3_prepare_v2(database, sql.c_str(), -1, &statement, nullptr);
  std::int64_t value = sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0;
  sqlite3_finalize(statement);
  return value;
}

// Appends shifted copies of the fixture's activity and launch rows until `kernels` kernel rows exist.
void build(const fs::path& file, std::int64_t kernels) {
  fs::copy_file(LLMPROF_BENCH_SQLITE_FIXTURE, file, fs::copy_options::overwrite_existing);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::add);
  sqlite3* database = nullptr;
  sqlite3_open(file.c_str(), &database);
  exec(database, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
  const std::int64_t base_kernels = scalar(database, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  const std::int64_t first = scalar(database, "SELECT min(start) FROM NVTX_EVENTS");
  const std::int64_t last = scalar(database, "SELECT max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  const std::int64_t shift = last - first + 1000000;
  const std::int64_t correlation_shift =
      scalar(database, "SELECT max(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME") + 1;
  const std::int64_t copies = (kernels + base_kernels - 1) / base_kernels;
  exec(database,
       "CREATE TEMP TABLE base_kernel AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;"
       "CREATE TEMP TABLE base_memcpy AS SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY;"
       "CREATE TEMP TABLE base_runtime AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME");
  exec(database, "BEGIN");
  for (std::int64_t copy = 1; copy < copies; ++copy) {
    const std::string time = std::to_string(copy * shift), correlation = std::to_string(copy * correlation_shift);
    exec(database,
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
         "globalPid, demangledName, shortName, graphNodeId) SELECT start + " +
             time + ", end + " + time + ", deviceId, contextId, streamId, correlationId + " + correlation +
             ", globalPid, demangledName, shortName, graphNodeId FROM base_kernel");
    exec(database,
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
         "globalPid, bytes, copyKind, graphNodeId) SELECT start + " +
             time + ", end + " + time + ", deviceId, contextId, streamId, correlationId + " + correlation +
             ", globalPid, bytes, copyKind, graphNodeId FROM base_memcpy");
    exec(database,
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
         "returnValue, callchainId) SELECT start + " +
             time + ", end + " + time + ", eventClass, globalTid, correlationId + " + correlation +
             ", nameId, returnValue, callchainId FROM base_runtime");
  }
  // One range around the copies, on the thread that launched them.
  exec(database, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT " +
                     std::to_string(first + shift) + ", " + std::to_string(first + copies * shift) +
                     ", 59, 'replay', globalTid, 0 FROM NVTX_EVENTS WHERE text = 'decode'");
  exec(database, "COMMIT");
  sqlite3_close(database);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t kernels = 10'000'000;
  fs::path file = fs::temp_directory_path() / "llmprof-bench-timeline.sqlite";
  bool keep = false, file_given = false;
  const llmprof::bench::Usage usage{"bench_timeline_engine", "[--kernels N] [--file PATH] [--keep-file]"};
  llmprof::bench::parse_flags(
      argc, argv, usage,
      {{"--kernels",
        [&](const std::string& v) { kernels = llmprof::bench::count_value<std::int64_t>(usage, "--kernels", v); }},
       {"--file", [&](const std::string& v) { file = v, file_given = true; }},
       llmprof::bench::switch_flag("--keep-file", [&] { keep = true; })});
  const bool reuse = file_given && fs::exists(file);  // an export built before: analyse it as is
  if (!reuse) {
    const auto start = std::chrono::steady_clock::now();
    build(file, kernels);
    std::printf("built %s (%.0f MB) in %.1f s\n", file.c_str(), static_cast<double>(fs::file_size(file)) / 1e6,
                seconds_since(start));
  }
  const auto start = std::chrono::steady_clock::now();
  auto report = llmprof::analyze_timeline(file);
  const double elapsed = seconds_since(start);
  if (!report) {
    std::cerr << report.error().describe() << "\n";
    return 1;
  }
  const auto* replay = report->find_stage("replay");
  std::printf("analysed %lld GPU activities (%lld stages) in %.2f s: %.2f M rows/s; peak RSS %.1f MB\n",
              static_cast<long long>(report->gpu_activities), static_cast<long long>(report->stages.size()), elapsed,
              static_cast<double>(report->gpu_activities) / elapsed / 1e6, llmprof::bench::peak_rss_mb());
  if (replay != nullptr)
    std::printf("replay: %lld launches, GPU busy %.1f ms, verdict: %s\n", static_cast<long long>(replay->loss.launches),
                static_cast<double>(replay->gpu_busy_ns) / 1e6, replay->verdict.c_str());
  if (!keep && !reuse) fs::remove(file);
  return 0;
}
