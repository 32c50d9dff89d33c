#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "manifest/bundle.h"
#include "store/review_data.h"
#include "store/store.h"

namespace stagegate::review {

/// A task's conversation as [{"role", "content"}, ...]: its prompt as one user turn, or its
/// messages.
nlohmann::json Conversation(const manifest::Task& task);
/// The conversation as one text: the prompt alone, or "role: content" turns between blank lines.
std::string ConversationText(const nlohmann::json& turns);

/// Random lower-case letters and digits (no look-alikes), from the system's random source.
std::string RandomId(std::random_device& device, size_t length);

/// One answer given to one reviewer.
struct Assignment {
  size_t answer = 0;  // index into the answers being exported
  int reviewer = 0;   // 0-based; reviewer names are r1, r2, ...
  bool calibration = false;
};

/// Assigns `answers` answers: `calibration` of them (chosen at random) to every reviewer, each of
/// the rest to `per_item` distinct reviewers, so that no reviewer has more than one item above
/// another. Requires 1 <= per_item <= reviewers and calibration <= answers.
std::vector<Assignment> AssignReviewers(size_t answers, int reviewers, int per_item,
                                        int calibration, std::mt19937_64& random);

/// "r1", "r2", ... for reviewer index 0, 1, ...
std::string ReviewerName(int reviewer);

/// The rubric as reviewers see it and as an import is checked against: id, title, criteria with
/// question, weight, hard, floor and levels, and the pass rule.
nlohmann::json RubricJson(const manifest::Rubric& rubric);

struct ExportOptions {
  int reviewers = 2;
  int per_item = 2;
  int calibration = 0;
  bool with_reference = false;  // show the corpus's reference answer to reviewers
  std::string out_dir;
};

struct ExportResult {
  std::string export_id;
  int64_t answers = 0;
  std::vector<int64_t> items_per_reviewer;
  std::vector<std::string> files;  // written, relative to out_dir
};

/// An export as the store keeps it, created now: its rubric, its assignment counts and who
/// scores it ("reviewers", or "judge:<model>" for an LLM judge, whose scores are kept apart).
store::ExportInfo NewExport(const std::string& export_id, const std::string& run_id,
                            const ExportOptions& options, const nlohmann::json& rubric,
                            const std::string& scorer);

/// Exports a run's sampled answers for blinded review: assigns them, writes one packet per
/// reviewer into out_dir (reviewer-rN.html, .jsonl and .csv) and README.txt, and stores the
/// export and its item ids (the only map from an item to its answer) in the store. A packet holds
/// each item's conversation, the answer, the reference when asked for, and the rubric: nothing
/// that tells stage, phase, load, latency, model, persona, run or time. Item ids are random; each
/// reviewer's order is shuffled. `bundle` must be the run's scenario, with the corpus and rubric
/// it ran with. The store is written last, in one transaction, once every file is: on error it
/// is left as it was.
Result<ExportResult> ExportForReview(store::Store& store, const store::RunInfo& run,
                                     const manifest::Bundle& bundle, const ExportOptions& options);

}  // namespace stagegate::review
