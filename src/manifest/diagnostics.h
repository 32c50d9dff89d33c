#pragma once

#include <string>
#include <vector>

namespace stagegate::manifest {

/// A place in an input file. Lines and columns count from 1; line 0 means the file as a whole,
/// column 0 the line as a whole.
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col", "file:line" for a whole line, or "file" for the whole file.
  std::string ToString() const;
};

struct Diagnostic {
  SourcePos pos;
  std::string message;

  /// "file:line:col: message", the form every problem is printed in; a note about the problems
  /// left out (no file) is its message alone.
  std::string ToString() const;
};

/// Collects every problem found while loading manifests, so that one pass reports them all.
/// Not thread-safe; one loader owns it. A file that is not a manifest at all can yield a problem a
/// line: past kMaxKept they are counted, not kept, and Sorted() shows the first kMaxShown.
class Diagnostics {
 public:
  static constexpr size_t kMaxKept = 10'000;
  static constexpr size_t kMaxShown = 100;

  void Error(SourcePos pos, std::string message);

  bool empty() const { return items_.empty(); }
  /// Every problem reported, kept or not.
  size_t size() const { return items_.size() + dropped_; }

  /// The problems ordered by file, line and column (then by the order they were found), with exact
  /// repeats removed: at most kMaxShown, then a note of how many more there are.
  std::vector<Diagnostic> Sorted() const;

  /// How many distinct problems there are, shown or not.
  size_t Count() const;

  /// Sorted(), one ToString() per line.
  std::string ToString() const;

 private:
  std::vector<Diagnostic> Unique() const;

  std::vector<Diagnostic> items_;
  size_t dropped_ = 0;
};

}  // namespace stagegate::manifest
