#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <ctime>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "base/clock.h"
#include "cli/invoke.h"
#include "test_util.h"

namespace stagegate::cli {
namespace {

namespace fs = std::filesystem;
using testing::ReadText;
using testing::SourcePath;
using testing::TempDir;
using testing::Testdata;
using testing::WriteText;

std::string Text(const YAML::Node& node) {
  return node.as<std::string>();
}

const YAML::Node PodSpec(const YAML::Node& job) {
  return job["spec"]["template"]["spec"];
}

std::string Script(const YAML::Node& job) {
  const YAML::Node command = PodSpec(job)["containers"][0]["command"];
  REQUIRE(command.size() == 3);
  CHECK(Text(command[0]) == "/bin/sh");
  CHECK(Text(command[1]) == "-c");
  return Text(command[2]);
}

int64_t ParseRfc3339(const std::string& text) {
  std::tm utc{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  REQUIRE(end == text.c_str() + text.size());
  return timegm(&utc);
}

// The bundle volume's items, key -> path.
std::map<std::string, std::string> BundleItems(const YAML::Node& shard_job) {
  std::map<std::string, std::string> items;
  for (const YAML::Node& volume : PodSpec(shard_job)["volumes"])
    if (Text(volume["name"]) == "bundle")
      for (const YAML::Node& item : volume["configMap"]["items"])
        items[Text(item["key"])] = Text(item["path"]);
  return items;
}

TEST_CASE("k8s prints a ConfigMap, a volume claim, the shards' Indexed Job and a merge Job",
          "[cli][k8s]") {
  const int64_t before_s = WallUnixMs() / 1000;
  Invocation run =
      Invoke({"k8s", SourcePath("scenarios/sharded.yaml"), "--shards", "3", "--target-url",
              "http://app:8000", "--image", "registry.example/stagegate:1.0"});
  const int64_t after_s = WallUnixMs() / 1000;
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::vector<YAML::Node> docs = YAML::LoadAll(run.out);
  REQUIRE(docs.size() == 4);
  CHECK(Text(docs[0]["kind"]) == "ConfigMap");
  CHECK(Text(docs[1]["kind"]) == "PersistentVolumeClaim");
  CHECK(Text(docs[2]["kind"]) == "Job");
  CHECK(Text(docs[3]["kind"]) == "Job");
  CHECK(Text(docs[2]["apiVersion"]) == "batch/v1");

  // The default name: the scenario's, then the start's month, day and time.
  const std::string name = Text(docs[2]["metadata"]["name"]);
  CHECK(std::regex_match(name, std::regex("demo-sharded-[0-9]{4}-[0-9]{6}")));
  CHECK(Text(docs[0]["metadata"]["name"]) == name + "-bundle");
  CHECK(Text(docs[1]["metadata"]["name"]) == name + "-results");
  CHECK(Text(docs[3]["metadata"]["name"]) == name + "-merge");
  for (const YAML::Node& doc : docs) {
    CHECK(Text(doc["metadata"]["labels"]["app.kubernetes.io/name"]) == "stagegate");
    CHECK(Text(doc["metadata"]["labels"]["app.kubernetes.io/instance"]) == name);
    CHECK(!doc["metadata"]["namespace"]);
  }

  const YAML::Node claim = docs[1]["spec"];
  REQUIRE(claim["accessModes"].size() == 1);
  CHECK(Text(claim["accessModes"][0]) == "ReadWriteMany");
  CHECK(Text(claim["resources"]["requests"]["storage"]) == "1Gi");

  const YAML::Node shards = docs[2]["spec"];
  CHECK(Text(shards["completionMode"]) == "Indexed");
  CHECK(shards["completions"].as<int>() == 3);
  CHECK(shards["parallelism"].as<int>() == 3);
  CHECK(shards["backoffLimit"].as<int>() == 0);
  CHECK(shards["activeDeadlineSeconds"].as<int>() == 120 + 3600);
  const YAML::Node pod = PodSpec(docs[2]);
  CHECK(Text(pod["restartPolicy"]) == "Never");
  const YAML::Node spread =
      pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
  REQUIRE(spread.size() == 1);
  CHECK(Text(spread[0]["podAffinityTerm"]["topologyKey"]) == "kubernetes.io/hostname");
  const YAML::Node selector = spread[0]["podAffinityTerm"]["labelSelector"]["matchLabels"];
  const YAML::Node pod_labels = docs[2]["spec"]["template"]["metadata"]["labels"];
  REQUIRE(selector.size() == 2);
  for (const auto& label : selector)
    CHECK(Text(pod_labels[Text(label.first)]) == Text(label.second));
  CHECK(Text(pod_labels["app.kubernetes.io/instance"]) == name);
  const YAML::Node container = pod["containers"][0];
  CHECK(Text(container["image"]) == "registry.example/stagegate:1.0");
  for (const char* bound : {"requests", "limits"}) {
    CHECK(Text(container["resources"][bound]["cpu"]) == "2");
    CHECK(Text(container["resources"][bound]["memory"]) == "2048Mi");
  }

  // Every shard waits for one instant: now + --start-in, whole seconds, the same in the merge's
  // deadline and on stderr.
  const std::string script = Script(docs[2]);
  std::smatch start;
  REQUIRE(std::regex_search(script, start, std::regex("--start-at ([0-9T:Z-]+) ")));
  const int64_t start_s = ParseRfc3339(start[1]);
  CHECK(start_s >= before_s + 120);
  CHECK(start_s <= after_s + 121);
  CHECK(script ==
        "dir=/results/shard-$((JOB_COMPLETION_INDEX + 1))\n"
        "if [ -e \"$dir/run.json\" ]; then\n"
        "  echo \"stagegate k8s: $dir already holds a run: delete the claim " +
            name +
            "-results or choose another --name\" >&2\n"
            "  exit 2\n"
            "fi\n"
            "exec stagegate --db \"$dir/stagegate.db\" run /work/bundle/scenarios/sharded.yaml "
            "--shard job/3 --start-at " +
            std::string(start[1]) + " --target-url http://app:8000 --workers 2 --out \"$dir\"\n");
  CHECK(run.err.find(" start at " + std::string(start[1]) + " (in 120 s)") != std::string::npos);
  const std::string merge = Script(docs[3]);
  CHECK(merge.find("deadline=" + std::to_string(start_s + 3600) + "\n") != std::string::npos);
  CHECK(merge.find("while [ \"$k\" -le 3 ]; do\n") != std::string::npos);
  CHECK(
      merge.ends_with("exec stagegate --db /results/merged/stagegate.db merge /results/merged "
                      "/results/shard-1 /results/shard-2 /results/shard-3\n"));
  CHECK(docs[3]["spec"]["backoffLimit"].as<int>() == 0);
  CHECK(Text(PodSpec(docs[3])["volumes"][0]["persistentVolumeClaim"]["claimName"]) ==
        name + "-results");

  // No secret value: the personas' token variables come from the Secret, optional on the sim.
  const YAML::Node env = container["env"];
  REQUIRE(env.size() == 5);
  std::set<std::string> variables;
  for (const YAML::Node& variable : env) {
    CHECK(!variable["value"]);
    const YAML::Node ref = variable["valueFrom"]["secretKeyRef"];
    CHECK(Text(ref["name"]) == name + "-secrets");
    CHECK(Text(ref["key"]) == Text(variable["name"]));
    CHECK(ref["optional"].as<bool>());
    variables.insert(Text(variable["name"]));
  }
  CHECK(variables.count("SD_TOKEN_EMPLOYEE") == 1);
  CHECK(run.err.find("kubectl create secret generic " + name + "-secrets") != std::string::npos);
}

TEST_CASE("k8s puts the scenario's files in the ConfigMap, laid out as on disk", "[cli][k8s]") {
  Invocation run =
      Invoke({"k8s", SourcePath("scenarios/sharded.yaml"), "--shards", "2", "--target-url",
              "http://app:8000", "--image", "i", "--name", "gate", "--namespace", "load-tests"});
  REQUIRE(run.exit_code == 0);
  const std::vector<YAML::Node> docs = YAML::LoadAll(run.out);
  REQUIRE(docs.size() == 4);
  CHECK(Text(docs[0]["metadata"]["namespace"]) == "load-tests");
  CHECK(Text(docs[2]["metadata"]["name"]) == "gate");
  CHECK(run.err.find("  kubectl create secret generic -n load-tests gate-secrets "
                     "--from-literal=SD_TOKEN_EMPLOYEE=... ") != std::string::npos);
  CHECK(run.err.find("kubectl wait -n load-tests --for=condition=complete job/gate-merge "
                     "--timeout=4320s") != std::string::npos);
  const std::map<std::string, std::string> items = BundleItems(docs[2]);
  const YAML::Node data = docs[0]["data"];
  CHECK(data.size() == items.size());
  std::set<std::string> paths;
  for (const auto& [key, path] : items) {
    INFO(key << " -> " << path);
    CHECK(std::regex_match(key, std::regex("[-._a-zA-Z0-9]+")));
    // The checkout is the files' common folder: each path names the file it holds.
    CHECK(Text(data[key]) == ReadText(SourcePath(path)));
    paths.insert(path);
  }
  CHECK(paths.count("scenarios/sharded.yaml") == 1);
  CHECK(paths.count("rubrics/service-desk.yaml") == 1);
  size_t corpus_files = 0;
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(SourcePath("corpus/service-desk"))) {
    if (!entry.is_regular_file()) continue;
    ++corpus_files;
    CHECK(paths.count(fs::relative(entry.path(), SourcePath("")).generic_string()) == 1);
  }
  CHECK(paths.size() == corpus_files + 2);
  const YAML::Node mounts = PodSpec(docs[2])["containers"][0]["volumeMounts"];
  CHECK(Text(mounts[0]["mountPath"]) == "/work/bundle");
  CHECK(mounts[0]["readOnly"].as<bool>());
  CHECK(Text(mounts[1]["mountPath"]) == "/results");
}

TEST_CASE("k8s gives back every file's bytes, whatever their line breaks", "[cli][k8s]") {
  TempDir dir;
  fs::copy(SourcePath("scenarios"), dir / "scenarios", fs::copy_options::recursive);
  fs::copy(SourcePath("corpus"), dir / "corpus", fs::copy_options::recursive);
  fs::copy(SourcePath("rubrics"), dir / "rubrics", fs::copy_options::recursive);
  const std::map<std::string, std::string> awkward = {
      {"no-final-newline.txt", "last line"},
      {"two-final-newlines.txt", "text\n\n"},
      {"leading-blanks.txt", "  indented first\nsecond\n"},
      {"crlf.txt", "one\r\ntwo\r\n"},
      {"tabs-and-utf8.txt", "\tkey: \"caf\xc3\xa9\" # not a comment\n"},
      {"123", "true\n"},
      {"empty.txt", ""},
      {"name with spaces.md", "---\n...\n"},
  };
  for (const auto& [file, contents] : awkward)
    WriteText(dir / ("corpus/service-desk/notes/" + file), contents);
  WriteText(dir / "corpus/service-desk/.hidden", "\xff");
  Invocation run =
      Invoke({"k8s", dir / "scenarios/demo.yaml", "--shards", "1", "--image", "i", "--name", "x"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::vector<YAML::Node> docs = YAML::LoadAll(run.out);
  REQUIRE(docs.size() == 4);
  std::map<std::string, std::string> by_path;
  for (const auto& [key, path] : BundleItems(docs[2]))
    by_path[path] = Text(docs[0]["data"][key]);
  for (const auto& [file, contents] : awkward) {
    INFO(file);
    REQUIRE(by_path.count("corpus/service-desk/notes/" + file) == 1);
    CHECK(by_path["corpus/service-desk/notes/" + file] == contents);
  }
  CHECK(by_path.count("corpus/service-desk/.hidden") == 0);

  SECTION("a file that is not UTF-8 is refused, named") {
    WriteText(dir / "corpus/service-desk/notes/logo.png", "\x89PNG\r\n\x1a\n");
    Invocation refused =
        Invoke({"k8s", dir / "scenarios/demo.yaml", "--shards", "1", "--image", "i"});
    CHECK(refused.exit_code == 2);
    CHECK(refused.out == "");
    CHECK(refused.err == "stagegate k8s: " + (dir / "corpus/service-desk/notes/logo.png") +
                             ": not UTF-8 text (byte 0); the bundle ConfigMap holds text only: "
                             "build the files into the image and use --in-image\n");
  }
  SECTION("more than a ConfigMap holds is refused; --in-image needs no ConfigMap") {
    WriteText(dir / "corpus/service-desk/notes/big-1.txt", std::string(600'000, 'a'));
    WriteText(dir / "corpus/service-desk/notes/big-2.txt", std::string(600'000, 'b'));
    Invocation refused =
        Invoke({"k8s", dir / "scenarios/demo.yaml", "--shards", "1", "--image", "i"});
    CHECK(refused.exit_code == 2);
    CHECK(refused.out == "");
    CHECK(std::regex_match(refused.err,
                           std::regex("stagegate k8s: the scenario's 42 files come to [0-9]+ "
                                      "bytes, over the 1 MiB \\(1048576 bytes\\) a ConfigMap "
                                      "holds: build them into the image and use --in-image\n")));
    Invocation in_image =
        Invoke({"k8s", dir / "scenarios/demo.yaml", "--shards", "1", "--image", "i", "--in-image"});
    REQUIRE(in_image.exit_code == 0);
    const std::vector<YAML::Node> objects = YAML::LoadAll(in_image.out);
    REQUIRE(objects.size() == 3);
    CHECK(Text(objects[0]["kind"]) == "PersistentVolumeClaim");
    CHECK(Script(objects[1]).find(" run /work/scenarios/demo.yaml --shard job/1 ") !=
          std::string::npos);
    CHECK(PodSpec(objects[1])["volumes"].size() == 1);
  }
}

TEST_CASE("k8s takes an API key from the Secret, never optional", "[cli][k8s]") {
  TempDir dir;
  const std::string scenario = dir / "openai.yaml";
  WriteText(scenario,
            testing::ReplaceAll(ReadText(SourcePath("scenarios/static-128.yaml")), "  kind: sim\n",
                                "  kind: openai\n  base_url: https://llm.example\n"
                                "  model: m\n  api_key_env: LLM_API_KEY\n"));
  Invocation run = Invoke({"k8s", scenario, "--shards", "1", "--image", "i", "--name", "llm"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::vector<YAML::Node> docs = YAML::LoadAll(run.out);
  REQUIRE(docs.size() == 4);
  // No corpus or rubric: the scenario alone, at the top of the bundle.
  REQUIRE(docs[0]["data"].size() == 1);
  CHECK(Text(docs[0]["data"]["openai.yaml"]) == ReadText(scenario));
  CHECK(BundleItems(docs[2]) == std::map<std::string, std::string>{{"openai.yaml", "openai.yaml"}});
  CHECK(Script(docs[2]).find(" run /work/bundle/openai.yaml --shard job/1 ") != std::string::npos);
  const YAML::Node env = PodSpec(docs[2])["containers"][0]["env"];
  REQUIRE(env.size() == 1);
  CHECK(Text(env[0]["name"]) == "LLM_API_KEY");
  CHECK(Text(env[0]["valueFrom"]["secretKeyRef"]["name"]) == "llm-secrets");
  CHECK(Text(env[0]["valueFrom"]["secretKeyRef"]["key"]) == "LLM_API_KEY");
  CHECK(!env[0]["valueFrom"]["secretKeyRef"]["optional"]);
  CHECK(run.err.find("stagegate k8s: the shards read LLM_API_KEY from the Secret llm-secrets; no "
                     "value is in these manifests. Create it first:\n"
                     "  kubectl create secret generic llm-secrets "
                     "--from-literal=LLM_API_KEY=...\n") != std::string::npos);
}

TEST_CASE("k8s refuses a broken scenario, no shards and a bad name", "[cli][k8s]") {
  const std::string broken = Testdata("broken/unknown-keys.yaml");
  Invocation run = Invoke({"k8s", broken, "--shards", "2", "--image", "i"});
  CHECK(run.exit_code == 2);
  CHECK(run.out == "");
  const std::string expected = testing::ReplaceAll(
      ReadText(Testdata("broken/unknown-keys.expected")), "broken/", testing::Testdata("broken/"));
  CHECK(run.err == expected + "7 problems in " + broken + " and the files it names\n");

  const std::string demo = SourcePath("scenarios/sharded.yaml");
  Invocation none =
      Invoke({"k8s", demo, "--shards", "0", "--target-url", "http://app:8000", "--image", "i"});
  CHECK(none.exit_code == 2);
  CHECK(none.out == "");
  CHECK(none.err.find("--shards: must be between 1 and 1000, got 0") != std::string::npos);

  for (const char* name : {"Demo", "demo_1", "-demo", "demo-", ""}) {
    INFO(name);
    Invocation bad = Invoke({"k8s", demo, "--shards", "2", "--target-url", "http://app:8000",
                             "--image", "i", "--name", name});
    CHECK(bad.exit_code == 2);
    CHECK(bad.out == "");
    CHECK(bad.err.find("--name: must be a DNS-1123 label: at most 50 of a-z, 0-9 and '-', "
                       "starting and ending with a letter or digit; got '" +
                       std::string(name) + "'") != std::string::npos);
  }
  Invocation too_long = Invoke({"k8s", demo, "--shards", "2", "--target-url", "http://app:8000",
                                "--image", "i", "--name", std::string(51, 'a')});
  CHECK(too_long.exit_code == 2);
  Invocation bad_namespace = Invoke({"k8s", demo, "--shards", "2", "--target-url",
                                     "http://app:8000", "--image", "i", "--namespace", "Load"});
  CHECK(bad_namespace.exit_code == 2);
  CHECK(Invoke({"k8s", demo, "--shards", "2"}).exit_code == 2);  // no --image
  Invocation blank_image = Invoke(
      {"k8s", demo, "--shards", "2", "--target-url", "http://app:8000", "--image", "my image"});
  CHECK(blank_image.exit_code == 2);
  CHECK(blank_image.err.find("--image: must be an image reference such as "
                             "registry.example/stagegate:0.1 (a path in lower case, then :tag or "
                             "@sha256:digest); got 'my image'") != std::string::npos);
}

TEST_CASE("k8s takes only image references Kubernetes takes", "[cli][k8s]") {
  const std::string demo = SourcePath("scenarios/sharded.yaml");
  const auto image = [&](const std::string& reference) {
    return Invoke(
        {"k8s", demo, "--shards", "2", "--target-url", "http://app:8000", "--image", reference});
  };
  for (const std::string& good : std::vector<std::string>{
           "stagegate", "stagegate:0.1", "registry.example/team/stagegate:0.1-rc_1",
           "localhost:5000/stagegate", "Registry.Example:443/a/b__c.d-e:TAG",
           "stagegate@sha256:" + std::string(64, 'a'), "a/b:1@sha256:" + std::string(64, 'f')}) {
    INFO(good);
    Invocation ran = image(good);
    CHECK(ran.exit_code == 0);
    CHECK(ran.out.find("image: " + good) != std::string::npos);
  }
  for (const std::string& bad :
       std::vector<std::string>{"*ref", "Stagegate:1", "stagegate:", "stagegate:-1", "a//b", "a/b/",
                                "stagegate@sha256:12", ":1", "-a", "a b", std::string(300, 'a'),
                                "r.example/" + std::string(250, 'a'), std::string(3000, 'a')}) {
    INFO(bad.substr(0, 40));
    Invocation ran = image(bad);
    CHECK(ran.exit_code == 2);
    CHECK(ran.out == "");
    CHECK(ran.err.find("--image: must be an image reference") != std::string::npos);
    CHECK(ran.err.size() < 400);  // a long reference is cut in the message
  }
}

TEST_CASE("k8s never writes a URL's password, query string or fragment into a manifest",
          "[cli][k8s]") {
  const std::string demo = SourcePath("scenarios/sharded.yaml");
  for (const std::string url : {"http://user:PASSWORD@127.0.0.1:18900", "http://PASSWORD@h:1",
                                "http://h:1/v1?api-key=PASSWORD", "http://h:1/v1#PASSWORD"}) {
    INFO(url);
    Invocation ran =
        Invoke({"k8s", demo, "--shards", "2", "--image", "img:1", "--target-url", url});
    CHECK(ran.exit_code == 2);
    CHECK(ran.out == "");
    CHECK(ran.err.find("--target-url") != std::string::npos);
    CHECK(ran.err.find("PASSWORD") == std::string::npos);
  }
  Invocation userinfo = Invoke({"k8s", demo, "--shards", "2", "--image", "img:1", "--target-url",
                                "http://user:PASSWORD@127.0.0.1:18900"});
  CHECK(userinfo.err.find("holds a user or password") != std::string::npos);

  // A scenario whose own target holds a password: the ConfigMap would carry the file.
  TempDir dir;
  for (const char* name : {"corpus", "rubrics"})
    fs::copy(SourcePath(name), dir / name, fs::copy_options::recursive);
  fs::create_directories(dir / "scenarios");
  std::string scenario = ReadText(demo);
  const std::string sim = "kind: sim\n  sim_profile: default\n";
  const size_t kind = scenario.find(sim);
  REQUIRE(kind != std::string::npos);
  scenario.replace(kind, sim.size(),
                   "kind: openai\n  base_url: http://u:PASSWORD@127.0.0.1:9/v1\n  model: m\n");
  WriteText(dir / "scenarios/sharded.yaml", scenario);
  Invocation own =
      Invoke({"k8s", dir / "scenarios/sharded.yaml", "--shards", "2", "--image", "img:1"});
  INFO(own.err);
  CHECK(own.exit_code == 2);
  CHECK(own.out == "");
  CHECK(own.err.find("has a URL with a user or password (http://127.0.0.1:9/v1)") !=
        std::string::npos);
  CHECK(own.err.find("PASSWORD") == std::string::npos);
}

TEST_CASE("k8s sizes the pods from --cpu and --memory", "[cli][k8s]") {
  Invocation run = Invoke({"k8s",
                           SourcePath("scenarios/sharded.yaml"),
                           "--shards",
                           "4",
                           "--target-url",
                           "http://app:8000",
                           "--image",
                           "i",
                           "--cpu",
                           "3.5",
                           "--memory",
                           "4096",
                           "--volume-size",
                           "20Gi",
                           "--storage-class",
                           "nfs",
                           "--start-in",
                           "600",
                           "--merge-timeout",
                           "7200"});
  REQUIRE(run.exit_code == 0);
  const std::vector<YAML::Node> docs = YAML::LoadAll(run.out);
  REQUIRE(docs.size() == 4);
  CHECK(Text(docs[1]["spec"]["resources"]["requests"]["storage"]) == "20Gi");
  CHECK(Text(docs[1]["spec"]["storageClassName"]) == "nfs");
  const YAML::Node limits = PodSpec(docs[2])["containers"][0]["resources"]["limits"];
  CHECK(Text(limits["cpu"]) == "3500m");
  CHECK(Text(limits["memory"]) == "4096Mi");
  CHECK(docs[2]["spec"]["activeDeadlineSeconds"].as<int>() == 600 + 7200);
  CHECK(Script(docs[2]).find(" --shard job/4 ") != std::string::npos);
  CHECK(Script(docs[2]).find(" --workers 3 ") != std::string::npos);
  CHECK(Invoke({"k8s", SourcePath("scenarios/sharded.yaml"), "--shards", "2", "--target-url",
                "http://app:8000", "--image", "i", "--volume-size", "lots"})
            .exit_code == 2);
}

TEST_CASE("k8s refuses what the shards would refuse, before anything is applied", "[cli][k8s]") {
  // demo.yaml searches for its capacity and warms up for a request count: no shard could keep
  // to a plan the others share.
  Invocation demo = Invoke({"k8s", SourcePath("scenarios/demo.yaml"), "--shards", "3", "--image",
                            "i", "--target-url", "http://app:8000"});
  CHECK(demo.exit_code == 2);
  CHECK(demo.out == "");
  CHECK(demo.err.find("demo.yaml:54:13: warmup: a run in 3 shards starts every phase at the same "
                      "planned offset in every shard, so a closed loop needs 'duration_s'") !=
        std::string::npos);
  CHECK(demo.err.find("demo.yaml:58:13: sweep: a run in 3 shards takes fixed plans only: a "
                      "search decides each level") != std::string::npos);
  // Against the built-in sim, each pod would measure a sim of its own.
  Invocation no_target =
      Invoke({"k8s", SourcePath("scenarios/sharded.yaml"), "--shards", "3", "--image", "i"});
  CHECK(no_target.exit_code == 2);
  CHECK(no_target.err.find("targets the built-in sim: give --target-url") != std::string::npos);
}

}  // namespace
}  // namespace stagegate::cli
