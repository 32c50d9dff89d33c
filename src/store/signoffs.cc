// The store's reads and writes of sign-offs: the owners' decisions on a run's conditions.

#include "store/store.h"

namespace stagegate::store {

Status Store::AddSignoff(const Signoff& signoff) {
  Result<Statement> add = Statement::Prepare(
      *db_,
      "INSERT INTO signoffs (run_id, condition, signed_by, decision, note, evidence, "
      "signed_unix_ms) VALUES (?,?,?,?,?,?,?)");
  if (!add.ok()) return add.status();
  add->Bind(1, signoff.run_id).Bind(2, signoff.condition).Bind(3, signoff.signed_by);
  add->Bind(4, signoff.decision).Bind(5, signoff.note).Bind(6, signoff.evidence);
  add->Bind(7, signoff.signed_unix_ms);
  return add->Run().WithContext("sign-off of run " + signoff.run_id);
}

Result<std::vector<Signoff>> Store::ListSignoffs(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT id, condition, signed_by, decision, note, evidence, signed_unix_ms FROM signoffs "
      "WHERE run_id = ? ORDER BY id");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  std::vector<Signoff> signoffs;
  while (query->Step())
    signoffs.push_back({.id = query->Int(0),
                        .run_id = run_id,
                        .condition = query->Text(1),
                        .signed_by = query->Text(2),
                        .decision = query->Text(3),
                        .note = query->Text(4),
                        .evidence = query->Text(5),
                        .signed_unix_ms = query->Int(6)});
  SG_RETURN_IF_ERROR(query->status());
  return signoffs;
}

}  // namespace stagegate::store
