#pragma once

#include <string>
#include <vector>

namespace stagegate::manifest {

/// A place in an input file. Lines and columns count from 1; line 0 means the file as a whole.
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col", or "file" for the whole file.
  std::string ToString() const;
};

struct Diagnostic {
  SourcePos pos;
  std::string message;

  /// "file:line:col: message", the form every problem is printed in.
  std::string ToString() const;
};

/// Collects every problem found while loading manifests, so that one pass reports them all.
/// Not thread-safe; one loader owns it.
class Diagnostics {
 public:
  void Error(SourcePos pos, std::string message);

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

  /// The problems ordered by file, line and column (then by the order they were found), with exact
  /// repeats removed.
  std::vector<Diagnostic> Sorted() const;

  /// Sorted(), one ToString() per line.
  std::string ToString() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace stagegate::manifest
