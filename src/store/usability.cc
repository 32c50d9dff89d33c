// The store's reads and writes of reviewers' usability judgements: usable as it is, after
// correction (with the corrected text and the time it took), or not at all.

#include "store/store.h"

namespace stagegate::store {
namespace {

constexpr char kColumns[] =
    "u.item_id, u.reviewer, u.usability, u.corrected_text, u.correction_seconds, "
    "u.imported_unix_ms";

Usability ReadUsability(const Statement& row) {
  Usability u{.item_id = row.Text(0), .reviewer = row.Text(1), .usability = row.Text(2)};
  if (!row.IsNull(3)) u.corrected_text = row.Text(3);
  u.correction_seconds = row.OptionalReal(4);
  u.imported_unix_ms = row.Int(5);
  return u;
}

}  // namespace

Status Store::AddUsability(const std::vector<Usability>& judgements) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT OR REPLACE INTO usability (item_id, reviewer, usability, corrected_text, "
      "correction_seconds, imported_unix_ms) VALUES (?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  for (const Usability& u : judgements) {
    insert->Bind(1, u.item_id).Bind(2, u.reviewer).Bind(3, u.usability);
    insert->Bind(4, u.corrected_text).Bind(5, u.correction_seconds).Bind(6, u.imported_unix_ms);
    SG_RETURN_IF_ERROR(insert->Run().WithContext("usability of item " + u.item_id));
  }
  return transaction.Commit();
}

Result<std::optional<Usability>> Store::FindUsability(const std::string& item_id,
                                                      const std::string& reviewer) {
  Result<Statement> query =
      Statement::Prepare(*db_, std::string("SELECT ") + kColumns +
                                   " FROM usability u WHERE u.item_id = ? AND u.reviewer = ?");
  if (!query.ok()) return query.status();
  query->Bind(1, item_id).Bind(2, reviewer);
  if (query->Step()) return std::optional<Usability>(ReadUsability(*query));
  SG_RETURN_IF_ERROR(query->status());
  return std::optional<Usability>();
}

Result<std::vector<Usability>> Store::ListUsability(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_, std::string("SELECT ") + kColumns +
                " FROM usability u JOIN review_items i ON i.item_id = u.item_id WHERE i.run_id = ? "
                "ORDER BY u.item_id, u.reviewer");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  std::vector<Usability> judgements;
  while (query->Step())
    judgements.push_back(ReadUsability(*query));
  SG_RETURN_IF_ERROR(query->status());
  return judgements;
}

}  // namespace stagegate::store
