#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace stagegate::http {

/// One dispatched Server-Sent Event.
struct SseEvent {
  std::string type;  // the `event` field; "" means the default ("message")
  std::string data;  // data lines joined with "\n" (no trailing newline)
  std::string id;    // the last event ID as set at dispatch time (it persists across events)
  std::optional<int64_t> retry_ms;  // when this event's block set a valid retry (digits only)

  bool operator==(const SseEvent&) const = default;
};

/// Interprets a byte stream as an event stream, following the WHATWG HTML standard ("Interpreting
/// an event stream"). Pure and incremental: it knows nothing of the transport, and any split of
/// the stream into Feed calls yields the same events.
///
/// Lines end in CR, LF or CRLF (also when the CR and the LF arrive in different Feed calls); one
/// UTF-8 BOM at the very start is skipped; ":" lines are comments; fields are data, event, id and
/// retry, others are ignored; a blank line dispatches the pending event when its data is not empty.
/// Bytes are not validated as UTF-8: they pass through unchanged.
///
/// Cost: bytes are scanned once; a line that arrives whole in one Feed is not copied, a line split
/// across Feeds is buffered. Buffers are reused; the only allocation per event is the event's
/// strings in `out` (the data moves there without a copy).
///
/// Not thread-safe; one parser per stream. Memory grows with the longest line and event: the
/// caller bounds the body size.
class SseParser {
 public:
  /// Feeds the next bytes, split anywhere (inside a line ending, a field name, a UTF-8 character).
  /// Appends each event completed by these bytes to `out`, which the caller owns, clears and
  /// reuses. Never fails: every byte sequence is a valid event stream.
  void Feed(std::string_view bytes, std::vector<SseEvent>& out);

  /// As Feed, but calls `on_event(const SseEvent&)` for each event as it completes. The event and
  /// its buffers are the parser's own and are reused, so a stream whose events have reached their
  /// usual size allocates nothing per event; the event is valid only during the call.
  template <typename OnEvent>
  void FeedEach(std::string_view bytes, OnEvent&& on_event) {
    using Callable = std::remove_reference_t<OnEvent>;
    Scan(bytes, Sink{.context = &on_event, .emit = [](void* context, SseEvent& event) {
                       (*static_cast<Callable*>(context))(static_cast<const SseEvent&>(event));
                     }});
  }

  /// The stream ended. As WHATWG says, an event not terminated by a blank line is discarded.
  /// Returns true when such a partial event (a field line since the last blank line) or a partial
  /// line was pending: the caller may treat the stream as truncated. Both are dropped; the last
  /// event ID and the counters stay. Call Reset before feeding another stream.
  bool Finish();

  /// Starts a new stream (BOM allowed again, last event ID and counters cleared), keeping the
  /// capacity of the buffers.
  void Reset();

  /// Comment lines seen (":" ...), e.g. keep-alives and ": server-timing ...".
  int64_t comments() const { return comments_; }
  /// The text of the last comment, after the colon and one optional space; "" when none.
  const std::string& last_comment() const { return last_comment_; }
  /// The stream's reconnection time: the last valid retry field, also from a block that
  /// dispatched no event (e.g. "retry: 3000" alone).
  std::optional<int64_t> retry_ms() const { return retry_ms_; }
  /// Bytes held for an event not yet complete: a line split across Feed calls and the data lines
  /// of the pending event (what a stream that never ends a line or an event makes grow).
  size_t pending_bytes() const { return line_.size() + data_.size(); }

 private:
  // Where dispatched events go: Feed appends them to a vector, FeedEach hands them to a callable.
  struct Sink {
    void* context;
    void (*emit)(void* context, SseEvent& event);
  };
  void Scan(std::string_view bytes, const Sink& out);
  void ProcessLine(std::string_view line, const Sink& out);
  void ProcessField(std::string_view name, std::string_view value);
  void Dispatch(const Sink& out);

  SseEvent event_;    // the event being dispatched; its buffers are data_'s and event_type_'s
  std::string line_;  // a line split across Feed calls, without its ending
  std::string data_;  // each data line followed by "\n"
  std::string event_type_;
  std::string last_event_id_;
  std::optional<int64_t> block_retry_;
  std::optional<int64_t> retry_ms_;
  std::string last_comment_;
  int64_t comments_ = 0;
  int bom_matched_ = 0;         // leading bytes that matched the BOM so far
  bool bom_checked_ = false;    // the start of the stream has been checked for a BOM
  bool after_cr_ = false;       // the last byte fed was a CR: an LF next ends no new line
  bool block_pending_ = false;  // a field line came since the last blank line
};

}  // namespace stagegate::http
