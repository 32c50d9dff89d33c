// The store's reads and writes of review data: sampled answers, exports, review items and scores.

#include "store/review_data.h"

#include "store/store.h"

namespace stagegate::store {

Result<std::vector<SampledAnswer>> Store::ListSampledAnswers(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT a.request_id, a.condition, r.task_id, COALESCE(p.stage, ''), r.answer_text, "
      "r.tool_calls_json, r.http_status, CASE WHEN p.phase = ? THEN p.stage ELSE ? END, "
      "r.end_ns - r.sent_ns "
      "FROM answers a JOIN requests r ON r.id = a.request_id "
      "LEFT JOIN phases p ON p.id = r.phase_id WHERE a.run_id = ? ORDER BY a.request_id");
  if (!query.ok()) return query.status();
  query->Bind(1, kBaselinePhase).Bind(2, kAssistantSource).Bind(3, run_id);
  std::vector<SampledAnswer> answers;
  while (query->Step())
    answers.push_back({.request_id = query->Int(0),
                       .source = query->Text(7),
                       .condition = query->Text(1),
                       .task_id = query->Text(2),
                       .stage = query->Text(3),
                       .answer_text = query->Text(4),
                       .tool_calls_json = query->Text(5),
                       .http_status = query->OptionalInt(6),
                       .e2e_ns = query->OptionalInt(8)});
  SG_RETURN_IF_ERROR(query->status());
  return answers;
}

Status Store::AddExport(const ExportInfo& info, const std::vector<ReviewItem>& items,
                        const std::vector<Score>& scores) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> add_export = Statement::Prepare(
      *db_,
      "INSERT INTO exports (export_id, run_id, created_unix_ms, reviewers, per_item, calibration, "
      "rubric_json, scorer) VALUES (?,?,?,?,?,?,?,?)");
  if (!add_export.ok()) return add_export.status();
  add_export->Bind(1, info.export_id).Bind(2, info.run_id).Bind(3, info.created_unix_ms);
  add_export->Bind(4, info.reviewers).Bind(5, info.per_item).Bind(6, info.calibration);
  add_export->Bind(7, info.rubric_json).Bind(8, info.scorer);
  SG_RETURN_IF_ERROR(add_export->Run().WithContext("export " + info.export_id));

  Result<Statement> add_item = Statement::Prepare(
      *db_,
      "INSERT INTO review_items (item_id, export_id, run_id, request_id, reviewer, calibration) "
      "VALUES (?,?,?,?,?,?)");
  if (!add_item.ok()) return add_item.status();
  for (const ReviewItem& item : items) {
    add_item->Bind(1, item.item_id).Bind(2, info.export_id).Bind(3, info.run_id);
    add_item->Bind(4, item.request_id).Bind(5, item.reviewer);
    add_item->Bind(6, int64_t{item.calibration});
    SG_RETURN_IF_ERROR(add_item->Run().WithContext("item " + item.item_id));
  }

  Result<Statement> add_score = Statement::Prepare(
      *db_,
      "INSERT INTO scores (item_id, reviewer, criterion, value, seconds, source, imported_unix_ms) "
      "VALUES (?,?,?,?,?,?,?)");
  if (!add_score.ok()) return add_score.status();
  for (const Score& score : scores) {
    add_score->Bind(1, score.item_id).Bind(2, score.reviewer).Bind(3, score.criterion);
    add_score->Bind(4, score.value).Bind(5, score.seconds).Bind(6, score.source);
    add_score->Bind(7, score.imported_unix_ms);
    SG_RETURN_IF_ERROR(add_score->Run().WithContext("score of item " + score.item_id));
  }
  return transaction.Commit();
}

Result<std::vector<ExportInfo>> Store::ListExports(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT export_id, run_id, created_unix_ms, reviewers, per_item, calibration, rubric_json, "
      "scorer FROM exports WHERE run_id = ? ORDER BY created_unix_ms DESC, rowid DESC");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  std::vector<ExportInfo> exports;
  while (query->Step())
    exports.push_back({.export_id = query->Text(0),
                       .run_id = query->Text(1),
                       .created_unix_ms = query->Int(2),
                       .reviewers = query->Int(3),
                       .per_item = query->Int(4),
                       .calibration = query->Int(5),
                       .rubric_json = query->Text(6),
                       .scorer = query->Text(7)});
  SG_RETURN_IF_ERROR(query->status());
  return exports;
}

Result<std::vector<ReviewItem>> Store::ListReviewItems(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT i.item_id, i.export_id, i.request_id, i.reviewer, i.calibration, e.scorer "
      "FROM review_items i LEFT JOIN exports e ON e.export_id = i.export_id WHERE i.run_id = ? "
      "ORDER BY i.item_id");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  std::vector<ReviewItem> items;
  while (query->Step()) {
    ReviewItem item{.item_id = query->Text(0),
                    .export_id = query->Text(1),
                    .request_id = query->Int(2),
                    .reviewer = query->Text(3),
                    .calibration = query->Int(4) != 0};
    if (!query->IsNull(5)) item.scorer = query->Text(5);
    items.push_back(std::move(item));
  }
  SG_RETURN_IF_ERROR(query->status());
  return items;
}

Status Store::AddScores(const std::vector<Score>& scores) {
  Transaction transaction(*db_);
  SG_RETURN_IF_ERROR(transaction.begin_status());
  Result<Statement> insert = Statement::Prepare(
      *db_,
      "INSERT OR REPLACE INTO scores (item_id, reviewer, criterion, value, seconds, source, "
      "imported_unix_ms) VALUES (?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  for (const Score& score : scores) {
    insert->Bind(1, score.item_id).Bind(2, score.reviewer).Bind(3, score.criterion);
    insert->Bind(4, score.value).Bind(5, score.seconds).Bind(6, score.source);
    insert->Bind(7, score.imported_unix_ms);
    SG_RETURN_IF_ERROR(insert->Run().WithContext("score of item " + score.item_id));
  }
  return transaction.Commit();
}

Result<std::optional<int64_t>> Store::FindScore(const std::string& item_id,
                                                const std::string& reviewer,
                                                const std::string& criterion) {
  Result<Statement> query = Statement::Prepare(
      *db_, "SELECT value FROM scores WHERE item_id = ? AND reviewer = ? AND criterion = ?");
  if (!query.ok()) return query.status();
  query->Bind(1, item_id).Bind(2, reviewer).Bind(3, criterion);
  if (query->Step()) return std::optional<int64_t>(query->Int(0));
  SG_RETURN_IF_ERROR(query->status());
  return std::optional<int64_t>();
}

Result<std::vector<StoredScore>> Store::ListScores(const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT s.item_id, s.reviewer, s.criterion, s.value, MAX(s.seconds) OVER (PARTITION BY "
      "s.item_id, s.reviewer) FROM scores s JOIN review_items i ON i.item_id = s.item_id "
      "WHERE i.run_id = ? ORDER BY s.item_id, s.reviewer, s.criterion");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id);
  std::vector<StoredScore> scores;
  while (query->Step())
    scores.push_back({.item_id = query->Text(0),
                      .reviewer = query->Text(1),
                      .criterion = query->Text(2),
                      .value = query->Int(3),
                      .item_seconds = query->OptionalReal(4)});
  SG_RETURN_IF_ERROR(query->status());
  return scores;
}

Result<std::map<std::string, std::map<int64_t, int64_t>>> Store::ScoreLevelCounts(
    const std::string& run_id) {
  Result<Statement> query = Statement::Prepare(
      *db_,
      "SELECT s.criterion, s.value, COUNT(*) FROM scores s JOIN review_items i ON i.item_id = "
      "s.item_id JOIN exports e ON e.export_id = i.export_id WHERE i.run_id = ? AND e.scorer = ? "
      "GROUP BY s.criterion, s.value");
  if (!query.ok()) return query.status();
  query->Bind(1, run_id).Bind(2, kReviewersScorer);
  std::map<std::string, std::map<int64_t, int64_t>> counts;
  while (query->Step())
    counts[query->Text(0)][query->Int(1)] = query->Int(2);
  SG_RETURN_IF_ERROR(query->status());
  return counts;
}

}  // namespace stagegate::store
