// A small RAII wrapper over the SQLite C API, for reading the nsys SQLite export.
//
// Read-only by default: the export belongs to the run directory and must never change under us.
// Rows are stepped one at a time (no result sets in memory), so a query over ten million kernel
// rows costs what SQLite's page cache and sorter cost, not the row count.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "llmprof/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace llmprof::detail {

class SqliteStatement {
 public:
  // Advances to the next row: true with a row, false when done, an Error naming the file otherwise.
  Result<bool> step();
  Result<void> reset();
  void bind_integer(int index, std::int64_t value);  // 1-based, as in SQLite
  void bind_text(int index, std::string_view value);

  bool is_null(int column) const;
  std::int64_t integer(int column) const;  // NULL reads as 0: check is_null when it matters
  std::optional<std::int64_t> optional_integer(int column) const;
  double real(int column) const;
  // Valid until the next step()/reset(): copy it to keep it.
  std::string_view text(int column) const;

 private:
  friend class SqliteDatabase;
  struct Finalizer {
    void operator()(sqlite3_stmt* statement) const noexcept;
  };
  SqliteStatement(sqlite3_stmt* statement, std::string file) : statement_(statement), file_(std::move(file)) {}
  std::unique_ptr<sqlite3_stmt, Finalizer> statement_;
  std::string file_;  // for error messages
};

class SqliteDatabase {
 public:
  // Opens an existing file read-only and checks that it is a SQLite database (a truncated or foreign
  // file fails here, with the file named, rather than on the first query).
  static Result<SqliteDatabase> open_read_only(const std::filesystem::path& file);
  // Opens (creating when missing) a writable database: for tools and benchmarks that build exports.
  static Result<SqliteDatabase> open_writable(const std::filesystem::path& file);

  Result<SqliteStatement> prepare(std::string_view sql) const;
  Result<void> execute(std::string_view sql) const;  // statements whose rows are not needed (DDL, INSERT ...)

  bool has_table(std::string_view table) const;
  std::set<std::string> columns(std::string_view table) const;  // empty when the table is absent
  const std::filesystem::path& file() const { return file_; }

 private:
  struct Closer {
    void operator()(sqlite3* database) const noexcept;
  };
  SqliteDatabase(sqlite3* database, std::filesystem::path file) : database_(database), file_(std::move(file)) {}
  static Result<SqliteDatabase> open(const std::filesystem::path& file, int flags);
  std::unique_ptr<sqlite3, Closer> database_;
  std::filesystem::path file_;
};

}  // namespace llmprof::detail
