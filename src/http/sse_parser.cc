#include "http/sse_parser.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace stagegate::http {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// The position of the first `byte` in `bytes` at or after `from`; bytes.size() when there is none.
size_t FindByte(std::string_view bytes, size_t from, char byte) {
  // An empty view may have no data pointer, and memchr must not be given a null one.
  if (from >= bytes.size()) return bytes.size();
  const void* hit = std::memchr(bytes.data() + from, byte, bytes.size() - from);
  return hit == nullptr ? bytes.size() : static_cast<const char*>(hit) - bytes.data();
}

// WHATWG: a retry value counts only when it is all ASCII digits. Empty or out-of-range values are
// ignored too.
std::optional<int64_t> ParseRetry(std::string_view value) {
  if (value.empty()) return std::nullopt;
  int64_t result = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    if (result > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) return std::nullopt;
    result = result * 10 + (c - '0');
  }
  return result;
}

}  // namespace

void SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  Scan(bytes, Sink{.context = &out, .emit = [](void* context, SseEvent& event) {
                     static_cast<std::vector<SseEvent>*>(context)->push_back(std::move(event));
                   }});
}

void SseParser::Scan(std::string_view bytes, const Sink& out) {
  const size_t n = bytes.size();
  size_t at = 0;
  if (!bom_checked_) {
    while (at < n && bom_matched_ < static_cast<int>(kBom.size()) &&
           bytes[at] == kBom[bom_matched_]) {
      ++at;
      ++bom_matched_;
    }
    if (bom_matched_ == static_cast<int>(kBom.size())) {
      bom_checked_ = true;
    } else if (at < n) {
      // Only part of a BOM: those bytes were the start of the first line.
      line_.append(kBom.substr(0, bom_matched_));
      bom_checked_ = true;
    } else {
      return;  // everything so far may still be the start of a BOM
    }
  }
  if (after_cr_ && at < n) {
    if (bytes[at] == '\n') ++at;  // the LF of a CRLF split across two Feed calls
    after_cr_ = false;
  }
  // Each memchr result is kept until the scan passes it, so the bytes are scanned once even when
  // the stream has no CR at all.
  size_t next_lf = FindByte(bytes, at, '\n');
  size_t next_cr = FindByte(bytes, at, '\r');
  while (at < n) {
    if (next_lf < at) next_lf = FindByte(bytes, at, '\n');
    if (next_cr < at) next_cr = FindByte(bytes, at, '\r');
    const size_t end = std::min(next_lf, next_cr);
    if (end == n) {
      line_.append(bytes.substr(at));
      break;
    }
    if (line_.empty()) {
      ProcessLine(bytes.substr(at, end - at), out);
    } else {
      line_.append(bytes.substr(at, end - at));
      ProcessLine(line_, out);
      line_.clear();
    }
    at = end + 1;
    if (bytes[end] == '\r') {
      if (at == n) {
        after_cr_ = true;
      } else if (bytes[at] == '\n') {
        ++at;
      }
    }
  }
}

bool SseParser::Finish() {
  const bool pending = !line_.empty() || block_pending_ || (!bom_checked_ && bom_matched_ > 0);
  line_.clear();
  data_.clear();
  event_type_.clear();
  block_retry_.reset();
  block_pending_ = false;
  after_cr_ = false;
  return pending;
}

void SseParser::Reset() {
  Finish();
  last_event_id_.clear();
  retry_ms_.reset();
  last_comment_.clear();
  comments_ = 0;
  bom_matched_ = 0;
  bom_checked_ = false;
}

void SseParser::ProcessLine(std::string_view line, const Sink& out) {
  if (line.empty()) {
    Dispatch(out);
    return;
  }
  const size_t colon = line.find(':');
  std::string_view name = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (name.empty()) {
    ++comments_;
    last_comment_.assign(value);
    return;
  }
  ProcessField(name, value);
}

void SseParser::ProcessField(std::string_view name, std::string_view value) {
  block_pending_ = true;
  if (name == "data") {
    data_.append(value);
    data_.push_back('\n');
  } else if (name == "event") {
    event_type_.assign(value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_.assign(value);
  } else if (name == "retry") {
    if (std::optional<int64_t> retry = ParseRetry(value)) {
      block_retry_ = retry;
      retry_ms_ = retry;
    }
  }
}

void SseParser::Dispatch(const Sink& out) {
  block_pending_ = false;
  const std::optional<int64_t> retry = std::exchange(block_retry_, std::nullopt);
  if (data_.empty()) {
    event_type_.clear();
    return;
  }
  data_.pop_back();  // the "\n" after the last data line
  // The buffers move into the event by swapping, without a copy, and come back afterwards, so a
  // sink that only reads the event leaves their capacity for the next one.
  event_.type.swap(event_type_);
  event_.data.swap(data_);
  event_.id = last_event_id_;
  event_.retry_ms = retry;
  out.emit(out.context, event_);
  event_type_.swap(event_.type);
  event_type_.clear();
  data_.swap(event_.data);
  data_.clear();
}

}  // namespace stagegate::http
