#include "scenario/stage_requests.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "base/strings.h"

namespace stagegate::scenario {
namespace {

// A synthetic source's prompts: their lengths, seed and shared prefixes.
load::SyntheticOptions SyntheticOf(const manifest::Scenario& scenario,
                                   const tokenize::Tokenizer* tokenizer) {
  const manifest::TokenDistribution in =
      scenario.input.input_tokens.value_or(manifest::TokenDistribution{550, 0});
  const manifest::TokenDistribution out =
      scenario.input.output_tokens.value_or(manifest::TokenDistribution{128, 0});
  load::SyntheticOptions options{.input_tokens = {in.mean, in.std},
                                 .output_tokens = {out.mean, out.std},
                                 .seed = scenario.seed,
                                 .tokenizer = tokenizer};
  if (const std::optional<manifest::SharedPrefixSpec>& prefix = scenario.input.shared_prefix)
    options.prefixes = {.count = prefix->count, .tokens = prefix->tokens, .share = prefix->share};
  return options;
}

using json = nlohmann::json;

json ToolsJson(const manifest::Corpus& corpus) {
  json tools = json::array();
  for (const manifest::ToolDefinition& tool : corpus.tools)
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", tool.name},
                       {"description", tool.description},
                       {"parameters", tool.parameters}}}});
  return tools;
}

// The shape of the input's sessions, when it has them.
std::optional<load::SessionShape> SessionShapeOf(const manifest::InputSpec& input) {
  const std::optional<manifest::SessionSpec>& sessions = input.sessions;
  if (!sessions) return std::nullopt;
  const auto spec =
      [](const std::optional<manifest::TokenDistribution>& d) -> std::optional<load::TokenSpec> {
    if (!d) return std::nullopt;
    return load::TokenSpec{d->mean, d->std};
  };
  return load::SessionShape{.turns = spec(sessions->turns).value_or(load::TokenSpec{1, 0}),
                            .think_ms = {sessions->think_ms.mean, sessions->think_ms.std},
                            .follow_up_tokens = spec(sessions->follow_up_tokens)};
}

}  // namespace

load::DatasetOptions InputDatasetOptions(const manifest::InputSpec& input) {
  return {.format = load::DatasetFormatFromName(input.dataset_format),
          .min_tokens = input.min_tokens,
          .max_tokens = input.max_tokens,
          .max_output_tokens = input.max_output_tokens};
}

bool LoadInputFiles(const manifest::Scenario& scenario, manifest::Diagnostics& diagnostics,
                    InputFiles& files) {
  const manifest::InputSpec& input = scenario.input;
  const size_t problems_before = diagnostics.Count();
  if (!input.tokenizer.empty()) {
    Result<std::unique_ptr<tokenize::Tokenizer>> loaded =
        tokenize::Tokenizer::Load(input.tokenizer.resolved);
    if (loaded.ok())
      files.tokenizer = std::move(*loaded);
    else
      diagnostics.Error(input.tokenizer.pos, loaded.status().message());
  }
  if (input.source == manifest::InputSource::kDataset) {
    load::DatasetOptions options = InputDatasetOptions(input);
    if (const tokenize::Tokenizer* tokenizer = files.tokenizer.get())
      options.count_tokens = [tokenizer](std::string_view text) { return tokenizer->Count(text); };
    load::DatasetLoad loaded = load::LoadDataset(input.dataset.resolved, options);
    for (const load::DatasetProblem& problem : loaded.problems)
      diagnostics.Error({.file = input.dataset.resolved, .line = static_cast<int>(problem.line)},
                        problem.message);
    if (loaded.more_problems > 0)
      diagnostics.Error({.file = input.dataset.resolved},
                        std::to_string(loaded.more_problems) + " more problems not shown");
    files.dataset = std::move(loaded.dataset);
  }
  if (input.source == manifest::InputSource::kTrace) {
    Result<std::vector<load::TraceEntry>> trace = load::LoadTrace(input.trace.resolved);
    if (trace.ok())
      files.trace = std::move(*trace);
    else
      for (const std::string& line : Split(trace.status().message(), '\n'))
        diagnostics.Error(input.trace.pos, line);
  }
  return diagnostics.Count() == problems_before;
}

std::optional<std::string> PersonaToken(const manifest::Persona& persona, bool sim) {
  const char* value = persona.token_env.empty() ? nullptr : std::getenv(persona.token_env.c_str());
  if (value != nullptr && *value != '\0') return std::string(value);
  if (sim) return "sim-token-" + persona.name;
  return std::nullopt;
}

std::vector<const manifest::Task*> StageTasks(const manifest::Corpus& corpus,
                                              const manifest::EffectiveStage& stage) {
  std::vector<const manifest::Task*> tasks;
  for (const manifest::Task& task : corpus.tasks) {
    const bool covered =
        std::all_of(task.needs.begin(), task.needs.end(), [&](manifest::Capability need) {
          return std::find(stage.capabilities.begin(), stage.capabilities.end(), need) !=
                 stage.capabilities.end();
        });
    if (covered || stage.tasks == manifest::TaskSelection::kAll) tasks.push_back(&task);
  }
  return tasks;
}

std::vector<const manifest::Task*> InterleaveByCategory(
    const std::vector<const manifest::Task*>& tasks) {
  std::vector<std::vector<const manifest::Task*>> by_category;
  std::map<std::string, size_t> index_of;
  for (const manifest::Task* task : tasks) {
    const auto [at, added] = index_of.try_emplace(task->category, by_category.size());
    if (added) by_category.emplace_back();
    by_category[at->second].push_back(task);
  }
  std::vector<const manifest::Task*> order;
  order.reserve(tasks.size());
  for (size_t turn = 0; order.size() < tasks.size(); ++turn)
    for (const std::vector<const manifest::Task*>& category : by_category)
      if (turn < category.size()) order.push_back(category[turn]);
  return order;
}

void StageRequests::UseOverlays(const manifest::Bundle& bundle,
                                const manifest::EffectiveStage& stage, const Endpoint& endpoint,
                                const std::string& base) {
  const manifest::Scenario& scenario = bundle.scenario;
  const http::ApiKind api = scenario.target.endpoint == manifest::Endpoint::kChat
                                ? http::ApiKind::kChat
                                : http::ApiKind::kCompletions;
  url_ = base + (stage.path.empty() ? "/v1" + http::ApiPath(api) : stage.path);
  stream_ = scenario.target.stream;

  json extra = scenario.input.extra_body;
  if (scenario.manifest.temperature) extra["temperature"] = *scenario.manifest.temperature;
  if (scenario.manifest.top_p) extra["top_p"] = *scenario.manifest.top_p;
  if (stage.tools && bundle.corpus && !bundle.corpus->tools.empty())
    extra["tools"] = ToolsJson(*bundle.corpus);
  extra.merge_patch(stage.body);
  body_ = {.api = api,
           .model = endpoint.model,
           .stream = scenario.target.stream,
           .max_tokens = scenario.manifest.max_tokens,
           .extra = extra};
  for (const auto& [name, value] : stage.headers)
    headers_.push_back(name + ": " + value);
  default_headers_ = headers_;
}

Status StageRequests::UseSecrets(const manifest::Bundle& bundle, const Endpoint& endpoint,
                                 const std::string& base) {
  const manifest::Scenario& scenario = bundle.scenario;
  auto redactor = std::make_shared<Redactor>();
  redactor->AddAll(UrlSecrets(base));
  // Every key the scenario names is redacted, whichever this endpoint sends.
  const std::string& key_env = endpoint.api_key_env.value_or(scenario.target.api_key_env);
  for (const std::string& other : {scenario.target.api_key_env, key_env})
    if (const char* key = other.empty() ? nullptr : std::getenv(other.c_str())) redactor->Add(key);
  if (!key_env.empty()) {
    const char* key = std::getenv(key_env.c_str());
    if (key == nullptr || *key == '\0')
      return Status::InvalidInput((endpoint.api_key_env ? "the baseline's" : "the target's") +
                                  std::string(" api_key_env names ") + key_env +
                                  ", which is unset");
    default_headers_.push_back(std::string("Authorization: Bearer ") + key);
  }
  if (bundle.corpus)
    for (const manifest::Persona& persona : bundle.corpus->personas)
      if (const char* token =
              persona.token_env.empty() ? nullptr : std::getenv(persona.token_env.c_str()))
        redactor->Add(token);
  redactor_ = std::move(redactor);
  return Status::Ok();
}

Status StageRequests::UseCorpusTasks(const manifest::Corpus& corpus,
                                     const manifest::EffectiveStage& stage,
                                     const Endpoint& endpoint) {
  std::vector<std::string> missing;
  for (const manifest::Task* task : InterleaveByCategory(StageTasks(corpus, stage))) {
    TaskRequest request{.task = task, .headers = default_headers_};
    if (stage.persona_credentials) {
      const manifest::Persona* persona = corpus.FindPersona(task->persona.name);
      if (persona != nullptr) {
        std::optional<std::string> token = PersonaToken(*persona, endpoint.sim);
        if (token) {
          // The persona's token takes the Authorization header in place of the API key.
          request.headers = headers_;
          request.headers.push_back("Authorization: Bearer " + *token);
        } else if (std::find(missing.begin(), missing.end(), persona->token_env) == missing.end()) {
          missing.push_back(persona->token_env);
        }
      }
    }
    request.body = BodyFor(task, "");
    tasks_.push_back(std::move(request));
    if (!task->follow_ups.empty() && body_.api != http::ApiKind::kChat)
      return Status::InvalidInput("task '" + task->id +
                                  "' has follow-ups, which carry a conversation: they need the "
                                  "target's chat endpoint");
    // A task with follow-ups makes the stage's load phases sessions, think time 0 unless the
    // input says otherwise.
    if (!task->follow_ups.empty() && !sessions_) sessions_ = load::SessionShape{};
  }
  if (!missing.empty())
    return Status::InvalidInput(
        "stage '" + stage.name +
        "' sends persona credentials, but these variables are unset: " + Join(missing, ", "));
  if (tasks_.empty())
    return Status::InvalidInput(
        "stage '" + stage.name + "' has no corpus task to send: none " +
        "needs only its capabilities (set 'tasks: all' to send every task)");
  return Status::Ok();
}

Result<StageRequests> StageRequests::Make(const manifest::Bundle& bundle,
                                          const manifest::EffectiveStage& stage,
                                          const Endpoint& endpoint, const InputFiles* files) {
  const manifest::Scenario& scenario = bundle.scenario;
  StageRequests requests;
  std::string base = stage.base_url.empty() ? endpoint.base_url : stage.base_url;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  requests.UseOverlays(bundle, stage, endpoint, base);
  SG_RETURN_IF_ERROR(requests.UseSecrets(bundle, endpoint, base));
  requests.tokenizer_ = files ? files->tokenizer.get() : nullptr;
  requests.seed_ = scenario.seed;
  requests.sessions_ = SessionShapeOf(scenario.input);

  if (scenario.input.source == manifest::InputSource::kTrace) {
    if (files == nullptr || files->trace.empty())
      return Status::InvalidInput("the scenario's input is a trace, but it was not read");
    requests.trace_ = &files->trace;
    requests.block_tokens_ = scenario.input.block_tokens;
    return requests;
  }
  const load::Dataset* dataset = files && files->dataset ? &*files->dataset : nullptr;
  if (scenario.input.source == manifest::InputSource::kDataset) {
    if (dataset == nullptr || dataset->entries.empty())
      return Status::InvalidInput("the scenario's input is a dataset, but it was not read");
    requests.dataset_ = dataset;
    if (scenario.input.output_tokens)
      requests.body_.max_tokens = std::llround(scenario.input.output_tokens->mean);
    return requests;
  }
  if (scenario.input.source == manifest::InputSource::kSynthetic) {
    requests.synthetic_ = SyntheticOf(scenario, requests.tokenizer_);
    return requests;
  }
  if (!bundle.corpus)
    return Status::InvalidInput("the scenario's input is the corpus, but it names none");
  SG_RETURN_IF_ERROR(requests.UseCorpusTasks(*bundle.corpus, stage, endpoint));
  return requests;
}

json StageRequests::Conversation(const manifest::Task& task) const {
  json messages = json::array();
  for (const manifest::ChatMessage& message : task.messages)
    messages.push_back({{"role", message.role}, {"content", message.content}});
  if (task.messages.empty()) messages.push_back({{"role", "user"}, {"content", task.prompt}});
  return messages;
}

std::string StageRequests::BodyFor(const manifest::Task* task, std::string_view prompt) const {
  if (task == nullptr) return http::BuildRequestBody(body_, prompt);
  if (!task->messages.empty() && body_.api == http::ApiKind::kChat)
    return http::BuildChatBody(body_, Conversation(*task));
  return http::BuildRequestBody(body_, task->Question());
}

int64_t StageRequests::TurnsOf(int64_t session) const {
  if (!sessions_) return 1;
  if (synthetic_) return load::SessionTurns(*sessions_, seed_, session);
  if (tasks_.empty()) return 1;
  return 1 + static_cast<int64_t>(
                 tasks_[static_cast<size_t>(session) % tasks_.size()].task->follow_ups.size());
}

load::SessionSource StageRequests::Sessions() const {
  if (!sessions_ || dataset_) return {};
  // Copies of what the turns need, so that the source outlives nothing it points into but the
  // tasks, the redactor and the tokenizer, which outlive the run.
  load::RequestSpec base{.url = url_,
                         .headers = default_headers_,
                         .stream = stream_,
                         .redactor = redactor_.get(),
                         .tokenizer = tokenizer_};
  const http::RequestBodyOptions body = body_;
  const std::shared_ptr<const Redactor> keep_redactor = redactor_;
  if (synthetic_)
    return load::MakeSyntheticSessions(
        *sessions_, *synthetic_,
        [base, body, keep_redactor](const json& messages, int64_t output_tokens) {
          load::RequestSpec spec = base;
          http::RequestBodyOptions turn_body = body;
          turn_body.max_tokens = output_tokens;
          spec.body = http::BuildChatBody(turn_body, messages);
          return spec;
        });
  std::vector<std::pair<TaskRequest, json>> tasks;
  for (const TaskRequest& request : tasks_)
    tasks.emplace_back(request, Conversation(*request.task));
  return
      [tasks = std::move(tasks), base, body, keep_redactor, shape = *sessions_, seed = seed_](
          int64_t session, int64_t turn, const json& so_far) -> std::optional<load::TurnRequest> {
        const auto& [request, conversation] = tasks[static_cast<size_t>(session) % tasks.size()];
        const std::vector<std::string>& follow_ups = request.task->follow_ups;
        if (turn > static_cast<int64_t>(follow_ups.size()) || (turn > 0 && !so_far.is_array()))
          return std::nullopt;
        load::TurnRequest out{.spec = base};
        out.spec.headers = request.headers;
        out.spec.task_id = request.task->id;
        out.spec.persona = request.task->persona.name;
        if (turn == 0) {
          out.spec.body = request.body;
          out.messages = conversation;
          return out;
        }
        out.messages = so_far;
        out.messages.push_back({{"role", "user"}, {"content", follow_ups[turn - 1]}});
        out.spec.body = http::BuildChatBody(body, out.messages);
        out.think_ns = load::ThinkTimeNs(shape, seed, session, turn);
        return out;
      };
}

load::RequestSpec StageRequests::Probe(const manifest::Task* task, const std::string& prompt,
                                       const std::optional<std::string>& bearer,
                                       const std::string& persona) const {
  load::RequestSpec spec{.url = url_,
                         .body = BodyFor(task, prompt),
                         .headers = headers_,
                         .stream = stream_,
                         .task_id = task ? task->id : "",
                         .persona = persona,
                         .redactor = redactor_.get(),
                         .tokenizer = tokenizer_};
  if (bearer) spec.headers.push_back("Authorization: Bearer " + *bearer);
  return spec;
}

load::RequestSpec StageRequests::ForTask(size_t task_index) const {
  const TaskRequest& request = tasks_[task_index % tasks_.size()];
  return {.url = url_,
          .body = request.body,
          .headers = request.headers,
          .stream = stream_,
          .task_id = request.task->id,
          .persona = request.task->persona.name,
          .redactor = redactor_.get(),
          .tokenizer = tokenizer_,
          .answer_at = answer_at_};
}

namespace {

// `value` with "{prompt}" in each of its strings replaced by `question`.
json FillPromptSlot(const json& value, const std::string& question) {
  if (value.is_string()) return ReplaceAll(value.get<std::string>(), "{prompt}", question);
  json out = value;
  if (out.is_structured())
    for (json& item : out)
      item = FillPromptSlot(item, question);
  return out;
}

}  // namespace

void StageRequests::AskPlainApi(const json& body, const std::string& answer_at) {
  for (TaskRequest& request : tasks_) {
    request.body = FillPromptSlot(body, request.task->Question())
                       .dump(-1, ' ', false, json::error_handler_t::replace);
  }
  stream_ = false;
  answer_at_ = answer_at;
}

load::RequestSpec StageRequests::operator()(int64_t sequence) const {
  if (dataset_) {
    const load::DatasetEntry& entry =
        dataset_->entries[load::DatasetIndex(seed_, sequence, dataset_->entries.size())];
    return {.url = url_,
            .body = load::DatasetRequestBody(body_, entry),
            .headers = default_headers_,
            .stream = stream_,
            .requested_input_tokens = entry.input_tokens,
            .requested_output_tokens = entry.output_tokens ? entry.output_tokens : body_.max_tokens,
            .redactor = redactor_.get(),
            .tokenizer = tokenizer_};
  }
  if (trace_) {
    const load::TraceEntry& entry = (*trace_)[static_cast<size_t>(sequence) % trace_->size()];
    load::SyntheticOptions options{.input_tokens = {static_cast<double>(entry.input_length), 0},
                                   .output_tokens = {static_cast<double>(entry.output_length), 0},
                                   .seed = seed_,
                                   .tokenizer = tokenizer_};
    load::SyntheticInput input = load::MakeSyntheticInput(options, sequence);
    // Entries that name the same blocks share those prompt blocks, as in the traced system.
    if (!entry.hash_ids.empty())
      input.prompt =
          load::MakeBlockPrompt(seed_, entry.hash_ids, block_tokens_, entry.input_length, sequence);
    return SyntheticSpec(input);
  }
  if (!synthetic_) return ForTask(static_cast<size_t>(sequence));
  return SyntheticSpec(load::MakeSyntheticInput(*synthetic_, sequence));
}

load::RequestSpec StageRequests::SyntheticSpec(const load::SyntheticInput& input) const {
  http::RequestBodyOptions body = body_;
  body.max_tokens = input.output_tokens;
  return {.url = url_,
          .body = http::BuildRequestBody(body, input.prompt),
          .headers = default_headers_,
          .stream = stream_,
          .requested_input_tokens = input.input_tokens,
          .requested_output_tokens = input.output_tokens,
          .redactor = redactor_.get(),
          .tokenizer = tokenizer_};
}

}  // namespace stagegate::scenario
