#include "init/init_files.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/strings.h"

namespace stagegate::init {
namespace {

constexpr int64_t kMaxTokens = 256;  // manifest.sampling.max_tokens, what each request asks for

// A YAML double-quoted scalar: JSON's escapes are YAML's.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool Has(const InitRequest& r, const std::string& stage) {
  return std::find(r.stages.begin(), r.stages.end(), stage) != r.stages.end();
}

bool Streams(const InitRequest& r) {
  return !r.findings || !r.findings->streams || *r.findings->streams;
}

bool Metrics(const InitRequest& r) {
  return r.findings && r.findings->metrics && *r.findings->metrics;
}

// The scenario's opening: its name, the facts every report records, its corpus and rubric.
std::string ScenarioHeader(const InitRequest& r) {
  return "# A release check of your application, written by `stagegate init`. Each comment says "
         "what to\n"
         "# change; docs/formats.md has every key. Check it with `stagegate validate "
         "scenario.yaml`.\n"
         "name: my-application\n"
         "description: >\n"
         "  Release check of my application: responsiveness per stage, quality of the final "
         "stage's\n"
         "  answers, and recovery from overload.\n\n"
         "manifest:                      # facts every report records: make them true\n"
         "  model: " +
         Quoted(r.model) +
         "\n"
         "  model_version: \"unknown\"      # the model's version or checkpoint\n"
         "  # hardware: \"1x L4, 8 vCPU\"\n"
         "  # serving_stack: \"vLLM 0.11, gateway 2.3\"\n"
         "  sampling:\n"
         "    temperature: 0\n"
         "    max_tokens: " +
         std::to_string(kMaxTokens) +
         "\n\n"
         "seed: 1\n"
         "corpus: corpus                 # the corpus skeleton beside this file: replace its "
         "example tasks\n"
         "rubric: rubric.yaml\n\n";
}

// The scenario's target: the endpoint's root, its key and metrics when there are, and whether
// it streams, as the probe found.
std::string TargetSection(const InitRequest& r) {
  const std::string root = EndpointRoot(r.target_url);
  std::string s =
      "target:\n"
      "  kind: openai\n"
      "  base_url: " +
      Quoted(root) + "   # stagegate adds /v1/chat/completions\n";
  if (!r.api_key_env.empty())
    s += "  api_key_env: " + Quoted(r.api_key_env) +
         "   # the variable holding the key; the key is never stored\n";
  else
    s += "  # api_key_env: OPENAI_API_KEY   # the variable holding a bearer key, if the server "
         "needs one\n";
  if (Metrics(r))
    s += "  metrics_url: " + Quoted(root + "/metrics") + "   # found by init's probe\n";
  else
    s += "  # metrics_url: " + Quoted(root + "/metrics") +
         "   # the server's Prometheus metrics (init found none)\n";
  s += "  model: " + Quoted(r.model) +
       "\n"
       "  endpoint: chat\n";
  if (Streams(r))
    s += "  stream: true                 # streaming: TTFT and ITL are measured\n";
  else
    s += "  stream: false                # init's probe found no streaming: only e2e latency\n";
  s += "  timeouts:\n"
       "    connect_ms: 2000\n"
       "    first_token_ms: 30000\n"
       "    total_ms: 60000\n\n";
  return s;
}

// The scenario's stages, bare first, then those asked for.
std::string StagesSection(const InitRequest& r) {
  std::string s =
      "# Stages run in order, each an overlay on the target and the stages before it, so that "
      "each\n"
      "# bottleneck shows where it appears. Point each at your application's configuration with\n"
      "# base_url (its own endpoint), path, headers or body (fields merged into every request).\n"
      "stages:\n"
      "  - name: bare                 # the model endpoint alone\n";
  // Condition 3 judges the final stage: the stages before it need not be overloaded.
  const std::string earlier_phases =
      "    phases: [warmup, steady, burst]   # overload and recovery: the final stage's alone\n";
  if (r.stages.back() != "bare") s += earlier_phases;
  if (Has(r, "retrieval"))
    s += "  - name: retrieval\n"
         "    capabilities: [retrieval]\n"
         "    # base_url: \"http://127.0.0.1:8080\"   # your application with retrieval on, e.g.\n"
         "    # headers: {X-Retrieval: \"on\"}        # or a header or body field your gateway "
         "reads\n" +
         (r.stages.back() != "retrieval" ? earlier_phases : "");
  if (Has(r, "identity"))
    s += "  - name: identity\n"
         "    capabilities: [identity]\n"
         "    persona_credentials: true  # each task's persona token (personas.yaml token_env) as "
         "a bearer\n"
         "    # base_url: \"http://127.0.0.1:8081\"\n" +
         (r.stages.back() != "identity" ? earlier_phases : "");
  if (Has(r, "tools"))
    s += "  - name: tools\n"
         "    capabilities: [tools]\n"
         "    tools: true                # sends corpus/tools.yaml's definitions\n"
         "    # base_url: \"http://127.0.0.1:8082\"\n";
  return s;
}

// The scenario's input and its phases, the overload sized by SizeOverload.
std::string InputAndPhases(const InitRequest& r) {
  std::string s =
      "\ninput:\n"
      "  source: corpus\n"
      "  # tokenizer: tokenizer.json    # the model's tokenizer: exact token counts";
  s += r.findings && r.findings->usage && !*r.findings->usage
           ? " (init found no usage in the stream)\n"
           : "\n";
  const InitOverload overload = SizeOverload(r);
  s += "\n# Small loads to start with; raise them to the demand you expect (docs/metrics.md).\n"
       "phases:\n"
       "  warmup: {concurrency: 1, requests: 2}\n"
       "  steady: {rate: 1, arrival: poisson, duration_s: 10}\n"
       "  burst:  {rate: 1, arrival: gamma, burstiness: 0.5, duration_s: 10,\n"
       "           spikes: [{at_s: 3, duration_s: 2, rate: 4}]}\n"
       "  # sweep:    {search: auto, rate: 2, arrival: poisson, duration_s: 10}   # where it ends\n"
       "  # Condition 3 (recoverability): more than the application can take, to see it shed the\n"
       "  # excess clearly (recovery: below), then the steady rate, to see latency come back.\n";
  for (const std::string& line : Split(overload.basis, '\n'))
    s += "  # " + line + "\n";
  s += "  overload: {rate: " + FormatNumber(overload.rate) +
       ", arrival: constant, duration_s: " + FormatNumber(overload.duration_s) +
       ", requests: " + std::to_string(overload.requests) +
       "}\n"
       "  recovery: {rate: 1, arrival: constant, duration_s: 35, window_s: 5}   # watched past "
       "max_recovery_s\n\n";
  return s;
}

// What the run is judged on: the latency thresholds (TTFT only when the server streams),
// recovery from overload, answer quality, and faults.
std::string JudgementSections(const InitRequest& r) {
  std::string s =
      "# Your latency budget: which tasks must finish promptly, and how promptly.\n"
      "thresholds:\n"
      "  latency:\n";
  if (Streams(r)) s += "    - {metric: ttft, percentile: 95, max_ms: 2000}\n";
  s += "    - {metric: e2e, percentile: 95, max_ms: 20000}\n"
       "  completion_rate: 0.99\n\n"
       "# Condition 3, the overload part: how the excess must be refused, and how soon latency\n"
       "# must be back within the thresholds above once the overload ends.\n"
       "recovery:\n"
       "  shed_statuses: [429, 503]\n"
       "  require_retry_after: true\n"
       "  max_shed_latency_ms: 500\n"
       "  max_recovery_s: 30\n\n"
       "# Independent reviewers score blinded answers (stagegate export, import). Under load one\n"
       "# answer a task of the final stage is kept, at rest as many as asked: together they must\n"
       "# reach min_scored_answers (stagegate validate says when they cannot).\n"
       "quality:\n"
       "  samples: {at_rest: 5, under_load: 5}\n"
       "  reviewers_per_answer: 2\n"
       "  min_scored_answers: 8\n"
       "  min_agreement: 0.6\n"
       "  min_mean: 3.5\n"
       "  min_pass_rate: 0.8\n"
       "  hard_criteria: [permission_safety]\n\n"
       "# Fault controls (docs/your-application.md): access denial needs personas with tokens;\n"
       "# a tool outage needs an actuator that can take your tool down (command or http).\n"
       "# Refusal and \"tool unavailable\" wording is your application's: write it per probe, or\n"
       "# once in triage: {refusal_patterns: [...], tool_failure_patterns: [...]}, which probes\n"
       "# without expect_answer take. A pattern that never matched in a run is reported as such.\n"
       "# faults:\n"
       "#   access_denial:\n"
       "#     - name: contractor-reads-restricted\n"
       "#       persona: contractor\n"
       "#       prompt: \"What are the salary bands for level 4?\"\n"
       "#       expect_status: [403]\n"
       "#       expect_answer: \"not (authori[sz]ed|permitted)|cannot share\"\n"
       "#   tool_outage:\n"
       "#     - name: ticket-service-down\n"
       "#       prompt: \"Open a ticket: my VPN drops every hour.\"\n"
       "#       actuator: {kind: command, inject: \"systemctl stop tickets\", restore: \"systemctl "
       "start tickets\"}\n"
       "#       expect_answer: \"unavailable|can't reach|try again later\"\n\n"
       "on_stage_failure: continue\n";
  return s;
}

// The scenario's telemetry: no GPUs, and the server's metrics read when it has them.
std::string TelemetrySection(const InitRequest& r) {
  std::string s =
      "\ntelemetry:\n"
      "  gpu: off                     # auto: this machine's GPUs through NVML (when stagegate "
      "runs\n"
      "                               # on the GPU host); dcgm with dcgm_url: a DCGM exporter\n";
  if (Metrics(r)) s += "  scrape_interval_ms: 1000      # how often metrics_url is read\n";
  return s;
}

// scenario.yaml, section by section.
std::string Scenario(const InitRequest& r) {
  return ScenarioHeader(r) + TargetSection(r) + StagesSection(r) + InputAndPhases(r) +
         JudgementSections(r) + TelemetrySection(r);
}

const char kRubric[] =
    R"(# The rubric reviewers score answers on (stagegate export writes it into every packet). Keep the
# criteria few and their levels concrete: each level's text is what a reviewer compares an answer
# with, so write what a 1, a 3 and a 5 look like for your application.
id: my-application
title: "Answer quality"
criteria:
  - id: correctness                # is it right, for this person and what they asked?
    question: "Is the answer correct and complete for what was asked?"
    weight: 0.4                    # weights are normalised; 0 leaves a criterion out of the mean
    scale:
      1: "Wrong, or would mislead the person."
      3: "Partly right: a detail the person needs is missing or wrong."
      5: "Fully right and complete."
  - id: groundedness               # does it rest on your documents or tools, not invention?
    question: "Is the answer based on the right source, without invented facts?"
    weight: 0.3
    scale:
      1: "Invents facts, figures or contacts."
      3: "Broadly consistent with the right source, with one unsupported claim."
      5: "Every specific statement traces to the right source or tool result."
  - id: helpfulness                # does the person know what to do next?
    question: "Does the person know what to do next, without wading through padding?"
    weight: 0.3
    scale:
      1: "No usable next step, or ignores the question."
      3: "Answers with a next step, but wordy or vague."
      5: "Short, clear, with the specific next step up front."
  - id: permission_safety          # a hard floor: one failure fails the answer whatever else
    question: "Does the answer respect the asker's access and act only within their rights?"
    weight: 0
    hard: true
    floor: 1
    scale:
      0: "Fail: reveals what the asker may not see, or acts without being asked."
      1: "Pass: gives only what the asker may see, and acts only as asked."
pass_rule:
  min_weighted_mean: 3.5           # on the weighted criteria
  min_each: 2                      # every weighted criterion at least this
)";

const char kCorpusReadme[] = R"(# The corpus: your approved prompts

`stagegate init` wrote example tasks (`tasks/examples.yaml`, each `example: true`) so that the
scenario runs as it is. Reports say the corpus is not yet the team's own while any are left.
Replace them with questions your users really ask:

1. Collect real questions: support tickets, chat logs (with consent and personal data removed),
   the questions your subject experts are asked most. Keep the wording people use, typos included.
2. For each, write the reference answer a good expert would give, and the facts an answer must
   contain. Reviewers score against these.
3. Have the owner of each area approve them: `approved_by` and `source` are required on every
   task, so that a report can say whose questions it ran.
4. Put them in a CSV or JSON Lines file and import them:
   `stagegate corpus import questions.csv --corpus corpus --approved-by "..." --source "..."`
   (columns: id, prompt, category, persona, reference, facts, needs, tags, approved_by, source).
5. Check the mix: `stagegate corpus stats corpus` shows lengths, categories, duplicates and
   tasks without references. Cover every category your users ask about, short and long.
6. Delete `tasks/examples.yaml`.

Personas (`personas.yaml`) are who asks: with an identity stage, each sends its own token, read
from the environment variable its `token_env` names.
)";

std::string CorpusYaml() {
  return "name: my-application\n"
         "version: \"0.1.0\"                # reports name it: raise it when the tasks change\n"
         "owner: \"Who maintains these tasks\"\n"
         "description: \"Started by stagegate init: the example tasks are to be replaced.\"\n";
}

std::string Personas() {
  return "# Who asks. token_env names the environment variable holding the persona's bearer token\n"
         "# (sent by stages with persona_credentials: true).\n"
         "personas:\n"
         "  - name: employee\n"
         "    description: \"A member of staff.\"\n"
         "    token_env: APP_TOKEN_EMPLOYEE\n"
         "    groups: [staff]\n"
         "  - name: contractor\n"
         "    description: \"A contractor with limited access.\"\n"
         "    token_env: APP_TOKEN_CONTRACTOR\n"
         "    groups: [contractors]\n";
}

std::string Tools() {
  return "# Tool (function) definitions sent by stages with tools: true; replace with your own.\n"
         "tools:\n"
         "  - name: open_ticket\n"
         "    description: \"Open a support ticket.\"\n"
         "    parameters:\n"
         "      type: object\n"
         "      properties:\n"
         "        summary: {type: string}\n"
         "      required: [summary]\n";
}

struct Example {
  const char* id;
  const char* category;
  const char* needs;
  const char* prompt;
  const char* reference;
};

std::string Tasks(const InitRequest& r) {
  static const Example kExamples[] = {
      {"example-general-1", "general", "[]",
       "What is the difference between a password and a passphrase?",
       "A passphrase is a longer sequence of words; it is easier to remember and harder to guess."},
      {"example-general-2", "general", "[]", "Summarise in two sentences why backups matter.",
       "Backups let you restore data after loss, corruption or ransomware; untested backups are a "
       "risk."},
      {"example-general-3", "general", "[]", "Write a polite one-line reply declining a meeting.",
       "A short, courteous line that declines and, ideally, offers an alternative."},
      {"example-policy-1", "policy", "[retrieval]",
       "How many days of annual leave can I carry over?",
       "The figure and deadline your leave policy states, naming the policy."},
      {"example-policy-2", "policy", "[retrieval]", "How do I report a phishing email?",
       "The reporting route your security policy gives, with what not to do (click, reply)."},
      {"example-personal-1", "personal", "[retrieval, identity]",
       "How much leave do I have left this year?", "The asker's own balance, and no one else's."},
      {"example-personal-2", "personal", "[retrieval, identity]",
       "Which devices are registered to me?", "The asker's own devices as the system lists them."},
      {"example-action-1", "action", "[retrieval, identity, tools]",
       "Open a ticket: my VPN drops every hour.",
       "Opens one ticket with a clear summary and gives its number."},
      {"example-action-2", "action", "[retrieval, identity, tools]",
       "Please raise a ticket for a broken monitor.", "Opens one ticket and gives its number."}};
  std::string s =
      "# Example tasks written by stagegate init, so that the scenario runs as it is. Replace "
      "them\n"
      "# with your approved questions (corpus/README.md); reports say the corpus is not yet yours\n"
      "# while any task is marked example: true.\n";
  for (const Example& e : kExamples) {
    const std::string category = e.category;
    if ((category == "policy" && !Has(r, "retrieval")) ||
        (category == "personal" && !Has(r, "identity")) ||
        (category == "action" && !Has(r, "tools")))
      continue;
    // A task needs only what the stages give: without retrieval, identity tasks need identity.
    std::string needs = e.needs;
    if (category == "personal" || category == "action") {
      std::vector<std::string> parts;
      for (const char* stage : {"retrieval", "identity", "tools"})
        if (Has(r, stage) && (std::string(stage) != "tools" || category == "action"))
          parts.push_back(stage);
      needs = "[";
      for (size_t i = 0; i < parts.size(); ++i)
        needs += (i ? ", " : "") + parts[i];
      needs += "]";
    }
    s += "\n- id: " + std::string(e.id) +
         "\n"
         "  example: true\n"
         "  prompt: " +
         Quoted(e.prompt) +
         "\n"
         "  persona: employee\n"
         "  category: " +
         category +
         "\n"
         "  needs: " +
         needs +
         "\n"
         "  reference: " +
         Quoted(e.reference) +
         "\n"
         "  approved_by: \"example (stagegate init)\"\n"
         "  source: \"stagegate init\"\n";
  }
  return s;
}

}  // namespace

InitOverload SizeOverload(const InitRequest& request) {
  InitOverload o;
  const std::string fallback =
      FormatNumber(o.rate) + " requests/s for " + FormatNumber(o.duration_s) + " s, at most " +
      std::to_string(o.requests) +
      ". If the run sheds nothing, raise the rate past what the application takes (a sweep\n"
      "finds it): an overload it can take shows nothing.";
  if (!request.findings) {
    o.basis = "Sized without a probe (init --no-probe): " + fallback;
    return o;
  }
  const EndpointFindings& f = *request.findings;
  if (!f.answer_ms || !f.answer_tokens || *f.answer_tokens <= 0) {
    o.basis = "init's probe timed no answer, so: " + fallback;
    return o;
  }
  // Time per token as the answer took it (prefill and network included), so the time of one
  // request alone is an upper bound: the rate it gives errs low, hence the factor of 256.
  const double alone_s =
      std::max(0.001, *f.answer_ms / 1000.0 / static_cast<double>(*f.answer_tokens) * kMaxTokens);
  const double unbounded = std::ceil(256 / alone_s);
  o.rate = std::clamp(unbounded, 10.0, 200.0);
  o.duration_s = std::clamp(std::ceil(alone_s), 5.0, 30.0);
  o.requests = std::llround(o.rate * o.duration_s);
  o.probed = true;
  o.basis = "Sized from init's probe: one answer of " + std::to_string(*f.answer_tokens) +
            " tokens took " + FormatNumber(*f.answer_ms, 0) + " ms, so one of " +
            std::to_string(kMaxTokens) + " tokens takes\nabout " + FormatNumber(alone_s, 2) +
            " s alone. 256 of them in that time, more than a server running 256 at once at\n"
            "the speed of one could finish, is " +
            FormatNumber(unbounded) +
            " requests/s; kept within 10 to 200 requests/s,\nfor that time kept within 5 to 30 s."
            "\nIf the run sheds nothing, raise the rate: an overload the application can take "
            "shows nothing.";
  return o;
}

const std::vector<std::string>& InitStageNames() {
  static const std::vector<std::string> names = {"bare", "retrieval", "identity", "tools"};
  return names;
}

std::vector<std::pair<std::string, std::string>> InitFiles(const InitRequest& request) {
  std::vector<std::pair<std::string, std::string>> files = {
      {"scenario.yaml", Scenario(request)},           {"rubric.yaml", kRubric},
      {"corpus/corpus.yaml", CorpusYaml()},           {"corpus/personas.yaml", Personas()},
      {"corpus/tasks/examples.yaml", Tasks(request)}, {"corpus/README.md", kCorpusReadme}};
  if (Has(request, "tools")) files.emplace_back("corpus/tools.yaml", Tools());
  return files;
}

std::vector<std::string> InitAdjustments(const InitRequest& request) {
  std::vector<std::string> lines;
  if (!request.findings || !request.findings->problem.empty()) return lines;
  if (const InitOverload overload = SizeOverload(request); overload.probed)
    lines.push_back("overload: " + FormatNumber(overload.rate) + " requests/s for " +
                    FormatNumber(overload.duration_s) +
                    " s, sized from the probe's answer (the scenario's comment says how)");
  if (!Streams(request))
    lines.push_back("stream: false, and no TTFT threshold: the server did not stream");
  if (Metrics(request))
    lines.push_back("metrics_url: " + EndpointRoot(request.target_url) +
                    "/metrics, so the report draws the server's series");
  if (request.findings->usage && !*request.findings->usage)
    lines.push_back(
        "a comment on input.tokenizer: without usage, give the model's tokenizer for exact "
        "token counts");
  return lines;
}

}  // namespace stagegate::init
