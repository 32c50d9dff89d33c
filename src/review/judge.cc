#include "review/judge.h"

#include <algorithm>
#include <cstdlib>
#include <random>

#include "base/clock.h"
#include "base/strings.h"
#include "load/engine.h"
#include "review/export.h"

namespace stagegate::review {
namespace {

using json = nlohmann::json;

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The judge's key, read from the variable options.api_key_env names; none when it names none.
// Fails when the variable is unset.
Result<std::optional<std::string>> JudgeKey(const JudgeOptions& options) {
  if (options.api_key_env.empty()) return std::optional<std::string>();
  const char* value = std::getenv(options.api_key_env.c_str());
  if (value == nullptr || *value == '\0')
    return Status::InvalidInput("--api-key-env: " + options.api_key_env + " is not set");
  return std::optional<std::string>(value);
}

// The chat request that asks the judge to score `answer` to `task`: the instruction as the
// system's message, the conversation and the answer (and the reference, when asked) as the
// user's.
json JudgeBody(const JudgeOptions& options, const std::string& instruction,
               const manifest::Task& task, const std::string& answer) {
  std::string content = "Conversation:\n" + ConversationText(Conversation(task)) +
                        "\n\nThe assistant's answer:\n" + answer;
  if (options.with_reference && !task.reference.empty())
    content += "\n\nA reference answer by a person who knows the subject:\n" + task.reference;
  return {
      {"model", options.model},
      {"stream", false},
      {"temperature", 0},
      {"messages",
       {{{"role", "system"}, {"content", instruction}}, {{"role", "user"}, {"content", content}}}}};
}

// Sends `specs` to the judge through the load engine, options.concurrency at a time.
Result<load::LoadResult> SendToJudge(const std::vector<load::RequestSpec>& specs,
                                     const JudgeOptions& options, const std::atomic<bool>& stop) {
  load::LoadOptions load{.concurrency = options.concurrency,
                         .requests = static_cast<int64_t>(specs.size()),
                         .grace_s = static_cast<double>(options.timeout_ms) / 1000,
                         .workers = 1,
                         .timeouts = {.connect_ms = 5000,
                                      .first_token_ms = options.timeout_ms,
                                      .total_ms = options.timeout_ms}};
  const Clock& clock = SteadyClock::Get();
  load::RunControl control{.clock = &clock, .origin_ns = clock.NowNs(), .stop = &stop};
  return load::RunLoad(
      load, [&specs](int64_t n) { return specs[static_cast<size_t>(n)]; }, control);
}

// The scores of the judge's reply `r`; when it did not answer, or its reply cannot be read, why.
Result<std::map<std::string, int64_t>> ReplyScores(const load::RequestRecord& r,
                                                   const json& rubric) {
  if (r.outcome != load::Outcome::kOk)
    return Status::InvalidInput(
        "the judge did not answer (" +
        (r.http_status ? "HTTP " + std::to_string(*r.http_status) + ", " : std::string()) +
        std::string(load::OutcomeName(r.outcome)) +
        (r.error_message.empty() ? "" : ": " + Utf8Prefix(r.error_message, 200)) + ")");
  return ParseJudgeReply(r.answer_text, rubric);
}

}  // namespace

std::string JudgeInstruction(const json& rubric) {
  std::string text =
      "You are an independent reviewer. Score the assistant's answer to the conversation below "
      "against this rubric, on its own merits. For each criterion choose the level whose "
      "description fits the answer best.\n\nRubric: " +
      rubric.value("title", rubric.value("id", "")) + "\n";
  json example = json::object();
  for (const json& c : rubric["criteria"]) {
    text += "\nCriterion " + c["id"].get<std::string>() + ": " + c["question"].get<std::string>() +
            "\n";
    for (const json& level : c["levels"])
      text += "  " + std::to_string(level["level"].get<int64_t>()) + ": " +
              level["anchor"].get<std::string>() + "\n";
    example[c["id"].get<std::string>()] = c["levels"].back()["level"];
  }
  text +=
      "\nReply with only a JSON object that maps every criterion to the level you chose, for "
      "example " +
      example.dump() + ", and nothing else.";
  return text;
}

Result<std::map<std::string, int64_t>> ParseJudgeReply(const std::string& reply,
                                                       const json& rubric) {
  const size_t open = reply.find('{'), close = reply.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return Status::InvalidInput("the reply holds no JSON object: \"" + Utf8Prefix(reply, 120) +
                                "\"");
  const json parsed = json::parse(reply.substr(open, close - open + 1), nullptr, false);
  if (!parsed.is_object())
    return Status::InvalidInput("the reply's JSON object does not parse: \"" +
                                Utf8Prefix(reply, 120) + "\"");
  std::map<std::string, int64_t> scores;
  for (const json& c : rubric["criteria"]) {
    const std::string id = c["id"].get<std::string>();
    if (!parsed.contains(id) || !parsed[id].is_number_integer())
      return Status::InvalidInput("the reply gives no level for " + id);
    const int64_t level = parsed[id].get<int64_t>();
    const bool on_scale = std::any_of(c["levels"].begin(), c["levels"].end(),
                                      [&](const json& l) { return l["level"] == level; });
    if (!on_scale)
      return Status::InvalidInput("the reply's level " + std::to_string(level) + " for " + id +
                                  " is not on its scale");
    scores[id] = level;
  }
  return scores;
}

Result<JudgeResult> JudgeAnswers(store::Store& store, const store::RunInfo& run,
                                 const manifest::Bundle& bundle, const JudgeOptions& options,
                                 const std::atomic<bool>& stop) {
  if (!bundle.corpus || !bundle.rubric)
    return Status::InvalidInput(
        "the run's scenario names no corpus or no rubric: nothing to judge");
  Result<std::optional<std::string>> key = JudgeKey(options);
  if (!key.ok()) return key.status();
  Result<std::vector<store::SampledAnswer>> answers = store.ListSampledAnswers(run.id);
  if (!answers.ok()) return answers.status();
  // The judge scores the assistant's answers; a baseline's are for the reviewers alone.
  std::erase_if(*answers,
                [](const store::SampledAnswer& a) { return a.source != store::kAssistantSource; });
  if (answers->empty())
    return Status::InvalidInput("run " + run.id + " has no answers sampled for review");

  const json rubric = RubricJson(*bundle.rubric);
  const std::string instruction = JudgeInstruction(rubric);
  std::string base = options.base_url;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  std::vector<load::RequestSpec> specs;
  for (const store::SampledAnswer& a : *answers) {
    const manifest::Task* task = bundle.corpus->FindTask(a.task_id);
    if (!task)
      return Status::InvalidInput("answer " + std::to_string(a.request_id) + " is for task '" +
                                  a.task_id + "', which the corpus no longer has");
    load::RequestSpec spec{.url = base + "/chat/completions",
                           .body = Dump(JudgeBody(options, instruction, *task, a.answer_text)),
                           .stream = false};
    if (*key) spec.headers.push_back("Authorization: Bearer " + **key);
    specs.push_back(std::move(spec));
  }
  Result<load::LoadResult> sent = SendToJudge(specs, options, stop);
  if (!sent.ok()) return sent.status();

  std::random_device device;
  JudgeResult result{.export_id = "judge-" + RandomId(device, 10),
                     .answers = static_cast<int64_t>(answers->size())};
  const store::ExportInfo export_info =
      NewExport(result.export_id, run.id, {.reviewers = 1, .per_item = 1, .calibration = 0}, rubric,
                "judge:" + options.model);
  std::vector<store::ReviewItem> items;
  std::vector<store::Score> stored;
  for (const load::RequestRecord& r : sent->records) {
    const store::SampledAnswer& a = (*answers)[static_cast<size_t>(r.sequence)];
    Result<std::map<std::string, int64_t>> scores = ReplyScores(r, rubric);
    if (!scores.ok()) {
      result.failures.push_back("answer " + std::to_string(a.request_id) + ": " +
                                scores.status().message());
      continue;
    }
    const std::string item = "j-" + RandomId(device, 12);
    items.push_back({.item_id = item, .request_id = a.request_id, .reviewer = "judge"});
    const std::optional<double> seconds =
        r.end_ns && r.sent_ns
            ? std::optional<double>(static_cast<double>(*r.end_ns - *r.sent_ns) / 1e9)
            : std::nullopt;
    for (const auto& [criterion, level] : *scores)
      stored.push_back({.item_id = item,
                        .reviewer = "judge",
                        .criterion = criterion,
                        .value = level,
                        .seconds = seconds,
                        .source = "judge",
                        .imported_unix_ms = export_info.created_unix_ms});
    ++result.scored;
  }
  SG_RETURN_IF_ERROR(store.AddExport(export_info, items, stored));
  return result;
}

}  // namespace stagegate::review
