// restrict_export_to_window: which rows a window keeps, table by table, decided by the columns the table has
// (nsys 2022.4 and 2025.3.1 exports name them alike: `start` for events, `timestamp` for samples,
// `correlationId` with `globalTid` on API calls and `globalPid` on the GPU work they launched).
#include "parse/nsys_sqlite_window.hpp"

#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "parse/nsys_sqlite.hpp"
#include "parse/sqlite_database.hpp"

namespace llmprof::detail {
namespace fs = std::filesystem;
namespace {

// nsys's globalTid carries the process in its upper bits: globalPid = globalTid with the low 24 (thread) bits
// cleared (checked on the recorded zoo exports: every kernel's globalPid matches its launch call's globalTid so).
constexpr const char* kLaunchingProcess = "((globalTid / 16777216) * 16777216)";

// API tables: calls that launch GPU work; what they launched carries their correlation id.
bool is_call_table(const std::string& table) {
  return table == "CUPTI_ACTIVITY_KIND_RUNTIME" || table == "CUPTI_ACTIVITY_KIND_DRIVER";
}

Result<std::vector<std::string>> table_names(const SqliteDatabase& database) {
  auto statement = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
  if (!statement) return statement.error();
  std::vector<std::string> names;
  auto row = statement->step();
  for (; row && *row; row = statement->step()) names.emplace_back(statement->text(0));
  if (!row) return row.error();
  return names;
}

Result<std::int64_t> count_changes(const SqliteDatabase& database) {
  auto statement = database.prepare("SELECT changes()");
  if (!statement) return statement.error();
  auto row = statement->step();
  if (!row) return row.error();
  return *row ? statement->integer(0) : 0;
}

std::string quoted(const std::string& table) { return "\"" + table + "\""; }

// The launch calls of the whole export and those inside the window, by (process, correlation id): GPU work keeps to
// its call, so a kernel launched inside the window and running after its end stays, and one launched before goes.
Result<void> collect_calls(const SqliteDatabase& database, const std::vector<std::string>& tables,
                           const std::string& inside) {
  if (auto made = database.execute("CREATE TEMP TABLE all_calls(pid INTEGER, correlation INTEGER, kept INTEGER, "
                                   "PRIMARY KEY (pid, correlation)) WITHOUT ROWID");
      !made)
    return made.error();
  for (const auto& table : tables) {
    if (!is_call_table(table)) continue;
    const auto columns = database.columns(table);
    if (!columns.contains("correlationId") || !columns.contains("globalTid") || !columns.contains("start")) continue;
    // WHERE true: SQLite's upsert after INSERT ... SELECT needs it to parse (sqlite.org/lang_upsert.html).
    const std::string insert = "INSERT INTO all_calls SELECT " + std::string(kLaunchingProcess) + ", correlationId, MAX(" +
                               inside + ") FROM " + quoted(table) +
                               " WHERE true GROUP BY 1, 2 ON CONFLICT (pid, correlation) DO UPDATE SET kept = "
                               "MAX(kept, excluded.kept)";
    if (auto done = database.execute(insert); !done) return done.error();
  }
  return {};
}

// The DELETE that restricts one table, or nothing for a table without time.
std::string restriction(const SqliteDatabase& database, const std::string& table, const std::string& outside) {
  const auto columns = database.columns(table);
  if (table == "NVTX_EVENTS" && columns.contains("eventType")) {
    // Ranges only: a domain's creation and a string's registration happen once, before any window, and name what
    // the window's ranges refer to.
    return "DELETE FROM NVTX_EVENTS WHERE eventType IN (" + std::to_string(kNvtxPushPopRange) + ", " +
           std::to_string(kNvtxStartEndRange) + ", " + std::to_string(kNvtxtPushPopRange) + ", " +
           std::to_string(kNvtxtStartEndRange) + ") AND " + outside;
  }
  if (columns.contains("timestamp") && !columns.contains("start"))
    return "DELETE FROM " + quoted(table) + " WHERE timestamp < ?1 OR timestamp > ?2";
  if (!columns.contains("start")) return {};
  if (!is_call_table(table) && columns.contains("correlationId") && columns.contains("globalPid")) {
    return "DELETE FROM " + quoted(table) +
           " WHERE CASE (SELECT kept FROM all_calls c WHERE c.pid = globalPid AND c.correlation = correlationId) "
           "WHEN 1 THEN 0 WHEN 0 THEN 1 ELSE " + outside + " END";
  }
  return "DELETE FROM " + quoted(table) + " WHERE " + outside;
}

Result<RestrictedExport> restrict_copy(const fs::path& copy, ExportWindow window) {
  auto database = SqliteDatabase::open_writable(copy);
  if (!database) return database.error();
  auto tables = table_names(*database);
  if (!tables) return tables.error();
  if (auto begun = database->execute("BEGIN"); !begun) return begun.error();
  const std::string bounds = std::to_string(window.start_ns) + " AND " + std::to_string(window.end_ns);
  if (auto calls = collect_calls(*database, *tables, "start BETWEEN " + bounds); !calls) return calls.error();
  RestrictedExport restricted;
  const std::string outside = "(start < ?1 OR start > ?2)";
  for (const auto& table : *tables) {
    const std::string sql = restriction(*database, table, outside);
    if (sql.empty()) continue;
    auto statement = database->prepare(sql);
    if (!statement) return statement.error();
    if (sql.find("?1") != std::string::npos) {
      statement->bind_integer(1, window.start_ns);
      statement->bind_integer(2, window.end_ns);
    }
    if (auto stepped = statement->step(); !stepped) return stepped.error();
    auto changed = count_changes(*database);
    if (!changed) return changed.error();
    restricted.rows_removed += *changed;
  }
  if (auto committed = database->execute("COMMIT"); !committed) return committed.error();
  if (database->has_table("CUPTI_ACTIVITY_KIND_KERNEL")) {
    auto statement = database->prepare("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    if (!statement) return statement.error();
    auto row = statement->step();
    if (!row) return row.error();
    restricted.kernels_kept = *row ? statement->integer(0) : 0;
  }
  return restricted;
}

}  // namespace

Result<RestrictedExport> restrict_export_to_window(const fs::path& source, const fs::path& destination,
                                                   ExportWindow window) {
  if (window.end_ns < window.start_ns)
    return make_error(ErrorCode::invalid_argument,
                      "the window to restrict " + source.string() + " to ends (" + std::to_string(window.end_ns) +
                          " ns) before it starts (" + std::to_string(window.start_ns) + " ns)",
                      "pass a window whose end is not before its start", source.string());
  if (auto readable = SqliteDatabase::open_read_only(source); !readable) return readable.error();
  const fs::path partial = destination.string() + ".partial";
  std::error_code error;
  fs::copy_file(source, partial, fs::copy_options::overwrite_existing, error);
  if (error)
    return make_error(ErrorCode::io_error, "could not copy " + source.string() + " to " + partial.string() + ": " +
                                               error.message(),
                      "check free space and permissions in " + destination.parent_path().string(), partial.string());
  auto restricted = restrict_copy(partial, window);
  if (!restricted) {
    fs::remove(partial, error);
    return restricted.error();
  }
  fs::rename(partial, destination, error);
  if (error)
    return make_error(ErrorCode::io_error, "could not rename " + partial.string() + " to " + destination.string() +
                                               ": " + error.message(),
                      "check permissions in " + destination.parent_path().string(), destination.string());
  return restricted;
}

}  // namespace llmprof::detail
