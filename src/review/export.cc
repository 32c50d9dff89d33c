#include "review/export.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>

#include "base/files.h"
#include "base/strings.h"
#include "review/reviewer_page.h"

namespace stagegate::review {
namespace {

using json = nlohmann::json;

constexpr char kInstructions[] =
    "Score each answer against the rubric, on its own merits. For every criterion, choose the "
    "level whose description fits the answer best. You see a conversation and the answer given "
    "to it (and, where present, a reference answer written by a person who knows the subject). "
    "Do not look answers up elsewhere and do not compare notes with other reviewers. Then say "
    "whether the answer could be sent to the person who asked: usable as it "
    "is (as_is), usable after correction (corrected), or not usable (unusable). If it needs "
    "correcting, write the answer as you would send it; the time you spend correcting is "
    "recorded, as is your time on each item, so that the effort of reviewing and correcting is "
    "known.";

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Refuses what no export can be made of, before the store is read.
Status CheckOptions(const manifest::Bundle& bundle, const ExportOptions& options) {
  if (!bundle.corpus || !bundle.rubric)
    return Status::InvalidInput(
        "the run's scenario names no corpus or no rubric: nothing to review");
  if (options.reviewers < 1 || options.per_item < 1 || options.per_item > options.reviewers)
    return Status::InvalidInput("--per-item must be between 1 and --reviewers (" +
                                std::to_string(options.reviewers) + ")");
  return Status::Ok();
}

// Refuses to export a run's sampled answers when there are none, too few for the calibration
// asked for, or one of a task the corpus no longer has.
Status CheckAnswers(const store::RunInfo& run, const manifest::Corpus& corpus,
                    const ExportOptions& options,
                    const std::vector<store::SampledAnswer>& answers) {
  if (answers.empty())
    return Status::InvalidInput("run " + run.id + " has no answers sampled for review");
  if (options.calibration < 0 || static_cast<size_t>(options.calibration) > answers.size())
    return Status::InvalidInput("--calibration must be between 0 and the " +
                                std::to_string(answers.size()) + " answers sampled");
  for (const store::SampledAnswer& a : answers)
    if (!corpus.FindTask(a.task_id))
      return Status::InvalidInput("answer " + std::to_string(a.request_id) + " is for task '" +
                                  a.task_id + "', which the corpus no longer has");
  return Status::Ok();
}

// The assigned items, each with a random id: for the store (the only map from an item to its
// answer), and as each reviewer's packet shows them.
struct Items {
  std::vector<store::ReviewItem> stored;
  std::vector<json> by_reviewer;  // [{item, conversation, answer, reference}] a reviewer
};

// What the packets of one export hold besides the instructions.
struct Packets {
  std::string export_id;
  const json& rubric;
  const std::vector<json>& by_reviewer;  // each reviewer's items, in the order they see them
};

Items MakeItems(const std::vector<store::SampledAnswer>& answers,
                const std::vector<Assignment>& assignments, const manifest::Corpus& corpus,
                const ExportOptions& options, std::random_device& device) {
  Items items{.by_reviewer =
                  std::vector<json>(static_cast<size_t>(options.reviewers), json::array())};
  for (const Assignment& a : assignments) {
    const store::SampledAnswer& answer = answers[a.answer];
    const manifest::Task& task = *corpus.FindTask(answer.task_id);
    const std::string item_id = "i-" + RandomId(device, 12);
    items.stored.push_back({.item_id = item_id,
                            .request_id = answer.request_id,
                            .reviewer = ReviewerName(a.reviewer),
                            .calibration = a.calibration});
    json item = {
        {"item", item_id}, {"conversation", Conversation(task)}, {"answer", answer.answer_text}};
    item["reference"] =
        options.with_reference && !task.reference.empty() ? json(task.reference) : json(nullptr);
    items.by_reviewer[static_cast<size_t>(a.reviewer)].push_back(std::move(item));
  }
  return items;
}

// The JSON Lines packet: a header, then one line an item with its scores to fill in; the
// filled-in file is what `import` reads, as it reads the page's download.
std::string ScoresJsonLines(const std::string& export_id, const std::string& reviewer,
                            const json& rubric, const json& items) {
  std::string jsonl = Dump({{"format", "stagegate-scores"},
                            {"version", 1},
                            {"export_id", export_id},
                            {"reviewer", reviewer},
                            {"instructions", kInstructions},
                            {"rubric", rubric}}) +
                      "\n";
  for (const json& item : items) {
    json line = {{"item", item["item"]},
                 {"conversation", item["conversation"]},
                 {"answer", item["answer"]},
                 {"reference", item["reference"]}};
    json scores = json::object();
    for (const json& c : rubric["criteria"])
      scores[c["id"].get<std::string>()] = nullptr;
    line["scores"] = scores;
    line["seconds"] = nullptr;
    line["usability"] = nullptr;
    line["corrected_text"] = nullptr;
    line["correction_seconds"] = nullptr;
    jsonl += Dump(line) + "\n";
  }
  return jsonl;
}

// The CSV packet: one row an item, with a column for each criterion and the seconds to fill in.
std::string ScoresCsv(const std::string& export_id, const std::string& reviewer, const json& rubric,
                      const json& items) {
  std::string csv = "export_id,reviewer,item,conversation,answer,reference";
  for (const json& c : rubric["criteria"])
    csv += "," + CsvField(c["id"].get<std::string>());
  csv += ",seconds,usability,corrected_text,correction_seconds\n";
  for (const json& item : items) {
    csv += CsvField(export_id) + "," + CsvField(reviewer) + "," +
           CsvField(item["item"].get<std::string>()) + "," +
           CsvField(ConversationText(item["conversation"])) + "," +
           CsvField(item["answer"].get<std::string>()) + "," +
           CsvField(item["reference"].is_string() ? item["reference"].get<std::string>() : "");
    for (size_t c = 0; c < rubric["criteria"].size(); ++c)
      csv += ",";
    csv += ",,,,\n";
  }
  return csv;
}

// Writes each reviewer's packet as reviewer-rN.html, .jsonl and .csv, and README.txt, into
// out_dir; returns the names written.
Result<std::vector<std::string>> WritePackets(const std::string& run_id,
                                              const ExportOptions& options,
                                              const Packets& packets) {
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error) return Status::IoError("cannot create " + options.out_dir + ": " + error.message());
  std::vector<std::string> files;
  std::vector<std::string> readme = {
      "Answers for blinded review, export " + packets.export_id + ".",
      "",
      "Give each reviewer their own files, and nothing else from this folder:",
  };
  for (int r = 0; r < options.reviewers; ++r) {
    const std::string name = ReviewerName(r);
    const json& mine = packets.by_reviewer[static_cast<size_t>(r)];
    const json packet = {{"format", "stagegate-packet"},
                         {"version", 1},
                         {"export_id", packets.export_id},
                         {"reviewer", name},
                         {"instructions", kInstructions},
                         {"rubric", packets.rubric},
                         {"items", mine}};
    const std::string base = "reviewer-" + name;
    for (const auto& [suffix, text] :
         {std::pair<std::string, std::string>{".html", ReviewerPageHtml(packet)},
          {".jsonl", ScoresJsonLines(packets.export_id, name, packets.rubric, mine)},
          {".csv", ScoresCsv(packets.export_id, name, packets.rubric, mine)}}) {
      SG_RETURN_IF_ERROR(WriteFileAtomically(options.out_dir + "/" + base + suffix, text));
      files.push_back(base + suffix);
    }
    readme.push_back("  " + name + ": " + base + ".html (score in a browser, then download), or " +
                     base + ".csv / " + base + ".jsonl (fill in the score columns) - " +
                     std::to_string(mine.size()) + " items");
  }
  readme.insert(readme.end(), {"", "Bring back what each reviewer returns and load it with:",
                               "  stagegate import " + run_id + " FILE...", ""});
  SG_RETURN_IF_ERROR(WriteFileAtomically(options.out_dir + "/README.txt", Join(readme, "\n")));
  files.push_back("README.txt");
  return files;
}

}  // namespace

std::string RandomId(std::random_device& device, size_t length) {
  static constexpr char kAlphabet[] = "abcdefghijkmnpqrstuvwxyz23456789";
  std::string id;
  for (size_t i = 0; i < length; ++i)
    id += kAlphabet[device() % (sizeof kAlphabet - 1)];
  return id;
}

json Conversation(const manifest::Task& task) {
  json turns = json::array();
  if (task.messages.empty()) {
    turns.push_back({{"role", "user"}, {"content", task.prompt}});
  } else {
    for (const manifest::ChatMessage& m : task.messages)
      turns.push_back({{"role", m.role}, {"content", m.content}});
  }
  return turns;
}

std::string ConversationText(const json& turns) {
  if (turns.size() == 1) return turns[0]["content"].get<std::string>();
  std::vector<std::string> parts;
  for (const json& turn : turns)
    parts.push_back(turn["role"].get<std::string>() + ": " + turn["content"].get<std::string>());
  return Join(parts, "\n\n");
}

store::ExportInfo NewExport(const std::string& export_id, const std::string& run_id,
                            const ExportOptions& options, const json& rubric,
                            const std::string& scorer) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  return {.export_id = export_id,
          .run_id = run_id,
          .created_unix_ms = now_ms,
          .reviewers = options.reviewers,
          .per_item = options.per_item,
          .calibration = options.calibration,
          .rubric_json = Dump(rubric),
          .scorer = scorer};
}

std::string ReviewerName(int reviewer) {
  return "r" + std::to_string(reviewer + 1);
}

std::vector<Assignment> AssignReviewers(size_t answers, int reviewers, int per_item,
                                        int calibration, std::mt19937_64& random) {
  std::vector<size_t> order(answers);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<Assignment> out;
  std::vector<int64_t> load(static_cast<size_t>(reviewers), 0);
  const size_t calibrated = std::min(answers, static_cast<size_t>(std::max(calibration, 0)));
  for (size_t i = 0; i < calibrated; ++i)
    for (int r = 0; r < reviewers; ++r) {
      out.push_back({.answer = order[i], .reviewer = r, .calibration = true});
      ++load[static_cast<size_t>(r)];
    }
  std::vector<int> by_load(static_cast<size_t>(reviewers));
  std::iota(by_load.begin(), by_load.end(), 0);
  for (size_t i = calibrated; i < answers; ++i) {
    // The least loaded reviewers first; among equals, a random order, so that nobody is always
    // first.
    std::shuffle(by_load.begin(), by_load.end(), random);
    std::stable_sort(by_load.begin(), by_load.end(), [&](int a, int b) {
      return load[static_cast<size_t>(a)] < load[static_cast<size_t>(b)];
    });
    for (int k = 0; k < per_item; ++k) {
      const int r = by_load[static_cast<size_t>(k)];
      out.push_back({.answer = order[i], .reviewer = r, .calibration = false});
      ++load[static_cast<size_t>(r)];
    }
  }
  return out;
}

json RubricJson(const manifest::Rubric& rubric) {
  json criteria = json::array();
  for (const manifest::Criterion& c : rubric.criteria) {
    json levels = json::array();
    for (const auto& [level, anchor] : c.scale)
      levels.push_back({{"level", level}, {"anchor", anchor}});
    criteria.push_back({{"id", c.id},
                        {"question", c.question},
                        {"weight", c.weight},
                        {"hard", c.hard},
                        {"floor", c.floor},
                        {"levels", levels}});
  }
  json pass_rule = json::object();
  if (rubric.pass_rule.min_weighted_mean)
    pass_rule["min_weighted_mean"] = *rubric.pass_rule.min_weighted_mean;
  if (rubric.pass_rule.min_each) pass_rule["min_each"] = *rubric.pass_rule.min_each;
  return {
      {"id", rubric.id}, {"title", rubric.title}, {"criteria", criteria}, {"pass_rule", pass_rule}};
}

Result<ExportResult> ExportForReview(store::Store& store, const store::RunInfo& run,
                                     const manifest::Bundle& bundle, const ExportOptions& options) {
  SG_RETURN_IF_ERROR(CheckOptions(bundle, options));
  Result<std::vector<store::SampledAnswer>> answers = store.ListSampledAnswers(run.id);
  if (!answers.ok()) return answers.status();
  SG_RETURN_IF_ERROR(CheckAnswers(run, *bundle.corpus, options, *answers));

  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) | device());
  const std::vector<Assignment> assignments = AssignReviewers(
      answers->size(), options.reviewers, options.per_item, options.calibration, random);
  ExportResult result{.export_id = "x-" + RandomId(device, 10),
                      .answers = static_cast<int64_t>(answers->size())};
  const json rubric = RubricJson(*bundle.rubric);
  Items items = MakeItems(*answers, assignments, *bundle.corpus, options, device);
  for (json& mine : items.by_reviewer) {
    std::shuffle(mine.begin(), mine.end(), random);  // each reviewer in an order of their own
    result.items_per_reviewer.push_back(static_cast<int64_t>(mine.size()));
  }

  Result<std::vector<std::string>> files = WritePackets(
      run.id, options,
      {.export_id = result.export_id, .rubric = rubric, .by_reviewer = items.by_reviewer});
  if (!files.ok()) return files.status();
  result.files = std::move(*files);
  SG_RETURN_IF_ERROR(store.AddExport(
      NewExport(result.export_id, run.id, options, rubric, store::kReviewersScorer), items.stored));
  return result;
}

}  // namespace stagegate::review
