// The corpus loader on any corpus folder. A corpus is several files, so one input holds them
// all: each starts at a line "=== NAME", NAME one of corpus.yaml, personas.yaml, tools.yaml,
// tasks/X.yaml or docs/X.md (X made of a-z, 0-9 and '-'); text before the first such line, and
// a file under any other name, is left out. The folder is made afresh for each input, then
// loaded, and the canonical form of a corpus that loads is computed.

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "manifest/corpus.h"
#include "manifest/fingerprint.h"

namespace {

bool IsPlainName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool IsCorpusFile(std::string_view name) {
  if (name == "corpus.yaml" || name == "personas.yaml" || name == "tools.yaml") return true;
  for (auto [folder, suffix] : {std::pair{"tasks/", ".yaml"}, std::pair{"docs/", ".md"}}) {
    const std::string_view f(folder), s(suffix);
    if (name.starts_with(f) && name.ends_with(s) && name.size() > f.size() + s.size() &&
        IsPlainName(name.substr(f.size(), name.size() - f.size() - s.size())))
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace manifest = stagegate::manifest;
  using stagegate::fuzz::WriteScratchFile;

  stagegate::fuzz::RemoveScratch("corpus");
  const std::string_view text = stagegate::fuzz::AsText(data, size);
  std::string name;  // the file being collected; "" before the first header
  std::string content;
  const auto flush = [&] {
    if (IsCorpusFile(name)) WriteScratchFile("corpus/" + name, content);
    content.clear();
  };
  for (size_t at = 0; at < text.size();) {
    const size_t newline = text.find('\n', at);
    const size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    const std::string_view line = text.substr(at, end - at);
    if (line.starts_with("=== ")) {
      flush();
      name = line.substr(4);
      while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
        name.pop_back();
    } else {
      content.append(line);
    }
    at = end;
  }
  flush();

  const std::string dir = stagegate::fuzz::ScratchDir() + "/corpus";
  manifest::Diagnostics diagnostics;
  std::optional<manifest::Corpus> corpus = manifest::LoadCorpus(dir, diagnostics);
  if (!corpus) {
    if (diagnostics.empty()) stagegate::fuzz::Fail("not loaded, and no problem reported");
    (void)diagnostics.ToString();
    return 0;
  }
  (void)manifest::CanonicalCorpus(*corpus).dump();
  return 0;
}
