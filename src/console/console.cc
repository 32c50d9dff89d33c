#include "console/console.h"

#include <unistd.h>

#include <algorithm>
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

std::vector<std::string> FormatTable(const std::vector<std::string>& header,
                                     const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(header.size());
  for (size_t i = 0; i < header.size(); ++i)
    widths[i] = header[i].size();
  for (const std::vector<std::string>& row : rows)
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  const auto format = [&widths](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string_view cell = i < cells.size() ? std::string_view(cells[i]) : "";
      const std::string padding(widths[i] - cell.size(), ' ');
      if (i > 0) line += "  ";
      line += i == 0 ? std::string(cell) + padding : padding + std::string(cell);
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    return line;
  };
  std::vector<std::string> lines = {format(header)};
  for (const std::vector<std::string>& row : rows)
    lines.push_back(format(row));
  return lines;
}

}  // namespace stagegate::console
