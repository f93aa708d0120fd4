// The nsys SQLite export, read by table and column names (see nsys_sqlite.hpp for the schemas).
#include "parse/nsys_sqlite.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace llmprof::detail {
namespace {

// The process of a row: nsys GlobalIds keep the process id above the low 24 (thread) bits, so a call's
// globalTid and its GPU rows' globalPid agree once shifted (2022.4 and 2025.3 alike).
constexpr std::string_view kCallProcess = "(r.globalTid >> 24)";
constexpr std::string_view kActivityProcess = "(globalPid >> 24)";

Error schema_error(const std::filesystem::path& file, const std::string& what) {
  return make_error(ErrorCode::parse_error, file.string() + " is not an nsys SQLite export this version reads: " + what,
                    "export it with `nsys export --type sqlite` from Nsight Systems 2022.4 or later (2025.3 tested)",
                    file.string());
}

// nsys writes times in ns from the start of the session, so a row is an interval within
// [0, kLatestTimeNs]; 2^47 ns is 39 hours, beyond any capture nsys can export. A row outside that, or
// one that ends before it starts, is a damaged file: refusing it here keeps the engine's differences of
// times from overflowing and its durations from going negative.
constexpr std::int64_t kLatestTimeNs = std::int64_t{1} << 47;

std::optional<Error> check_interval(const std::filesystem::path& file, std::string_view table, std::int64_t start_ns,
                                    std::int64_t end_ns) {
  if (start_ns >= 0 && start_ns <= end_ns && end_ns <= kLatestTimeNs) return std::nullopt;
  return make_error(ErrorCode::parse_error,
                    file.string() + ": a row of " + std::string(table) + " runs from " + std::to_string(start_ns) +
                        " ns to " + std::to_string(end_ns) +
                        " ns, which no nsys capture records (the export is damaged)",
                    "re-export the report with `nsys export --type sqlite`", file.string());
}

std::string_view activity_table(GpuActivityKind kind) {
  switch (kind) {
    case GpuActivityKind::kernel:
      return kKernelTable;
    case GpuActivityKind::memory_copy:
      return kMemcpyTable;
    case GpuActivityKind::memory_set:
      return kMemsetTable;
    case GpuActivityKind::graph_execution:
      return kGraphTraceTable;
  }
  return "a GPU activity table";
}

// Checks that `table`, when present, has `required` columns; returns whether it is present.
Result<bool> check_table(const SqliteDatabase& database, std::string_view table,
                         const std::vector<std::string_view>& required) {
  if (!database.has_table(table)) return false;
  const auto present = database.columns(table);
  for (auto column : required) {
    if (!present.contains(std::string(column)))
      return schema_error(database.file(),
                          "table " + std::string(table) + " has no column '" + std::string(column) + "'");
  }
  return true;
}

// The export's own metadata: EXPORT_META_DATA (nsys 2022.x) or META_DATA_EXPORT (2023 and later).
Result<void> read_export_metadata(const SqliteDatabase& database, NsysSqliteSchema& schema) {
  const char* table = database.has_table("META_DATA_EXPORT")   ? "META_DATA_EXPORT"
                      : database.has_table("EXPORT_META_DATA") ? "EXPORT_META_DATA"
                                                               : nullptr;
  if (table == nullptr) {
    if (!database.has_table("StringIds") && !database.has_table("NVTX_EVENTS"))
      return schema_error(database.file(), "no StringIds, NVTX_EVENTS or export metadata table (not an nsys export)");
    return schema_error(database.file(), "no META_DATA_EXPORT or EXPORT_META_DATA table (unknown export schema)");
  }
  auto statement = database.prepare(std::string("SELECT name, value FROM ") + table +
                                    " WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
  if (!statement) return schema_error(database.file(), std::string(table) + " has no name/value columns");
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    (statement->text(0) == "EXPORT_PRODUCT_VERSION" ? schema.product_version : schema.schema_version) =
        std::string(statement->text(1));
  }
  // Schema 3.x is what 2022.4 (3.0.0) through 2025.3 (3.20.3) write; another major may rename tables.
  if (schema.schema_version.rfind("3.", 0) != 0)
    return schema_error(database.file(), "export schema version '" + schema.schema_version + "' (3.x expected)");
  return {};
}

}  // namespace

std::optional<Error> check_nsys_interval(const std::filesystem::path& file, std::string_view table,
                                         std::int64_t start_ns, std::int64_t end_ns) {
  return check_interval(file, table, start_ns, end_ns);
}

std::optional<ApiCallKind> classify_api_call(std::string_view name) {
  const auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (has("Synchronize") || has("StreamWaitEvent") || has("StreamQuery")) return ApiCallKind::synchronize;
  if (has("GraphLaunch")) return ApiCallKind::graph_launch;
  if (has("LaunchKernel") || has("LaunchCooperativeKernel") || name.starts_with("cuLaunch"))
    return ApiCallKind::kernel_launch;
  // A synchronous copy (cudaMemcpy, cuMemcpyDtoH) waits for the GPU like a synchronise; still a copy.
  if (has("Memcpy")) return ApiCallKind::memory_copy;
  if (has("Memset")) return ApiCallKind::memory_set;
  return std::nullopt;
}

Result<NsysSqliteReader> NsysSqliteReader::open(const std::filesystem::path& file) {
  auto database = SqliteDatabase::open_read_only(file);
  if (!database) return database.error();
  NsysSqliteSchema schema;
  if (auto metadata = read_export_metadata(*database, schema); !metadata) return metadata.error();
  if (!database->has_table("StringIds")) return schema_error(file, "no StringIds table");
  // The columns are owned: an initializer_list member would point at an array that dies with the
  // temporary Check it was written in, before the loop below reads it.
  struct Check {
    std::string_view table;
    std::vector<std::string_view> columns;
    bool* present;
  };
  const std::array checks{
      Check{"NVTX_EVENTS", {"start", "end", "eventType", "text", "textId", "globalTid", "domainId"}, &schema.has_nvtx},
      Check{kRuntimeTable, {"start", "end", "globalTid", "correlationId", "nameId"}, &schema.has_runtime_api},
      Check{kKernelTable, {"start", "end", "correlationId", "globalPid", "demangledName"}, &schema.has_kernels},
      Check{kMemcpyTable, {"start", "end", "correlationId", "globalPid"}, &schema.has_memcpy},
      Check{kMemsetTable, {"start", "end", "correlationId", "globalPid"}, &schema.has_memset},
      Check{kGraphTraceTable, {"start", "end", "correlationId", "globalPid"}, &schema.has_graph_trace},
  };
  for (const auto& check : checks) {
    auto present = check_table(*database, check.table, check.columns);
    if (!present) return present.error();
    *check.present = *present;
  }
  schema.kernels_have_graph_node = schema.has_kernels && database->columns(kKernelTable).contains("graphNodeId");
  schema.has_gpu_metrics = database->has_table("GPU_METRICS");
  NsysSqliteReader reader(std::move(*database), std::move(schema));
  if (auto kinds = reader.load_api_kinds(); !kinds) return kinds.error();
  return reader;
}

Result<void> NsysSqliteReader::load_api_kinds() {
  if (!schema_.has_runtime_api) return {};
  // Only the names API rows use: StringIds also holds kernel names and NVTX strings.
  auto statement = database_.prepare(
      "SELECT id, value FROM StringIds WHERE id IN "
      "(SELECT DISTINCT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME)");
  if (!statement) return statement.error();
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return {};
    if (auto kind = classify_api_call(statement->text(1))) api_kinds_.emplace(statement->integer(0), *kind);
  }
}

Result<std::vector<NvtxRangeRow>> NsysSqliteReader::read_nvtx_ranges(
    std::map<std::string, std::int64_t>& unclosed) const {
  unclosed.clear();
  std::vector<NvtxRangeRow> ranges;
  if (!schema_.has_nvtx) return ranges;
  // Domain names come from NvtxDomainCreate events; domain ids are per process (globalTid >> 24).
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains;
  auto domain_rows = database_.prepare(
      "SELECT n.globalTid >> 24, n.domainId, coalesce(n.text, s.value) FROM NVTX_EVENTS n "
      "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = " +
      std::to_string(kNvtxDomainCreate));
  if (!domain_rows) return domain_rows.error();
  for (auto row = domain_rows->step(); row && *row; row = domain_rows->step())
    domains[{domain_rows->integer(0), domain_rows->integer(1)}] = std::string(domain_rows->text(2));
  auto statement = database_.prepare(
      "SELECT n.start, n.end, n.eventType, coalesce(n.text, s.value, ''), n.globalTid, coalesce(n.domainId, 0) "
      "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (" +
      std::to_string(kNvtxPushPopRange) + "," + std::to_string(kNvtxStartEndRange) + "," +
      std::to_string(kNvtxtPushPopRange) + "," + std::to_string(kNvtxtStartEndRange) +
      ") ORDER BY n.start, n.end DESC");
  if (!statement) return statement.error();
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    NvtxRangeRow range;
    const auto type = statement->integer(2);
    range.push_pop = type == kNvtxPushPopRange || type == kNvtxtPushPopRange;
    range.name = std::string(statement->text(3));
    range.thread = statement->integer(4);
    if (const auto domain_id = statement->integer(5); domain_id != 0) {
      auto found = domains.find({range.thread >> 24, domain_id});
      range.domain = found != domains.end() ? found->second : "domain " + std::to_string(domain_id);
    }
    if (statement->is_null(1)) {
      ++unclosed[range.domain.empty() ? range.name : range.domain + ":" + range.name];
      continue;
    }
    range.start_ns = statement->integer(0);
    range.end_ns = statement->integer(1);
    if (auto damaged = check_interval(file(), "NVTX_EVENTS", range.start_ns, range.end_ns)) return *damaged;
    ranges.push_back(std::move(range));
  }
  return ranges;
}

Result<void> NsysSqliteReader::for_each_api_call(const std::function<void(const ApiCallRow&)>& visit) const {
  if (!schema_.has_runtime_api || api_kinds_.empty()) return {};
  std::string ids;
  for (const auto& [id, kind] : api_kinds_) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  // (process, correlation id) pairs that some GPU row carries: materialised once (SQLite indexes it
  // for the join). Correlation ids are per process, so ranks of one capture reuse them.
  std::string recorded;
  const auto add = [&](bool present, std::string_view table) {
    if (!present) return;
    recorded += std::string(recorded.empty() ? "" : " UNION ") + "SELECT " + std::string(kActivityProcess) +
                " AS pid, correlationId FROM " + std::string(table);
  };
  add(schema_.has_kernels, kKernelTable);
  add(schema_.has_memcpy, kMemcpyTable);
  add(schema_.has_memset, kMemsetTable);
  add(schema_.has_graph_trace, kGraphTraceTable);
  const std::string sql =
      recorded.empty()
          ? "SELECT r.start, r.end, r.globalTid, r.correlationId, r.nameId, 0 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
            "WHERE r.nameId IN (" +
                ids + ") ORDER BY r.start"
          : "SELECT r.start, r.end, r.globalTid, r.correlationId, r.nameId, g.correlationId IS NOT NULL "
            "FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN (" +
                recorded +
                ") g ON g.correlationId = r.correlationId "
                "AND g.pid = " +
                std::string(kCallProcess) + " WHERE r.nameId IN (" + ids + ") ORDER BY r.start";
  auto statement = database_.prepare(sql);
  if (!statement) return statement.error();
  ApiCallRow call;
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return {};
    call.start_ns = statement->integer(0);
    call.end_ns = statement->integer(1);
    if (auto damaged = check_interval(file(), kRuntimeTable, call.start_ns, call.end_ns)) return *damaged;
    call.thread = statement->integer(2);
    call.correlation_id = statement->integer(3);
    call.kind = api_kinds_.at(statement->integer(4));
    call.has_gpu_record = statement->integer(5) != 0;
    visit(call);
  }
}

std::string NsysSqliteReader::gpu_activity_sql() const {
  std::string activities;
  const auto add = [&](bool present, std::string_view table, int kind, std::string_view name, std::string_view graph) {
    if (!present) return;
    activities += std::string(activities.empty() ? "" : " UNION ALL ") + "SELECT start, end, correlationId, " +
                  std::string(kActivityProcess) + " AS pid, " + std::to_string(kind) + " AS kind, " +
                  std::string(name) + " AS nameId, " + std::string(graph) + " AS graph FROM " + std::string(table);
  };
  const auto node = [&](std::string_view table) {
    return database_.columns(table).contains("graphNodeId") ? "graphNodeId IS NOT NULL" : "0";
  };
  add(schema_.has_kernels, kKernelTable, static_cast<int>(GpuActivityKind::kernel), "demangledName",
      node(kKernelTable));
  add(schema_.has_memcpy, kMemcpyTable, static_cast<int>(GpuActivityKind::memory_copy), "-1", node(kMemcpyTable));
  add(schema_.has_memset, kMemsetTable, static_cast<int>(GpuActivityKind::memory_set), "-1", node(kMemsetTable));
  add(schema_.has_graph_trace, kGraphTraceTable, static_cast<int>(GpuActivityKind::graph_execution), "-1", "1");
  if (activities.empty()) return {};
  if (!schema_.has_runtime_api)
    return "SELECT a.start, a.end, a.kind, a.nameId, a.graph, NULL, 0, 0, a.correlationId, a.pid FROM (" + activities +
           ") a ORDER BY a.start, a.correlationId, a.pid";
  // Only launch-class calls join, so one GPU row meets at most one runtime and one driver call
  // (duplicates are adjacent in this order and the first, the outer call, is kept).
  std::string ids;
  for (const auto& [id, kind] : api_kinds_)
    if (kind != ApiCallKind::synchronize) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  if (ids.empty()) ids = "-1";
  // Joined on (process, correlation id): ranks of one capture reuse correlation ids.
  return "SELECT a.start, a.end, a.kind, a.nameId, a.graph, r.globalTid, r.start, r.end, a.correlationId, a.pid FROM "
         "(" +
         activities + ") a LEFT JOIN (SELECT start, end, globalTid, " + std::string(kCallProcess) +
         " AS pid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE nameId IN (" + ids +
         ")) r ON r.correlationId = a.correlationId AND r.pid = a.pid "
         "ORDER BY a.start, a.correlationId, a.pid, r.start";
}

Result<void> NsysSqliteReader::for_each_gpu_activity(const std::function<void(const GpuActivityRow&)>& visit) const {
  const std::string sql = gpu_activity_sql();
  if (sql.empty()) return {};
  auto statement = database_.prepare(sql);
  if (!statement) return statement.error();
  GpuActivityRow activity;
  // start, end, kind, correlation id, process and launch start of the last row: the same activity met
  // twice differs only in its launch call (a runtime call and the driver call beneath it).
  std::optional<std::array<std::int64_t, 6>> previous;
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return {};
    const std::array<std::int64_t, 6> key{statement->integer(0), statement->integer(1), statement->integer(2),
                                          statement->integer(8), statement->integer(9), statement->integer(6)};
    const bool same_activity = previous && std::equal(key.begin(), key.begin() + 5, previous->begin());
    const bool other_launch = previous && key[5] != (*previous)[5];
    previous = key;
    if (same_activity && other_launch) continue;
    activity.start_ns = key[0];
    activity.end_ns = key[1];
    activity.kind = static_cast<GpuActivityKind>(key[2]);
    activity.name_id = statement->integer(3);
    activity.in_graph = statement->integer(4) != 0;
    activity.launch_thread = statement->optional_integer(5);
    activity.launch_start_ns = statement->integer(6);
    activity.launch_end_ns = statement->integer(7);
    if (auto damaged = check_interval(file(), activity_table(activity.kind), activity.start_ns, activity.end_ns))
      return *damaged;
    if (activity.launch_thread) {
      if (auto damaged = check_interval(file(), kRuntimeTable, activity.launch_start_ns, activity.launch_end_ns))
        return *damaged;
    }
    visit(activity);
  }
}

Result<bool> NsysSqliteReader::for_each_kernel_launch(const std::function<void(const KernelLaunchRow&)>& visit) const {
  if (!schema_.has_kernels) return false;
  const auto present = database_.columns(kKernelTable);
  for (const char* column :
       {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory"})
    if (!present.contains(column)) return false;
  // Nsight Systems 2025.3 exports mangledName; the shrunken fixtures and older exports may not.
  const bool has_mangled = present.contains("mangledName");
  auto statement = database_.prepare(
      "SELECT start, end, demangledName, gridX, gridY, gridZ, blockX, blockY, blockZ, "
      "staticSharedMemory + dynamicSharedMemory, " +
      std::string(has_mangled ? "mangledName" : "NULL") + " FROM " + std::string(kKernelTable) + " ORDER BY start");
  if (!statement) return statement.error();
  KernelLaunchRow launch;
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return true;
    launch.start_ns = statement->integer(0);
    launch.end_ns = statement->integer(1);
    launch.name_id = statement->integer(2);
    for (int i = 0; i < 3; ++i) {
      launch.grid[i] = statement->integer(3 + i);
      launch.block[i] = statement->integer(6 + i);
    }
    launch.shared_memory_bytes = statement->integer(9);
    launch.mangled_name_id = statement->is_null(10) ? -1 : statement->integer(10);
    visit(launch);
  }
}

std::string NsysSqliteReader::string_value(std::int64_t id) const {
  auto statement = database_.prepare("SELECT value FROM StringIds WHERE id = ?1");
  if (!statement) return {};
  statement->bind_integer(1, id);
  auto row = statement->step();
  return row && *row ? std::string(statement->text(0)) : std::string();
}

}  // namespace llmprof::detail
