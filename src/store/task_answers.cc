// The store's read of the answers the per-task gate rules judge each task by.

#include "store/store.h"

namespace stagegate::store {

Result<std::vector<TaskAnswer>> Store::ListTaskAnswers(const std::string& run_id) {
  // The phases answers were sampled from hold every answer a task got there, sampled or not; a
  // phase a resumed run measured again is no longer read.
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT r.id, r.task_id, p.stage, p.at_rest, r.trace_id, r.outcome, r.answer_text, "
      "r.tool_calls_json, r.http_status FROM requests r JOIN phases p ON p.id = r.phase_id "
      "WHERE r.run_id = ? AND p.status != 'superseded' AND p.phase != 'baseline' "
      "AND COALESCE(r.turn, 0) = 0 "
      "AND r.outcome IN ('ok', 'denied') AND r.phase_id IN (SELECT s.phase_id FROM answers a "
      "JOIN requests s ON s.id = a.request_id WHERE a.run_id = ?) ORDER BY r.id");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, run_id);
  std::vector<TaskAnswer> answers;
  while (query->Step())
    answers.push_back({.request_id = query->Int(0),
                       .task_id = query->Text(1),
                       .stage = query->Text(2),
                       .condition = query->Int(3) ? "at_rest" : "under_load",
                       .trace_id = query->Text(4),
                       .outcome = query->Text(5),
                       .answer_text = query->Text(6),
                       .tool_calls_json = query->Text(7),
                       .http_status = query->OptionalInt(8)});
  SG_RETURN_IF_ERROR(query->status());
  return answers;
}

}  // namespace stagegate::store
