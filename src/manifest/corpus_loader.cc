// Reads a corpus folder into the Corpus model; see docs/formats.md for the files and their keys.

#include <algorithm>
#include <cctype>
#include <map>

#include "base/files.h"
#include "base/strings.h"
#include "manifest/capability_reader.h"
#include "manifest/corpus.h"
#include "manifest/fault_loader.h"
#include "manifest/patterns.h"
#include "manifest/tool_schema.h"

namespace stagegate::manifest {

namespace {

constexpr const char* kRoles[] = {"system", "user", "assistant"};

std::string PosText(const SourcePos& pos) {
  return pos.ToString();
}

// Reports `id` when `seen` has it already, else remembers it.
void CheckUnique(const YamlFile& file, const SourcePos& pos, const std::string& kind,
                 const std::string& id, std::map<std::string, SourcePos>& seen) {
  if (id.empty()) return;
  auto [it, inserted] = seen.emplace(id, pos);
  if (!inserted)
    file.Error(
        pos, "duplicate " + kind + " '" + id + "' (first defined at " + PosText(it->second) + ")");
}

std::optional<YAML::Node> LoadYaml(const std::string& path, const YamlFile& file,
                                   const std::string& what, bool required) {
  Result<std::string> text = ReadFile(path, kMaxManifestBytes);
  if (!text.ok()) {
    if (required || text.status().code() != Status::Code::kNotFound)
      file.Error(SourcePos{path, 0, 0}, text.status().code() == Status::Code::kNotFound
                                            ? what + " not found"
                                            : ReadFailure(text.status(), path));
    return std::nullopt;
  }
  return file.Parse(*text);
}

void ReadCorpusFile(const std::string& dir, Diagnostics& diagnostics, Corpus& corpus) {
  const std::string path = dir + "/corpus.yaml";
  YamlFile file(path, diagnostics);
  std::optional<YAML::Node> root =
      LoadYaml(path, file, "corpus.yaml (the corpus's name and version)", true);
  if (!root) return;
  MapReader map(file, *root, "corpus");
  corpus.name = map.String("name", Need::kRequired).value_or("");
  corpus.version = map.String("version", Need::kRequired).value_or("");
  corpus.owner = map.String("owner", Need::kRequired).value_or("");
  corpus.description = map.String("description").value_or("");
  map.Finish();
}

void ReadPersonas(const std::string& dir, Diagnostics& diagnostics, Corpus& corpus) {
  const std::string path = dir + "/personas.yaml";
  YamlFile file(path, diagnostics);
  std::optional<YAML::Node> root = LoadYaml(path, file, "personas.yaml", true);
  if (!root) return;
  MapReader map(file, *root, "personas file");
  YAML::Node list = map.Get("personas", Need::kRequired);
  map.Finish();
  if (!list.IsDefined()) return;
  if (!list.IsSequence() || list.size() == 0) {
    file.Error(list, "'personas' must be a non-empty list, got " + Describe(list));
    return;
  }
  std::map<std::string, SourcePos> seen;
  for (const YAML::Node& item : list) {
    MapReader entry(file, item, "persona");
    if (!entry.valid()) continue;
    Persona persona;
    persona.pos = entry.pos();
    persona.name = entry.String("name", Need::kRequired).value_or("");
    persona.description = entry.String("description").value_or("");
    YAML::Node token = entry.Get("token_env", Need::kRequired);
    if (token.IsDefined()) {
      persona.token_env = ReadString(file, token, "'token_env'").value_or("");
      bool valid = !persona.token_env.empty() &&
                   !std::isdigit(static_cast<unsigned char>(persona.token_env[0])) &&
                   std::all_of(persona.token_env.begin(), persona.token_env.end(), [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                   });
      if (!valid)
        file.Error(token,
                   "'token_env' names an environment variable (like SD_TOKEN_EMPLOYEE), got '" +
                       persona.token_env + "'");
    }
    persona.groups =
        entry.StringList("groups", Need::kRequired).value_or(std::vector<std::string>{});
    entry.Finish();
    CheckUnique(file, persona.pos, "persona", persona.name, seen);
    corpus.personas.push_back(std::move(persona));
  }
}

void ReadTools(const std::string& dir, Diagnostics& diagnostics, Corpus& corpus) {
  const std::string path = dir + "/tools.yaml";
  YamlFile file(path, diagnostics);
  std::optional<YAML::Node> root = LoadYaml(path, file, "tools.yaml", false);
  if (!root) return;
  MapReader map(file, *root, "tools file");
  YAML::Node list = map.Get("tools", Need::kRequired);
  map.Finish();
  if (!list.IsDefined()) return;
  if (!list.IsSequence()) {
    file.Error(list, "'tools' must be a list of tool definitions, got " + Describe(list));
    return;
  }
  std::map<std::string, SourcePos> seen;
  for (const YAML::Node& item : list) {
    MapReader entry(file, item, "tool");
    if (!entry.valid()) continue;
    ToolDefinition tool;
    tool.pos = entry.pos();
    tool.name = entry.String("name", Need::kRequired).value_or("");
    tool.description = entry.String("description", Need::kRequired).value_or("");
    YAML::Node parameters = entry.Get("parameters", Need::kRequired);
    if (parameters.IsDefined()) {
      if (!parameters.IsMap())
        file.Error(parameters,
                   "'parameters' must be a JSON Schema mapping, got " + Describe(parameters));
      else
        tool.parameters = ReadJson(file, parameters);
    }
    entry.Finish();
    CheckUnique(file, tool.pos, "tool", tool.name, seen);
    corpus.tools.push_back(std::move(tool));
  }
}

// Each "regex:" string inside an expected argument value must compile; every one that does not is
// reported at its node.
bool CheckArgumentPatterns(const YamlFile& file, const YAML::Node& node, const std::string& name) {
  bool ok = true;
  if (node.IsMap() || node.IsSequence()) {
    for (auto item : node) {
      const YAML::Node value = node.IsMap() ? item.second : YAML::Node(item);
      const std::string inner = node.IsMap() ? name + "." + item.first.Scalar() : name + "[]";
      ok = CheckArgumentPatterns(file, value, inner) && ok;
    }
    return ok;
  }
  if (!node.IsScalar() || !node.Scalar().starts_with(kArgumentPatternPrefix)) return true;
  Result<Pattern> compiled = Pattern::Compile(node.Scalar().substr(kArgumentPatternPrefix.size()));
  if (compiled.ok()) return true;
  file.Error(node, "argument '" + name +
                       "' is not a valid pattern after 'regex:': " + compiled.status().message());
  return false;
}

// tool_call: {name: TOOL, arguments: {KEY: VALUE, ...}}; arguments may be left out.
std::optional<Check> ReadToolCallCheck(const YamlFile& file, const YAML::Node& node, Check check) {
  MapReader map(file, node, "'tool_call'");
  if (!map.valid()) return std::nullopt;
  std::optional<std::string> name = map.String("name", Need::kRequired);
  YAML::Node arguments = map.Get("arguments");
  map.Finish();
  bool ok = name.has_value() && !name->empty();
  if (name && name->empty()) file.Error(node["name"], "'name' must not be empty");
  if (arguments.IsDefined()) {
    if (!arguments.IsMap()) {
      file.Error(arguments,
                 "'arguments' must be a mapping of argument names to the values "
                 "expected, got " +
                     Describe(arguments));
      ok = false;
    } else {
      // ReadJson bounds the size (aliases expanded) before the patterns are walked.
      check.arguments = ReadJson(file, arguments);
      ok = check.arguments.is_object() && ok;
      for (auto item : check.arguments.is_object() ? arguments : YAML::Node())
        ok = CheckArgumentPatterns(file, item.second, item.first.Scalar()) && ok;
    }
  }
  if (!ok) return std::nullopt;
  check.text = *name;
  return check;
}

std::optional<Check> ReadCheck(const YamlFile& file, const YAML::Node& node) {
  std::vector<std::string> kinds;
  for (const EnumName<CheckKind>& entry : kCheckKindNames)
    kinds.emplace_back(entry.name);
  if (!node.IsMap() || node.size() != 1) {
    file.Error(node, "a check is a mapping with one key (" + Join(kinds, ", ") + "), got " +
                         (node.IsMap() ? std::to_string(node.size()) + " keys" : Describe(node)));
    return std::nullopt;
  }
  auto entry = *node.begin();
  std::optional<size_t> index = ReadEnumIndex(file, entry.first, "a check's kind", kinds);
  if (!index) return std::nullopt;
  Check check;
  check.kind = kCheckKindNames[*index].value;
  check.pos = file.Pos(entry.first);
  const std::string name = "'" + entry.first.Scalar() + "'";
  switch (check.kind) {
    case CheckKind::kContains:
    case CheckKind::kNotContains:
    case CheckKind::kToolCalled: {
      auto text = ReadString(file, entry.second, name);
      if (!text) return std::nullopt;
      check.text = *text;
      break;
    }
    case CheckKind::kRegex: {
      auto text = ReadPattern(file, entry.second, name);
      if (!text) return std::nullopt;
      check.text = *text;
      break;
    }
    case CheckKind::kRefusal: {
      auto flag = ReadBool(file, entry.second, name);
      if (!flag) return std::nullopt;
      check.expect_refusal = *flag;
      break;
    }
    case CheckKind::kJsonKeys: {
      auto keys = ReadStringList(file, entry.second, name);
      if (!keys) return std::nullopt;
      check.keys = *keys;
      break;
    }
    case CheckKind::kToolCall:
      return ReadToolCallCheck(file, entry.second, check);
    case CheckKind::kNoToolCall: {
      auto flag = ReadBool(file, entry.second, name);
      if (!flag) return std::nullopt;
      if (!*flag) {
        file.Error(entry.second,
                   "'no_tool_call' can only be true (leave it out when a tool may "
                   "be called)");
        return std::nullopt;
      }
      break;
    }
  }
  return check;
}

std::vector<ChatMessage> ReadMessages(const YamlFile& file, const YAML::Node& node) {
  std::vector<ChatMessage> messages;
  if (!node.IsSequence() || node.size() == 0) {
    file.Error(node,
               "'messages' must be a non-empty list of {role, content}, got " + Describe(node));
    return messages;
  }
  for (const YAML::Node& item : node) {
    MapReader map(file, item, "message");
    ChatMessage message;
    YAML::Node role = map.Get("role", Need::kRequired);
    if (role.IsDefined()) {
      std::vector<std::string> roles(std::begin(kRoles), std::end(kRoles));
      if (auto index = ReadEnumIndex(file, role, "'role'", roles)) message.role = roles[*index];
    }
    message.content = map.String("content", Need::kRequired).value_or("");
    map.Finish();
    messages.push_back(std::move(message));
  }
  if (!messages.empty() && !messages.back().role.empty() && messages.back().role != "user")
    file.Error(node, "the last of 'messages' must be the user's");
  return messages;
}

Task ReadTask(const YamlFile& file, const YAML::Node& node) {
  MapReader map(file, node, "task");
  Task task;
  task.pos = map.pos();
  task.id = map.String("id", Need::kRequired).value_or("");
  YAML::Node prompt = map.Get("prompt");
  YAML::Node messages = map.Get("messages");
  if (prompt.IsDefined()) task.prompt = ReadString(file, prompt, "'prompt'").value_or("");
  if (messages.IsDefined()) task.messages = ReadMessages(file, messages);
  if (prompt.IsDefined() && messages.IsDefined()) {
    file.Error(messages, "give either 'prompt' or 'messages', not both");
  } else if (!prompt.IsDefined() && !messages.IsDefined() && map.valid()) {
    file.Error(task.pos, "task '" + task.id + "': give 'prompt' or 'messages'");
  }
  YAML::Node follow_ups = map.Get("follow_ups");
  if (follow_ups.IsDefined()) {
    if (!follow_ups.IsSequence())
      file.Error(follow_ups,
                 "'follow_ups' must be a list of user messages, got " + Describe(follow_ups));
    else if (follow_ups.size() == 0 || follow_ups.size() >= 1000)
      file.Error(follow_ups, "'follow_ups' must hold 1 to 999 user messages, got " +
                                 std::to_string(follow_ups.size()) +
                                 " (leave it out for a task of one turn)");
    for (const YAML::Node& item : follow_ups.IsSequence() ? follow_ups : YAML::Node()) {
      std::optional<std::string> text = ReadString(file, item, "a follow-up");
      if (text && text->empty()) file.Error(item, "a follow-up must not be empty");
      if (text) task.follow_ups.push_back(*text);
    }
  }
  task.persona = ReadRef(map, "persona", Need::kRequired).value_or(Ref{});
  task.category = map.String("category", Need::kRequired).value_or("");
  task.tags = map.StringList("tags").value_or(std::vector<std::string>{});
  for (const std::string& tag : task.tags)
    if (tag.empty()) file.Error(map.Get("tags"), "task '" + task.id + "': a tag must not be empty");
  YAML::Node needs = map.Get("needs", Need::kRequired);
  if (needs.IsDefined())
    task.needs = ReadCapabilities(file, needs, "'needs'").value_or(std::vector<Capability>{});
  task.reference = map.String("reference", Need::kRequired).value_or("");
  YAML::Node checks = map.Get("checks");
  if (checks.IsDefined()) {
    if (!checks.IsSequence())
      file.Error(checks, "'checks' must be a list, got " + Describe(checks));
    for (const YAML::Node& item : checks.IsSequence() ? checks : YAML::Node()) {
      if (std::optional<Check> check = ReadCheck(file, item)) task.checks.push_back(*check);
    }
  }
  task.rubric = ReadRef(map, "rubric");
  task.approved_by = map.String("approved_by", Need::kRequired).value_or("");
  task.source = map.String("source", Need::kRequired).value_or("");
  task.example = map.Bool("example").value_or(false);
  task.required = map.Bool("required").value_or(false);
  map.Finish();
  return task;
}

void ReadTasks(const std::string& dir, Diagnostics& diagnostics, Corpus& corpus) {
  const std::string tasks_dir = dir + "/tasks";
  Result<std::vector<std::string>> files = ListFiles(tasks_dir, ".yaml");
  if (!files.ok() || files->empty()) {
    diagnostics.Error({tasks_dir, 0, 0},
                      "no task files: the corpus keeps its tasks in tasks/*.yaml");
    return;
  }
  for (const std::string& path : *files) {
    YamlFile file(path, diagnostics);
    std::optional<YAML::Node> root = LoadYaml(path, file, "task file", true);
    if (!root) continue;
    if (!root->IsSequence()) {
      file.Error(*root, "a task file holds a list of tasks, got " + Describe(*root));
      continue;
    }
    for (const YAML::Node& item : *root)
      corpus.tasks.push_back(ReadTask(file, item));
  }
}

void ReadDocument(const std::string& path, Diagnostics& diagnostics, Corpus& corpus) {
  Result<std::string> text = ReadFile(path, kMaxManifestBytes);
  if (!text.ok()) {
    diagnostics.Error({path, 0, 0}, ReadFailure(text.status(), path));
    return;
  }
  const std::string& content = *text;
  if (!CheckUtf8(diagnostics, path, content)) return;
  size_t close = std::string::npos;
  if (content.starts_with("---\n")) close = content.find("\n---", 3);
  size_t body_start = close == std::string::npos ? 0 : content.find('\n', close + 1);
  if (close == std::string::npos || body_start == std::string::npos) {
    diagnostics.Error({path, 1, 1},
                      "a document starts with a front-matter block between '---' lines");
    return;
  }
  YamlFile file(path, diagnostics, 2);
  std::optional<YAML::Node> front = file.Parse(content.substr(4, close - 3));
  if (!front) return;
  MapReader map(file, *front, "front matter");
  Document document;
  document.pos = map.pos();
  document.id = map.String("id", Need::kRequired).value_or("");
  document.title = map.String("title", Need::kRequired).value_or("");
  document.access = map.StringList("access").value_or(std::vector<std::string>{});
  YAML::Node canary =
      map.Get("canary", document.access.empty() ? Need::kOptional : Need::kRequired);
  if (canary.IsDefined()) document.canary = ReadString(file, canary, "'canary'").value_or("");
  map.Finish();
  document.body = content.substr(body_start + 1);
  if (!document.canary.empty()) {
    if (document.access.empty())
      file.Error(canary, "'canary' applies only to a restricted document (one with 'access')");
    else if (document.canary.size() < 8)
      file.Error(canary, "canary '" + document.canary +
                             "' is too short to be unique (8 characters at least)");
    else if (document.body.find(document.canary) == std::string::npos)
      file.Error(canary, "canary '" + document.canary +
                             "' does not appear in the document's text, "
                             "so a leak of it could not be seen");
  }
  corpus.documents.push_back(std::move(document));
}

void ReadDocuments(const std::string& dir, Diagnostics& diagnostics, Corpus& corpus) {
  const std::string docs_dir = dir + "/docs";
  if (!IsDirectory(docs_dir)) return;
  Result<std::vector<std::string>> files = ListFiles(docs_dir, ".md");
  if (!files.ok()) {
    diagnostics.Error({docs_dir, 0, 0}, files.status().message());
    return;
  }
  for (const std::string& path : *files)
    ReadDocument(path, diagnostics, corpus);
}

// A tool_call check's arguments against its tool's schema: each one a parameter of the tool, and
// each value of the parameter's type ("regex:" values are strings).
void CheckToolCallArguments(const YamlFile& file, const Task& task, const Check& check,
                            const ToolDefinition& tool) {
  std::vector<std::string> names;
  if (tool.parameters.is_object() && tool.parameters.contains("properties") &&
      tool.parameters["properties"].is_object())
    for (const auto& [name, schema] : tool.parameters["properties"].items())
      names.push_back(name);
  for (const auto& [name, value] : check.arguments.items()) {
    const std::string where = "task '" + task.id + "': tool_call " + tool.name + ": ";
    if (UnknownArgument(tool.parameters, name)) {
      file.Error(check.pos,
                 where + "the tool has no argument '" + name + "'" + DidYouMean(name, names));
      continue;
    }
    const nlohmann::json type = ArgumentSchemaType(tool.parameters, name);
    if (!OfSchemaType(value, type))
      file.Error(check.pos, where + "argument '" + name + "' must be " + SchemaTypeText(type) +
                                " by the tool's schema, got " + JsonTypeName(value));
  }
}

// Gives each tool_call check its tool's parameter schema, for judging argument types.
void AttachToolSchemas(Corpus& corpus) {
  for (Task& task : corpus.tasks)
    for (Check& check : task.checks)
      if (check.kind == CheckKind::kToolCall)
        for (const ToolDefinition& tool : corpus.tools)
          if (tool.name == check.text) check.parameters = tool.parameters;
}

// Checks that span files: unique ids, defined personas and tools, unique canaries.
void CheckCorpus(Diagnostics& diagnostics, const Corpus& corpus) {
  YamlFile any("", diagnostics);
  std::map<std::string, SourcePos> task_ids, document_ids, canaries;
  std::vector<std::string> personas = corpus.PersonaNames();
  std::vector<std::string> tools;
  for (const ToolDefinition& tool : corpus.tools)
    tools.push_back(tool.name);
  for (const Task& task : corpus.tasks) {
    CheckUnique(any, task.pos, "task id", task.id, task_ids);
    if (!task.persona.name.empty() && !corpus.FindPersona(task.persona.name))
      any.Error(task.persona.pos, "task '" + task.id + "': persona '" + task.persona.name +
                                      "' is not defined in personas.yaml" +
                                      DidYouMean(task.persona.name, personas));
    for (const Check& check : task.checks) {
      if ((check.kind == CheckKind::kToolCalled || check.kind == CheckKind::kToolCall) &&
          std::find(tools.begin(), tools.end(), check.text) == tools.end())
        any.Error(check.pos, "task '" + task.id + "': tool '" + check.text +
                                 "' is not defined in tools.yaml" + DidYouMean(check.text, tools));
      for (const ToolDefinition& tool : corpus.tools)
        if (check.kind == CheckKind::kToolCall && tool.name == check.text)
          CheckToolCallArguments(any, task, check, tool);
    }
  }
  for (const Document& document : corpus.documents) {
    CheckUnique(any, document.pos, "document id", document.id, document_ids);
    CheckUnique(any, document.pos, "canary", document.canary, canaries);
  }
}

}  // namespace

const Task* Corpus::FindTask(const std::string& id) const {
  for (const Task& task : tasks)
    if (task.id == id) return &task;
  return nullptr;
}

const Persona* Corpus::FindPersona(const std::string& persona_name) const {
  for (const Persona& persona : personas)
    if (persona.name == persona_name) return &persona;
  return nullptr;
}

std::vector<std::string> Corpus::TaskIds() const {
  std::vector<std::string> ids;
  for (const Task& task : tasks)
    ids.push_back(task.id);
  return ids;
}

std::vector<std::string> Corpus::PersonaNames() const {
  std::vector<std::string> names;
  for (const Persona& persona : personas)
    names.push_back(persona.name);
  return names;
}

std::set<std::string> RefusalTasks(const Corpus& corpus) {
  std::set<std::string> tasks;
  for (const Task& task : corpus.tasks)
    for (const Check& check : task.checks)
      if (check.kind == CheckKind::kRefusal && check.expect_refusal) tasks.insert(task.id);
  return tasks;
}

Corpus ReadCorpus(const std::string& dir, Diagnostics& diagnostics) {
  Corpus corpus;
  corpus.dir = dir;
  ReadCorpusFile(dir, diagnostics, corpus);
  ReadPersonas(dir, diagnostics, corpus);
  ReadTools(dir, diagnostics, corpus);
  ReadTasks(dir, diagnostics, corpus);
  ReadDocuments(dir, diagnostics, corpus);
  CheckCorpus(diagnostics, corpus);
  AttachToolSchemas(corpus);
  return corpus;
}

std::optional<Corpus> LoadCorpus(const std::string& dir, Diagnostics& diagnostics) {
  const size_t errors_before = diagnostics.size();
  Corpus corpus = ReadCorpus(dir, diagnostics);
  if (diagnostics.size() != errors_before) return std::nullopt;
  return corpus;
}

}  // namespace stagegate::manifest
