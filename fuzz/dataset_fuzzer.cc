// The dataset loader (`profile --dataset`) on any file: the first byte picks the format (given as
// JSONL, given as ShareGPT, or detected), the rest is the file. A load either gives a dataset and
// no problem, or problems and no dataset; each problem names a line of the file and says what is
// wrong; the problems kept are sorted and bounded; every entry kept passes the filters and counts
// its tokens as the counter does.

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/token_estimate.h"
#include "fuzz_support.h"
#include "load/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stagegate::fuzz::Fail;
  namespace load = stagegate::load;
  if (size == 0) return 0;
  const std::string_view text = stagegate::fuzz::AsText(data + 1, size - 1);
  load::DatasetOptions options{.max_prompt_bytes = 4096, .max_entries = 500};
  switch (data[0] % 3) {
    case 0:
      options.format = load::DatasetFormat::kJsonl;
      break;
    case 1:
      options.format = load::DatasetFormat::kShareGpt;
      break;
    default:
      break;
  }
  if (data[0] & 0x80) {
    options.min_tokens = 2;
    options.max_tokens = 64;
    options.max_output_tokens = 100;
  }
  const load::DatasetLoad loaded = load::ParseDataset("data.jsonl", text, options);
  if (loaded.dataset.has_value() == !loaded.problems.empty())
    Fail("a load must give a dataset or problems, never both or neither");
  if (loaded.problems.size() > load::kMaxDatasetProblems) Fail("more problems kept than the cap");
  if (loaded.more_problems > 0 && loaded.problems.size() != load::kMaxDatasetProblems)
    Fail("problems counted past the cap before it was reached");
  const int64_t lines = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (size_t i = 0; i < loaded.problems.size(); ++i) {
    const load::DatasetProblem& p = loaded.problems[i];
    if (p.message.empty()) Fail("a problem without a message");
    if (p.line < 0 || p.line > lines) Fail("a problem names a line the file does not have");
    if (i > 0 && p.line < loaded.problems[i - 1].line) Fail("problems are not sorted by line");
  }
  if (!loaded.dataset) return 0;
  const load::Dataset& dataset = *loaded.dataset;
  if (dataset.entries.empty()) Fail("a dataset with no entry loaded");
  if (dataset.read < static_cast<int64_t>(dataset.entries.size()))
    Fail("more entries kept than read");
  if (static_cast<int64_t>(dataset.entries.size()) > options.max_entries)
    Fail("more entries than max_entries");
  for (const load::DatasetEntry& e : dataset.entries) {
    if (e.line < 1 || e.line > lines) Fail("an entry starts on a line the file does not have");
    if (!e.messages.empty() && e.messages.back().role != "user")
      Fail("a conversation that does not end in a user turn");
    for (const load::DatasetMessage& m : e.messages)
      if (m.role != "system" && m.role != "developer" && m.role != "user" &&
          m.role != "assistant" && m.role != "tool")
        Fail("a message of an unknown role");
    size_t bytes = e.prompt.size();
    int64_t tokens = e.messages.empty() ? stagegate::EstimateTokens(e.prompt) : 0;
    for (const load::DatasetMessage& m : e.messages) {
      bytes += m.content.size();
      tokens += stagegate::EstimateTokens(m.content);
    }
    if (bytes > options.max_prompt_bytes) Fail("an entry over max_prompt_bytes");
    if (e.input_tokens != tokens) Fail("input_tokens is not the count of the entry's text");
    if (options.min_tokens && e.input_tokens < *options.min_tokens) Fail("under min_tokens");
    if (options.max_tokens && e.input_tokens > *options.max_tokens) Fail("over max_tokens");
    if (e.output_tokens && (*e.output_tokens < 1 || *e.output_tokens > load::kMaxDatasetTokens))
      Fail("an output length out of range");
    if (options.max_output_tokens && e.output_tokens &&
        *e.output_tokens > *options.max_output_tokens)
      Fail("over max_output_tokens");
  }
  return 0;
}
