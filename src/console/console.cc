#include "console/console.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace stagegate::console {

Console Console::Standard() {
  const char* term = std::getenv("TERM");
  bool smart = isatty(STDERR_FILENO) == 1 && term != nullptr && std::strcmp(term, "dumb") != 0;
  return Console(std::cout, std::cerr, smart);
}

void Console::Line(std::string_view text) {
  EndProgress();
  out_ << text << '\n';
  out_.flush();
}

void Console::Error(std::string_view text) {
  EndProgress();
  err_ << text << '\n';
  err_.flush();
}

void Console::Progress(std::string_view text) {
  if (quiet_) return;
  if (smart_terminal_) {
    err_ << "\r\x1b[K" << text;
    progress_open_ = true;
  } else {
    err_ << text << '\n';
  }
  err_.flush();
}

void Console::EndProgress() {
  if (!progress_open_) return;
  err_ << '\n';
  err_.flush();
  progress_open_ = false;
}

}  // namespace stagegate::console
