// `stagegate corpus import FILE` and `stagegate corpus stats DIR`: help in authoring a corpus of
// the team's own approved questions.

#include <filesystem>

#include "base/files.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "manifest/corpus_import.h"
#include "manifest/corpus_stats.h"
#include "manifest/yaml_reader.h"

namespace stagegate::cli {
namespace {

namespace fs = std::filesystem;

// A file name safe in a YAML comment and a task file's name: letters, digits, '-', '_', '.'.
std::string SafeName(const std::string& name) {
  std::string safe;
  for (unsigned char c : name)
    safe += std::isalnum(c) || c == '-' || c == '_' || c == '.' ? static_cast<char>(c) : '_';
  return safe.empty() ? "imported" : safe;
}

class CorpusCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.require_subcommand(1);
    import_ = app.add_subcommand(
        "import",
        "Turn a CSV or JSON Lines file of questions into a task file of the corpus; every bad "
        "line is named, and nothing is written unless all are good");
    import_->add_option("file", file_, "The questions: .csv with a header row, or .jsonl")
        ->required();
    import_->add_option("--corpus", corpus_, "The corpus folder (holding corpus.yaml)")->required();
    import_->add_option("--name", name_,
                        "The task file to write: tasks/NAME.yaml (default: the input's name)");
    import_->add_option("--persona", defaults_.persona, "The persona of rows that give none");
    import_->add_option("--category", defaults_.category, "The category of rows that give none");
    import_->add_option("--approved-by", defaults_.approved_by,
                        "Who approved the rows that do not say");
    import_->add_option("--source", defaults_.source, "Where the rows that do not say came from");
    import_->footer("Columns (or JSON keys): " + Join(manifest::ImportColumns(), ", ") +
                    ". facts, needs and tags are lists: JSON arrays, or in CSV separated by "
                    "';'. Each fact becomes a `contains` check.");
    stats_ = app.add_subcommand(
        "stats",
        "Lengths and categories of a corpus's prompts, duplicates and near-duplicates, tasks "
        "without references, and init's examples still in it");
    stats_->add_option("corpus", stats_corpus_, "The corpus folder")->required();
    stats_->add_flag("--json", json_, "Print the statistics as JSON");
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    return import_->parsed() ? Import(console) : Stats(console);
  }

 private:
  ExitCode Import(console::Console& console) {
    manifest::Diagnostics read;
    const manifest::Corpus corpus = manifest::ReadCorpus(corpus_, read);
    // A corpus with no task file yet is where an import starts; any other problem is its own.
    manifest::Diagnostics diagnostics;
    for (const manifest::Diagnostic& problem : read.Sorted())
      if (!(corpus.tasks.empty() && problem.message.starts_with("no task files")))
        diagnostics.Error(problem.pos, problem.message);
    if (!diagnostics.empty()) {
      console.Error(diagnostics.ToString() + "corpus import: the corpus " + corpus_ +
                    " has problems of its own; fix them first");
      return ExitCode::kInvalidInput;
    }
    Result<std::string> text = ReadFile(file_);
    if (!text.ok()) return Fail(console, "corpus import", text.status());
    const std::vector<manifest::ImportedTask> tasks =
        manifest::ReadImport(file_, *text, defaults_, corpus, diagnostics);
    if (!diagnostics.empty()) {
      console.Error(diagnostics.ToString() + "corpus import: nothing written (" +
                    std::to_string(diagnostics.Count()) + " problems)");
      return ExitCode::kInvalidInput;
    }
    if (tasks.empty())
      return Fail(console, "corpus import", Status::InvalidInput(file_ + ": no question in it"));
    const std::string stem = SafeName(name_.empty() ? fs::path(file_).stem().string() : name_);
    const fs::path out = fs::path(corpus_) / "tasks" / (stem + ".yaml");
    std::error_code error;
    if (fs::exists(out, error))
      return Fail(console, "corpus import",
                  Status::InvalidInput(out.string() + " exists; give --name for another file"));
    const std::string yaml = manifest::TasksYaml(tasks, SafeName(fs::path(file_).filename()));
    if (yaml.size() > manifest::kMaxManifestBytes)
      return Fail(console, "corpus import",
                  Status::InvalidInput("the task file would be " + DescribeBytes(yaml.size()) +
                                       ", over the " + DescribeBytes(manifest::kMaxManifestBytes) +
                                       " a task file may be: split " + file_));
    fs::create_directories(out.parent_path(), error);
    if (Status written = WriteFileAtomically(out.string(), yaml); !written.ok())
      return Fail(console, "corpus import", written);
    // The corpus as a run will load it, the new file included.
    manifest::Diagnostics after;
    if (!manifest::LoadCorpus(corpus_, after)) {
      console.Error(after.ToString());
      return Fail(console, "corpus import",
                  Status::Internal("the corpus does not load with " + out.string() +
                                   " (a bug in import); remove the file"));
    }
    console.Line("imported " + std::to_string(tasks.size()) + " tasks into " + out.string());
    console.Line("check the mix: stagegate corpus stats " + corpus_);
    return ExitCode::kOk;
  }

  ExitCode Stats(console::Console& console) {
    manifest::Diagnostics diagnostics;
    const std::optional<manifest::Corpus> corpus = manifest::LoadCorpus(stats_corpus_, diagnostics);
    if (!corpus) {
      console.Error(diagnostics.ToString());
      return ExitCode::kInvalidInput;
    }
    const manifest::CorpusStats stats = manifest::ComputeCorpusStats(*corpus);
    if (json_) {
      console.Line(manifest::CorpusStatsToJson(stats).dump(2));
      return ExitCode::kOk;
    }
    console.Line("corpus       " + corpus->name + " " + corpus->version);
    for (const std::string& line : manifest::DescribeCorpusStats(stats))
      console.Line(line);
    return ExitCode::kOk;
  }

  CLI::App* import_ = nullptr;
  CLI::App* stats_ = nullptr;
  std::string file_, corpus_, name_, stats_corpus_;
  manifest::ImportDefaults defaults_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCorpusCommand() {
  return std::make_unique<CorpusCommand>();
}

}  // namespace stagegate::cli
