#include "manifest/diagnostics.h"

#include <algorithm>
#include <tuple>

namespace stagegate::manifest {

std::string SourcePos::ToString() const {
  if (line <= 0) return file;
  if (column <= 0) return file + ":" + std::to_string(line);
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::ToString() const {
  if (pos.file.empty()) return message;
  return pos.ToString() + ": " + message;
}

void Diagnostics::Error(SourcePos pos, std::string message) {
  if (items_.size() >= kMaxKept) {
    ++dropped_;
    return;
  }
  items_.push_back({std::move(pos), std::move(message)});
}

size_t Diagnostics::Count() const {
  return Unique().size() + dropped_;
}

std::vector<Diagnostic> Diagnostics::Sorted() const {
  std::vector<Diagnostic> sorted = Unique();
  const size_t total = sorted.size() + dropped_;
  if (total > kMaxShown) {
    sorted.resize(std::min(sorted.size(), kMaxShown));
    sorted.push_back(
        {{}, "... and " + std::to_string(total - sorted.size()) + " more problems not shown"});
  }
  return sorted;
}

std::vector<Diagnostic> Diagnostics::Unique() const {
  std::vector<Diagnostic> sorted = items_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.pos.file, a.pos.line, a.pos.column) <
           std::tie(b.pos.file, b.pos.line, b.pos.column);
  });
  auto same = [](const Diagnostic& a, const Diagnostic& b) {
    return a.pos.file == b.pos.file && a.pos.line == b.pos.line && a.pos.column == b.pos.column &&
           a.message == b.message;
  };
  sorted.erase(std::unique(sorted.begin(), sorted.end(), same), sorted.end());
  return sorted;
}

std::string Diagnostics::ToString() const {
  std::string out;
  for (const Diagnostic& diagnostic : Sorted())
    out += diagnostic.ToString() + "\n";
  return out;
}

}  // namespace stagegate::manifest
