#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stagegate::store {

/// An open SQLite connection. Owns the sqlite3 handle; closes it on destruction. One thread at a
/// time (SQLite's "multi-thread" mode): the store has a single writer.
class Database {
 public:
  /// Opens the database file at `path`, creating it when missing unless `create` is false.
  static Result<std::unique_ptr<Database>> Open(const std::string& path, bool create = true);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements that return no rows.
  Status Exec(const std::string& sql);
  sqlite3* handle() { return db_; }
  /// The last error of this connection, with `context` before it.
  Status Error(std::string_view context) const;
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  /// Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const { return sqlite3_changes(db_); }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

/// A prepared statement. Owns the sqlite3_stmt; finalises it on destruction. Must not outlive its
/// Database. Bind indexes count from 1, column indexes from 0, as in SQLite.
class Statement {
 public:
  static Result<Statement> Prepare(Database& db, const std::string& sql);
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& BindNull(int index);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  /// Advances to the next row: true when there is a row, false when done. A failure is kept and
  /// returned by status(); Step() then returns false.
  bool Step();
  /// Runs a statement that returns no rows, then resets it for reuse with new bindings.
  Status Run();
  Status status() const { return status_; }
  void Reset();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;
  std::optional<int64_t> OptionalInt(int column) const;
  std::optional<double> OptionalReal(int column) const;

 private:
  Statement(Database& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  Database* db_;
  sqlite3_stmt* stmt_;
  Status status_;
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless Commit() succeeded, so an
/// early return or an error leaves the store as it was.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const Status& begin_status() const { return begin_; }
  Status Commit();

 private:
  Database& db_;
  Status begin_;
  bool open_ = false;
};

}  // namespace stagegate::store
