#pragma once

// The one decoder of a whole (not streamed) OpenAI-compatible answer: a chat.completion or a
// text_completion body, as the load engine records it and as `init` probes an endpoint.

#include <optional>
#include <string>
#include <string_view>

#include "http/openai_stream.h"

namespace stagegate::http {

struct WholeAnswer {
  enum class Shape {
    kAnswer,     // an object; choice 0 (if any) and usage taken from it
    kError,      // an object with "error" and no choice: the server's error after a 2xx
    kNotObject,  // not a JSON object
  };
  Shape shape = Shape::kNotObject;
  std::string content;    // choices[0].message.content, or choices[0].text
  std::string reasoning;  // message.reasoning_content, else message.reasoning
  /// message.tool_calls as [{index, id, type, name, arguments}] (compact JSON), "" when none.
  std::string tool_calls_json;
  std::string finish_reason;
  StreamUsage usage;  // each count only when an integer (cached_tokens only when >= 0)
};

/// Decodes `body`. Never throws, whatever its shape.
WholeAnswer DecodeWholeAnswer(std::string_view body);

/// The message of an OpenAI-style error body ({"error": "text"}, {"error": {"message": ...}},
/// {"message": ...}), or the body's first 200 bytes.
std::string ErrorBodyMessage(std::string_view body);

}  // namespace stagegate::http
