#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <sstream>

#include <unistd.h>

#include "base/strings.h"
#include "base/version.h"
#include "cli/command.h"
#include "http/url_check.h"
#include "store/store.h"

namespace stagegate::cli {

const std::vector<CommandEntry>& Commands() {
  static const std::vector<CommandEntry> kCommands = {
      {"init",
       "Start on your own application: a scenario mapped to its endpoint, a corpus skeleton and a "
       "rubric, shaped by one probe of the endpoint; never overwrites a file",
       MakeInitCommand},
      {"corpus",
       "Author the corpus: import questions from CSV or JSON Lines into task files, or show its "
       "lengths, categories, duplicates and tasks without references",
       MakeCorpusCommand},
      {"validate",
       "Check a scenario and everything it references; print its summary and fingerprint",
       MakeValidateCommand},
      {"sim",
       "Run the built-in reference application (an OpenAI-compatible assistant) until stopped",
       MakeSimCommand},
      {"run",
       "Run a scenario: its stages and load phases against its target, into the store and "
       "reports/<run id>/",
       MakeRunCommand},
      {"profile",
       "Measure one OpenAI-compatible endpoint at one or more load levels (no scenario file)",
       MakeProfileCommand},
      {"merge", "Join the stores of a run's shards into one run, every figure computed again",
       MakeMergeCommand},
      {"export",
       "Export a run's sampled answers for blinded review: one packet per reviewer (HTML page, "
       "CSV, JSONL)",
       MakeExportCommand},
      {"import", "Import reviewers' scores for a run; checks every file before writing anything",
       MakeImportCommand},
      {"judge",
       "Score a run's sampled answers with an LLM judge (any OpenAI-compatible endpoint), kept "
       "apart from the reviewers' scores",
       MakeJudgeCommand},
      {"quality",
       "Condition 2 of a run: reviewers' scores, their agreement and effort, and the automated "
       "checks apart; --gate exits 0 pass, 1 fail, 4 pending",
       MakeQualityCommand},
      {"report",
       "The release report of a run: verdict and the three conditions, as Markdown, HTML, JSON, "
       "JUnit XML and CSV; --gate exits 0 ready, 1 not ready, 4 pending",
       MakeReportCommand},
      {"signoff",
       "Record an owner's decision (accept or reject) on one condition of a run, with the "
       "evidence it was made on; the report shows it, stale once the evidence changes",
       MakeSignoffCommand},
      {"runs", "List the runs in the store, with their status and verdict", MakeRunsCommand},
      {"compare",
       "Compare a run with a baseline run: comparability, then latency and score differences "
       "with significance tests; exit 1 on a regression, 2 when refused, 4 when nothing to "
       "compare",
       MakeCompareCommand},
      {"triage",
       "Classify every request of a run for support: slow, wrong, tool-failure, denied, shed, "
       "error or ok, with its evidence and trace id",
       MakeTriageCommand},
      {"k8s",
       "Print the Kubernetes objects that run a scenario as N shards starting together, one pod "
       "each, and merge their results (kubectl apply -f -)",
       MakeK8sCommand},
  };
  return kCommands;
}

CLI::Validator Between(double min, double max) {
  const std::string rule = "between " + FormatNumber(min) + " and " + FormatNumber(max);
  return CLI::Validator(
      [min, max, rule](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value))
          return "must be a number " + rule + ", got '" + text + "'";
        if (value < min || value > max) return "must be " + rule + ", got " + text;
        return "";
      },
      "NUMBER in [" + FormatNumber(min) + ", " + FormatNumber(max) + "]");
}

CLI::Validator HttpUrl() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const Status checked = http::CheckHttpUrl(text);
        return checked.ok() ? "" : checked.message();
      },
      "URL");
}

CLI::Validator BaseUrlToKeep() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const Status checked = http::CheckBaseUrlToKeep(text);
        return checked.ok() ? "" : checked.message();
      },
      "URL");
}

int RunGuarded(const std::string& name, const std::function<ExitCode()>& run,
               console::Console& console) {
  // The last resort: whatever escaped is a defect, but it ends in a documented exit code.
  try {
    return ToInt(run());
  } catch (const std::exception& error) {
    console.Error(name + ": internal error: " + error.what());
  } catch (...) {
    console.Error(name + ": internal error: an unknown exception");
  }
  return ToInt(ExitCode::kRuntimeFailure);
}

int Main(int argc, const char* const* argv, console::Console& console,
         const scenario::RunSeam* seam) {
  CLI::App app{
      "stagegate: decides whether an LLM application is ready for release, on three "
      "separate conditions: responsiveness, quality, recoverability."};
  app.name("stagegate");
  app.set_version_flag("--version", std::string("stagegate ") + kVersion);
  app.require_subcommand(1);
  // --db and --quiet may come after the subcommand too, as git's and kubectl's do.
  app.fallthrough();
  app.footer(kExitCodeHelp);
  GlobalOptions global;
  global.db_path = store::kDefaultStorePath;
  global.seam = seam;
  app.add_option("--db", global.db_path, "The SQLite store of runs")->capture_default_str();
  app.add_flag("-q,--quiet", global.quiet, "Print no progress lines");

  std::vector<std::unique_ptr<Command>> commands;
  std::vector<CLI::App*> subcommands;
  for (const CommandEntry& entry : Commands()) {
    commands.push_back(entry.make());
    CLI::App* sub = app.add_subcommand(entry.name, entry.summary);
    sub->footer(kExitCodeHelp);
    commands.back()->Configure(*sub);
    subcommands.push_back(sub);
  }

  // CLI11 would say only "A subcommand is required" for a misspelt command; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CommandEntry& entry : Commands())
      names.emplace_back(entry.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      console.Error(std::string("unknown command '") + argv[1] + "'" + DidYouMean(argv[1], names) +
                    "\nRun with --help for the list of commands.");
      return ToInt(ExitCode::kInvalidInput);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::ostringstream out, err;
    int code = app.exit(error, out, err);
    if (!out.str().empty()) console.Line(out.str().substr(0, out.str().size() - 1));
    if (!err.str().empty()) console.Error(err.str().substr(0, err.str().size() - 1));
    // CLI11 exits 0 for --help and --version; anything else is a usage error.
    return code == 0 ? ToInt(ExitCode::kOk) : ToInt(ExitCode::kInvalidInput);
  }
  console.set_quiet(global.quiet);
  for (size_t i = 0; i < subcommands.size(); ++i) {
    if (!subcommands[i]->parsed()) continue;
    const std::string name = std::string("stagegate ") + Commands()[i].name;
    SetRunningCommand(name);
    return RunGuarded(
        name, [&] { return commands[i]->Run(global, console); }, console);
  }
  return ToInt(ExitCode::kInvalidInput);
}

namespace {

// What the terminate handler names; a fixed buffer, so the handler need not allocate to read it.
char running_command[64] = "stagegate";

[[noreturn]] void OnTerminate() {
  std::string message = std::string(running_command) + ": internal error: ";
  try {
    if (std::exception_ptr escaped = std::current_exception()) std::rethrow_exception(escaped);
    message += "terminated";
  } catch (const std::exception& error) {
    message += error.what();
  } catch (...) {
    message += "an unknown exception";
  }
  message += "\n";
  [[maybe_unused]] ssize_t written = write(STDERR_FILENO, message.data(), message.size());
  _exit(ToInt(ExitCode::kRuntimeFailure));
}

}  // namespace

void SetRunningCommand(std::string_view name) {
  const size_t length = std::min(name.size(), sizeof running_command - 1);
  std::copy_n(name.data(), length, running_command);
  running_command[length] = '\0';
}

void InstallLastResortHandler() {
  std::set_terminate(OnTerminate);
}

}  // namespace stagegate::cli
