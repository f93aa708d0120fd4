// RAII over sqlite3/sqlite3_stmt; every failure becomes an Error naming the database file.
#include "parse/sqlite_database.hpp"

#include <sqlite3.h>

#include <system_error>

namespace llmprof::detail {
namespace {

Error sqlite_error(sqlite3* database, const std::string& file, std::string_view what) {
  const char* reason = database != nullptr ? sqlite3_errmsg(database) : "out of memory";
  ErrorCode code = ErrorCode::parse_error;
  const int status = database != nullptr ? sqlite3_errcode(database) : SQLITE_NOMEM;
  if (status == SQLITE_CANTOPEN || status == SQLITE_IOERR || status == SQLITE_PERM) code = ErrorCode::io_error;
  return make_error(code, std::string(what) + " in " + file + ": " + reason,
                    status == SQLITE_NOTADB || status == SQLITE_CORRUPT
                        ? "the file is not a complete SQLite database; re-export it with `nsys export --type sqlite`"
                        : "",
                    file);
}

}  // namespace

void SqliteStatement::Finalizer::operator()(sqlite3_stmt* statement) const noexcept { sqlite3_finalize(statement); }
void SqliteDatabase::Closer::operator()(sqlite3* database) const noexcept { sqlite3_close_v2(database); }

Result<bool> SqliteStatement::step() {
  const int status = sqlite3_step(statement_.get());
  if (status == SQLITE_ROW) return true;
  if (status == SQLITE_DONE) return false;
  return sqlite_error(sqlite3_db_handle(statement_.get()), file_, "reading rows");
}

Result<void> SqliteStatement::reset() {
  if (sqlite3_reset(statement_.get()) != SQLITE_OK)
    return sqlite_error(sqlite3_db_handle(statement_.get()), file_, "resetting a query");
  return {};
}

void SqliteStatement::bind_integer(int index, std::int64_t value) {
  sqlite3_bind_int64(statement_.get(), index, value);
}

void SqliteStatement::bind_text(int index, std::string_view value) {
  sqlite3_bind_text(statement_.get(), index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}

bool SqliteStatement::is_null(int column) const { return sqlite3_column_type(statement_.get(), column) == SQLITE_NULL; }

std::int64_t SqliteStatement::integer(int column) const { return sqlite3_column_int64(statement_.get(), column); }

std::optional<std::int64_t> SqliteStatement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

double SqliteStatement::real(int column) const { return sqlite3_column_double(statement_.get(), column); }

std::string_view SqliteStatement::text(int column) const {
  const auto* bytes = sqlite3_column_text(statement_.get(), column);
  if (bytes == nullptr) return {};
  return {reinterpret_cast<const char*>(bytes),
          static_cast<std::size_t>(sqlite3_column_bytes(statement_.get(), column))};
}

Result<SqliteDatabase> SqliteDatabase::open(const std::filesystem::path& file, int flags) {
  sqlite3* raw = nullptr;
  const int status = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  SqliteDatabase database(raw, file);  // closes `raw` on every path below
  if (status != SQLITE_OK) return sqlite_error(raw, file.string(), "cannot open the SQLite database");
  // Reading the schema forces SQLite to read the header: a truncated or foreign file fails here.
  if (auto probe = database.execute("SELECT count(*) FROM sqlite_master"); !probe) return probe.error();
  return database;
}

Result<SqliteDatabase> SqliteDatabase::open_read_only(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    return make_error(ErrorCode::not_found, "no SQLite export at " + file.string(),
                      "export the report with `nsys export --type sqlite -o FILE.sqlite FILE.nsys-rep`", file.string());
  return open(file, SQLITE_OPEN_READONLY);
}

Result<SqliteDatabase> SqliteDatabase::open_writable(const std::filesystem::path& file) {
  return open(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
}

Result<SqliteStatement> SqliteDatabase::prepare(std::string_view sql) const {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(database_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK)
    return sqlite_error(database_.get(), file_.string(), "preparing a query");
  return SqliteStatement(raw, file_.string());
}

Result<void> SqliteDatabase::execute(std::string_view sql) const {
  // sqlite3_exec runs every statement of `sql`, which prepare() would stop after the first of.
  const std::string text(sql);
  if (sqlite3_exec(database_.get(), text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    return sqlite_error(database_.get(), file_.string(), "running a statement");
  return {};
}

bool SqliteDatabase::has_table(std::string_view table) const {
  auto statement = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1");
  if (!statement) return false;
  statement->bind_text(1, table);
  auto row = statement->step();
  return row && *row;
}

std::set<std::string> SqliteDatabase::columns(std::string_view table) const {
  std::set<std::string> names;
  auto statement = prepare("SELECT name FROM pragma_table_info(?1)");
  if (!statement) return names;
  statement->bind_text(1, table);
  for (auto row = statement->step(); row && *row; row = statement->step()) names.emplace(statement->text(0));
  return names;
}

}  // namespace llmprof::detail
