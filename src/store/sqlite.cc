#include "store/sqlite.h"

namespace stagegate::store {

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::StoreError(path + ": " + message);
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Database>(new Database(db));
}

Database::~Database() {
  sqlite3_close(db_);
}

Status Database::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return Status::Ok();
  std::string text = message ? message : "unknown error";
  sqlite3_free(message);
  return Status::StoreError(text);
}

Status Database::Error(std::string_view context) const {
  return Status::StoreError(std::string(context) + ": " + sqlite3_errmsg(db_));
}

Result<Statement> Statement::Prepare(Database& db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
    return db.Error("prepare");
  return Statement(db, stmt);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status_ = db_->Error("step");
  return false;
}

Status Statement::Run() {
  Step();
  Status result = status_;
  Reset();
  return result;
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  status_ = Status::Ok();
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::Int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double Statement::Real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  return text ? std::string(reinterpret_cast<const char*>(text), size) : std::string();
}

std::optional<int64_t> Statement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

std::optional<double> Statement::OptionalReal(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Real(column);
}

Transaction::Transaction(Database& db) : db_(db) {
  begin_ = db_.Exec("BEGIN IMMEDIATE");
  open_ = begin_.ok();
}

Transaction::~Transaction() {
  if (open_) (void)db_.Exec("ROLLBACK");
}

Status Transaction::Commit() {
  if (!open_) return begin_.ok() ? Status::Internal("transaction already finished") : begin_;
  Status status = db_.Exec("COMMIT");
  if (status.ok()) open_ = false;
  return status;
}

}  // namespace stagegate::store
