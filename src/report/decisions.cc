#include "report/decisions.h"

#include "base/clock.h"
#include "base/hashing.h"
#include "store/findings.h"

namespace stagegate::report {
namespace {

using json = nlohmann::json;

std::string When(int64_t unix_ms) {
  return FormatUtc(unix_ms / 1000, "%Y-%m-%d %H:%M:%SZ");
}

// "accepted by Dana on 2026-12-02 10:00:00Z: note".
std::string Said(const store::Signoff& s) {
  return std::string(s.decision == "accept" ? "accepted" : "rejected") + " by " + s.signed_by +
         " on " + When(s.signed_unix_ms) + (s.note.empty() ? "" : ": " + s.note);
}

}  // namespace

std::optional<Condition> ConditionNamed(std::string_view name) {
  for (Condition condition : kConditions)
    if (Name(condition) == name) return condition;
  return std::nullopt;
}

Result<std::string> ConditionEvidence(store::Store& store, const store::RunInfo& run,
                                      Condition condition) {
  json evidence = {"stagegate evidence 1", run.id, Name(condition), run.scenario_json};
  if (condition != Condition::kQuality) {
    evidence.push_back(run.findings_json);
  } else {
    Result<std::vector<store::ExportInfo>> exports = store.ListExports(run.id);
    if (!exports.ok()) return exports.status();
    for (const store::ExportInfo& e : *exports)
      evidence.push_back({e.export_id, e.scorer, e.rubric_json});
    Result<std::vector<store::StoredScore>> scores = store.ListScores(run.id);
    if (!scores.ok()) return scores.status();
    for (const store::StoredScore& s : *scores)
      evidence.push_back({s.item_id, s.reviewer, s.criterion, s.value});
  }
  return Sha256Hex(evidence.dump(-1, ' ', false, json::error_handler_t::replace));
}

Status AddDecisions(store::Store& store, ReportModel& m) {
  const store::StoredScenario scenario = store::ParseScenario(m.run.scenario_json);
  m.require_signoff = scenario.require_signoff;
  Result<std::vector<store::Signoff>> signoffs = store.ListSignoffs(m.run.id);
  if (!signoffs.ok()) return signoffs.status();
  for (Condition condition : kConditions) {
    const std::string name(Name(condition));
    Decision d{.condition = condition};
    if (auto owner = scenario.owners.find(name); owner != scenario.owners.end())
      d.owner = owner->second;
    for (const store::Signoff& s : *signoffs)
      if (s.condition == name) d.latest = s;
    if (d.owner.empty() && !d.latest) continue;
    Result<std::string> evidence = ConditionEvidence(store, m.run, condition);
    if (!evidence.ok()) return evidence.status();
    d.evidence = *evidence;
    d.stale = d.latest && d.latest->evidence != d.evidence;
    const bool required = m.require_signoff && !d.owner.empty();
    const std::string who = d.owner.empty() ? "the owner" : d.owner;
    const std::string changed = d.stale ? " (on evidence that has changed since)" : "";
    Check check{.condition = condition, .name = "sign-off by " + who};
    if (d.latest && d.latest->decision == "reject") {
      check.status = CheckStatus::kFail;
      check.detail = Said(*d.latest) + changed;
    } else if (d.latest && !d.stale) {
      check.status = CheckStatus::kPass;
      check.detail = Said(*d.latest);
    } else if (required) {
      check.status = CheckStatus::kPending;
      check.detail = d.latest ? Said(*d.latest) + changed + ": to be signed again"
                              : "awaiting the decision: stagegate signoff " + m.run.id +
                                    " --condition " + name;
    }
    if (!check.detail.empty()) m.checks.push_back(std::move(check));
    m.decisions.push_back(std::move(d));
  }
  return Status::Ok();
}

std::vector<std::vector<std::string>> DecisionTable(const ReportModel& m) {
  std::vector<std::vector<std::string>> table = {
      {"condition", "owner", "decision", "by", "when", "evidence", "note"}};
  for (const Decision& d : m.decisions) {
    const store::Signoff* s = d.latest ? &*d.latest : nullptr;
    table.push_back({std::string(Name(d.condition)), d.owner.empty() ? "(not named)" : d.owner,
                     s ? (s->decision == "accept" ? "accepted" : "rejected") : "none yet",
                     s ? s->signed_by : "", s ? When(s->signed_unix_ms) : "",
                     !s        ? ""
                     : d.stale ? "stale: changed since"
                               : "current",
                     s ? s->note : ""});
  }
  return table;
}

json DecisionsJson(const ReportModel& m) {
  json conditions = json::array();
  for (const Decision& d : m.decisions) {
    json decision = nullptr;
    if (const store::Signoff* s = d.latest ? &*d.latest : nullptr)
      decision = {{"decision", s->decision}, {"by", s->signed_by},
                  {"note", s->note},         {"signed_unix_ms", s->signed_unix_ms},
                  {"evidence", s->evidence}, {"stale", d.stale}};
    conditions.push_back({{"condition", Name(d.condition)},
                          {"owner", d.owner.empty() ? json(nullptr) : json(d.owner)},
                          {"evidence", d.evidence},
                          {"latest", decision}});
  }
  return {{"require_signoff", m.require_signoff}, {"conditions", conditions}};
}

}  // namespace stagegate::report
