#pragma once

#include <functional>
#include <string>

#include "base/clock.h"
#include "console/console.h"
#include "load/engine.h"

namespace stagegate::load {

/// The engine's tick callback that draws the live progress line of a phase labelled `label`:
/// done/offered, achieved rate, TTFT p50/p95 so far, errors. Redrawn at every tick on a
/// terminal, a plain line every 5 s elsewhere. `console` and `clock` must outlive it.
std::function<void(const LiveSnapshot&)> ProgressLine(console::Console& console, const Clock& clock,
                                                      std::string label);

}  // namespace stagegate::load
