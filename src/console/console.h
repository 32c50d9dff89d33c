#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace stagegate::console {

/// The one printer of the program. Results go to `out`, problems and progress to `err`, so that
/// `stagegate ... > file` captures only results. Knows whether `err` is a terminal, where progress
/// may redraw one line in place; elsewhere progress is printed as plain lines. Not thread-safe:
/// worker threads hand their progress to the thread that owns the console.
class Console {
 public:
  /// `smart_terminal`: err is an interactive terminal that understands "\r" and erase-line.
  Console(std::ostream& out, std::ostream& err, bool smart_terminal)
      : out_(out), err_(err), smart_terminal_(smart_terminal) {}

  /// A console on stdout and stderr, detecting the terminal (isatty, TERM not "dumb").
  static Console Standard();

  void Line(std::string_view text);
  void Error(std::string_view text);
  /// A progress line: redrawn in place on a smart terminal, else printed as a line. Suppressed
  /// when quiet.
  void Progress(std::string_view text);
  /// Ends a progress line drawn in place, so the next output starts on a fresh line.
  void EndProgress();

  void set_quiet(bool quiet) { quiet_ = quiet; }
  bool smart_terminal() const { return smart_terminal_; }

 private:
  std::ostream& out_;
  std::ostream& err_;
  bool smart_terminal_;
  bool quiet_ = false;
  bool progress_open_ = false;
};

/// Lines of a table for the console: the first column aligned left, the others right, each as
/// wide as its widest cell, columns two spaces apart. Rows shorter than the header are padded.
std::vector<std::string> FormatTable(const std::vector<std::string>& header,
                                     const std::vector<std::vector<std::string>>& rows);

}  // namespace stagegate::console
