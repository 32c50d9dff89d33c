#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/redact.h"
#include "base/status.h"
#include "http/openai_request.h"
#include "load/dataset.h"
#include "load/exchange.h"
#include "load/sessions.h"
#include "load/synthetic.h"
#include "load/trace.h"
#include "manifest/bundle.h"
#include "tokenize/tokenizer.h"

namespace stagegate::scenario {

/// What a scenario's `input` reads from files: the model's tokenizer and the dataset, each when
/// the input names one.
struct InputFiles {
  std::unique_ptr<tokenize::Tokenizer> tokenizer;
  std::optional<load::Dataset> dataset;
  std::vector<load::TraceEntry> trace;  // sorted by timestamp
};

/// Where a run sends its requests, after the command line's overrides: the target's base URL
/// (http://host:port, without the API path, which is the stage's) and model.
struct Endpoint {
  std::string base_url;
  std::string model;
  bool sim = false;  // the built-in reference application, which accepts sim-token-<persona>
  // The variable of the API key sent: the target's api_key_env when unset, none when empty.
  std::optional<std::string> api_key_env;
};

/// The requests one stage sends: the corpus tasks it covers (every task whose needs are among
/// the stage's capabilities, or every task), synthetic prompts, a dataset's entries, or a
/// trace's (sequence n is entry n modulo the count: its lengths, and prompt blocks shared as its
/// hash_ids say), with the stage's overlays on
/// the target (URL, headers, body fields), the persona's credentials and the tool definitions
/// when the stage sends them. Requests go round the tasks in corpus order, so sequence n of a
/// phase is always the same task. A request carries one Authorization header: the persona's
/// token on a stage with persona credentials, else the target's API key (api_key_env) when it
/// has one. Every spec points at the stage's redactor (the API key and every persona token the
/// environment holds), so a server echoing one of them cannot put it in a record.
class StageRequests {
 public:
  /// Fails (InvalidInput) when the stage has no task to send, or a persona's token variable or
  /// the target's api_key_env is unset against a target other than the sim.
  /// `files` are the scenario's input files (LoadInputFiles); they must outlive the requests.
  static Result<StageRequests> Make(const manifest::Bundle& bundle,
                                    const manifest::EffectiveStage& stage, const Endpoint& endpoint,
                                    const InputFiles* files = nullptr);

  load::RequestSpec operator()(int64_t sequence) const;
  /// A request of a fault-control probe: `task`'s conversation (or `prompt` when task is null),
  /// with this stage's overlays but the probe's own credentials: `bearer` (or none).
  load::RequestSpec Probe(const manifest::Task* task, const std::string& prompt,
                          const std::optional<std::string>& bearer,
                          const std::string& persona) const;
  /// The request for the task at `task_index` (modulo the count) of the stage's order
  /// (InterleaveByCategory); quality samples at rest go task by task from the first.
  load::RequestSpec ForTask(size_t task_index) const;
  size_t task_count() const { return tasks_.size(); }
  /// Makes the tasks' requests those of a plain HTTP JSON API: each body is `body` with
  /// "{prompt}" in its strings replaced by the task's question, sent whole (not streamed); the
  /// answer is the string at `answer_at` (a JSON pointer) in the reply. The stage's headers and
  /// credentials stay; the OpenAI body's fields, tool definitions among them, are not sent.
  void AskPlainApi(const nlohmann::json& body, const std::string& answer_at);

  /// Load phases as multi-turn sessions, when the input has `sessions` or a task it sends has
  /// follow-ups: a synthetic session as load::MakeSyntheticSessions draws it; a corpus session is
  /// the task at its id (modulo the count, in the stage's order), its later turns the task's
  /// follow-ups, each after a think time drawn from `sessions.think_time_ms`. Null otherwise.
  load::SessionSource Sessions() const;
  bool has_sessions() const { return sessions_.has_value() && dataset_ == nullptr; }
  /// How many turns session `session` of Sessions() has.
  int64_t TurnsOf(int64_t session) const;

 private:
  /// Takes the stage's overlays on the target: the URL (on `base`, the stage's base URL), the
  /// body's options and fields (the tools' definitions among them when it sends them), and the
  /// stage's headers.
  void UseOverlays(const manifest::Bundle& bundle, const manifest::EffectiveStage& stage,
                   const Endpoint& endpoint, const std::string& base);
  /// Adds the API key's header to the default headers, and makes the redactor of every secret a
  /// request may carry. Fails (InvalidInput) when api_key_env is unset.
  Status UseSecrets(const manifest::Bundle& bundle, const Endpoint& endpoint,
                    const std::string& base);
  /// Makes the request of each of the stage's tasks of `corpus`, in the stage's order. Fails
  /// (InvalidInput) on a persona's unset token variable, a follow-up without the chat endpoint,
  /// or no task at all.
  Status UseCorpusTasks(const manifest::Corpus& corpus, const manifest::EffectiveStage& stage,
                        const Endpoint& endpoint);
  std::string BodyFor(const manifest::Task* task, std::string_view prompt) const;
  /// The request of a synthetic prompt (or a trace entry's), asking for its output length.
  load::RequestSpec SyntheticSpec(const load::SyntheticInput& input) const;
  /// The task's conversation: its messages, or its prompt as the user's.
  nlohmann::json Conversation(const manifest::Task& task) const;

  struct TaskRequest {
    const manifest::Task* task;
    std::string body;
    std::vector<std::string> headers;  // may carry a persona's token: never stored or printed
  };
  std::string url_;
  std::vector<TaskRequest> tasks_;  // empty for synthetic input
  http::RequestBodyOptions body_;
  std::vector<std::string> headers_;          // the stage's own
  std::vector<std::string> default_headers_;  // and the API key's, for requests without a persona
  // Shared by the copies of these requests and pointed at by every spec they make, for as long
  // as a spec lives; immutable once made.
  std::shared_ptr<const Redactor> redactor_;
  std::optional<load::SyntheticOptions> synthetic_;
  const load::Dataset* dataset_ = nullptr;
  const std::vector<load::TraceEntry>* trace_ = nullptr;  // non-empty when set
  int64_t block_tokens_ = 512;
  const tokenize::Tokenizer* tokenizer_ = nullptr;
  std::optional<load::SessionShape> sessions_;
  uint64_t seed_ = 0;
  bool stream_ = true;
  std::string answer_at_;  // a plain JSON API's answer; "" for the OpenAI API
};

/// What a scenario's `input` asks of its dataset: the format and the filters.
load::DatasetOptions InputDatasetOptions(const manifest::InputSpec& input);

/// Reads the input's files as a run does (a dataset's prompt lengths counted with the tokenizer
/// when there is one). Each problem goes to `diagnostics`: a tokenizer's at the scenario's
/// `tokenizer` key, a dataset's at the file's path and line, a trace's (each naming its line) at
/// the scenario's `path` key. False when there was any.
bool LoadInputFiles(const manifest::Scenario& scenario, manifest::Diagnostics& diagnostics,
                    InputFiles& files);

/// A persona's bearer token: the value of its `token_env` variable; against the sim, which
/// accepts it, sim-token-<name> when the variable is unset. Absent otherwise.
std::optional<std::string> PersonaToken(const manifest::Persona& persona, bool sim);

/// The tasks of `corpus` a stage sends, in corpus order.
std::vector<const manifest::Task*> StageTasks(const manifest::Corpus& corpus,
                                              const manifest::EffectiveStage& stage);

/// `tasks` in turns across their categories, the categories in the order they first appear: the
/// first task of each category, then the second of each, and so on, each category's tasks in the
/// order given. A stage sends its tasks in this order, so that any stretch of its requests, and
/// its quality samples (the first tasks at rest, the first distinct ones under load), mix every
/// category instead of holding the corpus's first categories alone.
std::vector<const manifest::Task*> InterleaveByCategory(
    const std::vector<const manifest::Task*>& tasks);

}  // namespace stagegate::scenario
