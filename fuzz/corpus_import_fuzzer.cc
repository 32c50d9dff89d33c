// `stagegate corpus import` on any file: the first byte picks CSV (even) or JSON Lines (odd), the
// rest is the file. Whatever it reads without a problem must round-trip: the task file it writes
// loads as a corpus with every prompt, reference and fact as read. Anything else is a finding.

#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "manifest/corpus.h"
#include "manifest/corpus_import.h"
#include "manifest/yaml_reader.h"

namespace {

const stagegate::manifest::Corpus& Fixture() {
  static const stagegate::manifest::Corpus corpus = [] {
    stagegate::manifest::Corpus c;
    c.personas.push_back({.name = "employee"});
    return c;
  }();
  return corpus;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stagegate;
  if (size == 0) return 0;
  const std::string path = data[0] % 2 ? "questions.jsonl" : "questions.csv";
  manifest::Diagnostics diagnostics;
  const std::vector<manifest::ImportedTask> tasks = manifest::ReadImport(
      path, std::string(fuzz::AsText(data + 1, size - 1)),
      {.persona = "employee", .category = "c", .approved_by = "a", .source = "s"}, Fixture(),
      diagnostics);
  if (!diagnostics.empty() || tasks.empty()) return 0;
  const std::string yaml = manifest::TasksYaml(tasks, "fuzz");
  if (yaml.size() > manifest::kMaxManifestBytes) return 0;  // refused by the command
  fuzz::RemoveScratch("import");
  fuzz::WriteScratchFile("import/corpus.yaml", "name: n\nversion: \"1\"\nowner: o\n");
  fuzz::WriteScratchFile("import/personas.yaml",
                         "personas:\n  - {name: employee, token_env: T, groups: [g]}\n");
  fuzz::WriteScratchFile("import/tasks/imported.yaml", yaml);
  manifest::Diagnostics loaded_diagnostics;
  const std::optional<manifest::Corpus> loaded =
      manifest::LoadCorpus(fuzz::ScratchDir() + "/import", loaded_diagnostics);
  if (!loaded) fuzz::Fail("imported tasks do not load: " + loaded_diagnostics.ToString());
  if (loaded->tasks.size() != tasks.size()) fuzz::Fail("a task was lost on the way");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const manifest::Task& t = loaded->tasks[i];
    if (t.id != tasks[i].id || t.prompt != tasks[i].prompt || t.reference != tasks[i].reference ||
        t.category != tasks[i].category || t.checks.size() != tasks[i].facts.size())
      fuzz::Fail("task " + tasks[i].id + " does not round-trip");
    for (size_t f = 0; f < tasks[i].facts.size(); ++f)
      if (t.checks[f].text != tasks[i].facts[f]) fuzz::Fail("a fact does not round-trip");
  }
  return 0;
}
