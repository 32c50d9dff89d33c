// A baseline's recorded answers (`manifest::ReadRecordedAnswers`) on any file: the first byte
// picks CSV (even) or JSON Lines (odd), the rest is the file. Every answer it returns is to a task
// of the corpus, once, not empty and within the size limit, with a resolution time of 0 or more;
// every problem names the file and a line the file has. Anything else is a finding.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "manifest/corpus.h"
#include "manifest/recorded_answers.h"

namespace {

const stagegate::manifest::Corpus& Fixture() {
  static const stagegate::manifest::Corpus corpus = [] {
    stagegate::manifest::Corpus c;
    for (const char* id : {"hr-leave", "it-vpn", "t"})
      c.tasks.push_back({.id = id});
    return c;
  }();
  return corpus;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagegate;
  if (size == 0) return 0;
  const std::string path = data[0] % 2 ? "answers.jsonl" : "answers.csv";
  const std::string text(fuzz::AsText(data + 1, size - 1));
  manifest::Diagnostics diagnostics;
  const std::vector<manifest::RecordedAnswer> answers =
      manifest::ReadRecordedAnswers(path, text, Fixture(), diagnostics);
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const manifest::Diagnostic& d : diagnostics.Sorted()) {
    if (d.pos.file.empty()) continue;  // the note on problems left out
    if (d.pos.file != path) fuzz::Fail("a problem names another file: " + d.ToString());
    if (d.pos.line < 0 || d.pos.line > lines)
      fuzz::Fail("a problem names a line the file does not have: " + d.ToString());
  }
  if (answers.size() > manifest::kMaxRecordedAnswers) fuzz::Fail("more answers than the limit");
  std::set<std::string> tasks;
  for (const manifest::RecordedAnswer& a : answers) {
    if (Fixture().FindTask(a.task_id) == nullptr)
      fuzz::Fail("an answer to a task not in the corpus");
    if (!tasks.insert(a.task_id).second) fuzz::Fail("a task answered twice: " + a.task_id);
    if (a.answer.empty() || a.answer.size() > manifest::kMaxRecordedAnswerBytes)
      fuzz::Fail("an answer of " + std::to_string(a.answer.size()) + " bytes was kept");
    if (a.resolution_s && !(*a.resolution_s >= 0)) fuzz::Fail("a negative resolution time");
    if (a.line < 1 || a.line > lines) fuzz::Fail("an answer on a line the file does not have");
  }
  return 0;
}
