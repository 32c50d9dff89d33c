// The SSE parser on any byte stream, and its promise that any split of the stream into Feed calls
// yields the same events: the whole stream at once, byte by byte (FeedEach) and in splits drawn
// from the input, empty pieces among them, are compared, events, counters and Finish() alike.

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "http/sse_parser.h"

namespace {

using stagegate::http::SseEvent;
using stagegate::http::SseParser;

struct Outcome {
  std::vector<SseEvent> events;
  bool truncated = false;
  int64_t comments = 0;
  std::string last_comment;
  std::optional<int64_t> retry_ms;

  bool operator==(const Outcome&) const = default;
};

Outcome Finish(SseParser& parser, std::vector<SseEvent> events) {
  Outcome outcome{.events = std::move(events)};
  outcome.comments = parser.comments();
  outcome.last_comment = parser.last_comment();
  outcome.retry_ms = parser.retry_ms();
  outcome.truncated = parser.Finish();
  return outcome;
}

// Chunk lengths from a small generator seeded by the input, so a crash reproduces from the file.
std::vector<size_t> Splits(std::string_view text) {
  uint64_t state = 0x9e3779b97f4a7c15ull ^ text.size();
  for (size_t i = 0; i < text.size() && i < 8; ++i)
    state = state * 31 + static_cast<unsigned char>(text[i]);
  std::vector<size_t> lengths;
  for (size_t at = 0; at < text.size();) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t length = 1 + (state >> 33) % 17;
    lengths.push_back(length);
    at += length;
  }
  return lengths;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = stagegate::fuzz::AsText(data, size);

  SseParser whole;
  std::vector<SseEvent> events;
  whole.Feed(text, events);
  const Outcome expected = Finish(whole, std::move(events));

  SseParser bytes;
  std::vector<SseEvent> each;
  for (char byte : text)
    bytes.FeedEach(std::string_view(&byte, 1),
                   [&](const SseEvent& event) { each.push_back(event); });
  if (Finish(bytes, std::move(each)) != expected)
    stagegate::fuzz::Fail("byte by byte differs from the whole stream");

  // The parser used above, Reset, must behave as a new one.
  whole.Reset();
  std::vector<SseEvent> split;
  size_t at = 0;
  for (size_t length : Splits(text)) {
    whole.Feed(text.substr(at, length), split);
    whole.Feed(std::string_view(), split);  // an empty piece is a split too
    at += length;
  }
  if (Finish(whole, std::move(split)) != expected)
    stagegate::fuzz::Fail("split stream differs from the whole stream");
  return 0;
}
