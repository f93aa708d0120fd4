// The reader's queries behind nsys_stats_from_sqlite: grouped durations, NVTX ranges as `nsys stats` names
// them, and GPU operations joined with their launching calls. The rules follow the report scripts of
// nsys 2022.4 (reports/*.py), which the 2025.3 CSVs of tests/data/nsys-sqlite-stats/ agree with.
#include <map>
#include <utility>

#include "parse/nsys_sqlite.hpp"

namespace llmprof::detail {
namespace {

// A query fails to prepare when a table lacks a column these reports read (a foreign or damaged export).
Error with_export_hint(Error error) {
  if (error.hint.empty())
    error.hint = "re-export the report with `nsys export --type sqlite` (Nsight Systems 2022.4 or later)";
  return error;
}

struct GroupQuery {
  bool present = false;
  std::string_view table;
  std::string sql;
};

GroupQuery group_query(const NsysSqliteSchema& schema, DurationGroups groups) {
  // Ordered by id, not by text: the names are looked up per row but sorted as integers.
  switch (groups) {
    case DurationGroups::kernel_names:
      return {schema.has_kernels, kKernelTable,
              "SELECT coalesce(s.value, ''), k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
              "LEFT JOIN StringIds s ON s.id = k.demangledName ORDER BY k.demangledName"};
    case DurationGroups::api_functions:
      return {schema.has_runtime_api, kRuntimeTable,
              "SELECT coalesce(s.value, ''), r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
              "LEFT JOIN StringIds s ON s.id = r.nameId ORDER BY r.nameId"};
    case DurationGroups::copy_kinds:
      return {schema.has_memcpy, kMemcpyTable,
              "SELECT CAST(copyKind AS TEXT), start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY copyKind"};
    case DurationGroups::memory_sets:
      return {schema.has_memset, kMemsetTable, "SELECT '', start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"};
  }
  return {};
}

}  // namespace

Result<void> NsysSqliteReader::for_each_duration_group(
    DurationGroups groups,
    const std::function<void(std::string_view key, std::vector<std::int64_t>& durations_ns)>& visit) const {
  const GroupQuery query = group_query(schema_, groups);
  if (!query.present) return {};
  auto statement = database_.prepare(query.sql);
  if (!statement) return with_export_hint(statement.error());
  std::string key;
  std::vector<std::int64_t> durations;
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::int64_t start_ns = statement->integer(1);
    const std::int64_t end_ns = statement->integer(2);
    if (auto damaged = check_nsys_interval(file(), query.table, start_ns, end_ns)) return *damaged;
    if (const auto row_key = statement->text(0); durations.empty() || row_key != key) {
      if (!durations.empty()) visit(key, durations);
      durations.clear();
      key = std::string(row_key);
    }
    durations.push_back(end_ns - start_ns);
  }
  if (!durations.empty()) visit(key, durations);
  return {};
}

Result<std::vector<NvtxRangeInstance>> NsysSqliteReader::read_nvtx_range_instances() const {
  std::vector<NvtxRangeInstance> ranges;
  if (!schema_.has_nvtx) return ranges;
  // nsys names a range "domain:name" with the text of the domain's first NvtxDomainCreate event in the
  // same process; a domain never created by name leaves the name bare (reports/nvtxsum.py, 2022.4).
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains;
  auto domain_rows = database_.prepare("SELECT globalTid >> 24, domainId, text FROM NVTX_EVENTS WHERE eventType = " +
                                       std::to_string(kNvtxDomainCreate) + " AND text IS NOT NULL ORDER BY start");
  if (!domain_rows) return with_export_hint(domain_rows.error());
  for (;;) {
    auto row = domain_rows->step();
    if (!row) return row.error();
    if (!*row) break;
    domains.try_emplace({domain_rows->integer(0), domain_rows->integer(1)}, std::string(domain_rows->text(2)));
  }
  // An unclosed range ends at the last NVTX timestamp of the export, as nsys stats ends it.
  auto statement = database_.prepare(
      "SELECT n.rowid, n.start, coalesce(n.end, (SELECT max(max(start), coalesce(max(end), 0)) FROM NVTX_EVENTS)), "
      "n.globalTid, n.eventType, coalesce(s.value, n.text, ''), coalesce(n.domainId, 0), n.endGlobalTid IS NULL "
      "FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (" +
      std::to_string(kNvtxPushPopRange) + "," + std::to_string(kNvtxStartEndRange) + "," +
      std::to_string(kNvtxtPushPopRange) + "," + std::to_string(kNvtxtStartEndRange) + ") ORDER BY n.rowid");
  if (!statement) return with_export_hint(statement.error());
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return ranges;
    NvtxRangeInstance range;
    range.id = statement->integer(0);
    range.start_ns = statement->integer(1);
    range.end_ns = statement->integer(2);
    if (auto damaged = check_nsys_interval(file(), "NVTX_EVENTS", range.start_ns, range.end_ns)) return *damaged;
    range.thread = statement->integer(3);
    const auto type = statement->integer(4);
    range.push_pop = type == kNvtxPushPopRange || type == kNvtxtPushPopRange;
    range.range.name = std::string(statement->text(5));
    if (const auto domain_id = statement->integer(6); domain_id != 0) {
      if (auto found = domains.find({range.thread >> 24, domain_id}); found != domains.end())
        range.range.domain = found->second;
    }
    range.ends_on_start_thread = statement->integer(7) != 0;
    ranges.push_back(std::move(range));
  }
}

Result<void> NsysSqliteReader::for_each_launched_gpu_operation(
    bool kernels_only, const std::function<void(const LaunchedGpuOperation&)>& visit) const {
  std::string operations;
  const auto add = [&](bool present, std::string_view table, GpuActivityKind kind, std::string_view name) {
    if (!present) return;
    operations += std::string(operations.empty() ? "" : " UNION ALL ") + "SELECT rowid AS id, " +
                  std::to_string(static_cast<int>(kind)) + " AS kind, start, end, correlationId, globalPid, " +
                  std::string(name) + " AS nameId FROM " + std::string(table);
  };
  add(schema_.has_kernels, kKernelTable, GpuActivityKind::kernel, "demangledName");
  add(schema_.has_memcpy && !kernels_only, kMemcpyTable, GpuActivityKind::memory_copy, "-1");
  add(schema_.has_memset && !kernels_only, kMemsetTable, GpuActivityKind::memory_set, "-1");
  if (operations.empty() || !schema_.has_runtime_api) return {};
  // Every call of the operation's process with its correlation id, as the report scripts join them.
  auto statement = database_.prepare(
      "SELECT a.id, a.kind, a.start, a.end, a.correlationId, a.nameId, r.globalTid, r.start, r.end FROM (" +
      operations +
      ") a LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = a.correlationId "
      "AND (r.globalTid >> 24) = (a.globalPid >> 24) ORDER BY r.globalTid, r.start, a.kind, a.id");
  if (!statement) return with_export_hint(statement.error());
  // Row loop like nsys_sqlite.cpp's, over other columns (the duplicates tool pairs the two by shape).
  LaunchedGpuOperation operation;
  for (;;) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return {};
    operation.row_id = statement->integer(0);
    operation.kind = static_cast<GpuActivityKind>(statement->integer(1));
    operation.start_ns = statement->integer(2);
    operation.end_ns = statement->integer(3);
    if (auto damaged = check_nsys_interval(file(), "a GPU activity table", operation.start_ns, operation.end_ns))
      return *damaged;
    operation.correlation_id = statement->integer(4);
    operation.name_id = statement->integer(5);
    operation.call_thread = statement->optional_integer(6);
    operation.call_start_ns = statement->integer(7);
    operation.call_end_ns = statement->integer(8);
    if (operation.call_thread) {
      if (auto damaged = check_nsys_interval(file(), kRuntimeTable, operation.call_start_ns, operation.call_end_ns))
        return *damaged;
    }
    visit(operation);
  }
}

}  // namespace llmprof::detail
