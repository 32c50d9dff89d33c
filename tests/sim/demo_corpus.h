#pragma once

// The shipped service-desk corpus, loaded once for the tests of the reference application.

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "manifest/corpus.h"
#include "test_paths.h"

namespace stagegate::testing {

inline const manifest::Corpus& DemoCorpus() {
  struct Loaded {
    std::optional<manifest::Corpus> corpus;
    std::string diagnostics;
  };
  static const Loaded loaded = [] {
    manifest::Diagnostics diagnostics;
    Loaded result;
    result.corpus =
        manifest::LoadCorpus(std::string(SourceDir()) + "/corpus/service-desk", diagnostics);
    result.diagnostics = diagnostics.ToString();
    return result;
  }();
  INFO(loaded.diagnostics);
  REQUIRE(loaded.corpus.has_value());
  return *loaded.corpus;
}

/// The question a task asks: its prompt, or the last user message.
inline std::string Question(const manifest::Task& task) {
  if (!task.prompt.empty()) return task.prompt;
  for (auto it = task.messages.rbegin(); it != task.messages.rend(); ++it)
    if (it->role == "user") return it->content;
  return "";
}

}  // namespace stagegate::testing
