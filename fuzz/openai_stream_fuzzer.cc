// The OpenAI stream decoder on the events of any byte stream (through the SSE parser, as a
// response body reaches it), then the end of the body. Checks what the header promises of the
// result: a state other than streaming after the end, and one time per token event.

#include <cstdint>
#include <vector>

#include "fuzz_support.h"
#include "http/openai_stream.h"
#include "http/sse_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stagegate::fuzz::Fail;
  using stagegate::http::OpenAiStreamDecoder;

  stagegate::http::SseParser parser;
  std::vector<stagegate::http::SseEvent> events;
  parser.Feed(stagegate::fuzz::AsText(data, size), events);
  parser.Finish();

  OpenAiStreamDecoder decoder;
  int64_t now_ns = 1000;
  for (const stagegate::http::SseEvent& event : events) {
    decoder.OnEvent(event, now_ns);
    now_ns += 1000;
  }
  decoder.OnEnd(now_ns);

  if (decoder.state() == OpenAiStreamDecoder::State::kStreaming)
    Fail("still streaming after OnEnd");
  if (!decoder.end_ns()) Fail("no end time after OnEnd");
  const std::vector<int64_t>& times = decoder.content_times_ns();
  if (times.empty() != !decoder.first_token_ns()) Fail("first_token_ns disagrees with the times");
  if (!times.empty() && times.front() != *decoder.first_token_ns())
    Fail("first_token_ns is not the first token time");
  if (decoder.first_answer_ns() && decoder.content().empty()) Fail("an answer time, no answer");
  for (size_t i = 1; i < decoder.tool_calls().size(); ++i)
    if (decoder.tool_calls()[i - 1].index >= decoder.tool_calls()[i].index)
      Fail("tool calls are not in index order");
  return 0;
}
