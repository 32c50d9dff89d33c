#include "load/progress.h"

#include "base/strings.h"

namespace stagegate::load {

std::function<void(const LiveSnapshot&)> ProgressLine(console::Console& console, const Clock& clock,
                                                      std::string label) {
  return [&console, &clock, label = std::move(label),
          last_plain_ns = int64_t{0}](const LiveSnapshot& s) mutable {
    const int64_t now = clock.NowNs();
    if (!console.smart_terminal() && now - last_plain_ns < 5'000'000'000) return;
    last_plain_ns = now;
    std::string text = label + ": " + std::to_string(s.done) + "/" + std::to_string(s.offered) +
                       " done, " + FormatNumber(s.elapsed_s > 0 ? s.done / s.elapsed_s : 0, 1) +
                       " req/s";
    if (s.ttft_p50_ms)
      text += ", ttft p50 ~" + FormatNumber(*s.ttft_p50_ms, 1) + " ms p95 ~" +
              FormatNumber(*s.ttft_p95_ms, 1) + " ms";
    text += ", " + std::to_string(s.failed) + " errors";
    if (s.dropped) text += ", " + std::to_string(s.dropped) + " dropped";
    console.Progress(text);
  };
}

}  // namespace stagegate::load
